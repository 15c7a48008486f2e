// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskApp
import KioskContent
import KioskCore
import KioskImaging
import KioskText
import Testing

// A SOURCE folder that does not exist: the real program on the offscreen backend and the real
// clock. Its screen says the folder is missing (the frame written is exactly that text drawn by
// the same painter, not the empty folder's), one log line names the path and the errno, and
// the show starts by itself once the folder is made and a photo copied in.

/// The status screen `text` as the program draws it at `width`x`height` on black.
private func statusScreen(_ text: String, width: Int, height: Int) throws -> Bitmap {
    let frame = Bitmap(width: width, height: height)
    Compositor.drawMessage(into: frame, text, background: .black, painter: try ShowText().messagePainter())
    return frame
}

/// The frame files written so far, oldest first.
private func frameFiles(_ directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix("frame-") }.sorted()
}

/// Frame `index` is not written yet.
private struct NoFrameYet: Error { let index: Int }

/// How many pixels of `a` and `b` differ.
private func differing(_ a: Bitmap, _ b: Bitmap) -> Int {
    guard a.width == b.width, a.height == b.height else { return Int.max }
    return (0..<a.pixelCount).filter { a.pixels[$0] & 0xFF_FFFF != b.pixels[$0] & 0xFF_FFFF }.count
}

@Test func aMissingFolderSaysSoAndTheShowStartsWhenItAppears() throws {
    let base = controlTestDirectory()
    defer { try? FileManager.default.removeItem(atPath: base) }
    let folder = base + "/photos/today", frames = base + "/frames"
    let child = try KioskChild(["--display", "offscreen:" + frames, "--clock", "real", "--size", "320x200",
                                "--interval", "2", "--fade", "200", "--run-for", "120", folder])
    defer { _ = child.stop() }

    // One log line naming the path and the errno. The words load off the frame loop: a frame
    // of the background alone may come first, and the screen is drawn again with them.
    let missingScreen = try statusScreen(SceneRenderer.missingSourceText(path: folder, folder: true), width: 320, height: 200)
    let emptyScreen = try statusScreen(SceneRenderer.noImagesText, width: 320, height: 200)
    let blank = Bitmap(width: 320, height: 200)
    func frame(_ i: Int) throws -> Bitmap {
        let files = frameFiles(frames)
        guard files.indices.contains(i) else { throw NoFrameYet(index: i) }
        return try ImageDecoder.decode(path: frames + "/" + files[i], options: DecodeOptions()).bitmap
    }
    #expect(waitFor(20) { child.stderr.text.contains("fonts") && (try? frame(frameFiles(frames).count - 1)).map { differing($0, blank) > 0 } == true },
            "\(child.stderr.text)")
    let missing = child.stderr.lines.map(\.text).filter { $0.contains("source missing") }
    #expect(missing.count == 1 && missing[0].contains("path=\(folder)") && missing[0].contains("(errno 2)"), "\(missing)")

    // The screen names the folder, and is not the empty folder's; any frame before it is blank.
    let shownCount = frameFiles(frames).count
    #expect(shownCount <= 2, "\(shownCount) frames")
    if shownCount == 2 { #expect(differing(try frame(0), blank) == 0, "the frame before the words is not the background alone") }
    #expect(differing(missingScreen, emptyScreen) > 100, "the two screens have different words")
    #expect(differing(try frame(shownCount - 1), missingScreen) == 0, "the screen is not the missing-folder screen")

    // mkdir (two levels): the empty folder is taken up, and the screen says it has no images.
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    #expect(waitFor(20) { frameFiles(frames).count > shownCount }, "no new frame after mkdir: \(child.stderr.text)")
    let second = try frame(shownCount)
    #expect(differing(second, emptyScreen) == 0, "after mkdir the screen is not the empty folder's")
    #expect(child.stderr.text.contains("source appeared path=\(folder)"), "\(child.stderr.text)")

    // A photo copied in: the show starts with it; a second one joins it.
    try FileManager.default.copyItem(atPath: controlTestPhotos[0], toPath: folder + "/a.jpg")
    #expect(waitFor(20) { child.shown.contains { $0.src == folder + "/a.jpg" } }, "not shown: \(child.stderr.text)")
    try FileManager.default.copyItem(atPath: controlTestPhotos[1], toPath: folder + "/b.jpg")
    #expect(waitFor(20) { child.shown.contains { $0.src == folder + "/b.jpg" } }, "not shown: \(child.stderr.text)")
    // The playlist's log lines count right for one image and for two.
    let changes = child.stderr.lines.map(\.text).filter { $0.contains("directory changed") }
    #expect(changes.contains { $0.hasSuffix(#"detail="1 image""#) } && changes.contains { $0.hasSuffix(#"detail="2 images""#) },
            "\(changes)")
    #expect(child.stop() == 0)
}

/// On the virtual clock an offscreen run draws its frames and ends: with a missing folder it
/// writes the one screen that says so, and its last line tells how to wait for the folder
/// (a run that showed photos does not get that hint).
@Test func aVirtualClockRunOfAMissingFolderSaysHowToWait() throws {
    let base = controlTestDirectory()
    defer { try? FileManager.default.removeItem(atPath: base) }
    let missing = try KioskChild(["--display", "offscreen:" + base + "/a", "--size", "160x100", base + "/none"])
    #expect(waitFor(30) { !missing.process.isRunning && missing.stderr.text.contains("show done") }, "the run did not end")
    #expect(missing.stop() == 0)
    let done = missing.stderr.lines.map(\.text).filter { $0.contains("show done") }
    #expect(done.count == 1 && done[0].contains("no image was shown") && done[0].contains("--clock real --run-for"), "\(done)")

    let photos = try KioskChild(["--display", "offscreen:" + base + "/b", "--size", "160x100", "--interval", "1",
                                 controlTestPhotos[0]])
    #expect(waitFor(30) { !photos.process.isRunning && photos.stderr.text.contains("show done") }, "the run did not end")
    #expect(photos.stop() == 0)
    let shown = photos.stderr.lines.map(\.text).filter { $0.contains("show done") }
    #expect(shown.count == 1 && !shown[0].contains("no image was shown"), "\(shown)")
}

/// A SOURCE that is a symbolic link loop is not "not found": the screen and the log line say it
/// is a loop, with its path and errno (ELOOP); permission denied has its own words too.
@Test func aSymlinkLoopSourceSaysSoNotFolderNotFound() throws {
    let base = controlTestDirectory()
    defer { try? FileManager.default.removeItem(atPath: base) }
    let folder = base + "/photos", frames = base + "/frames"
    #expect(symlink(base + "/loop-b", folder) == 0 && symlink(folder, base + "/loop-b") == 0)
    let child = try KioskChild(["--display", "offscreen:" + frames, "--clock", "real", "--size", "320x200",
                                "--run-for", "30", folder])
    defer { _ = child.stop() }
    let text = FrameLoop.missingSourceText(ContentService.MissingSource(path: folder, errno: ELOOP, isImageFile: false))
    #expect(text.hasPrefix("Folder path is a symbolic link loop\n\n\(folder)\nToo many levels of symbolic links"),
            "\(text)")
    let screen = try statusScreen(text, width: 320, height: 200)
    func last() -> Bitmap? {
        guard let name = frameFiles(frames).last else { return nil }
        return try? ImageDecoder.decode(path: frames + "/" + name, options: DecodeOptions()).bitmap
    }
    #expect(waitFor(20) { last().map { differing($0, screen) == 0 } == true }, "\(child.stderr.text)")
    let lines = child.stderr.lines.map(\.text).filter { $0.contains("source is a symbolic link loop") }
    #expect(lines.count == 1 && lines[0].contains("path=\(folder)") && lines[0].contains("(errno 40)"),
            "\(child.stderr.text)")
    #expect(!child.stderr.text.contains("source missing"))
    let denied = FrameLoop.missingSourceText(ContentService.MissingSource(path: "/srv/p", errno: EACCES,
                                                                           isImageFile: true))
    #expect(denied.hasPrefix("Image file not readable: permission denied\n\n/srv/p\nPermission denied"), "\(denied)")
}

/// A folder that is there but cannot be read (mode 000; the show run as another user than root,
/// which passes every permission) says so, not "No images", and is taken up by itself once a
/// `chmod` makes it readable again, without SIGHUP.
@Test func anUnreadableFolderSaysSoAndIsTakenUpWhenMadeReadable() throws {
    let base = controlTestDirectory()
    defer { try? FileManager.default.removeItem(atPath: base) }
    let folder = base + "/photos", frames = base + "/frames", state = base + "/state"
    for dir in [folder, frames, state] {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }
    try FileManager.default.copyItem(atPath: controlTestPhotos[0], toPath: folder + "/a.jpg")
    #expect(chmod(base, 0o755) == 0 && chmod(frames, 0o777) == 0 && chmod(state, 0o777) == 0
            && chmod(folder + "/a.jpg", 0o644) == 0 && chmod(folder, 0) == 0)
    let child = try KioskChild(["--display", "offscreen:" + frames, "--clock", "real", "--size", "320x200",
                                "--interval", "2", "--fade", "200", "--run-for", "60", "--state-dir", state,
                                "--cache-dir", base + "/cache", folder], asUser: 65534)
    defer { _ = child.stop() }
    let text = FrameLoop.missingSourceText(ContentService.MissingSource(path: folder, errno: EACCES,
                                                                         isImageFile: false))
    let screen = try statusScreen(text, width: 320, height: 200)
    func last() -> Bitmap? {
        guard let name = frameFiles(frames).last else { return nil }
        return try? ImageDecoder.decode(path: frames + "/" + name, options: DecodeOptions()).bitmap
    }
    #expect(waitFor(20) { last().map { differing($0, screen) == 0 } == true }, "\(child.stderr.text)")
    let lines = child.stderr.lines.map(\.text).filter { $0.contains("source not readable") }
    #expect(lines.count == 1 && lines[0].contains("path=\(folder)") && lines[0].contains("(errno 13)"),
            "\(child.stderr.text)")
    #expect(!child.stderr.text.contains("no image files in directory"), "\(child.stderr.text)")
    #expect(chmod(folder, 0o755) == 0)
    #expect(waitFor(20) { child.shown.contains { $0.src == folder + "/a.jpg" } }, "not shown: \(child.stderr.text)")
    #expect(child.stop() == 0)
}

/// A file SOURCE that is a symbolic link whose target is removed (it dangles), with the real
/// program, real links and the real clock: one `source missing` line names the link's target,
/// the picture stays on screen (no frame is drawn, `status` still names it), and the target put
/// back (another picture renamed into place) is taken up within the watch's 2 s look and
/// cross-fades in, never waiting for the 60 s retry.
@Test func aDanglingLinkSourceSaysSoKeepsItsPictureAndIsTakenUpWhenItsTargetComesBack() throws {
    let base = controlTestDirectory()
    defer { try? FileManager.default.removeItem(atPath: base) }
    let frames = base + "/frames", target = base + "/t/menu.png", link = base + "/current.png"
    try FileManager.default.createDirectory(atPath: base + "/t", withIntermediateDirectories: true)
    try PNGWriter.write(Bitmap(width: 64, height: 40, fill: 0xFF00_FFFF), to: target)
    #expect(symlink(target, link) == 0)
    let socket = base + "/control"
    let child = try KioskChild(["--display", "offscreen:" + frames, "--clock", "real", "--size", "320x200",
                                "--interval", "2", "--fade", "200", "--run-for", "60", "--control", socket,
                                "--state-dir", base + "/state", "--cache-dir", base + "/cache", link])
    defer { _ = child.stop() }
    #expect(waitFor(20) { child.shown.contains { $0.src == link } }, "not shown: \(child.stderr.text)")
    #expect(unlink(target) == 0)
    let said = { child.stderr.lines.map(\.text).filter { $0.contains("source missing") } }
    #expect(waitFor(10) { !said().isEmpty }, "nothing said: \(child.stderr.text)")
    let framesBefore = frameFiles(frames).count
    usleep(2_500_000)
    let lines = said()
    #expect(lines.count == 1 && lines[0].contains("path=\(link)") && lines[0].contains("(errno 2)")
            && lines[0].contains("a symbolic link to \(target)"), "\(lines)")
    #expect(!child.stderr.text.contains("image skipped"), "\(child.stderr.text)")
    #expect(frameFiles(frames).count == framesBefore, "the picture stays: nothing drawn")
    let client = try ControlClient(path: socket)
    let status = try client.request(#"{"command":["status"]}"#)
    let data = status["data"] as? [String: Any] ?? [:]
    #expect(data["index"] as? Int == 0 && data["src"] as? String == link, "\(status)")

    let shownBefore = child.shown.count
    try PNGWriter.write(Bitmap(width: 64, height: 40, fill: 0xFFFF_FF00), to: target + ".new")
    #expect(rename(target + ".new", target) == 0)
    let back = wallNow()
    #expect(waitFor(10) { child.stderr.text.contains("source appeared path=\(link)") }, "\(child.stderr.text)")
    #expect(wallNow() - back < 3.5, "taken up within the watch's 2 s look")
    #expect(waitFor(10) { child.shown.count > shownBefore },
            "the new picture never came: \(child.stderr.text) \(child.stdout.text)")
    #expect(child.stop() == 0)
}

/// A folder SOURCE that is a symbolic link whose target folder is removed: its `source missing`
/// line names where the link leads, and the folder made again there is taken up.
@Test func aDanglingLinkToAFolderSaysWhereItLeads() throws {
    let base = controlTestDirectory()
    defer { try? FileManager.default.removeItem(atPath: base) }
    let frames = base + "/frames", target = base + "/t/photos", link = base + "/current"
    try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
    try PNGWriter.write(Bitmap(width: 64, height: 40, fill: 0xFF00_FFFF), to: target + "/a.png")
    #expect(symlink(target, link) == 0)
    let child = try KioskChild(["--display", "offscreen:" + frames, "--clock", "real", "--size", "320x200",
                                "--interval", "2", "--fade", "200", "--run-for", "60",
                                "--state-dir", base + "/state", "--cache-dir", base + "/cache", link])
    defer { _ = child.stop() }
    #expect(waitFor(20) { child.shown.contains { $0.src == link + "/a.png" } }, "not shown: \(child.stderr.text)")
    try FileManager.default.removeItem(atPath: target)
    let said = { child.stderr.lines.map(\.text).filter { $0.contains("source missing") } }
    #expect(waitFor(10) { !said().isEmpty }, "nothing said: \(child.stderr.text)")
    #expect(said().first?.contains("a symbolic link to \(target), which does not exist") == true, "\(said())")
    try FileManager.default.createDirectory(atPath: target + ".new", withIntermediateDirectories: true)
    try PNGWriter.write(Bitmap(width: 64, height: 40, fill: 0xFFFF_FF00), to: target + ".new/b.png")
    #expect(rename(target + ".new", target) == 0)
    #expect(waitFor(10) { child.shown.contains { $0.src == link + "/b.png" } }, "not taken up: \(child.stderr.text)")
    #expect(child.stop() == 0)
}
