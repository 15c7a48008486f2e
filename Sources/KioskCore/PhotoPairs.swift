// SPDX-License-Identifier: Apache-2.0
/// The shape of a picture as it is shown (after its EXIF orientation is applied): what
/// `--pair-portraits` pairs by (docs/carousel.md "Pairs").
public enum PhotoShape: Sendable, Equatable {
    /// Taller than wide.
    case portrait
    /// Wider than tall.
    case landscape
    /// As wide as tall: never paired.
    case square

    /// The shape of an upright picture of `width` x `height` pixels.
    public init(width: Int, height: Int) {
        self = width > height ? .landscape : height > width ? .portrait : .square
    }
}

/// How two pictures share the screen (`--pair-portraits`): side by side on a landscape (or
/// square) screen, one above the other on a portrait screen.
public enum PairLayout: Sendable, Equatable {
    /// Left half and right half (each `width / 2` and `width - width / 2` pixels wide).
    case sideBySide
    /// Top half and bottom half (each `height / 2` and `height - height / 2` pixels tall).
    case stacked

    /// The layout of a screen of `width` x `height` pixels.
    public init(screenWidth width: Int, screenHeight height: Int) {
        self = height > width ? .stacked : .sideBySide
    }

    /// The shape of picture this layout pairs: portraits side by side, landscapes stacked.
    public var pairs: PhotoShape { self == .sideBySide ? .portrait : .landscape }

    /// The two halves of a `width` x `height` frame, first then second (pixels).
    public func halves(width: Int, height: Int) -> (first: PixelRect, second: PixelRect) {
        switch self {
        case .sideBySide:
            let w = width / 2
            return (PixelRect(x: 0, y: 0, width: w, height: height),
                    PixelRect(x: w, y: 0, width: width - w, height: height))
        case .stacked:
            let h = height / 2
            return (PixelRect(x: 0, y: 0, width: width, height: h),
                    PixelRect(x: 0, y: h, width: width, height: height - h))
        }
    }

    /// Whether a point of a `width` x `height` screen (pixels) is in the second half.
    public func inSecondHalf(x: Double, y: Double, width: Int, height: Int) -> Bool {
        self == .sideBySide ? x >= Double(width / 2) : y >= Double(height / 2)
    }
}

/// The pairing of a play sequence (`--pair-portraits`, docs/carousel.md "Pairs"): each picture
/// of the layout's shape (``PairLayout/pairs``) takes as partner the next unpaired one of that
/// shape within ``lookAhead`` places after it; the partner leaves the sequence (it is shown in
/// the second half of its first's frame, under the first's index). A picture whose shape is not
/// known (not read yet, a download, another format) is never paired.
public enum PhotoPairs {
    /// How many places after a picture its partner is looked for (4).
    public static let lookAhead = 4

    /// `sequence` paired: the sequence without the partners, and each first's partner.
    /// `shape` gives the shape of a sequence entry (nil: unknown). `keep`: a pair to keep as it
    /// is when both are in the sequence and still of the shape (the one on screen), its first
    /// standing where it stands. `together`: whether two entries may pair (nil: any two); the
    /// shuffle's rounds keep a photo with a place still to come this round from pairing with one
    /// shown already, so that no photo shows twice in a round.
    public static func pair(_ sequence: [Int], layout: PairLayout, shape: (Int) -> PhotoShape?,
                            keep: (first: Int, second: Int)? = nil, together: ((Int, Int) -> Bool)? = nil,
                            lookAhead: Int = PhotoPairs.lookAhead) -> (sequence: [Int], partners: [Int: Int]) {
        let wanted = layout.pairs
        var taken = Set<Int>()
        var partners: [Int: Int] = [:]
        if let keep, keep.first != keep.second, shape(keep.first) == wanted, shape(keep.second) == wanted,
           sequence.contains(keep.first), sequence.contains(keep.second) {
            partners[keep.first] = keep.second
            taken = [keep.first, keep.second]
        }
        var out: [Int] = []
        out.reserveCapacity(sequence.count)
        for (i, item) in sequence.enumerated() {
            if partners[item] != nil { out.append(item); continue }
            guard !taken.contains(item) else { continue }
            taken.insert(item)
            out.append(item)
            guard shape(item) == wanted else { continue }
            var j = i + 1
            while j < sequence.count, j <= i + lookAhead {
                let other = sequence[j]
                if !taken.contains(other), shape(other) == wanted, together?(item, other) ?? true {
                    partners[item] = other
                    taken.insert(other)
                    break
                }
                j += 1
            }
        }
        return (out, partners)
    }
}
