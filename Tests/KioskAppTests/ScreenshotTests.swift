// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskCore
import KioskImaging
import Testing

// The control socket's `screenshot` on the real program with the offscreen backend: the PNG
// is the frame on screen, pixel for pixel; it is written only inside the runtime directory
// (here the control socket's folder) or the state directory, whatever the path says.

private func startShow(_ dir: String) throws -> (KioskChild, String) {
    let socket = "\(dir)/control"
    mkdir("\(dir)/state", 0o755)
    let child = try KioskChild(["--display", "offscreen:\(dir)/frames", "--size", "160x100", "--clock", "real",
                                "--run-for", "100000", "--interval", "60", "--fade", "100", "--control", socket,
                                "--state-dir", "\(dir)/state", controlTestPhotos[1], controlTestPhotos[2]])
    guard waitFor(15, { access(socket, F_OK) == 0 && !child.shown.isEmpty }) else {
        throw ControlTestFailure("no control socket or no first image within 15 s; stderr: \(child.stderr.text)")
    }
    return (child, socket)
}

/// The newest `frame-*.png` the offscreen backend wrote.
private func lastFrame(_ dir: String) throws -> String {
    let names = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/frames").filter { $0.hasPrefix("frame-") }.sorted()
    guard let last = names.last else { throw ControlTestFailure("no frames in \(dir)/frames") }
    return "\(dir)/frames/\(last)"
}

private func pixels(_ path: String) throws -> (width: Int, height: Int, pixels: [UInt32]) {
    let image = try ImageDecoder.decode(path: path).bitmap
    return (image.width, image.height, (0..<image.pixelCount).map { image.pixels[$0] | 0xFF00_0000 })
}

@Test func aScreenshotIsTheFrameOnScreenWrittenInThePlaceAsked() throws {
    let dir = controlTestDirectory()
    let (child, socket) = try startShow(dir)
    defer { _ = child.stop() }
    let client = try ControlClient(path: socket)
    let real = URL(fileURLWithPath: dir).resolvingSymlinksInPath().path

    // A screenshot, then a status at once: the replies keep the order of the requests.
    client.send(#"{"command":["screenshot","\#(dir)/shot.png"],"request_id":1}"#)
    client.send(#"{"command":["status"],"request_id":2}"#)
    let shot = try client.reply(timeout: 10), status = try client.reply()
    #expect(shot["error"] as? String == "success", "\(shot); stderr: \(child.stderr.text)")
    #expect(shot["request_id"] as? Int == 1 && status["request_id"] as? Int == 2)
    let data = shot["data"] as? [String: Any] ?? [:]
    #expect(data["path"] as? String == "\(real)/shot.png")
    #expect(data["width"] as? Int == 160 && data["height"] as? Int == 100)
    #expect(data["index"] as? Int == 0 && data["src"] as? String == controlTestPhotos[1])
    var st = stat()
    #expect(stat("\(dir)/shot.png", &st) == 0 && data["bytes"] as? Int == Int(st.st_size))
    // The very frame the offscreen backend wrote last (the photo stands: 60 s interval).
    let screenshot = try pixels("\(dir)/shot.png"), frame = try pixels(try lastFrame(dir))
    #expect(screenshot.width == 160 && screenshot.height == 100)
    #expect(screenshot.pixels == frame.pixels, "the screenshot differs from the frame on screen")
    // No temporary file is left beside it.
    let left = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix(".shot.png") }
    #expect(left.isEmpty, "\(left)")

    // After a move, the next image; into the state directory, through a `..` that stays inside.
    #expect(try client.request(#"{"command":["next"]}"#)["error"] as? String == "success")
    #expect(client.waitForShown(1))
    let again = try client.request(#"{"command":["screenshot","\#(dir)/frames/../state/b.png"]}"#, timeout: 10)
    #expect(again["error"] as? String == "success", "\(again)")
    let next = again["data"] as? [String: Any] ?? [:]
    #expect(next["path"] as? String == "\(real)/state/b.png")
    #expect(next["index"] as? Int == 1 && next["src"] as? String == controlTestPhotos[2])
    #expect(try pixels("\(dir)/state/b.png").pixels != screenshot.pixels)
    #expect(child.stop() == 0, "stderr: \(child.stderr.text)")
}

@Test func aScreenshotGoesNowhereElseWhateverThePathSays() throws {
    let dir = controlTestDirectory()
    let (child, socket) = try startShow(dir)
    defer { _ = child.stop() }
    let client = try ControlClient(path: socket)
    let outside = controlTestDirectory()
    symlink(outside, "\(dir)/link")
    mkdir("\(dir)/adir.png", 0o755)
    let cases: [(request: String, error: String)] = [
        (#"["screenshot","\#(outside)/x.png"]"#, "is outside the directories a screenshot may be written to"),
        (#"["screenshot","\#(dir)/../\#((outside as NSString).lastPathComponent)/x.png"]"#, "is outside"),
        (#"["screenshot","\#(dir)/link/x.png"]"#, "is outside"),
        (#"["screenshot","/x.png"]"#, "is outside"),
        (#"["screenshot","shot.png"]"#, "expected an absolute path"),
        (#"["screenshot","\#(dir)/missing/x.png"]"#, "cannot be resolved: No such file or directory"),
        (#"["screenshot","\#(dir)/adir.png"]"#, "exists and is not a regular file"),
        // The kiosk's own files (the stored manifest, cache entries) are never replaced.
        (#"["screenshot","\#(dir)/manifest.json"]"#, "the file name must end in .png"),
        (#"["screenshot","\#(dir)/.png"]"#, "the file name must end in .png"),
        (#"["screenshot","\#(dir)/\#(String(repeating: "x", count: 250)).png"]"#, "longer than 200 bytes"),
        (#"["screenshot","\#(dir)/"]"#, "expected a file name"),
        (#"["screenshot"]"#, "screenshot: expected one argument, the PATH"),
        (#"["screenshot",7]"#, "screenshot: expected one argument, the PATH"),
    ]
    for c in cases {
        let reply = try client.request(#"{"command":\#(c.request)}"#)
        let error = reply["error"] as? String ?? ""
        #expect(error.contains(c.error), "\(c.request): \(error)")
        if c.error.contains("outside") { #expect(error.contains("it must be inside"), "\(error)") }
    }
    // While the screen is off nothing of the show is on it.
    #expect(try client.request(#"{"command":["display","off"]}"#)["error"] as? String == "success")
    let off = try client.request(#"{"command":["screenshot","\#(dir)/off.png"]}"#)["error"] as? String ?? ""
    #expect(off == "screenshot: nothing of the show is on the screen: the screen is off", "\(off)")
    #expect(access("\(dir)/off.png", F_OK) != 0)
    #expect(try client.request(#"{"command":["display","on"]}"#)["error"] as? String == "success")
    let on = try client.request(#"{"command":["screenshot","\#(dir)/on.png"]}"#, timeout: 10)
    #expect(on["error"] as? String == "success", "\(on)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty, "nothing written outside")
    #expect(access("/x.png", F_OK) != 0)
    // The show goes on and still answers.
    #expect(try client.request(#"{"command":["status"]}"#)["error"] as? String == "success")
    #expect(child.stop() == 0, "stderr: \(child.stderr.text)")
}
