// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskDisplay
import KioskSystem

/// The one step between a scene and the screen (docs/planes.md): where the display stacks layers
/// on planes (``KioskDisplay/Display/presentsLayers``), the scene goes there as layers and no
/// pixel of it is composed here; where it cannot (no atomic KMS, no plane free, a format, alpha or
/// position the driver refuses, `--display drm,planes=off`, a rotation, the virtual clock), the
/// scene is rendered on the CPU, on every core (``KioskSystem/ParallelRows``), and presented as a
/// bitmap.
/// Chosen per frame: a change of path is one atomic commit, so no black or torn frame between.
///
/// Each change of path is logged once (`frames on planes`, `frames composed on the CPU`).
/// Runs on the frame loop's thread.
public final class ScenePresenter {
    /// The thread team of the CPU path (blend, slide, scanout conversion by rows).
    public let rows: ParallelRows
    /// Whether the last frame went out on planes (nil before the first).
    public private(set) var lastOnPlanes: Bool?
    /// Frames presented on planes and composed on the CPU so far.
    public private(set) var planeFrames = 0, composedFrames = 0
    /// The display last given ``rows`` for its scanout conversion (once per display object).
    private weak var rowsGivenTo: Display?

    public init(threads: Int? = nil) { rows = ParallelRows(threads: threads) }

    /// Presents `scene`: as layers when `display` takes them (`useLayers`: false on the virtual
    /// clock, whose frames are the composed reference), else rendered by `renderer` from `slots`
    /// and presented as a frame; `render` is the CPU path's rendering (the frame loop's, which may
    /// render again once the words are loaded). After a frame on planes, the slot frames not yet
    /// in framebuffers are copied into them (``KioskDisplay/Display/prepareLayer(_:)``),
    /// so a fade's first frame finds its layers ready. Throws what the display throws.
    public func present(_ scene: Scene, renderer: SceneRenderer, slots: [Bitmap?], display: Display, showTime: Int64,
                        useLayers: Bool, render: () -> Bitmap) throws(DisplayError) {
        if renderer.rows == nil { renderer.rows = rows }
        if rowsGivenTo !== display { display.convertRows(with: rows); rowsGivenTo = display }
        // Pixels dimmed for --brightness are dimmed in the copy to scanout, which planes skip.
        let dimmed = (display as? PixelDimmable).map { !$0.pixelBrightness.isFull } ?? false
        if useLayers, !dimmed, display.presentsLayers, let layers = renderer.layers(scene, slots: slots),
           try display.present(layers: layers, background: renderer.background, showTime: showTime) {
            planeFrames += 1
            if lastOnPlanes != true {
                Log.info("frames on planes", detail: "\(layers.count) layers: no pixel composed on the CPU")
            }
            lastOnPlanes = true
            // Screen-sized frames only: a Ken Burns source never goes on a plane.
            for case let slot? in slots where slot.width == renderer.width && slot.height == renderer.height {
                display.prepareLayer(slot)
            }
            return
        }
        try display.present(render(), showTime: showTime)
        composedFrames += 1
        if lastOnPlanes == true {
            Log.info("frames composed on the CPU",
                     detail: "the planes cannot show this scene; \(rows.parallelism) threads")
        }
        lastOnPlanes = false
    }
}
