// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskCore
import KioskImaging
import Testing

// The control socket's `screenshot` on the real program with the offscreen backend: the PNG
// is the frame on screen, pixel for pixel; it is written only in the screenshot folder
// (here `screenshots` beside the control socket), within its caps, whatever the path says
// and whatever is swapped under it meanwhile.

private func startShow(_ dir: String, _ extra: [String] = [], umask: String? = nil) throws -> (KioskChild, String) {
    let socket = "\(dir)/control"
    mkdir("\(dir)/state", 0o755)
    let child = try KioskChild(["--display", "offscreen:\(dir)/frames", "--size", "160x100", "--clock", "real",
                                "--run-for", "100000", "--interval", "60", "--fade", "100", "--control", socket,
                                "--state-dir", "\(dir)/state", "--cache-dir", "\(dir)/cache"] + extra
                               + [controlTestPhotos[1], controlTestPhotos[2]], umask: umask)
    guard waitFor(15, { access(socket, F_OK) == 0 && !child.shown.isEmpty }) else {
        throw ControlTestFailure("no control socket or no first image within 15 s; stderr: \(child.stderr.text)")
    }
    return (child, socket)
}

/// The newest `frame-*.png` the offscreen backend wrote.
private func lastFrame(_ dir: String) throws -> String {
    let names = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/frames").filter { $0.hasPrefix("frame-") }
        .sorted()
    guard let last = names.last else { throw ControlTestFailure("no frames in \(dir)/frames") }
    return "\(dir)/frames/\(last)"
}

private func pixels(_ path: String) throws -> (width: Int, height: Int, pixels: [UInt32]) {
    let image = try ImageDecoder.decode(path: path).bitmap
    return (image.width, image.height, (0..<image.pixelCount).map { image.pixels[$0] | 0xFF00_0000 })
}

@Test func aScreenshotIsTheFrameOnScreenWrittenInItsFolder() throws {
    let dir = controlTestDirectory()
    let (child, socket) = try startShow(dir, umask: "027")
    defer { _ = child.stop() }
    let client = try ControlClient(path: socket)
    let real = URL(fileURLWithPath: dir).resolvingSymlinksInPath().path
    let shots = "\(dir)/screenshots"

    // The folder was made at start, for the kiosk's user only (0750 less the umask).
    var st = stat()
    #expect(lstat(shots, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR && st.st_mode & 0o777 == 0o750,
            "mode \(String(st.st_mode & 0o777, radix: 8))")

    // A screenshot by name, then a status at once: the replies keep the order of the requests.
    client.send(#"{"command":["screenshot","shot.png"],"request_id":1}"#)
    client.send(#"{"command":["status"],"request_id":2}"#)
    let shot = try client.reply(timeout: 10), status = try client.reply()
    #expect(shot["error"] as? String == "success", "\(shot); stderr: \(child.stderr.text)")
    #expect(shot["request_id"] as? Int == 1 && status["request_id"] as? Int == 2)
    let data = shot["data"] as? [String: Any] ?? [:]
    #expect(data["path"] as? String == "\(real)/screenshots/shot.png")
    #expect(data["width"] as? Int == 160 && data["height"] as? Int == 100)
    #expect(data["index"] as? Int == 0 && data["src"] as? String == controlTestPhotos[1])
    #expect(stat("\(shots)/shot.png", &st) == 0 && data["bytes"] as? Int == Int(st.st_size))
    // The umask decides its mode (0640 under the unit's UMask=0027): not readable by others.
    #expect(st.st_mode & 0o777 == 0o640, "mode \(String(st.st_mode & 0o777, radix: 8))")
    // The very frame the offscreen backend wrote last (the photo stands: 60 s interval).
    let screenshot = try pixels("\(shots)/shot.png"), frame = try pixels(try lastFrame(dir))
    #expect(screenshot.width == 160 && screenshot.height == 100)
    #expect(screenshot.pixels == frame.pixels, "the screenshot differs from the frame on screen")
    // No temporary file is left beside it.
    let left = try FileManager.default.contentsOfDirectory(atPath: shots).filter { $0.hasPrefix(".") }
    #expect(left.isEmpty, "\(left)")

    // After a move, the next image, by the folder's path and a name.
    #expect(try client.request(#"{"command":["next"]}"#)["error"] as? String == "success")
    #expect(client.waitForShown(1))
    let again = try client.request(#"{"command":["screenshot","\#(real)/screenshots/b.png"]}"#, timeout: 10)
    #expect(again["error"] as? String == "success", "\(again)")
    let next = again["data"] as? [String: Any] ?? [:]
    #expect(next["path"] as? String == "\(real)/screenshots/b.png")
    #expect(next["index"] as? Int == 1 && next["src"] as? String == controlTestPhotos[2])
    #expect(try pixels("\(shots)/b.png").pixels != screenshot.pixels)
    #expect(child.stop() == 0, "stderr: \(child.stderr.text)")
}

@Test func aScreenshotGoesNowhereElseWhateverThePathSays() throws {
    let dir = controlTestDirectory()
    let (child, socket) = try startShow(dir)
    defer { _ = child.stop() }
    let client = try ControlClient(path: socket)
    let real = URL(fileURLWithPath: dir).resolvingSymlinksInPath().path
    let outside = controlTestDirectory()
    symlink(outside, "\(dir)/screenshots/link")
    mkdir("\(dir)/screenshots/adir.png", 0o755)
    let only = "screenshots are written only in \(real)/screenshots"
    let cases: [(request: String, error: String)] = [
        (#"["screenshot","\#(outside)/x.png"]"#, only),
        (#"["screenshot","\#(dir)/x.png"]"#, only),  // the runtime directory itself: no longer
        (#"["screenshot","\#(dir)/state/x.png"]"#, only),  // nor the state directory
        (#"["screenshot","\#(real)/screenshots/../x.png"]"#, only),
        (#"["screenshot","\#(real)/screenshots/link/x.png"]"#, only),
        (#"["screenshot","/x.png"]"#, only),
        (#"["screenshot","sub/x.png"]"#, only),
        (#"["screenshot","adir.png"]"#, "exists and is not a regular file"),
        (#"["screenshot","manifest.json"]"#, "the file name must end in .png"),
        (#"["screenshot",".png"]"#, "must not start with '.'"),
        (#"["screenshot",".hidden.png"]"#, "must not start with '.'"),
        (#"["screenshot","\#(String(repeating: "x", count: 250)).png"]"#, "longer than 200 bytes"),
        (#"["screenshot","\#(real)/screenshots/"]"#, "expected a file name"),
        (#"["screenshot"]"#, "screenshot: expected one argument, the PATH"),
        (#"["screenshot",7]"#, "screenshot: expected one argument, the PATH"),
    ]
    for c in cases {
        let reply = try client.request(#"{"command":\#(c.request)}"#, timeout: 10)
        let error = reply["error"] as? String ?? ""
        #expect(error.contains(c.error), "\(c.request): \(error)")
    }
    // While the screen is off nothing of the show is on it.
    #expect(try client.request(#"{"command":["display","off"]}"#)["error"] as? String == "success")
    let off = try client.request(#"{"command":["screenshot","off.png"]}"#)["error"] as? String ?? ""
    #expect(off == "screenshot: nothing of the show is on the screen: the screen is off", "\(off)")
    #expect(access("\(dir)/screenshots/off.png", F_OK) != 0)
    #expect(try client.request(#"{"command":["display","on"]}"#)["error"] as? String == "success")
    let on = try client.request(#"{"command":["screenshot","on.png"]}"#, timeout: 10)
    #expect(on["error"] as? String == "success", "\(on)")
    // A symbolic link at the name is replaced, never followed.
    symlink(outside + "/followed.png", "\(dir)/screenshots/linked.png")
    let linked = try client.request(#"{"command":["screenshot","linked.png"]}"#, timeout: 10)
    #expect(linked["error"] as? String == "success", "\(linked)")
    var st = stat()
    #expect(lstat("\(dir)/screenshots/linked.png", &st) == 0 && st.st_mode & S_IFMT == S_IFREG)
    #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty, "nothing written outside")
    #expect(access("/x.png", F_OK) != 0 && access("\(dir)/x.png", F_OK) != 0 && access("\(dir)/state/x.png", F_OK) != 0)
    // The show goes on and still answers.
    #expect(try client.request(#"{"command":["status"]}"#)["error"] as? String == "success")
    #expect(child.stop() == 0, "stderr: \(child.stderr.text)")
}

/// The screenshot folder swapped for a symbolic link to another folder, and back, again and
/// again while screenshots are asked for (as a second user sharing the socket's folder would):
/// every file lands in the folder opened at start, none in the other.
@Test func aScreenshotFolderSwappedForALinkSendsNothingElsewhere() throws {
    let dir = controlTestDirectory()
    let shots = "\(dir)/screenshots"
    mkdir(shots, 0o755)
    let (child, socket) = try startShow(dir)
    defer { _ = child.stop() }
    let client = try ControlClient(path: socket)
    let outside = controlTestDirectory()
    let stop = NSLock()
    nonisolated(unsafe) var stopping = false
    nonisolated(unsafe) var swaps = 0
    let swapper = Thread {
        // The folder and a link to `outside` take turns at its name (renames are atomic).
        symlink(outside, "\(dir)/link")
        while !stop.withLock({ stopping }) {
            rename(shots, "\(dir)/real")
            rename("\(dir)/link", shots)
            usleep(200)
            rename(shots, "\(dir)/link")
            rename("\(dir)/real", shots)
            usleep(200)
            swaps += 1
        }
    }
    swapper.start()
    var written = 0
    for i in 0..<120 {
        let reply = try client.request(#"{"command":["screenshot","\#(shots)/try-\#(i).png"]}"#, timeout: 10)
        if reply["error"] as? String == "success" { written += 1 }
    }
    stop.withLock { stopping = true }
    while !swapper.isFinished { usleep(1000) }
    if access("\(dir)/real", F_OK) == 0 { rename("\(dir)/real", shots) }
    let landed = try FileManager.default.contentsOfDirectory(atPath: outside)
    #expect(landed.isEmpty, "\(landed.count) of \(written) screenshots went through the link: \(landed.prefix(5))")
    #expect(written > 0 && swaps > 10, "\(written) written, \(swaps) swaps; stderr: \(child.stderr.text)")
    #expect(child.stop() == 0, "stderr: \(child.stderr.text)")
}

/// A screenshot cannot replace an image the show plays: a SOURCE folder is never the
/// screenshot folder, and the state directory (whose images folder may be a SOURCE) is no
/// longer a place a screenshot may go.
@Test func aScreenshotNeverReplacesAnImageOfTheShow() throws {
    let dir = controlTestDirectory()
    let images = "\(dir)/state/images"
    mkdir("\(dir)/state", 0o755)
    mkdir(images, 0o755)
    let photo = try Data(contentsOf: URL(fileURLWithPath: controlTestPhotos[1]))
    try photo.write(to: URL(fileURLWithPath: images + "/1.png"))
    let socket = "\(dir)/control"
    let child = try KioskChild(["--display", "offscreen:\(dir)/frames", "--size", "160x100", "--clock", "real",
                                "--run-for", "100000", "--interval", "60", "--control", socket,
                                "--state-dir", "\(dir)/state",
                                images])
    defer { _ = child.stop() }
    guard waitFor(15, { access(socket, F_OK) == 0 && !child.shown.isEmpty }) else {
        throw ControlTestFailure("no control socket or no first image within 15 s; stderr: \(child.stderr.text)")
    }
    let client = try ControlClient(path: socket)
    let reply = try client.request(#"{"command":["screenshot","\#(images)/1.png"]}"#, timeout: 10)
    #expect((reply["error"] as? String)?.contains("screenshots are written only in") == true, "\(reply)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: images + "/1.png")) == photo, "the image was replaced")
    #expect(child.stop() == 0, "stderr: \(child.stderr.text)")

    // Pointed at the SOURCE folder, or a folder inside it: no screenshots at all, said once.
    mkdir(images + "/shots", 0o755)
    for folder in [images, images + "/shots"] {
        let other = try KioskChild(["--display", "offscreen:\(dir)/frames2", "--size", "160x100", "--clock", "real",
                                    "--run-for", "100000", "--control", socket, "--state-dir", "\(dir)/state",
                                    "--screenshot-dir", folder, images])
        defer { _ = other.stop() }
        guard waitFor(15, { access(socket, F_OK) == 0 && !other.shown.isEmpty }) else {
            throw ControlTestFailure("no first image within 15 s; stderr: \(other.stderr.text)")
        }
        let refused = try ControlClient(path: socket).request(#"{"command":["screenshot","\#(folder)/1.png"]}"#)
        #expect((refused["error"] as? String)?.contains("not available") == true, "\(refused)")
        #expect(other.stderr.text.contains("screenshots off") && other.stderr.text.contains("SOURCE folder"),
                "\(other.stderr.text)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: images + "/1.png")) == photo)
        #expect(other.stop() == 0)
    }
}

/// The folder's caps: the oldest screenshots make room (files and bytes), one larger than the
/// byte cap alone is refused, and requests beyond the rate are refused at once.
@Test func theScreenshotFolderStaysWithinItsCaps() throws {
    let dir = controlTestDirectory()
    let (child, socket) = try startShow(dir, ["--screenshot-limit", "3,1,5"])
    defer { _ = child.stop() }
    let client = try ControlClient(path: socket)
    let shots = "\(dir)/screenshots"
    var replies: [String] = []
    for i in 0..<8 {
        let reply = try client.request(#"{"command":["screenshot","s\#(i).png"]}"#, timeout: 10)
        replies.append(reply["error"] as? String ?? "")
        usleep(20_000)  // distinct modification times
    }
    #expect(replies.prefix(5).allSatisfy { $0 == "success" }, "\(replies)")
    #expect(replies.dropFirst(5).allSatisfy { $0.contains("too many: at most 5 a minute") }, "\(replies)")
    let kept = try FileManager.default.contentsOfDirectory(atPath: shots).sorted()
    #expect(kept == ["s2.png", "s3.png", "s4.png"], "the newest three: \(kept)")
    #expect(child.stderr.text.components(separatedBy: "old screenshot removed").count - 1 == 2, "\(child.stderr.text)")
    #expect(child.stop() == 0)

    // 1 MB cap and a 1920x1080 frame of a photo (a PNG of several MB): refused, nothing kept.
    let big = try KioskChild(["--display", "offscreen:\(dir)/frames3", "--size", "1920x1080", "--clock", "real",
                              "--run-for", "100000", "--interval", "60", "--control", socket,
                              "--state-dir", "\(dir)/state", "--screenshot-limit", "3,1,5", controlTestPhotos[1]])
    defer { _ = big.stop() }
    guard waitFor(20, { access(socket, F_OK) == 0 && !big.shown.isEmpty }) else {
        throw ControlTestFailure("no first image within 20 s; stderr: \(big.stderr.text)")
    }
    let tooBig = try ControlClient(path: socket).request(#"{"command":["screenshot","big.png"]}"#, timeout: 20)
    #expect((tooBig["error"] as? String)?.contains("more than the folder's cap of 1000000") == true, "\(tooBig)")
    #expect(access(shots + "/big.png", F_OK) != 0)
    #expect(try FileManager.default.contentsOfDirectory(atPath: shots).sorted() == ["s2.png", "s3.png", "s4.png"])
    #expect(big.stop() == 0)
}
