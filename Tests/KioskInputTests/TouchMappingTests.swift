// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskCore
import KioskInput

@Suite struct TouchMappingTests {
    static let x = AbsoluteAxis(minimum: 0, maximum: 4095), y = AbsoluteAxis(minimum: 0, maximum: 4095)

    /// Every recorded device's corners land on the screen's corners, for every rotation: the
    /// device's (min, min) is the panel's top-left corner wherever that is in the logical frame.
    @Test(arguments: Rotation.allCases)
    func recordedRangesMapCornersOntoScreenCorners(_ rotation: Rotation) throws {
        for name in try Evemu.descriptions() {
            let caps = try EvemuDevice(parsing: Evemu.text(name)).capabilities
            let axes = try #require(caps.positionAxes)
            let m = TouchMapping(xAxis: axes.x, yAxis: axes.y, rotation: rotation, panelWidth: 1920, panelHeight: 1080)
            let w = Double(m.logicalWidth), h = Double(m.logicalHeight)
            let lo = (Double(axes.x.minimum), Double(axes.y.minimum)),
                hi = (Double(axes.x.maximum), Double(axes.y.maximum))
            // Panel corners in logical coordinates: 0 or the far edge (w.nextDown, within the last pixel).
            func at(_ dx: Double, _ dy: Double) -> (x: Double, y: Double) { m.logicalPoint(deviceX: dx, deviceY: dy) }
            let corners = [at(lo.0, lo.1), at(hi.0, lo.1), at(hi.0, hi.1), at(lo.0, hi.1)]  // panel TL, TR, BR, BL
            let expected: [(Double, Double)]
            switch rotation {
            case .none: expected = [(0, 0), (w, 0), (w, h), (0, h)]
            case .clockwise90: expected = [(0, h), (0, 0), (w, 0), (w, h)]
            case .upsideDown: expected = [(w, h), (0, h), (0, 0), (w, 0)]
            case .clockwise270: expected = [(w, 0), (w, h), (0, h), (0, 0)]
            }
            for (got, want) in zip(corners, expected) {
                #expect(abs(got.x - want.0) < 1e-6 && abs(got.y - want.1) < 1e-6,
                        "\(name) \(rotation): \(got) != \(want)")
                #expect(got.x >= 0 && got.x < w && got.y >= 0 && got.y < h)
            }
            // The centre stays the centre.
            let c = at((lo.0 + hi.0) / 2, (lo.1 + hi.1) / 2)
            #expect(abs(c.x - w / 2) < 1e-6 && abs(c.y - h / 2) < 1e-6)
        }
    }

    /// A swipe towards the viewer's left, in device coordinates, comes out as decreasing logical x
    /// with y unchanged. The panel is fixed to the display: with `.clockwise90` the panel's own top
    /// edge is at the viewer's left, so the swipe runs towards device y = minimum.
    @Test(arguments: [
        (Rotation.none, (3000.0, 2048.0), (1000.0, 2048.0)),
        (Rotation.clockwise90, (2048.0, 3000.0), (2048.0, 1000.0)),
        (Rotation.upsideDown, (1000.0, 2048.0), (3000.0, 2048.0)),
        (Rotation.clockwise270, (2048.0, 1000.0), (2048.0, 3000.0)),
    ])
    func swipeTowardsViewersLeft(_ rotation: Rotation, _ from: (Double, Double), _ to: (Double, Double)) {
        let m = TouchMapping(xAxis: Self.x, yAxis: Self.y, rotation: rotation, panelWidth: 1280, panelHeight: 800)
        let a = m.logicalPoint(deviceX: from.0, deviceY: from.1), b = m.logicalPoint(deviceX: to.0, deviceY: to.1)
        #expect(b.x < a.x - 100)
        #expect(abs(b.y - a.y) < 1e-9)
    }

    /// And a swipe towards the viewer's top decreases logical y.
    @Test(arguments: [
        (Rotation.none, (2048.0, 3000.0), (2048.0, 1000.0)),
        (Rotation.clockwise90, (1000.0, 2048.0), (3000.0, 2048.0)),
        (Rotation.upsideDown, (2048.0, 1000.0), (2048.0, 3000.0)),
        (Rotation.clockwise270, (3000.0, 2048.0), (1000.0, 2048.0)),
    ])
    func swipeTowardsViewersTop(_ rotation: Rotation, _ from: (Double, Double), _ to: (Double, Double)) {
        let m = TouchMapping(xAxis: Self.x, yAxis: Self.y, rotation: rotation, panelWidth: 1280, panelHeight: 800)
        let a = m.logicalPoint(deviceX: from.0, deviceY: from.1), b = m.logicalPoint(deviceX: to.0, deviceY: to.1)
        #expect(b.y < a.y - 100)
        #expect(abs(b.x - a.x) < 1e-9)
    }

    @Test func logicalSizeSwapsFor90And270() {
        let m = TouchMapping(xAxis: Self.x, yAxis: Self.y, rotation: .clockwise90, panelWidth: 1280, panelHeight: 800)
        #expect(m.logicalWidth == 800 && m.logicalHeight == 1280)
        // Device (max, 0), the panel's top-right corner, holds the logical frame's top-left pixel
        // (ScanoutWriter's table: logical (0, 0) lands at panel (Pw - 1, 0)).
        let p = m.logicalPoint(deviceX: 4095, deviceY: 0)
        #expect(p.x < 1 && p.y < 1)
    }

    @Test func calibrationAppliesBeforeRotation() {
        // invert-x on a 90-degree screen: device x minimum is now the panel's right edge.
        let m = TouchMapping(xAxis: Self.x, yAxis: Self.y, calibration: .invertX, rotation: .clockwise90,
                             panelWidth: 1280, panelHeight: 800)
        let p = m.logicalPoint(deviceX: 0, deviceY: 0)
        #expect(p.x < 1 && p.y < 1)
        // swap-xy: device y runs along the panel's x.
        let s = TouchMapping(xAxis: Self.x, yAxis: Self.y, calibration: .swapXY, panelWidth: 1280, panelHeight: 800)
        let q = s.logicalPoint(deviceX: 4095, deviceY: 0)
        #expect(q.x == 0 && q.y > 799)
    }

    @Test func outOfRangeIsClampedIntoTheFrame() {
        let m = TouchMapping(xAxis: Self.x, yAxis: Self.y, panelWidth: 1280, panelHeight: 800)
        let p = m.logicalPoint(deviceX: -50, deviceY: 5000)
        #expect(p.x == 0)
        #expect(p.y < 800 && p.y > 799.99)
    }

    @Test func pixelsPerMillimetre() throws {
        // ELAN Touchscreen: 3312 units at 10 units/mm = 331 mm wide; on a 1920-pixel panel 5.8 px/mm.
        let elan = try EvemuDevice(parsing: Evemu.text("ELAN Touchscreen.desc")).capabilities
        let axes = try #require(elan.positionAxes)
        let m = TouchMapping(xAxis: axes.x, yAxis: axes.y, panelWidth: 1920, panelHeight: 1080)
        let ppmm = try #require(m.pixelsPerMillimetre)
        #expect(abs(ppmm - 1920.0 * 10 / 3312) < 1e-9)
        // Rotation does not change it; swap-xy takes the panel height along device x.
        let r = TouchMapping(xAxis: axes.x, yAxis: axes.y, rotation: .clockwise270, panelWidth: 1920, panelHeight: 1080)
        #expect(r.pixelsPerMillimetre == ppmm)
        let s = TouchMapping(xAxis: axes.x, yAxis: axes.y, calibration: .swapXY, panelWidth: 1920, panelHeight: 1080)
        #expect(abs(s.pixelsPerMillimetre! - 1080.0 * 10 / 3312) < 1e-9)
        // No resolution reported: nil.
        let atmel = try EvemuDevice(parsing: Evemu.text("Atmel maXTouch Touchscreen.desc")).capabilities
        let a = try #require(atmel.positionAxes)
        #expect(TouchMapping(xAxis: a.x, yAxis: a.y, panelWidth: 800, panelHeight: 480).pixelsPerMillimetre == nil)
        // A resolution that makes the panel 1 mm (or 40 m) wide is not believed.
        let tiny = AbsoluteAxis(minimum: 0, maximum: 1279, resolution: 1279)
        let huge = AbsoluteAxis(minimum: 0, maximum: 40_000, resolution: 1)
        #expect(TouchMapping(xAxis: tiny, yAxis: tiny, panelWidth: 800, panelHeight: 480).pixelsPerMillimetre == nil)
        #expect(TouchMapping(xAxis: huge, yAxis: huge, panelWidth: 800, panelHeight: 480).pixelsPerMillimetre == nil)
    }
}
