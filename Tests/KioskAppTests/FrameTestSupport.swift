// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskImaging
@testable import KioskApp

// Pictures and frames the display-size tests (DisplayResizeTests, MirroredOutputsTests) and the
// frame kernel tests compare against.

/// A new folder /tmp/kc-NAME-XXXXXX (mkdtemp(3)).
func frameTestDirectory(_ name: String) -> String {
    var template = Array("/tmp/kc-\(name)-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
}

/// A 64x40 PNG of four coloured quadrants (`colours`: top left, top right, bottom left, bottom
/// right, XRGB8888) at `path`: its fit shows the frame's shape.
func writePattern(_ path: String, colours: [UInt32]) throws {
    let b = Bitmap(width: 64, height: 40)
    for y in 0..<40 { for x in 0..<64 { b.row(y)[x] = colours[(y < 20 ? 0 : 2) + (x < 32 ? 0 : 1)] } }
    try PNGWriter.write(b, to: path)
}

/// Whether two bitmaps have the same size and the same pixels.
func same(_ a: Bitmap, _ b: Bitmap) -> Bool {
    a.width == b.width && a.height == b.height && (0..<a.pixelCount).allSatisfy { a.pixels[$0] == b.pixels[$0] }
}

/// The frame the preparer makes of `path` at `width` x `height` (fitted, letterboxed on black):
/// what one output of that size alone shows.
func expected(_ path: String, _ width: Int, _ height: Int) throws -> Bitmap {
    let preparer = try SlotPreparer(width: width, height: height, fit: .fit, background: .black, maxPixels: 1 << 20)
    guard case .frame(let frame) = preparer.prepare(.init(slot: 0, ticket: 1, item: 0, path: path)).outcome else {
        throw ControlTestFailure("\(path) did not prepare")
    }
    return frame
}
