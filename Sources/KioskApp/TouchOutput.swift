// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskDisplay
import KioskSystem

/// Which of several outputs a touchscreen is mounted on (docs/touch.md "Several screens"):
/// touches map onto that output's panel and are measured in its pixels.
///
/// `--touch-output NAME` names it. Otherwise, in order: the one built-in panel (a connector
/// whose name starts `DSI`, `DPI`, `LVDS` or `eDP`: the DRM connector type names of
/// `drm_connector_enum_list` in the kernel's drivers/gpu/drm/drm_connector.c), else the one
/// panel of at most ``touchSizedPixels`` (1280x800) beside a larger one, else the first output.
public struct TouchOutputChoice: Equatable, Sendable {
    /// The chosen output's index in the list it was chosen from.
    public var index: Int
    /// Why, for the log (`named by --touch-output`, `the one built-in panel`, ...).
    public var reason: String
    /// The name asked for is not among the outputs (the first output is used meanwhile).
    public var missing: Bool

    /// The largest panel taken for a touchscreen beside a larger screen: 1280x800 pixels (the
    /// official Raspberry Pi Touch Display 2 is 720x1280, the first one 800x480).
    public static let touchSizedPixels = 1280 * 800

    /// The connector type names of built-in panels (drm_connector.c's `drm_connector_enum_list`).
    static let builtInPrefixes = ["DSI", "DPI", "LVDS", "eDP"]

    /// The output of `outputs` (at least one) a touchscreen belongs to; `named`: `--touch-output`.
    public static func choose(_ outputs: [OutputGeometry], named: String?) -> TouchOutputChoice {
        if let named {
            if let i = outputs.firstIndex(where: { $0.name == named }) {
                return TouchOutputChoice(index: i, reason: "named by --touch-output", missing: false)
            }
            return TouchOutputChoice(index: 0, reason: "--touch-output \(named) is not connected: the first output"
                                     + " until it is", missing: true)
        }
        let builtIn = outputs.indices.filter { i in builtInPrefixes.contains { outputs[i].name.hasPrefix($0) } }
        if builtIn.count == 1 {
            return TouchOutputChoice(index: builtIn[0], reason: "the one built-in panel", missing: false)
        }
        let pixels = outputs.map { $0.panelWidth * $0.panelHeight }
        let small = outputs.indices.filter { pixels[$0] <= touchSizedPixels }
        if small.count == 1, let largest = pixels.max(), largest > pixels[small[0]] {
            return TouchOutputChoice(index: small[0], reason: "the one panel of at most 1280x800 pixels",
                                     missing: false)
        }
        return TouchOutputChoice(index: 0, reason: "the first output", missing: false)
    }
}
