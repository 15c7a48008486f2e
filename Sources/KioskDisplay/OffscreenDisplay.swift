// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskImaging
import KioskSystem

/// Frames as PNG files (docs/displays.md "Offscreen"; tests, previews, machines without a display): every
/// presented frame is written to `DIR/frame-TTTTTTTT.png`, TTTTTTTT being the show time in
/// milliseconds, zero-padded to 8 digits (more digits after 27.7 hours). A run therefore shows
/// exactly which frames were drawn and when.
///
/// Frames are written at the logical size as given (XRGB8888 in, 8-bit RGB PNG out through
/// `PNGWriter`); there is no rotation and no pacing (``pacesFrames`` is false: with the virtual
/// clock a show renders as fast as the machine can).
public final class OffscreenDisplay: Display, FrameFiles, PixelDimmable {
    /// Width of the frames in pixels.
    public let width: Int
    /// Height of the frames in pixels.
    public let height: Int
    /// The panel this display stands in for, pixels: the frame size turned back by the rotation
    /// given at init (frames are still written as composed; a touchscreen read alongside maps
    /// as if onto that panel).
    public let panelWidth: Int
    /// Panel height in pixels.
    public let panelHeight: Int
    /// The directory the frames go to.
    public let directory: String
    /// How many frames ``present(_:showTime:)`` has written so far.
    public private(set) var framesWritten: Int = 0
    /// Offscreen frames are not paced: the frame loop's virtual clock decides.
    public var pacesFrames: Bool { false }
    /// Frame files: no console, no power, nobody watching live.
    public var abilities: DisplayAbilities { .frameFiles }
    /// The frames are files: this display.
    public var frameFiles: (any FrameFiles)? { self }
    /// The frames written dimmed (``PixelDimmable``, docs/power.md): what a screen dimmed by its
    /// pixels would show, so that it can be seen and tested.
    public var pixelBrightness: PixelBrightness = .full
    /// Splits the dimming by rows across cores; nil: this thread alone.
    public var rows: RowSplitter?
    /// The dimmed copy of the frame being written (kept for the next frame of the same size).
    private var dimmed: Bitmap?

    /// Prepares `directory` (created with its parents, like `mkdir -p`, mode 0755) for frames of
    /// `width` x `height` pixels, standing in for a panel mounted with `rotation` (the panel size
    /// only: frames are not turned).
    /// - Throws: ``DisplayError/badGeometry(device:reason:)`` for a size that is not positive;
    ///   ``DisplayError/system(_:advice:)`` when the directory cannot be created
    ///   (`mkdir /x/y: Permission denied (errno 13)`) or the path exists and is not a directory.
    public init(directory: String, width: Int, height: Int, rotation: Rotation = .none) throws(DisplayError) {
        guard width > 0, height > 0 else {
            throw .badGeometry(device: "offscreen \(directory)",
                               reason: "frame size \(width)x\(height) is not positive")
        }
        self.width = width
        self.height = height
        (panelWidth, panelHeight) = rotation.panelSize(logicalWidth: width, logicalHeight: height)
        self.directory = directory
        do {
            try Self.makeDirectory(directory)
        } catch {
            throw .system(error)
        }
    }

    /// `offscreen DIR: 1920x1080, PNG frames`.
    public var summary: String { "offscreen \(directory): \(width)x\(height), PNG frames" }

    /// The file a frame shown at `showTime` milliseconds goes to: `DIR/frame-00001234.png` for 1234.
    public func path(showTime: Int64) -> String {
        let digits = String(max(showTime, 0))
        return "\(directory)/frame-\(String(repeating: "0", count: max(0, 8 - digits.count)))\(digits).png"
    }

    /// Writes `frame` (``width`` x ``height``, XRGB8888) to ``path(showTime:)``. A frame presented
    /// twice at the same show time overwrites the file.
    /// - Precondition: the frame has the display's size.
    /// - Throws: ``DisplayError/write(path:reason:)`` with the PNG writer's reason.
    public func present(_ frame: Bitmap, showTime: Int64) throws(DisplayError) {
        precondition(frame.width == width && frame.height == height,
                     "frame \(frame.width)x\(frame.height) does not match the display's \(width)x\(height)")
        let file = path(showTime: showTime)
        var written = frame
        if !pixelBrightness.isFull {
            let out = dimmed ?? Bitmap(uninitializedWidth: width, height: height)
            dimmed = out
            pixelBrightness.dim(frame, into: out, rows: rows)
            written = out
        }
        do {
            try PNGWriter.write(written, to: file)
        } catch {
            throw .write(path: file, reason: error.reason)
        }
        framesWritten += 1
        lastFramePath = file
    }

    /// The file of the last frame written, which ``screenImage()`` reads back: the frame itself
    /// is not kept (a 1920x1080 copy would add 7.9 MiB to every offscreen run for a screenshot
    /// that may never be asked for).
    private var lastFramePath: String?

    /// The last frame written, as composed (offscreen frames are not rotated), read back from its
    /// PNG file (lossless: the same RGB values; the top byte is 0xFF).
    /// Throws ``DisplayError/nothingToReadBack(device:reason:)`` before the first frame, or when that
    /// file cannot be read back (removed, changed: the decoder's reason).
    public func screenImage() throws(DisplayError) -> Bitmap {
        let device = "offscreen \(directory)"
        guard let lastFramePath else { throw .nothingToReadBack(device: device, reason: "no frame was presented yet") }
        let image: DecodedImage
        do { image = try ImageDecoder.decode(path: lastFramePath) } catch {
            throw .nothingToReadBack(device: device, reason: "the last frame written cannot be read back: \(error)")
        }
        guard image.bitmap.width == width, image.bitmap.height == height else {
            throw .nothingToReadBack(device: device, reason: "the last frame written, \(lastFramePath), is "
                                     + "\(image.bitmap.width)x\(image.bitmap.height), not \(width)x\(height)")
        }
        return image.bitmap
    }

    /// Nothing to put back.
    public func restore() {}

    /// No VT to give the screen to: nothing happens (frames keep being written).
    public func release() throws(DisplayError) {}
    /// Nothing to take back.
    public func acquire() throws(DisplayError) {}
    /// No screen to switch off: nothing happens.
    public func setPower(on: Bool) throws(DisplayError) {}
    /// The dimming's rows are split by `splitter` (``Display/convertRows(with:)``).
    public func convertRows(with splitter: RowSplitter) { rows = splitter }

    /// Deletes the `frame-NNNNNNNN.png` files an earlier run left in ``directory`` (only files
    /// named exactly like the frames this backend writes), so that the folder holds this run's
    /// frames alone. Returns how many were removed; files that cannot be removed are left.
    public func removeOldFrames() -> Int {
        guard let entries = try? listDirectory(directory) else { return 0 }
        let frames = entries.compactMap(\.name).filter { name in
            let digits = name.dropFirst("frame-".count).dropLast(".png".count)
            return name.hasPrefix("frame-") && name.hasSuffix(".png") && digits.count >= 8
                && digits.allSatisfy { $0.isASCII && $0.isNumber }
        }
        return frames.filter { unlink("\(directory)/\($0)") == 0 }.count
    }

    /// `mkdir -p path` with mode 0755; an existing directory is fine.
    private static func makeDirectory(_ path: String) throws(SystemError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            do {
                try syscall("mkdir", path: prefix) { mkdir(prefix, 0o755) }
            } catch let error where error.errno == EEXIST {
                var info = stat()
                try syscall("stat", path: prefix) { stat(prefix, &info) }
                guard (info.st_mode & S_IFMT) == S_IFDIR else {
                    throw SystemError(operation: "mkdir", path: prefix, errno: ENOTDIR)
                }
            }
            prefix += "/"
        }
    }
}
