// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskDisplay
import KioskSystem

// The frame loop's side of the control socket's `screenshot` (docs/control-socket.md): the
// screen is read back here, between frames; the PNG is written by ``ScreenshotWriter`` off the
// loop, and requests that arrive meanwhile wait so that replies keep their order.

extension FrameLoop {
    /// Answers the screenshots written since the last call; returns the requests held behind
    /// them, to be carried out now (oldest first).
    func takeScreenshotsDone() -> [ControlRequest] {
        guard let control, let screenshots else { return [] }
        for done in screenshots.finished.take() {
            control.answer(done.request, done.result)
            screenshots.inFlight = nil
        }
        guard screenshots.inFlight == nil else { return [] }
        defer { screenshots.held = [] }
        return screenshots.held
    }

    /// True (and `request` kept for later) while a screenshot is being written.
    func holdBehindScreenshot(_ request: ControlRequest) -> Bool {
        guard let screenshots, screenshots.inFlight != nil else { return false }
        screenshots.held.append(request)
        return true
    }

    /// `["screenshot", PATH]`: checks PATH, reads the screen back (``Display/screenImage()``) and
    /// hands the copy to the writer; the reply (`path`, `width`, `height`, `bytes`, `index` and
    /// `src` of the image on screen) goes out when the file is in place. Errors are answered at
    /// once, among them a screen that is off or a VT switched away (nothing of the show is seen).
    func startScreenshot(_ request: ControlRequest, path: String) {
        guard let control else { return }
        func fail(_ message: String) { control.answer(request, .failure(ControlFailure(id: nil, message: message))) }
        guard let screenshots else { return fail("screenshot: not available (no runtime or state directory)") }
        let target: String
        switch screenshots.resolve(path) {
        case .failure(let failure): return control.answer(request, .failure(failure))
        case .success(let resolved): target = resolved
        }
        guard displayControl.canDraw else {
            return fail("screenshot: nothing of the show is on the screen: "
                        + (displayControl.powerOn ? "the VT is switched away" : "the screen is off"))
        }
        let start = ScreenshotWriter.monotonicMilliseconds()
        let image: Bitmap
        do {
            image = try display.screenImage()
        } catch {
            return fail("screenshot: nothing to read back: \(error)")
        }
        let readBack = ScreenshotWriter.monotonicMilliseconds() - start
        var reply: [String: JSONValue] = ["path": .string(target), "width": .int(Int64(image.width)),
                                          "height": .int(Int64(image.height)), "index": .null, "src": .null]
        if let item = carousel.currentItem {
            reply["index"] = .int(Int64(item))
            reply["src"] = .string(Log.hidingPasswords(carousel.items[item].source))
        }
        screenshots.inFlight = request
        screenshots.write(image, to: target, reply: reply, for: request, readBackMilliseconds: readBack)
    }
}
