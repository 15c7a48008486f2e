// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskSystem
import Testing

/// One kiosk per state directory: the lock itself, and two real kiosks given the same
/// `--state-dir`, the second of which must refuse to start instead of overwriting the first's
/// shuffle round, stored manifest and MQTT outbox.
private let repository = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

private func executable() -> URL {
    var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("kiosk-carousel").path), dir.path != "/" {
        dir.deleteLastPathComponent()
    }
    return dir.appendingPathComponent("kiosk-carousel")
}

@Test func aFolderLockIsHeldUntilItsHolderLetsGoAndNamesTheHolder() throws {
    let folder = NSTemporaryDirectory() + "kc-lock-\(UUID().uuidString)/state"
    defer { try? FileManager.default.removeItem(atPath: (folder as NSString).deletingLastPathComponent) }
    var first: FolderLock? = try FolderLock.lock(folder: folder)  // makes the folder too
    #expect(FileManager.default.fileExists(atPath: folder + "/" + FolderLock.fileName))
    #expect(throws: FolderLock.Failure.held(path: folder + "/" + FolderLock.fileName, pid: getpid())) {
        try FolderLock.lock(folder: folder, waiting: .milliseconds(120))
    }
    withExtendedLifetime(first) {}
    first = nil
    // The file is still there; the lock is not.
    let second = try FolderLock.lock(folder: folder, waiting: .zero)
    #expect(second.path == folder + "/" + FolderLock.fileName)
    // A folder that cannot be made is a system error, not "held".
    do {
        _ = try FolderLock.lock(folder: "/proc/kc-no/state")
        Issue.record("a folder under /proc was locked")
    } catch .system(let error) {
        #expect(error.operation == "mkdir" && error.path == "/proc/kc-no", "\(error)")
    } catch {
        Issue.record("\(error)")
    }
}

@Test(.timeLimit(.minutes(2)))
func aSecondKioskOnTheSameStateDirectoryRefusesToStartAndTheFirstGoesOn() throws {
    let base = NSTemporaryDirectory() + "kc-two-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: base) }
    let samples = repository.appendingPathComponent("deploy/samples").path
    func kiosk(_ name: String) -> (Process, Pipe, Pipe) {
        let process = Process()
        process.executableURL = executable()
        process.arguments = ["--display", "offscreen:\(base)/\(name)-frames", "--size", "160x100", "--clock", "real",
                             "--interval", "0.5", "--fade", "0", "--order", "shuffle", "--run-for", "30",
                             "--state-dir", base + "/state", "--cache-dir", base + "/\(name)-cache", samples]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        return (process, out, err)
    }
    let (first, firstOut, _) = kiosk("a")
    try first.run()
    defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
    // The first holds the lock once it shows.
    let lock = base + "/state/" + FolderLock.fileName
    for _ in 0..<200 where (try? String(contentsOfFile: lock, encoding: .utf8)) != "\(first.processIdentifier)\n" {
        usleep(25_000)
    }
    #expect((try? String(contentsOfFile: lock, encoding: .utf8)) == "\(first.processIdentifier)\n")

    let (second, _, secondErr) = kiosk("b")
    try second.run()
    let log = String(decoding: secondErr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    second.waitUntilExit()
    #expect(second.terminationStatus == 69, "\(log)")
    #expect(log.contains("error state directory in use path=\(base)/state"), "\(log)")
    #expect(log.contains("locked by another kiosk-carousel (PID \(first.processIdentifier))"), "\(log)")
    #expect(log.contains("give each kiosk its own --state-dir"), "\(log)")
    #expect(!log.contains("show started"), "\(log)")
    // The first is untouched and still showing.
    #expect(first.isRunning)
    kill(first.processIdentifier, SIGTERM)
    first.waitUntilExit()
    let shown = String(decoding: firstOut.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(first.terminationStatus == 0 && shown.contains(#""event":"shown""#))

    // Once the first has gone (or was killed: the kernel drops the lock), a kiosk starts there.
    let (third, _, thirdErr) = kiosk("c")
    third.arguments = third.arguments!.map { $0 == "30" ? "1" : $0 }
    try third.run()
    let thirdLog = String(decoding: thirdErr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    third.waitUntilExit()
    #expect(third.terminationStatus == 0 && thirdLog.contains("show started"), "\(thirdLog)")
}
