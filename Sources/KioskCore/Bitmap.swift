// SPDX-License-Identifier: Apache-2.0
/// A 32-bit-per-pixel image held in memory: the one pixel container of kiosk-carousel.
///
/// Pixel format: each pixel is one little-endian `UInt32` `0xAARRGGBB`, so the bytes in memory
/// are B, G, R, A (DRM fourcc `XRGB8888` when ``hasAlpha`` is false and the top byte is
/// ignored, `ARGB8888` with straight, non-premultiplied alpha when it is true).
/// Rows are packed: ``bytesPerRow`` is always `width * 4`.
///
/// Ownership: the bitmap owns its pixel memory (allocated in `init`, or adopted with
/// ``init(adopting:width:height:hasAlpha:deallocator:)``, and freed in `deinit`).
/// Pointers handed out by ``pixels`` are valid while the bitmap is alive. A bitmap is handed
/// from the decode worker to the frame loop and is never written by two threads at once,
/// hence `@unchecked Sendable`.
///
/// Sizes: `width * height * 4` must fit in an `Int` (``byteCount(width:height:)``); the
/// allocating initialisers stop the program otherwise, and when the memory cannot be had.
/// They are for sizes the program chooses (screen frames). A size read from a file goes
/// through a fallible allocation instead (KioskImaging's `Bitmap(allocatingWidth:height:hasAlpha:)`,
/// built on the adopting initialiser), so that no header can stop the program.
public final class Bitmap: @unchecked Sendable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// True when the top byte of each pixel is a straight alpha value (ARGB8888).
    public var hasAlpha: Bool
    /// The pixels, `width * height` of them, row after row.
    public let pixels: UnsafeMutablePointer<UInt32>
    /// Frees adopted memory; nil when the bitmap allocated it itself.
    private let deallocator: (@Sendable (UnsafeMutablePointer<UInt32>) -> Void)?

    /// Bytes from the start of one row to the start of the next: `width * 4`.
    public var bytesPerRow: Int { width * 4 }
    /// Number of pixels (`width * height`).
    public var pixelCount: Int { width * height }
    /// Size of the pixel memory in bytes.
    public var byteCount: Int { width * height * 4 }

    /// `width * height * 4`, the bytes of a bitmap of that size, or nil when a side is not
    /// positive or the product does not fit in an `Int` (checked with
    /// `multipliedReportingOverflow`, never trapping).
    public static func byteCount(width: Int, height: Int) -> Int? {
        guard width > 0, height > 0 else { return nil }
        let (pixels, o1) = width.multipliedReportingOverflow(by: height)
        let (bytes, o2) = pixels.multipliedReportingOverflow(by: 4)
        return o1 || o2 ? nil : bytes
    }

    /// The pixel count of a bitmap the program allocates itself, after the checks that make
    /// it safe (positive sides, no overflow).
    private static func checkedPixelCount(_ width: Int, _ height: Int) -> Int {
        precondition(width > 0 && height > 0, "Bitmap needs a positive size, got \(width)x\(height)")
        precondition(byteCount(width: width, height: height) != nil,
                     "Bitmap of \(width)x\(height) pixels: its size in bytes does not fit in an Int")
        return width * height
    }

    /// Allocates a bitmap of `width` x `height` pixels filled with `fill` (default opaque black).
    /// - Precondition: `width > 0 && height > 0`, and `width * height * 4` fits in an `Int`.
    public init(width: Int, height: Int, hasAlpha: Bool = false, fill: UInt32 = 0xFF00_0000) {
        let count = Self.checkedPixelCount(width, height)
        self.width = width
        self.height = height
        self.hasAlpha = hasAlpha
        pixels = .allocate(capacity: count)
        pixels.initialize(repeating: fill, count: count)
        deallocator = nil
    }

    /// Allocates a bitmap of `width` x `height` pixels whose contents are undefined: for a
    /// producer that writes every pixel anyway (a decoder, a full-frame blend), which saves a
    /// pass over the memory.
    /// - Precondition: as ``init(width:height:hasAlpha:fill:)``.
    public init(uninitializedWidth width: Int, height: Int, hasAlpha: Bool = false) {
        let count = Self.checkedPixelCount(width, height)
        self.width = width
        self.height = height
        self.hasAlpha = hasAlpha
        pixels = .allocate(capacity: count)
        deallocator = nil
    }

    /// A bitmap over `width * height` pixels of memory allocated elsewhere (`malloc`, say),
    /// which it now owns: `deallocator` is called with `pixels` when the bitmap goes. The
    /// contents are taken as they are.
    /// - Precondition: `width > 0 && height > 0`, `width * height * 4` fits in an `Int`, and
    ///   `pixels` holds that many bytes, aligned for `UInt32`.
    public init(adopting pixels: UnsafeMutablePointer<UInt32>, width: Int, height: Int, hasAlpha: Bool = false,
                deallocator: @escaping @Sendable (UnsafeMutablePointer<UInt32>) -> Void) {
        _ = Self.checkedPixelCount(width, height)
        self.width = width
        self.height = height
        self.hasAlpha = hasAlpha
        self.pixels = pixels
        self.deallocator = deallocator
    }

    deinit {
        if let deallocator { deallocator(pixels) } else { pixels.deallocate() }
    }

    /// The pixel at column `x`, row `y` (both in pixels from the top-left corner).
    @inlinable public subscript(x: Int, y: Int) -> UInt32 {
        get { pixels[y * width + x] }
        set { pixels[y * width + x] = newValue }
    }

    /// Pointer to the first pixel of row `y`.
    @inlinable public func row(_ y: Int) -> UnsafeMutablePointer<UInt32> { pixels + y * width }

    /// Sets every pixel to `value`.
    public func fill(_ value: UInt32) { pixels.update(repeating: value, count: pixelCount) }

    /// A copy with its own memory.
    public func copy() -> Bitmap {
        let b = Bitmap(uninitializedWidth: width, height: height, hasAlpha: hasAlpha)
        b.pixels.update(from: pixels, count: pixelCount)
        return b
    }
}

/// An opaque sRGB colour, 8 bits per channel.
public struct RGBColor: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var red: UInt8, green: UInt8, blue: UInt8
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red; self.green = green; self.blue = blue
    }
    /// Parses `RRGGBB` (six hex digits, an optional leading `#`). Returns nil for anything else.
    public init?(hex: String) {
        var s = Substring(hex)
        if s.hasPrefix("#") { s = s.dropFirst() }
        guard s.count == 6, s.allSatisfy(\.isHexDigit), let v = UInt32(s, radix: 16) else { return nil }
        self.init(red: UInt8(v >> 16), green: UInt8((v >> 8) & 0xFF), blue: UInt8(v & 0xFF))
    }
    /// The colour as an XRGB8888 pixel with the X byte set to 0xFF.
    public var xrgb: UInt32 { 0xFF00_0000 | UInt32(red) << 16 | UInt32(green) << 8 | UInt32(blue) }
    /// The colour of an XRGB8888 pixel (the top byte is ignored).
    public init(xrgb: UInt32) {
        self.init(red: UInt8((xrgb >> 16) & 0xFF), green: UInt8((xrgb >> 8) & 0xFF), blue: UInt8(xrgb & 0xFF))
    }
    public static let black = RGBColor(red: 0, green: 0, blue: 0)
    public static let white = RGBColor(red: 255, green: 255, blue: 255)
    /// `RRGGBB` in lower-case hex.
    public var description: String {
        let v = String(xrgb & 0xFF_FFFF, radix: 16)
        return String(repeating: "0", count: 6 - v.count) + v
    }
}
