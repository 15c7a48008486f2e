// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskDisplay
import KioskSystem

/// The touchscreen of a show on several outputs (docs/touch.md "Several screens"): touches map
/// onto the output it is mounted on (``TouchOutputChoice``), in that output's pixels; a drag is
/// the same share of the show's width as of that screen's, a tap is hit-tested and reported
/// (`"output":"DSI-1"`) on it.
extension FrameLoop {
    /// How many of the show's pixels (the first output's) one pixel of the touch output is: a
    /// drag's offset and speed are scaled by it. 1 with one output or the first one touched.
    var touchScale: Double {
        guard let g = touchGeometry, g.width > 0 else { return 1 }
        return Double(display.width) / Double(g.width)
    }

    /// Chooses the touch output among the outputs showing now (at the start, and when one came,
    /// went or changed size); when it changed, touches map onto it from now on (a finger down
    /// is let go) and the choice is logged once.
    func chooseTouchOutput() {
        guard let set = display.outputSet else { return }
        let outputs = set.outputGeometries
        guard !outputs.isEmpty else { return }
        let choice = TouchOutputChoice.choose(outputs, named: configuration.touchOutput)
        let chosen = outputs[choice.index]
        let geometry: OutputGeometry? = choice.index == 0 ? nil : chosen
        if outputs.count > 1 || choice.missing {
            let line = "\(chosen.name) \(chosen.width)x\(chosen.height): \(choice.reason)"
            if line != touchChoiceSaid, touch.feed != nil {
                touchChoiceSaid = line
                if choice.missing { Log.warning("touch output", reason: line) } else {
                    Log.info("touch output", detail: line)
                }
            }
        }
        guard geometry != touchGeometry else { return }
        touchGeometry = geometry
        let g = geometry ?? OutputGeometry(name: "", width: display.width, height: display.height,
                                           panelWidth: display.panelWidth, panelHeight: display.panelHeight)
        for gesture in touch.resize(width: g.width, panelWidth: g.panelWidth, panelHeight: g.panelHeight,
                                    at: clock.now) {
            apply(gesture)
        }
    }
}
