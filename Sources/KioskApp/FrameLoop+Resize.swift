// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskSystem
import KioskText

// The display came back at another size (another monitor, simpledrm's firmware framebuffer
// handed over to the real driver; docs/deployment.md "Check"): the show goes on in the same process, at the
// same image, laid out for the new size.

extension FrameLoop {
    /// When the display's logical size differs from the one the loop draws at: one log line with
    /// the new size; scenes, the "Loading…" and "no images" screens and the `--overlay` clock
    /// are laid out for it; swipes measure against the new width and touches map onto the new
    /// panel; the memory cache (all of the old size) is emptied and every slot prepared again
    /// on the decode worker, the current image first. Until it is ready the scene shows the
    /// placeholder, never an old frame stretched (``SceneRenderer`` draws a slot frame of
    /// another size as the placeholder). Returns true when the size changed.
    @discardableResult
    func adoptDisplaySize() -> Bool {
        let width = display.width, height = display.height
        guard width != renderer.width || height != renderer.height else { return false }
        Log.info("display size changed", detail: "\(renderer.width)x\(renderer.height) -> \(width)x\(height) pixels"
                 + " (panel \(display.panelWidth)x\(display.panelHeight)); the show goes on at its image, prepared again at the new size")
        let old = renderer
        renderer = SceneRenderer(width: width, height: height, background: old.background, painter: old.painter)
        renderer.noImagesMessage = old.noImagesMessage
        if let overlay = clockOverlay {  // its didSet hands it to the new renderer and formats it again
            clockOverlay = ClockOverlay(format: overlay.format, renderer: overlay.renderer, frameWidth: width, frameHeight: height)
        }
        let now = clock.now
        for gesture in gestures.cancel(at: now) { apply(gesture) }  // a finger measured against the old size
        gestures = GestureRecognizer(config: .standard(screenWidth: width, pixelsPerMillimetre: touchPixelsPerMillimetre))
        carousel.config.screenWidth = width
        touch?.setPanelSize(width: display.panelWidth, height: display.panelHeight)
        preparer.resize(width: width, height: height)
        slotFrames = [nil, nil, nil]
        slotFiles = [nil, nil, nil]
        handleControlActions(carousel.resized(at: now))
        lastScene = nil
        return true
    }
}
