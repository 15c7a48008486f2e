// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskText

// The words on screen (status screens, `--overlay`) come from ``ShowText``, loaded on a thread
// of its own: the frame loop never waits for FreeType, HarfBuzz or fontconfig. Until the load
// is done the loop draws its screens without words (the background, or the photo without the
// clock); the load's end wakes it (``ShowText/ready``) and the frame on screen is drawn again
// with them. On the virtual clock the loop waits for a load under way instead, as it waits for
// a decode, so the same inputs always give the same frames.

extension FrameLoop {
    /// The status screens' painter of the loop's renderer, when it is ``ShowText``'s.
    private var deferredPainter: DeferredMessagePainter? { renderer.painter as? DeferredMessagePainter }

    /// Text will be needed soon (a status screen is likely): start loading it, off the loop.
    func textWillBeNeeded() {
        text?.startLoading(frameWidth: renderer.width, frameHeight: renderer.height)
    }

    /// Takes the frame loop's renderer once the load is done: the status screens get their
    /// words and the `--overlay` clock is made (``overlayFormat``); the frame on screen is drawn
    /// again when it lacked them. On the virtual clock, waits for a load under way first.
    func serviceText() {
        guard let text else { return }
        if virtualClock != nil { text.waitWhileLoading() }
        guard let loaded = text.ready.take().last else { return }
        var redraw = false
        if let painter = deferredPainter, painter.adopt(loaded.renderer) {
            renderer.forgetMessageFrames()
            redraw = true
        }
        if let format = overlayFormat, clockOverlay == nil {
            clockOverlay = ClockOverlay(format: format, renderer: loaded.renderer, frameWidth: renderer.width, frameHeight: renderer.height)
            redraw = true
        }
        if redraw { lastScene = nil }
    }

    /// On the virtual clock, a frame just rendered without its words (a status screen drawn
    /// before the load was asked for): waits for the load and says whether to render it again.
    func renderAgainWithWords() -> Bool {
        guard virtualClock != nil, let text, text.started, deferredPainter?.painter == nil else { return false }
        serviceText()
        return deferredPainter?.painter != nil
    }
}
