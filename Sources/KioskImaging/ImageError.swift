import Glibc

/// Why an image could not be decoded or written. Every case carries the path (or, for
/// ``ImageDecoder/decode(bytes:name:options:)``, the name given) and what went wrong;
/// ``description`` is the log line, e.g.
/// `/x/big.jpg: 65500x65500 pixels (4290250000) exceeds the pixel limit of 100000000`.
public enum ImageError: Error, CustomStringConvertible, Equatable, Sendable {
    /// `fopen` or `fread` failed with `errno` (missing file, permission, a directory, ...).
    case unreadable(path: String, errno: Int32)
    /// The first bytes are neither a JPEG (`FF D8`) nor a PNG signature.
    case notAnImage(path: String)
    /// libjpeg or libpng rejected the data (or the file is empty or truncated); `reason` is the
    /// library's message, e.g. `Premature end of JPEG file (the file is truncated)`.
    case corrupt(path: String, reason: String)
    /// A valid file in a variant that is not decoded here, e.g.
    /// `12-bit JPEG (data precision 12) is not supported`.
    case unsupported(path: String, reason: String)
    /// The stored size `width` x `height` (pixels, from the JPEG SOF or PNG IHDR header) is over
    /// ``DecodeOptions/maxPixels`` (`limit`). Refused before any pixel memory is allocated.
    case tooLarge(path: String, width: Int, height: Int, limit: Int)
    /// The decoder ran out of memory (libjpeg "Insufficient memory", libpng "Out of memory").
    case outOfMemory(path: String, reason: String)
    /// ``PNGWriter`` could not create, write, close or rename the file; `reason` names the
    /// operation and `errno`.
    case writeFailed(path: String, reason: String)

    /// The path or name the error is about.
    public var path: String {
        switch self {
        case .unreadable(let path, _), .notAnImage(let path), .corrupt(let path, _),
             .unsupported(let path, _), .tooLarge(let path, _, _, _), .outOfMemory(let path, _),
             .writeFailed(let path, _):
            return path
        }
    }

    /// What went wrong, without the path.
    public var reason: String {
        switch self {
        case .unreadable(_, let code):
            return "cannot read: \(String(cString: strerror(code))) (errno \(code))"
        case .notAnImage:
            return "not an image (neither JPEG nor PNG)"
        case .corrupt(_, let reason):
            return "corrupt image: \(reason)"
        case .unsupported(_, let reason):
            return "unsupported image: \(reason)"
        case .tooLarge(_, let width, let height, let limit):
            return "\(width)x\(height) pixels (\(width * height)) exceeds the pixel limit of \(limit)"
        case .outOfMemory(_, let reason):
            return "out of memory: \(reason)"
        case .writeFailed(_, let reason):
            return "cannot write PNG: \(reason)"
        }
    }

    /// `PATH: REASON`, the log line.
    public var description: String { "\(path): \(reason)" }
}
