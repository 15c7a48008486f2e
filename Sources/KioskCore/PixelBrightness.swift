// SPDX-License-Identifier: Apache-2.0
/// The screen dimmed by scaling its pixels (docs/power.md), for a screen whose light cannot be
/// set (a TV on HDMI): each of red, green and blue goes through a table that scales it **in
/// linear light** by the level, so that 40 % gives 40 % of the light, as a backlight at 40 % of
/// its `max_brightness` would, not the much darker 40 % of the encoded value.
///
/// The table for a level `f` maps an 8-bit sRGB value `v` to the `w` whose linear light is
/// nearest `f` times `v`'s, with the sRGB transfer function of IEC 61966-2-1 (``linearLight``).
/// The top byte (X or alpha) is kept. At full brightness there is no table and nothing is done.
/// Built once per level (256 entries); applied where frames are copied to the screen
/// (KioskDisplay's `ScanoutWriter`, the offscreen backend's PNG frames through ``dim(_:into:rows:)``).
public struct PixelBrightness: Equatable, Sendable, CustomStringConvertible {
    /// The level, per mille of full brightness (0 ... 1000).
    public let permille: Int
    /// The 256-entry table, nil at full brightness.
    public let table: [UInt8]?

    /// No change.
    public static let full = PixelBrightness(permille: 1000)

    /// The table for `permille` (clamped to 0 ... 1000).
    public init(permille: Int) {
        let f = min(1000, max(0, permille))
        self.permille = f
        guard f < 1000 else { table = nil; return }
        let linear = Self.linearLight
        table = (0..<256).map { v in
            // The target in the table's units times 1000; binary search for the nearest entry.
            let target = Int(linear[v]) * f
            var lo = 0, hi = 255
            while lo < hi {
                let mid = (lo + hi) / 2
                if Int(linear[mid]) * 1000 < target { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0, target - Int(linear[lo - 1]) * 1000 <= Int(linear[lo]) * 1000 - target { lo -= 1 }
            return UInt8(lo)
        }
    }

    public static func == (a: PixelBrightness, b: PixelBrightness) -> Bool { a.permille == b.permille }

    /// True at full brightness (nothing to do).
    public var isFull: Bool { table == nil }

    /// `40.0 %`.
    public var description: String { "\(permille / 10).\(permille % 10) %" }

    /// Writes `count` pixels read `step` pixels apart from `source` to consecutive `destination`
    /// pixels, XRGB8888 (bytes B, G, R, X; the X byte kept), each channel through the table.
    /// At full brightness a plain copy.
    @inline(__always)
    public func apply(_ source: UnsafePointer<UInt32>, step: Int, to destination: UnsafeMutablePointer<UInt32>,
                      count: Int) {
        guard let table else {
            for i in 0..<count { destination[i] = source[i &* step] }
            return
        }
        table.withUnsafeBufferPointer { t in
            let lut = t.baseAddress!
            var i = 0
            while i < count {
                let p = source[i &* step]
                let r = UInt32(lut[Int((p &>> 16) & 0xFF)]), g = UInt32(lut[Int((p &>> 8) & 0xFF)])
                let b = UInt32(lut[Int(p & 0xFF)])
                destination[i] = (p & 0xFF00_0000) | (r &<< 16) | (g &<< 8) | b
                i &+= 1
            }
        }
    }

    /// `frame` dimmed into `out` (the same size; may be `frame` itself), by rows across
    /// `splitter`'s threads (nil: this thread). XRGB8888 in and out.
    /// - Precondition: the two have the same size.
    public func dim(_ frame: Bitmap, into out: Bitmap, rows splitter: RowSplitter?) {
        precondition(frame.width == out.width && frame.height == out.height, "dim: sizes differ")
        let w = frame.width
        let src = UnsafePointer(frame.pixels), dst = out.pixels
        forEachBand(frame.height, splitter) { band in
            for y in band { apply(src + y * w, step: 1, to: dst + y * w, count: w) }
        }
    }

    /// The linear light of each 8-bit sRGB value, 0 ... 65535: `round(65535 * L)` with
    /// `L = c / 12.92` for `c <= 0.04045`, else `((c + 0.055) / 1.055)^2.4`, `c = v / 255`
    /// (IEC 61966-2-1:1999, the sRGB transfer function). Written out by
    /// `python3 -c 'print([round(65535*((v/255)/12.92 if v/255 <= 0.04045
    /// else ((v/255+0.055)/1.055)**2.4)) for v in range(256)])'` (one line).
    public static let linearLight: [UInt16] = [
    0, 20, 40, 60, 80, 99, 119, 139, 159, 179, 199, 219, 241, 264, 288, 313,
    340, 367, 396, 427, 458, 491, 526, 562, 599, 637, 677, 718, 761, 805, 851, 898,
    947, 997, 1048, 1101, 1156, 1212, 1270, 1330, 1391, 1453, 1517, 1583, 1651, 1720, 1790, 1863,
    1937, 2013, 2090, 2170, 2250, 2333, 2418, 2504, 2592, 2681, 2773, 2866, 2961, 3058, 3157, 3258,
    3360, 3464, 3570, 3678, 3788, 3900, 4014, 4129, 4247, 4366, 4488, 4611, 4736, 4864, 4993, 5124,
    5257, 5392, 5530, 5669, 5810, 5953, 6099, 6246, 6395, 6547, 6700, 6856, 7014, 7174, 7335, 7500,
    7666, 7834, 8004, 8177, 8352, 8528, 8708, 8889, 9072, 9258, 9445, 9635, 9828, 10022, 10219, 10417,
    10619, 10822, 11028, 11235, 11446, 11658, 11873, 12090, 12309, 12530, 12754, 12980, 13209, 13440, 13673, 13909,
    14146, 14387, 14629, 14874, 15122, 15371, 15623, 15878, 16135, 16394, 16656, 16920, 17187, 17456, 17727, 18001,
    18277, 18556, 18837, 19121, 19407, 19696, 19987, 20281, 20577, 20876, 21177, 21481, 21787, 22096, 22407, 22721,
    23038, 23357, 23678, 24002, 24329, 24658, 24990, 25325, 25662, 26001, 26344, 26688, 27036, 27386, 27739, 28094,
    28452, 28813, 29176, 29542, 29911, 30282, 30656, 31033, 31412, 31794, 32179, 32567, 32957, 33350, 33745, 34143,
    34544, 34948, 35355, 35764, 36176, 36591, 37008, 37429, 37852, 38278, 38706, 39138, 39572, 40009, 40449, 40891,
    41337, 41785, 42236, 42690, 43147, 43606, 44069, 44534, 45002, 45473, 45947, 46423, 46903, 47385, 47871, 48359,
    48850, 49344, 49841, 50341, 50844, 51349, 51858, 52369, 52884, 53401, 53921, 54445, 54971, 55500, 56032, 56567,
    57105, 57646, 58190, 58737, 59287, 59840, 60396, 60955, 61517, 62082, 62650, 63221, 63795, 64372, 64952, 65535,
    ]
}
