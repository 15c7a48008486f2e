// SPDX-License-Identifier: Apache-2.0
import Glibc
import CKioskShim
import KioskSystem
import KioskCore

/// Decodes JPEG (libjpeg-turbo), PNG (libpng 1.6), WebP (libwebp), HEIF/HEIC and AVIF
/// (libheif) and GIF (giflib) files into upright ``Bitmap``s (an animation's first frame:
/// ``AnimationDecoder`` plays the rest).
///
/// The format is recognised from the first bytes, never from the file name. Only regular files
/// are read (a FIFO, a pipe, a device or a socket is refused at once, without blocking). The
/// limits of ``DecodeOptions`` (side, pixels, decoder memory) are checked from the header
/// before anything image-sized is allocated, and every size is computed without overflow, so
/// no header can make the program trap or run out of memory; the decoded image is allocated
/// fallibly (a failure is ``ImageError/outOfMemory(path:reason:)``). A JPEG is decoded through
/// libjpeg's DCT scaling when the options give a target size; the EXIF orientation is applied.
/// Every library error becomes an ``ImageError``: a corrupt file never crashes the program and
/// leaks nothing. Safe to call from several threads at once (each call has its own decoder).
///
/// The end of a file: an image whose data is complete is shown even when what should follow
/// it is missing. A JPEG that ends without its EOI marker (the last 2 bytes) decodes, with the
/// warning "JPEG ends without its EOI marker" in ``DecodedImage/warnings``; a PNG is read up to
/// its last image row, so a missing or cut IEND chunk (or anything after the image data) is
/// not noticed. Data missing before the last row is an error ("Premature end of JPEG file (the
/// file is truncated)", "unexpected end of file (the file is truncated)"), as is a progressive
/// JPEG cut between two scans; an arithmetic-coded JPEG must have its EOI (libjpeg cannot tell
/// a missing EOI from missing data there).
///
/// To show an image, ``decodeFitted(path:into:fit:background:options:)`` decodes it straight
/// into a screen-sized frame (an upright JPEG or non-interlaced PNG is streamed, never held
/// whole); ``decode(path:options:)`` gives the whole upright bitmap.
public enum ImageDecoder {
    /// Decodes the file at `path`, read through stdio (the file is not loaded into memory whole).
    /// The whole image is held: for showing, ``decodeFitted(path:into:fit:background:options:)``
    /// needs less memory.
    /// - Throws: ``ImageError``: `unreadable` (with errno) when it cannot be opened or read (a
    ///   directory is `EISDIR`), `notRegularFile` (FIFO, device, socket), `otherFormat`,
    ///   `corrupt` (empty, truncated, or rejected by the library, with its message),
    ///   `unsupported` (12-bit JPEG, more than 1000 scans), `sideTooLong`, `tooLarge`,
    ///   `overMemoryBudget`, `outOfMemory`.
    public static func decode(path: String, options: DecodeOptions = DecodeOptions()) throws(ImageError) -> DecodedImage {
        let (file, format) = try openImageFile(path)
        defer { fclose(file) }
        return try decode(.file(file), format: format, name: path, options: options)
    }

    /// The decoder of `format` on `source` (its row of ``ImageCodec/table``).
    static func decode(_ source: ImageSource, format: ImageFormat, name: String,
                       options: DecodeOptions) throws(ImageError) -> DecodedImage {
        try codec(format, name: name).decode(source, name, options)
    }

    /// The codec table's row for `format`; a format without one is refused as not shown.
    static func codec(_ format: ImageFormat, name: String) throws(ImageError) -> ImageCodec {
        guard let codec = ImageCodec.codec(for: format) else {
            throw .otherFormat(path: name, format: FileFormat(format))
        }
        return codec
    }

    /// Decodes an image held in memory (a download, say). `name` stands in for the path in
    /// errors. The bytes are read in place, not copied.
    /// - Throws: as ``decode(path:options:)``, except `unreadable`.
    public static func decode(bytes: [UInt8], name: String, options: DecodeOptions = DecodeOptions()) throws(ImageError) -> DecodedImage {
        let format = try sniff(bytes.prefix(FileFormat.sniffLength), name: name)
        let result = bytes.withUnsafeBytes { buffer -> Result<DecodedImage, ImageError> in
            do throws(ImageError) {
                return .success(try decode(.memory(buffer), format: format, name: name, options: options))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The format announced by the first bytes (at least 2 for JPEG, 6 for GIF, 8 for PNG, 12
    /// for WebP, HEIF and AVIF; see ``FileFormat/identify(_:)``), or nil.
    public static func format(ofHeader header: some Collection<UInt8>) -> ImageFormat? {
        FileFormat.identify(header).decodable
    }

    /// The PNG file signature (PNG specification, section 5.2).
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Opens `path` for decoding: only a regular file. The path is checked with `stat` before
    /// it is opened, so a device is never opened at all (opening some has side effects: a
    /// serial line raises DTR, `/dev/watchdog` starts its timer); then it is opened without
    /// blocking (`O_RDONLY | O_NONBLOCK | O_CLOEXEC`, so a FIFO swapped in meanwhile cannot
    /// hang the decode worker, and a command the app starts does not inherit the file) and
    /// checked again with `fstat` (the file read is the file checked); its format is sniffed
    /// from its first bytes (up to ``FileFormat/sniffLength``, `pread`, so nothing needs
    /// rewinding), then it is handed to stdio
    /// for the decoder, which reads it in small blocks. The caller closes the stream.
    /// - Throws: `unreadable` (errno; `EISDIR` for a directory), `notRegularFile`, and the
    ///   errors of ``sniff(_:name:)``.
    static func openImageFile(_ path: String) throws(ImageError) -> (file: UnsafeMutablePointer<FILE>, format: ImageFormat) {
        /// A failed call becomes `unreadable` with its errno.
        func call<T>(_ body: () throws(SystemError) -> T) throws(ImageError) -> T {
            do { return try body() } catch { throw .unreadable(path: path, errno: error.errno) }
        }
        try requireRegularFile(try call { () throws(SystemError) in try fileStatus(path) }.st_mode, path: path)
        let fd = try call { () throws(SystemError) in try FileDescriptor.open(path, O_RDONLY | O_NONBLOCK) }
        try requireRegularFile(try call { () throws(SystemError) in try fd.status() }.st_mode, path: path)
        // A regular file: blocking reads from here (O_NONBLOCK means nothing to a regular file
        // on Linux, but the stream should not carry it).
        try? fd.clearNonBlocking()
        let magic = UnsafeMutableRawBufferPointer.allocate(byteCount: FileFormat.sniffLength, alignment: 1)
        defer { magic.deallocate() }
        var count = 0
        while count < magic.count {
            let n = try call { () throws(SystemError) in
                try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: magic[count...]), at: count)
            }
            if n == 0 { break }
            count += n
        }
        let format = try sniff(Array(magic[..<count]), name: path)
        let file = try call { () throws(SystemError) in
            try nonNullCall("fdopen", path: path) { fdopen(fd.rawValue, "rb") }
        }
        _ = fd.release()  // the stream owns it now
        return (file, format)
    }

    /// Refuses a file mode that is not a regular file.
    static func requireRegularFile(_ mode: mode_t, path: String) throws(ImageError) {
        switch mode & S_IFMT {
        case S_IFREG: return
        case S_IFDIR: throw .unreadable(path: path, errno: EISDIR)
        case S_IFIFO: throw .notRegularFile(path: path, kind: "FIFO")
        case S_IFCHR: throw .notRegularFile(path: path, kind: "character device")
        case S_IFBLK: throw .notRegularFile(path: path, kind: "block device")
        case S_IFSOCK: throw .notRegularFile(path: path, kind: "socket")
        default: throw .notRegularFile(path: path, kind: "special file")
        }
    }

    /// The format, or the error for data that is empty, a damaged PNG signature, or another
    /// format (``FileFormat/identify(_:)``, from up to ``FileFormat/sniffLength`` bytes).
    static func sniff(_ header: some Collection<UInt8>, name: String) throws(ImageError) -> ImageFormat {
        if header.isEmpty { throw .corrupt(path: name, reason: "the file is empty (0 bytes)") }
        let identified = FileFormat.identify(header)
        if let format = identified.decodable { return format }
        // A PNG whose signature was damaged (by a text-mode transfer turning CR LF into LF, a
        // flipped bit...): say so rather than "not an image". 6 of 8 bytes still in place.
        let bytes = Array(header.prefix(8))
        let matching = zip(bytes, pngSignature).filter { $0 == $1 }.count
        if bytes.count == 8 && matching >= 6 {
            let hex = bytes.map { String($0, radix: 16).uppercased() }.map { $0.count < 2 ? "0" + $0 : $0 }
            throw .corrupt(path: name, reason: "damaged PNG signature \(hex.joined(separator: " ")) (expected 89 50 4E 47 0D 0A 1A 0A)")
        }
        throw .otherFormat(path: name, format: identified)
    }
}

/// Where a decoder reads from: an open stdio file of a regular file (kept open by the caller
/// until the decoder is destroyed) or bytes in memory (valid for as long).
enum ImageSource {
    case file(UnsafeMutablePointer<FILE>)
    case memory(UnsafeRawBufferPointer)
}

/// The ``ImageError`` for a `KC_IMG_*` code and the library's message.
func imageError(code: Int32, message: String, name: String) -> ImageError {
    switch Int(code) {
    case KC_IMG_UNSUPPORTED: return .unsupported(path: name, reason: message)
    case KC_IMG_NO_MEMORY: return .outOfMemory(path: name, reason: message)
    case KC_IMG_OVER_BUDGET: return .overMemoryBudget(path: name, needed: 0, limit: 0, reason: message)
    default: return .corrupt(path: name, reason: message)
    }
}

/// The warnings a handle kept, with a note for those it only counted.
func collectWarnings(count: Int32, _ warning: (Int32) -> UnsafePointer<CChar>) -> [String] {
    let kept = min(count, Int32(KC_IMG_WARNINGS_MAX))
    var list = (0..<kept).map { String(cString: warning($0)) }
    if count > kept { list.append("... and \(count - kept) more warnings") }
    return list
}

/// Refuses a stored size that breaks the limits of `options`: a side over
/// ``DecodeOptions/maxSide`` (checked first, so the pixel count below cannot overflow), or more
/// than ``DecodeOptions/maxPixels`` pixels.
func checkHeader(width: Int, height: Int, options: DecodeOptions, name: String) throws(ImageError) {
    guard width > 0, height > 0 else {
        throw .corrupt(path: name, reason: "the header gives a size of \(width)x\(height) pixels")
    }
    if width > DecodeOptions.maxSide || height > DecodeOptions.maxSide {
        throw .sideTooLong(path: name, width: width, height: height, limit: DecodeOptions.maxSide)
    }
    let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
    if overflow || pixels > options.maxPixels {
        throw .tooLarge(path: name, width: width, height: height, limit: options.maxPixels)
    }
}

// MARK: - Decoder memory

/// One of the large buffers a decode holds (``DecodeOptions/maxDecoderBytes``): what it is,
/// for the error message, and its size in bytes (`Int.max` when the size overflowed).
struct MemoryUse {
    var what: String
    var bytes: Int

    /// The product of `factors` (rows x width x 4, say), `Int.max` on overflow or for a
    /// negative factor.
    static func product(_ factors: Int...) -> Int {
        var total = 1
        for f in factors {
            guard f >= 0 else { return Int.max }
            let (p, overflow) = total.multipliedReportingOverflow(by: f)
            if overflow { return Int.max }
            total = p
        }
        return total
    }

    /// The sum of `uses`, `Int.max` on overflow.
    static func total(_ uses: [MemoryUse]) -> Int {
        var sum = 0
        for use in uses {
            let (s, overflow) = sum.addingReportingOverflow(use.bytes)
            if overflow { return Int.max }
            sum = s
        }
        return sum
    }

    /// The decoded image held whole: 4 bytes per pixel.
    static func image(width: Int, height: Int, _ what: String) -> MemoryUse {
        MemoryUse(what: "\(what) (\(width)x\(height) pixels, \(byteSize(product(width, height, 4))))",
                  bytes: product(width, height, 4))
    }
}

/// Checks the memory a decode will hold against ``DecodeOptions/maxDecoderBytes`` before any
/// of it is allocated. `phases` are the sets of buffers alive at the same time (the decoder's
/// buffers with the decoded image, then the image with its turned copy); the largest sum counts.
/// - Returns: the largest sum, in bytes.
/// - Throws: ``ImageError/overMemoryBudget(path:needed:limit:reason:)`` naming the buffers of
///   the largest phase.
@discardableResult
func checkMemory(_ phases: [[MemoryUse]], options: DecodeOptions, name: String) throws(ImageError) -> Int {
    var worst: [MemoryUse] = []
    var needed = 0
    for phase in phases {
        let total = MemoryUse.total(phase)
        if total > needed { needed = total; worst = phase }
    }
    if needed > options.maxDecoderBytes {
        let parts = worst.filter { $0.bytes > 0 }.map(\.what)
        let reason = parts.count <= 1 ? parts.joined()
            : parts.dropLast().joined(separator: ", ") + " and " + parts.last!
        throw .overMemoryBudget(path: name, needed: needed, limit: options.maxDecoderBytes, reason: reason)
    }
    return needed
}

// MARK: - Fallible allocation

extension Bitmap {
    /// A bitmap of `width` x `height` pixels with undefined contents, allocated with `malloc`
    /// (and freed with `free`), or nil when a side is not positive, `width * height * 4`
    /// overflows an `Int`, or the memory cannot be had. For sizes that come from a file: unlike
    /// the other initialisers it never stops the program.
    public convenience init?(allocatingWidth width: Int, height: Int, hasAlpha: Bool = false) {
        guard let bytes = Bitmap.byteCount(width: width, height: height), let memory = malloc(bytes) else { return nil }
        self.init(adopting: memory.bindMemory(to: UInt32.self, capacity: width * height), width: width, height: height,
                  hasAlpha: hasAlpha, deallocator: { free($0) })
    }
}

/// ``Bitmap/init(allocatingWidth:height:hasAlpha:)`` or ``ImageError/outOfMemory(path:reason:)``
/// with the size.
func allocateImage(width: Int, height: Int, hasAlpha: Bool, name: String) throws(ImageError) -> Bitmap {
    guard let bitmap = Bitmap(allocatingWidth: width, height: height, hasAlpha: hasAlpha) else {
        let bytes = Bitmap.byteCount(width: width, height: height).map { "\($0) bytes" } ?? "more than \(Int.max) bytes"
        throw .outOfMemory(path: name, reason: "cannot allocate \(bytes) for a \(width)x\(height) image")
    }
    return bitmap
}
