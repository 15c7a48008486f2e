// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

/// libcurl is opened with dlopen when the first download starts, not linked: a show of local
/// files never maps it (nor the 30-odd libraries it depends on), a show with a manifest URL
/// does. Checked with the dynamic loader's own report (`LD_DEBUG=files`, ld.so(8)), which names
/// every library it maps, dlopen()ed ones included.
private let samples = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("deploy/samples")

/// The libraries the loader mapped while the program showed `sources` offscreen for 1 s.
private func librariesMapped(_ arguments: [String]) throws -> (status: Int32, libraries: Set<String>) {
    let frames = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-ld-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: frames) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: kioskExecutable())
    process.arguments = ["--display", "offscreen:\(frames.path)", "--size", "64x40", "--run-for", "1"] + arguments
    process.environment = ProcessInfo.processInfo.environment.merging(["LD_DEBUG": "files"]) { $1 }
    let err = Pipe()
    process.standardOutput = FileHandle.nullDevice
    process.standardError = err
    try process.run()
    let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    // Lines such as "  1234:\tfile=libcurl.so.4 [0];  dynamically loaded by ...".
    var names: Set<String> = []
    for line in stderr.split(separator: "\n") {
        guard let start = line.range(of: "file=") else { continue }
        names.insert(String(line[start.upperBound...].prefix { $0 != " " }))
    }
    return (process.terminationStatus, names)
}

@Test func aShowOfLocalFilesNeverLoadsLibcurl() throws {
    let local = try librariesMapped([samples.appendingPathComponent("path-1920x1200.jpg").path])
    #expect(local.status == 0)
    #expect(local.libraries.contains("libjpeg.so.62"), "the loader's report was read: \(local.libraries)")
    #expect(!local.libraries.contains("libcurl.so.4"), "\(local.libraries.sorted())")
    #expect(!local.libraries.contains { $0.hasPrefix("libgnutls") || $0.hasPrefix("libkrb5") }, "\(local.libraries.sorted())")
    // sd_notify is spoken directly: libsystemd and what it pulls in are never mapped.
    #expect(!local.libraries.contains { $0.hasPrefix("libsystemd") || $0.hasPrefix("libgcrypt") || $0.hasPrefix("libzstd") },
            "\(local.libraries.sorted())")

    // A manifest URL (port 9, discard: refused at once on loopback) starts the fetcher, which
    // opens libcurl; the show goes on with the empty screen.
    let remote = try librariesMapped(["--manifest", "http://127.0.0.1:9/manifest.json"])
    #expect(remote.status == 0)
    #expect(remote.libraries.contains("libcurl.so.4"), "\(remote.libraries.sorted())")
}
