// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskSystem
import Glibc

/// Why an image could not be decoded or written. Every case carries the path (or, for
/// ``ImageDecoder/decode(bytes:name:options:)``, the name given) and what went wrong;
/// ``description`` is the log line, e.g.
/// `/x/big.jpg: 65500x65500 pixels (4290250000) exceeds the pixel limit of 100000000`.
public enum ImageError: Error, CustomStringConvertible, Equatable, Sendable {
    /// `open`, `fstat` or `read` failed with `errno` (missing file, permission, ...). A
    /// directory is `EISDIR`.
    case unreadable(path: String, errno: Int32)
    /// The path is not a regular file: `kind` is `FIFO`, `character device`, `block device`
    /// or `socket`. Refused at once, before anything is read: a FIFO would block (or, with
    /// no writer, read as empty), a pipe cannot be read twice, and `/dev/zero` or
    /// `/dev/urandom` never end.
    case notRegularFile(path: String, kind: String)
    /// The first bytes are neither a JPEG (`FF D8`) nor a PNG signature: `format` is what they
    /// are (``FileFormat``: GIF, WebP, HEIF, AVIF, BMP, TIFF, JPEG XL, JPEG 2000, SVG, ICO, PDF,
    /// or unknown, whose bytes the message does not show), e.g.
    /// `photo.jpg: a BMP image (not shown: only JPEG, PNG, WebP, HEIF, AVIF and GIF are supported)`. A file that starts
    /// as a JPEG or a PNG and goes on as something else is ``corrupt(path:reason:)`` instead.
    case otherFormat(path: String, format: FileFormat)
    /// libjpeg or libpng rejected the data (or the file is empty or truncated); `reason` is the
    /// library's message, e.g. `Premature end of JPEG file (the file is truncated)`.
    case corrupt(path: String, reason: String)
    /// A valid file in a variant that is not decoded here, e.g.
    /// `12-bit JPEG (data precision 12) is not supported`.
    case unsupported(path: String, reason: String)
    /// The stored size `width` x `height` (pixels, from the JPEG SOF or PNG IHDR header) is over
    /// ``DecodeOptions/maxPixels`` (`limit`). Refused before any pixel memory is allocated.
    case tooLarge(path: String, width: Int, height: Int, limit: Int)
    /// The stored width or height is over ``DecodeOptions/maxSide`` (`limit`, 65535 pixels,
    /// JPEG's own limit), whatever the pixel budget: a 20000000x1 PNG banner is not a kiosk
    /// image. Refused from the header.
    case sideTooLong(path: String, width: Int, height: Int, limit: Int)
    /// Decoding would need `needed` bytes of working memory, over
    /// ``DecodeOptions/maxDecoderBytes`` (`limit`); `reason` says what takes it (the DCT
    /// coefficients of a progressive JPEG, a PNG that must be decoded whole, ...).
    /// Refused before the memory is allocated. (When libjpeg's own check refuses, after ours
    /// passed by less than its bookkeeping, `needed` is what we counted, not over `limit`.)
    case overMemoryBudget(path: String, needed: Int, limit: Int, reason: String)
    /// The decoder ran out of memory (libjpeg "Insufficient memory", libpng "Out of memory"),
    /// or the decoded image could not be allocated (`reason` gives the size).
    case outOfMemory(path: String, reason: String)
    /// ``PNGWriter`` could not create, write, close or rename the file; `reason` names the
    /// operation and `errno`.
    case writeFailed(path: String, reason: String)

    /// The path or name the error is about.
    public var path: String {
        switch self {
        case .unreadable(let path, _), .notRegularFile(let path, _), .otherFormat(let path, _), .corrupt(let path, _),
             .unsupported(let path, _), .tooLarge(let path, _, _, _), .sideTooLong(let path, _, _, _),
             .overMemoryBudget(let path, _, _, _), .outOfMemory(let path, _), .writeFailed(let path, _):
            return path
        }
    }

    /// What went wrong, without the path.
    public var reason: String {
        switch self {
        case .unreadable(_, let code):
            return "cannot read: \(SystemError.describe(errno: code))"
        case .notRegularFile(_, let kind):
            return "not a regular file (a \(kind)): only regular image files are read"
        case .otherFormat(_, let format):
            // A file of no known format is not described by its bytes: the file may be
            // anything a name in a watched folder leads to (docs/security.md).
            let shown = ImageFormat.listed(ImageFormat.shown.map(\.title), "and")
            if format.format == nil, !format.firstBytes.isEmpty {
                return "an unknown format (not shown: only \(shown) are supported)"
            }
            return "\(format) (not shown: only \(shown) are supported)"
        case .corrupt(_, let reason):
            return "corrupt image: \(reason)"
        case .unsupported(_, let reason):
            return "unsupported image: \(reason)"
        case .tooLarge(_, let width, let height, let limit):
            let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
            return "\(width)x\(height) pixels (\(overflow ? "more than \(Int.max)" : String(pixels))) "
                + "exceeds the pixel limit of \(limit)"
        case .sideTooLong(_, let width, let height, let limit):
            return "\(width)x\(height) pixels: a side longer than \(limit) pixels is refused"
        case .overMemoryBudget(_, let needed, let limit, let reason):
            if needed > limit {
                return "needs \(byteSize(needed)) of decoder memory, over the limit of \(byteSize(limit)): \(reason)"
            }
            return "needs more than the decoder memory limit of \(byteSize(limit)): \(reason)"
        case .outOfMemory(_, let reason):
            return "out of memory: \(reason)"
        case .writeFailed(_, let reason):
            return "cannot write PNG: \(reason)"
        }
    }

    /// `PATH: REASON`, the log line.
    public var description: String { "\(path): \(reason)" }
}

/// A byte count for people: `512 bytes`, `42.3 KiB`, `286.1 MiB`, `4.0 GiB`, with `.0` left
/// out of whole numbers of the unit (`192 MiB`).
func byteSize(_ bytes: Int) -> String {
    let units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    if bytes < 1024 { return counted(bytes, "byte") }
    var value = Double(bytes) / 1024
    var unit = 0
    while value >= 1024 && unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    let tenths = (value * 10).rounded()
    let text = tenths.truncatingRemainder(dividingBy: 10) == 0 ? String(Int(tenths / 10)) : String(tenths / 10)
    return "\(text) \(units[unit])"
}
