// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing

// The control socket against faults (the real executable on the real clock): a `goto` to an
// item that failed, and a flood of refused clients.

/// A show of three items whose middle one is corrupt, with its control socket.
private func startShowWithAFailedItem() throws -> (KioskChild, String, String) {
    let dir = controlTestDirectory()
    let photos = dir + "/photos"
    mkdir(photos, 0o755)
    let corrupt = photos + "/b-corrupt.jpg"
    let fd = open(corrupt, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0, 16] + Array(repeating: 0x41, count: 200)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    let socket = dir + "/control"
    let child = try KioskChild(["--display", "offscreen:\(dir)/frames", "--size", "160x100", "--clock", "real",
                                "--run-for", "100000", "--interval", "60", "--fade", "100", "--control", socket,
                                controlTestPhotos[0], corrupt, controlTestPhotos[2]])
    guard waitFor(15, {
        access(socket, F_OK) == 0 && !child.shown.isEmpty && child.stderr.text.contains("b-corrupt")
    }) else {
        throw ControlTestFailure("no control socket, first image or skipped file within 15 s; "
                                 + "stderr: \(child.stderr.text)")
    }
    return (child, socket, corrupt)
}

@Test func gotoAnItemThatFailedAnswersAnErrorAndTheShowStays() throws {
    let (child, socket, corrupt) = try startShowWithAFailedItem()
    defer { _ = child.stop() }
    let client = try ControlClient(path: socket)
    let reply = try client.request(#"{"command":["goto",1],"request_id":7}"#)
    let error = reply["error"] as? String ?? ""
    #expect(error.contains("goto: item 1 (\(corrupt)) is not in the show"), "\(reply)")
    #expect(reply["request_id"] as? Int == 7)
    // The show stays where it is; a good item can still be gone to.
    let status = try client.request(#"{"command":["status"]}"#)["data"] as? [String: Any]
    #expect(status?["index"] as? Int == 0, "\(String(describing: status))")
    #expect(try client.request(#"{"command":["goto",2]}"#)["error"] as? String == "success")
    #expect(client.waitForShown(2))
}

@Test func aFloodOfRefusedClientsIsLoggedAtMostOnceASecondWithACount() throws {
    let dir = controlTestDirectory()
    let socket = dir + "/control"
    let child = try KioskChild(["--display", "offscreen:\(dir)/frames", "--size", "160x100", "--clock", "real",
                                "--run-for", "100000", "--interval", "60", "--control", socket, controlTestPhotos[0]])
    defer { _ = child.stop() }
    #expect(waitFor(15) { access(socket, F_OK) == 0 && !child.shown.isEmpty }, "stderr: \(child.stderr.text)")
    var clients: [ControlClient] = []
    for _ in 0..<16 { clients.append(try ControlClient(path: socket)) }
    for c in clients { #expect(try c.request(#"{"command":["status"]}"#)["error"] as? String == "success") }
    // 300 more, as fast as they come, over about 1.5 s: each refused.
    let start = wallNow()
    var refused = 0
    for i in 0..<300 {
        let extra = try ControlClient(path: socket)
        if (extra.readLine(timeout: 3) ?? "").contains("too many clients") { refused += 1 }
        if i % 20 == 19 { usleep(100_000) }
    }
    let spent = wallNow() - start
    #expect(refused == 300)
    // Every refusal is counted, in lines at least a second apart (the last ones after a second).
    #expect(waitFor(3) {
        child.stderr.lines.map(\.text).filter { $0.contains("control client refused") }.map(refusalCount)
            .reduce(0, +) == 300
    }, "stderr: \(child.stderr.text)")
    let lines = child.stderr.lines.map(\.text).filter { $0.contains("control client refused") }
    print("300 refused clients in \(spent) s: \(lines.count) log lines")
    #expect(lines.count <= Int(spent) + 2, "\(lines)")
    #expect(lines.count >= 2, "\(lines)")
}

/// The count a "control client refused" line stands for: "N clients refused since …", else 1.
private func refusalCount(_ line: String) -> Int {
    guard let r = line.range(of: "; ") else { return 1 }
    let digits = line[r.upperBound...].prefix { $0.isNumber }
    return Int(digits) ?? 1
}
