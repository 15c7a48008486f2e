// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskDisplay
import KioskSystem

/// The frame loop's side of the control socket (docs/control-socket.md): the requests the
/// server received are carried out between frames and answered in their order. `screenshot`
/// reads the screen back here and hands the copy to ``ScreenshotWriter``, which writes the PNG
/// off the loop; requests that arrive meanwhile wait behind it so that replies keep their
/// order. The other commands are the show's to perform (``serve(perform:screen:)``).
///
/// Runs on the frame loop's thread.
final class ControlPort {
    /// What a screenshot needs to know of the screen now.
    struct Screen {
        var display: Display
        /// Something of the show is on the screen (see ``DisplaySupervisor/canDraw``).
        var canDraw: Bool
        var powerOn: Bool
        /// The item on screen: its index and source.
        var current: (index: Int, source: String)?
    }

    let server: ControlServer
    /// Where `screenshot` writes its PNGs; nil: no runtime or state directory.
    let screenshots: ScreenshotWriter?

    init(server: ControlServer, screenshots: ScreenshotWriter?) {
        self.server = server
        self.screenshots = screenshots
    }

    /// Readable when requests came, or a screenshot was written.
    var wakeDescriptors: [Int32] {
        [server.requests.wakeDescriptor] + [screenshots?.finished.wakeDescriptor].compactMap { $0 }
    }

    /// Carries out the requests received (and answers the screenshots written) since the last
    /// call, oldest first: `perform` does a command now; `screen` says what is on the screen
    /// for a `screenshot`. Never blocks.
    func serve(perform: (ControlCommand) -> Result<JSONValue?, ControlFailure>, screen: () -> Screen) {
        var requests = takeScreenshotsDone() + server.requests.take()
        while !requests.isEmpty {
            let request = requests.removeFirst()
            if holdBehindScreenshot(request) { continue }
            switch request.parsed {
            case .success(.screenshot(let path)): startScreenshot(request, path: path, screen: screen())
            case .success(let command): server.answer(request, perform(command))
            case .failure(let failure): server.answer(request, .failure(failure))
            }
        }
    }

    /// Answers the screenshots written since the last call; returns the requests held behind
    /// them, to be carried out now (oldest first).
    private func takeScreenshotsDone() -> [ControlRequest] {
        guard let screenshots else { return [] }
        for done in screenshots.finished.take() {
            server.answer(done.request, done.result)
            screenshots.inFlight = nil
        }
        guard screenshots.inFlight == nil else { return [] }
        defer { screenshots.held = [] }
        return screenshots.held
    }

    /// True (and `request` kept for later) while a screenshot is being written.
    private func holdBehindScreenshot(_ request: ControlRequest) -> Bool {
        guard let screenshots, screenshots.inFlight != nil else { return false }
        screenshots.held.append(request)
        return true
    }

    /// `["screenshot", PATH]`: checks PATH, reads the screen back (``Display/screenImage()``) and
    /// hands the copy to the writer; the reply (`path`, `width`, `height`, `bytes`, `index` and
    /// `src` of the image on screen) goes out when the file is in place. Errors are answered at
    /// once, among them a screen that is off or a VT switched away (nothing of the show is seen).
    private func startScreenshot(_ request: ControlRequest, path: String, screen: Screen) {
        func fail(_ message: String) { server.answer(request, .failure(ControlFailure(id: nil, message: message))) }
        guard let screenshots else { return fail("screenshot: not available (no screenshot folder; the log says why)") }
        let target: String
        switch screenshots.resolve(path) {
        case .failure(let failure): return server.answer(request, .failure(failure))
        case .success(let resolved): target = resolved
        }
        guard screen.canDraw else {
            return fail("screenshot: nothing of the show is on the screen: "
                        + (screen.powerOn ? "the VT is switched away" : "the screen is off"))
        }
        let start = ScreenshotWriter.monotonicMilliseconds()
        let image: Bitmap
        do {
            image = try screen.display.screenImage()
        } catch {
            return fail("screenshot: nothing to read back: \(error)")
        }
        let readBack = ScreenshotWriter.monotonicMilliseconds() - start
        var reply: [String: JSONValue] = ["path": .string(target), "width": .int(Int64(image.width)),
                                          "height": .int(Int64(image.height)), "index": .null, "src": .null]
        if let current = screen.current {
            reply["index"] = .int(Int64(current.index))
            reply["src"] = .string(Log.hidingPasswords(current.source))
        }
        screenshots.inFlight = request
        screenshots.write(image, to: target, reply: reply, for: request, readBackMilliseconds: readBack)
    }
}
