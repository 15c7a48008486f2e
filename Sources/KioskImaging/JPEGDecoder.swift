import CKioskShim
import Glibc
import KioskCore

/// JPEG through libjpeg-turbo (kc_jpeg.c): baseline, progressive, arithmetic-coded; grayscale,
/// YCbCr, RGB, CMYK and YCCK (Adobe-inverted or not). 12-bit files are refused as unsupported.
enum JPEGDecoder {
    static func decode(_ source: ImageSource, name: String, options: DecodeOptions) throws(ImageError) -> DecodedImage {
        let decoded = try decodeStored(JPEGHandle.open(source, name: name, options: options), options: options)
        // libjpeg's memory is gone by now; only the stored-orientation bitmap is alive.
        let upright = decoded.orientation == .topLeft ? decoded.bitmap : decoded.orientation.apply(to: decoded.bitmap)
        return DecodedImage(bitmap: upright, sourceWidth: decoded.width, sourceHeight: decoded.height,
                            orientation: decoded.orientation, scaleNumerator: decoded.scale,
                            warnings: decoded.warnings, format: .jpeg)
    }

    /// ``ImageDecoder/decodeFitted(path:into:fit:background:options:)`` for a JPEG: streams
    /// when the file is stored upright (EXIF orientation 1), else decodes the whole image,
    /// turns it upright and places it.
    static func decodeFitted(_ source: ImageSource, name: String, into frame: Bitmap, fit: FitMode,
                             background: RGBColor, options: DecodeOptions) throws(ImageError) -> FittedImage {
        switch try streamOrDecode(source, name: name, into: frame, fit: fit, background: background, options: options) {
        case .streamed(let fitted):
            return fitted
        case .whole(let stored):
            // As decode(): libjpeg's memory is gone before the image is turned and placed.
            let upright = stored.orientation == .topLeft ? stored.bitmap : stored.orientation.apply(to: stored.bitmap)
            Compositor.place(upright, into: frame, fit: fit, background: background)
            return FittedImage(sourceWidth: stored.width, sourceHeight: stored.height, orientation: stored.orientation,
                               scaleNumerator: stored.scale, decodedWidth: upright.width, decodedHeight: upright.height,
                               decodedRows: 0..<stored.bitmap.height, streamed: false, warnings: stored.warnings,
                               format: .jpeg)
        }
    }

    private enum Outcome {
        case streamed(FittedImage)
        case whole(Stored)
    }

    /// Everything that needs the libjpeg handle (destroyed when this returns): the streamed
    /// placement, or the whole stored-orientation image when the rows of the file are not the
    /// rows of the picture.
    private static func streamOrDecode(_ source: ImageSource, name: String, into frame: Bitmap, fit: FitMode,
                                       background: RGBColor, options: DecodeOptions) throws(ImageError) -> Outcome {
        var targeted = options
        targeted.targetWidth = frame.width
        targeted.targetHeight = frame.height
        targeted.fit = fit
        let jpeg = try JPEGHandle.open(source, name: name, options: targeted)
        guard jpeg.orientation == .topLeft else { return .whole(try decodeStored(jpeg, options: targeted)) }

        let scale = jpeg.scale(for: targeted)
        let (width, height) = try jpeg.start(scale: scale)
        let plan = Compositor.placement(imageWidth: width, imageHeight: height, into: frame, fit: fit)
        let ring = JPEGRowRing(jpeg, width: width, plan: plan)
        try Compositor.place(plan, into: frame, background: background) { (first, count, rows) throws(ImageError) in
            try ring.rows(first, count, into: rows)
        }
        return .streamed(FittedImage(sourceWidth: jpeg.width, sourceHeight: jpeg.height, orientation: .topLeft,
                                     scaleNumerator: scale, decodedWidth: width, decodedHeight: height,
                                     decodedRows: ring.decodedRows, streamed: true, warnings: jpeg.warnings,
                                     format: .jpeg))
    }

    private struct Stored {
        var bitmap: Bitmap
        var width: Int, height: Int
        var orientation: EXIFOrientation
        var scale: Int
        var warnings: [String]
    }

    /// Scale and pixels of an opened file: the whole image in its stored orientation.
    private static func decodeStored(_ jpeg: JPEGHandle, options: DecodeOptions) throws(ImageError) -> Stored {
        let scale = jpeg.scale(for: options)
        let (outWidth, outHeight) = try jpeg.start(scale: scale)
        let bitmap = Bitmap(uninitializedWidth: outWidth, height: outHeight)
        let code = kc_jpeg_read_pixels(jpeg.handle, bitmap.pixels, bitmap.bytesPerRow)
        guard Int(code) == KC_IMG_OK else { throw jpeg.failure(code) }
        return Stored(bitmap: bitmap, width: jpeg.width, height: jpeg.height, orientation: jpeg.orientation,
                      scale: scale, warnings: jpeg.warnings)
    }
}

/// A libjpeg decompressor with its header read, the pixel budget checked and the EXIF
/// orientation parsed. Owns the kc_jpeg handle: destroyed (every libjpeg allocation freed)
/// when the last reference goes, on success and on every error path.
final class JPEGHandle {
    let handle: OpaquePointer
    let name: String
    /// Stored size in pixels (SOF).
    let width: Int, height: Int
    let orientation: EXIFOrientation

    private init(handle: OpaquePointer, name: String, width: Int, height: Int, orientation: EXIFOrientation) {
        self.handle = handle
        self.name = name
        self.width = width
        self.height = height
        self.orientation = orientation
    }

    /// Creates the decompressor on `source`, reads the header and checks the budget.
    /// - Throws: the header's ``ImageError`` (the decompressor is destroyed first).
    static func open(_ source: ImageSource, name: String, options: DecodeOptions) throws(ImageError) -> JPEGHandle {
        let created: OpaquePointer?
        switch source {
        case .file(let file): created = kc_jpeg_create_file(file)
        case .memory(let bytes): created = kc_jpeg_create_memory(bytes.baseAddress, bytes.count)
        }
        guard let created else { throw .outOfMemory(path: name, reason: "cannot create a libjpeg decompressor") }
        // From here the handle owns the decompressor: every throw below destroys it.
        var header = kc_jpeg_header()
        let code = kc_jpeg_read_header(created, &header)
        let orientation = header.exif.map {
            EXIFOrientation.parse(exifSegment: UnsafeRawBufferPointer(start: $0, count: header.exif_length))
        } ?? .topLeft
        let jpeg = JPEGHandle(handle: created, name: name, width: Int(header.width), height: Int(header.height),
                              orientation: orientation)
        guard Int(code) == KC_IMG_OK else { throw jpeg.failure(code) }
        try checkBudget(width: jpeg.width, height: jpeg.height, options: options, name: name)
        return jpeg
    }

    deinit { kc_jpeg_destroy(handle) }

    func failure(_ code: Int32) -> ImageError {
        imageError(code: code, message: String(cString: kc_jpeg_error(handle)), name: name)
    }

    /// The DCT scale numerator for the options' target frame (``DCTScale``).
    func scale(for options: DecodeOptions) -> Int {
        DCTScale.numerator(imageWidth: width, imageHeight: height, orientation: orientation,
                           targetWidth: options.targetWidth, targetHeight: options.targetHeight, fit: options.fit)
    }

    /// jpeg_start_decompress at `scale`/8; the output size in pixels, stored orientation.
    func start(scale: Int) throws(ImageError) -> (width: Int, height: Int) {
        var outWidth: Int32 = 0, outHeight: Int32 = 0
        let code = kc_jpeg_start(handle, Int32(scale), &outWidth, &outHeight)
        guard Int(code) == KC_IMG_OK else { throw failure(code) }
        return (Int(outWidth), Int(outHeight))
    }

    /// The warnings libjpeg emitted so far.
    var warnings: [String] { collectWarnings(count: kc_jpeg_warning_count(handle)) { kc_jpeg_warning(handle, $0) } }
}

/// The row provider of a streamed placement (``Resampler/Plan/draw(into:rows:)``): rows of a
/// started decompressor read on demand into a ring of ``capacity`` rows of the output width,
/// `plan.maxRowsPerOutputRow` plus a strip of read-ahead. Rows above the first one the plan
/// reads are skipped (kc_jpeg_skip_rows: jpeg_skip_scanlines from the top); rows below the
/// last one it reads are never decoded. Memory: `capacity * width * 4` bytes, freed on deinit.
final class JPEGRowRing {
    let jpeg: JPEGHandle
    /// Output width in pixels (the length of every ring row).
    let width: Int
    /// Rows the ring holds.
    let capacity: Int
    /// One past the last row the plan reads: nothing from here on is decoded.
    let limit: Int
    private let storage: UnsafeMutablePointer<UInt32>
    private let batch: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>
    /// The next row libjpeg will output; rows `max(firstRead, next - capacity) ..< next` are
    /// in the ring, row `y` in slot `y % capacity`.
    private(set) var next = 0
    private var firstRead: Int?

    /// Rows read ahead of the current request, when the plan still needs them.
    static let strip = 8

    init(_ jpeg: JPEGHandle, width: Int, plan: Resampler.Plan) {
        self.jpeg = jpeg
        self.width = width
        capacity = max(1, plan.maxRowsPerOutputRow) + Self.strip
        limit = plan.sourceRows.upperBound
        storage = .allocate(capacity: capacity * width)
        batch = .allocate(capacity: capacity)
    }

    deinit {
        storage.deallocate()
        batch.deallocate()
    }

    /// The rows of the decoded image that were read (those above were skipped, those from the
    /// upper bound on never decoded).
    var decodedRows: Range<Int> { firstRead.map { $0..<next } ?? 0..<0 }

    /// Serves one request of ``Resampler/Plan/draw(into:rows:)``: rows `first ..< first + count`.
    /// - Throws: the ``ImageError`` of a libjpeg failure (corrupt or truncated data).
    func rows(_ first: Int, _ count: Int, into pointers: UnsafeMutablePointer<UnsafePointer<UInt32>>) throws(ImageError) {
        let end = first + count
        precondition(count <= capacity && first >= next - capacity && end <= limit,
                     "JPEGRowRing: rows \(first)..<\(end) outside the ring (next \(next), capacity \(capacity), limit \(limit))")
        if first > next {
            // Rows nobody reads (above a fill crop). Only ever at the start: the plan's
            // requests overlap or touch.
            let code = kc_jpeg_skip_rows(jpeg.handle, Int32(first - next))
            guard Int(code) == KC_IMG_OK else { throw jpeg.failure(code) }
            next = first
        }
        if firstRead == nil { firstRead = next }
        if end > next {
            // Fill the ring as far as it goes without overwriting row `first`.
            let target = max(end, min(first + capacity, limit))
            let n = target - next
            for i in 0..<n {
                batch[i] = UnsafeMutableRawPointer(storage + ((next + i) % capacity) * width)
                    .assumingMemoryBound(to: UInt8.self)
            }
            let code = kc_jpeg_read_rows(jpeg.handle, batch, Int32(n))
            guard Int(code) == KC_IMG_OK else { throw jpeg.failure(code) }
            next = target
        }
        for k in 0..<count {
            pointers[k] = UnsafePointer(storage + ((first + k) % capacity) * width)
        }
    }
}
