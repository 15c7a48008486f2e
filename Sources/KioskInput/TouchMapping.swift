// SPDX-License-Identifier: Apache-2.0
import KioskCore

/// The way from device units to logical screen pixels (docs/touch.md):
///
/// 1. normalize with the device's own axis range: `(value - minimum) / (maximum - minimum)`, so the
///    minimum maps to 0 and the maximum to 1 (libinput divides by `maximum - minimum + 1`; the
///    difference of one device unit is what lets the maximum reach the last pixel);
/// 2. apply the ``TouchCalibration`` (normalized device → normalized panel);
/// 3. undo the display rotation (normalized panel → normalized logical frame) with
///    ``KioskCore/Rotation/logicalPosition(panelX:panelY:)``, the inverse of the copy to scanout.
///    For `.clockwise90` the logical frame's top row lies along the panel's right edge, so a swipe
///    towards the viewer's left (the panel's top edge) decreases logical x.
/// 4. scale to the logical size and clamp into `0 ..< width` and `0 ..< height`.
public struct TouchMapping: Equatable, Sendable {
    /// The device axes positions come from (ABS_MT_POSITION_X/Y, else ABS_X/ABS_Y), device units.
    public var xAxis: AbsoluteAxis
    public var yAxis: AbsoluteAxis
    public var calibration: TouchCalibration
    public var rotation: Rotation
    /// The panel (the display mode), pixels, as mounted: not rotated.
    public var panelWidth: Int
    public var panelHeight: Int

    public init(xAxis: AbsoluteAxis, yAxis: AbsoluteAxis, calibration: TouchCalibration = .identity,
                rotation: Rotation = .none, panelWidth: Int, panelHeight: Int) {
        self.xAxis = xAxis; self.yAxis = yAxis; self.calibration = calibration; self.rotation = rotation
        self.panelWidth = panelWidth; self.panelHeight = panelHeight
    }

    /// The logical frame the compositor draws, pixels (width and height swapped for 90 and 270).
    public var logicalWidth: Int { rotation.logicalSize(panelWidth: panelWidth, panelHeight: panelHeight).width }
    public var logicalHeight: Int { rotation.logicalSize(panelWidth: panelWidth, panelHeight: panelHeight).height }

    /// A device position (device units, possibly fractional) normalized with the axis ranges:
    /// 0 at the minimum, 1 at the maximum; not clamped.
    public func normalized(deviceX: Double, deviceY: Double) -> (x: Double, y: Double) {
        func n(_ v: Double, _ axis: AbsoluteAxis) -> Double {
            let span = Double(axis.maximum) - Double(axis.minimum)
            return span > 0 ? (v - Double(axis.minimum)) / span : 0
        }
        return (n(deviceX, xAxis), n(deviceY, yAxis))
    }

    /// The logical pixel position of a device position, clamped into the logical frame.
    public func logicalPoint(deviceX: Double, deviceY: Double) -> (x: Double, y: Double) {
        let device = normalized(deviceX: deviceX, deviceY: deviceY)
        let panel = calibration.apply(x: device.x, y: device.y)
        let logical = rotation.logicalPosition(panelX: panel.x, panelY: panel.y)
        func clamp(_ v: Double, _ size: Int) -> Double {
            let top = Double(max(size, 1)).nextDown
            return v.isNaN ? 0 : min(max(v, 0), top)
        }
        return (clamp(logical.x * Double(logicalWidth), logicalWidth),
                clamp(logical.y * Double(logicalHeight), logicalHeight))
    }

    /// Screen pixels per millimetre of finger travel, from the x axis resolution (device units per
    /// millimetre, `input_absinfo.resolution`) and the panel size: one millimetre along device x,
    /// taken through the calibration, measured in panel pixels. Nil when the device reports no
    /// resolution (0), as many do, or one that makes the panel implausibly narrow or wide (under
    /// 20 mm or over 3 m along x). Used to size the gesture slop (2.5 mm).
    public var pixelsPerMillimetre: Double? {
        let span = Double(xAxis.maximum) - Double(xAxis.minimum)
        guard xAxis.resolution > 0, span > 0 else { return nil }
        let widthMillimetres = span / Double(xAxis.resolution)
        guard (20...3000).contains(widthMillimetres) else { return nil }
        let step = Double(xAxis.resolution) / span  // normalized device units per mm
        let dx = calibration.a * step * Double(panelWidth), dy = calibration.d * step * Double(panelHeight)
        let result = (dx * dx + dy * dy).squareRoot()
        return result > 0 ? result : nil
    }
}
