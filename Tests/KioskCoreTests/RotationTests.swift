// SPDX-License-Identifier: Apache-2.0
import KioskCore
import Testing

/// Every logical pixel goes to a distinct panel pixel and comes back; the table's corners.
@Test(arguments: Rotation.allCases)
func pixelsGoToThePanelAndBack(_ rotation: Rotation) {
    let (w, h) = (5, 3)
    let panel = rotation.panelSize(logicalWidth: w, logicalHeight: h)
    #expect(rotation.logicalSize(panelWidth: panel.width, panelHeight: panel.height) == (w, h))
    var seen = Set<Int>()
    for y in 0..<h {
        for x in 0..<w {
            let p = rotation.panelPixel(x: x, y: y, panelWidth: panel.width, panelHeight: panel.height)
            #expect((0..<panel.width).contains(p.x) && (0..<panel.height).contains(p.y))
            seen.insert(p.y * panel.width + p.x)
            #expect(rotation.logicalPixel(x: p.x, y: p.y, panelWidth: panel.width, panelHeight: panel.height) == (x, y))
        }
    }
    #expect(seen.count == w * h)
    // The scan walk agrees with the pixel map at every panel pixel.
    let walk = rotation.scan(logicalWidth: w, logicalHeight: h)
    for py in 0..<panel.height {
        for px in 0..<panel.width {
            let l = rotation.logicalPixel(x: px, y: py, panelWidth: panel.width, panelHeight: panel.height)
            #expect(walk.origin + px * walk.stepX + py * walk.stepY == l.y * w + l.x)
        }
    }
}

@Test func theTopLeftPixelLandsWhereTheTableSays() {
    // A 4x2 logical frame; the panel is 2x4 for 90 and 270.
    #expect(Rotation.none.panelPixel(x: 0, y: 0, panelWidth: 4, panelHeight: 2) == (0, 0))
    #expect(Rotation.clockwise90.panelPixel(x: 0, y: 0, panelWidth: 2, panelHeight: 4) == (1, 0))    // top-right
    #expect(Rotation.upsideDown.panelPixel(x: 0, y: 0, panelWidth: 4, panelHeight: 2) == (3, 1))     // bottom-right
    #expect(Rotation.clockwise270.panelPixel(x: 0, y: 0, panelWidth: 2, panelHeight: 4) == (0, 3))   // bottom-left
}

/// A touch on the panel maps to the logical position whose pixel the panel shows there.
@Test(arguments: Rotation.allCases)
func positionsGoToThePanelAndBackAndAgreeWithPixels(_ rotation: Rotation) {
    for (x, y) in [(0.0, 0.0), (0.25, 0.75), (1.0, 0.5), (0.9, 0.1)] {
        let p = rotation.panelPosition(logicalX: x, logicalY: y)
        let back = rotation.logicalPosition(panelX: p.x, panelY: p.y)
        #expect(abs(back.x - x) < 1e-12 && abs(back.y - y) < 1e-12)
    }
    // Pixel centres: the normalized map and the pixel map agree.
    let (w, h) = (8, 6)
    let panel = rotation.panelSize(logicalWidth: w, logicalHeight: h)
    for (x, y) in [(0, 0), (7, 0), (3, 5), (7, 5)] {
        let p = rotation.panelPixel(x: x, y: y, panelWidth: panel.width, panelHeight: panel.height)
        let l = rotation.logicalPosition(panelX: (Double(p.x) + 0.5) / Double(panel.width),
                                         panelY: (Double(p.y) + 0.5) / Double(panel.height))
        #expect(Int(l.x * Double(w)) == x && Int(l.y * Double(h)) == y)
    }
}
