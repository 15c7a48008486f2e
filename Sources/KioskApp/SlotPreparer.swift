// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Glibc
import KioskContent
import KioskCore
import KioskDisplay
import KioskSystem
import KioskImaging
import KioskText

/// Prepares slot frames off the frame loop: decodes an image (libjpeg-turbo / libpng, with DCT
/// scaling close to the frame size), composites alpha over the background and resamples it
/// into a new screen-sized XRGB8888 frame (a JPEG is streamed into it row by row). One
/// background worker, jobs in the order asked (the carousel asks for the current image first).
/// Finished jobs wait in ``results`` (a ``Mailbox``), whose descriptor wakes a sleeping frame loop.
public final class SlotPreparer: @unchecked Sendable {
    /// What a finished job produced.
    public struct Result: Sendable {
        public var slot: Int
        public var ticket: Int
        public var item: Int
        public var outcome: Outcome
        /// Warnings the decoder reported (a bad iCCP chunk, say), for the log.
        public var warnings: [String]
        /// The identity of the file read (a local file, or a download's disk-cache file) when it
        /// was read: what ``checkFiles(_:)`` compares against later.
        public var identity: FileIdentity?
        /// With a ``Outcome/frame(_:)``: the frames of ``outputSizes`` (the other outputs'
        /// sizes, docs/displays.md "Several outputs"), in their order; nil where one could not
        /// be made. Ownership passes to the caller.
        public var outputFrames: [Bitmap?] = []
        /// Its job wanted only ``outputFrames`` (``Job/outputsOnly``).
        public var outputsOnly = false
        /// With a ``Outcome/frame(_:)`` of an animation's first frame: the rest of it, to play in
        /// the slot (``SlotAnimations``); ownership passes to the caller.
        public var animation: AnimationStream?
        /// The partner composed into the frame's second half (``Job/partner``); nil: the
        /// picture alone (no partner asked, or the partner could not be decoded: it is said in
        /// ``warnings``).
        public var partner: Int?
        public init(slot: Int, ticket: Int, item: Int, outcome: Outcome, warnings: [String], identity: FileIdentity? = nil) {
            self.slot = slot; self.ticket = ticket; self.item = item; self.outcome = outcome
            self.warnings = warnings; self.identity = identity
        }
    }

    /// How a job ended.
    public enum Outcome: Sendable {
        /// The prepared frame; ownership passes to the caller.
        case frame(Bitmap)
        /// The image could not be decoded.
        case failed(ImageError)
        /// A newer job for the same slot made this one stale before it ran.
        case superseded
        /// A remote image could not be fetched (the reason is the log text: URL, HTTP status,
        /// byte counts).
        case unavailable(String)
    }

    /// One image to prepare for one slot (the carousel's `prepare` action).
    public struct Job: Sendable {
        public var slot: Int, ticket: Int, item: Int
        /// The image file.
        public var path: String
        /// The item's source (its path, or its URL when `path` is a cached download): the key
        /// of the frame in the memory cache. Defaults to `path`.
        public var source: String
        /// The item's own fit, or nil for the preparer's.
        public var fit: FitMode?
        /// The SHA-256 a manifest gives for a remote image's bytes, if any.
        public var sha256: String?
        /// The item's caption, drawn into the frame (``captions``).
        public var caption: String?
        /// `--pair-portraits`: the picture sharing the frame with this one (``composePair``);
        /// nil: this one alone.
        public var partner: Partner?
        /// Only the frames of ``outputSizes`` are wanted (the other outputs' sizes changed; the
        /// slot's own frame stays): the result says so (``Result/outputsOnly``).
        public var outputsOnly = false
        public init(slot: Int, ticket: Int, item: Int, path: String, source: String? = nil, fit: FitMode? = nil,
                    sha256: String? = nil, caption: String? = nil) {
            self.caption = caption
            self.slot = slot; self.ticket = ticket; self.item = item; self.path = path
            self.source = source ?? path; self.fit = fit; self.sha256 = sha256
        }
    }

    /// The second picture of a pair (`--pair-portraits`, docs/carousel.md "Pairs"): a local
    /// still file, placed in the frame's second half as `layout` says.
    public struct Partner: Sendable, Equatable {
        /// Its playlist index.
        public var item: Int
        /// Its file (a local path).
        public var path: String
        /// Its own fit, or nil for the preparer's.
        public var fit: FitMode?
        /// Its caption (``captions``), drawn into its half.
        public var caption: String?
        /// How the two share the frame.
        public var layout: PairLayout
        public init(item: Int, path: String, fit: FitMode? = nil, caption: String? = nil, layout: PairLayout) {
            self.item = item; self.path = path; self.fit = fit; self.caption = caption; self.layout = layout
        }
    }

    /// Frame width in pixels: the display's logical size, changed by ``resize(width:height:)``.
    public var width: Int { shared.withLock { $0.width } }
    /// Frame height in pixels.
    public var height: Int { shared.withLock { $0.height } }
    public let fit: FitMode
    public let background: RGBColor
    public let maxPixels: Int
    /// Finished jobs, in completion order: the frame loop polls its ``Mailbox/wakeDescriptor``
    /// and takes them with ``takeResults()`` (which keeps ``outstanding`` right).
    public let results: Mailbox<Result>

    /// The decode queue, at the default quality of service: libdispatch gives each worker thread
    /// the nice value of its queue's QoS with `setpriority(2)`, and `.userInitiated` asks for
    /// nice -2, which a process without CAP_SYS_NICE may not take (EACCES, and a libdispatch log
    /// line per worker thread in the journal). Decoding never needs to run ahead of the frame loop.
    private let queue = DispatchQueue(label: "kiosk-carousel.decode")
    private let checkQueue = DispatchQueue(label: "kiosk-carousel.file-check", qos: .utility)

    /// Tickets of prepared frames whose file has changed since it was read (posted by
    /// ``checkFiles(_:)``); the frame loop polls its ``Mailbox/wakeDescriptor``.
    public let changedFiles: Mailbox<Int>
    /// Local files behind prepared frames that cannot be looked at now (`stat(2)` fails: deleted,
    /// or a symbolic link whose target went), by path, posted by ``checkFiles(_:)`` at each look
    /// while they stay so; their frames stay.
    public let goneFiles: Mailbox<String>
    /// The frames of the slots' animations made on the worker (``SlotAnimations``).
    let animationFrames: Mailbox<AnimationAnswer>
    private struct Shared {
        var width: Int, height: Int
        var outputSizes: [FrameSize] = []
        var pending = 0
        /// The newest ticket asked for per slot; older jobs for that slot are skipped.
        var latest: [Int: Int] = [:]
        var frames: FrameCache
        /// The bytes the animations playing hold (their decoders and frames made ahead), all
        /// within one decoder budget (``animationStream(_:width:height:captioned:)``).
        var animationBytes = 0
        /// Of those, the bytes held per file (a two-item show prepares one animation in both
        /// neighbour slots).
        var animationBytesByPath: [String: Int] = [:]
    }
    private let shared: Locked<Shared>

    /// Default bound of the memory cache of prepared frames: 32 MiB (four 1920x1080 frames),
    /// beside the three slot frames, within the service's `MemoryMax=256M`.
    public static let defaultMemoryCacheBytes = 32 << 20

    /// - Parameter memoryCacheBytes: bound of the memory cache of prepared frames, bytes (0: none).
    /// - Throws: ``SystemError`` when the results' wake-up pipe cannot be made.
    public init(width: Int, height: Int, fit: FitMode, background: RGBColor, maxPixels: Int,
                memoryCacheBytes: Int = SlotPreparer.defaultMemoryCacheBytes) throws(SystemError) {
        results = try Mailbox()
        changedFiles = try Mailbox()
        goneFiles = try Mailbox()
        animationFrames = try Mailbox()
        shared = Locked(Shared(width: width, height: height, frames: FrameCache(budget: memoryCacheBytes)))
        self.fit = fit
        self.background = background
        self.maxPixels = maxPixels
    }

    /// Frames and bytes in the memory cache.
    public var memoryCacheUsage: (frames: Int, bytes: Int) { shared.withLock { ($0.frames.count, $0.frames.bytes) } }

    /// Empties the memory cache (the files behind it changed: a directory rescan, a reload).
    public func forgetFrames(source: String? = nil) {
        shared.withLock { s in
            let budget = s.frames.budget
            if let source { s.frames.remove(source: source) } else { s.frames = FrameCache(budget: budget) }
        }
    }

    /// The display changed size: frames are made `width` x `height` pixels from now on (a job
    /// already being decoded finishes at the old size; the caller asks for its slots again) and
    /// the memory cache, all of the old size, is emptied.
    /// `outputSizes`: the other outputs' sizes from now on (nil: as they were); when only they
    /// change, the memory cache's frames of the display's own size stay.
    public func resize(width: Int, height: Int, outputSizes: [FrameSize]? = nil) {
        shared.withLock { s in
            let same = s.width == width && s.height == height
            s.width = width; s.height = height
            if let outputSizes { s.outputSizes = outputSizes }
            if !same { s.frames = FrameCache(budget: s.frames.budget) }
        }
    }

    /// The sizes of the other outputs of a display of several (``KioskDisplay/OutputSet``), each
    /// given a frame of its own in every job (``Result/outputFrames``); empty: one output.
    public var outputSizes: [FrameSize] {
        get { shared.withLock { $0.outputSizes } }
        set { shared.withLock { $0.outputSizes = newValue } }
    }

    /// Number of jobs asked for whose results have not been taken yet.
    public var outstanding: Int { shared.withLock { $0.pending } }

    /// Draws captions into prepared frames (on the decode worker only); nil: no captions.
    public var captions: CaptionPainter?
    /// Makes ``captions`` on the decode worker when the first caption is drawn (then dropped),
    /// so the text libraries are loaded only by a show that has captions; set before the worker
    /// starts. nil, or returning nil: no captions.
    public var makeCaptions: (() -> CaptionPainter?)?
    /// Where a caption comes from when an item has none: `.exif`, the image's own description.
    public var captionSource: CaptionSource = .item
    /// The strftime(3) format of `--caption date` (``CaptureCaption``).
    public var captionFormat = CaptureCaption.defaultFormat

    /// Gets remote images (`http`/`https` paths) as files before decoding; nil when the show has
    /// no remote source.
    public var images: ImageStore?
    /// What the pictures' colours are converted to (`--screen-profile`); set before the worker starts.
    public var colour: ColourTarget = .sRGB
    /// `--ken-burns`: each job makes a Ken Burns source instead of a screen-sized frame
    /// (``kenBurnsSource(_:width:height:)``); set before the worker starts.
    public var kenBurns = false

    /// Queues a job; a newer job for the same slot makes older ones for it stale (skipped). A
    /// remote image not in the memory cache is fetched first (the disk cache answers at once
    /// when it has it), off the frame loop and off the decode worker.
    public func submit(_ job: Job) {
        shared.withLock {
            $0.pending += 1
            $0.latest[job.slot] = job.ticket
        }
        if let images, ManifestItem.isRemote(job.path),
           !shared.withLock({ $0.frames.contains(FrameCache.Key(source: job.source, fit: job.fit ?? fit, caption: job.caption,
                                                                width: $0.width, height: $0.height)) }) {
            images.image(for: PlaylistItem(source: job.path, sha256: job.sha256), urgent: true) { [self] result in
                switch result {
                case .success(let file):
                    // The file is held open (the cache may evict the entry before the decoder
                    // gets to it) and read through its /proc/self/fd path.
                    var local = job
                    local.path = file.path
                    decode(local, holding: file, cached: images)
                case .failure(let error):
                    finish(Result(slot: job.slot, ticket: job.ticket, item: job.item,
                                  outcome: .unavailable(error.logReason(path: job.path)), warnings: []))
                }
            }
            return
        }
        decode(job)
    }

    /// Prepares the frame of `job` into the memory cache on the decode worker, ahead of the
    /// carousel asking for it: the first image, while the rest of the program starts (fonts,
    /// console, touch, control socket), so the first frame does not wait for them. The job the
    /// carousel then submits for the same file and fit, queued behind it, is answered from the
    /// cache. No result is posted. For a local file whose frame gets no caption only (the
    /// caller checks): captions are not drawn here.
    public func warm(_ job: Job) {
        queue.async { [self] in
            StartupTrace.shared.mark(.decodeStarted)
            _ = prepare(job, captioned: false, animated: false)
            StartupTrace.shared.mark(.decodeEnded)
        }
    }

    private func finish(_ result: Result) { results.post(result) }

    /// Decodes on the worker. `holding`: the open file to close afterwards. `cached`: the image
    /// came from that store; if it does not decode, the store forgets it so the next try
    /// downloads it again instead of failing on the same bytes forever.
    private func decode(_ job: Job, holding file: ImageStore.OpenImage? = nil, cached: ImageStore? = nil) {
        queue.async { [self] in
            defer { file?.close() }
            let stale = shared.withLock { $0.latest[job.slot] != job.ticket }
            let result: Result
            if stale {
                result = Result(slot: job.slot, ticket: job.ticket, item: job.item, outcome: .superseded, warnings: [])
            } else {
                result = prepare(job)
            }
            if let cached, case .failed = result.outcome { cached.invalidate(url: job.source) }
            finish(result)
        }
    }

    /// Decodes and fits one image into a new frame (runs on the worker; public for benchmarks):
    /// ``ImageDecoder/decodeFitted(path:into:fit:background:options:)``, which streams a JPEG
    /// into the frame without holding the decoded image.
    /// A frame still in the memory cache (same source and fit) is handed out again undecoded.
    /// `captioned`: false leaves ``captions`` alone (``warm(_:)``, before they are set).
    /// `animated`: an animation's first frame comes with the rest of it (``Result/animation``,
    /// opened here while the file is at hand); false: the first frame only.
    public func prepare(_ job: Job, captioned: Bool = true, animated: Bool = true) -> Result {
        let (width, height, others) = shared.withLock { ($0.width, $0.height, $0.outputSizes) }
        // A file is known by its content's identity, read before the decode (a download's: its
        // disk-cache file, through the open descriptor's path); a file that changes while it is
        // decoded gives a frame that is not kept (and the next check finds the change).
        let identity = (try? FileIdentity(path: job.path)).map { job.source == job.path ? $0 : Self.cacheFileVersion($0) }
        do {
            let (frame, warnings, isAnimation, paired) = try frame(job, width: width, height: height,
                                                                   identity: identity, captioned: captioned)
            var result = Result(slot: job.slot, ticket: job.ticket, item: job.item, outcome: .frame(frame),
                                warnings: warnings, identity: identity)
            result.outputsOnly = job.outputsOnly
            result.partner = paired ? job.partner?.item : nil
            if isAnimation, animated, !job.outputsOnly {
                do throws(ImageError) {
                    result.animation = try animationStream(job, width: width, height: height, captioned: captioned)
                } catch {
                    // The first frame stays, as a still; the log says why the rest does not play.
                    result.warnings.append("the animation is not played (its first frame is shown): " + error.reason)
                }
            }
            // The other outputs' frames: one decode each, fitted to that output (DCT scaling
            // makes a smaller one cheaper), from the memory cache when it has them.
            result.outputFrames = others.map {
                try? self.frame(job, width: $0.width, height: $0.height, identity: identity, captioned: captioned).frame
            }
            return result
        } catch {
            // A half-drawn frame is dropped here, never handed on.
            return Result(slot: job.slot, ticket: job.ticket, item: job.item, outcome: .failed(error), warnings: [],
                          identity: identity)
        }
    }

    /// The frame of `job` at `width` x `height`: from the memory cache, or decoded and fitted
    /// into a new frame (kept in the cache unless the file changed meanwhile or the size is no
    /// longer one the preparer makes; nor an animation's first frame, which is made with its
    /// animation each time). `animation`: the file is an animation of several frames.
    /// Throws ``ImageError``.
    private func frame(_ job: Job, width: Int, height: Int, identity: FileIdentity?, captioned: Bool)
        throws(ImageError) -> (frame: Bitmap, warnings: [String], animation: Bool, paired: Bool) {
        // --ken-burns pans over a still source: an animation shows its first frame there.
        if kenBurns {
            let (source, warnings) = try kenBurnsSource(job, width: width, height: height)
            return (source, warnings, false, false)
        }
        var pairWarnings: [String] = []
        if let partner = job.partner {
            do throws(PairError) {
                let (frame, warnings) = try composePair(job, partner, width: width, height: height,
                                                        captioned: captioned)
                return (frame, warnings, false, true)
            } catch {
                switch error {
                case .first(let e): throw e
                case .partner(let e):
                    // The first picture is shown alone; the partner's failure is said.
                    pairWarnings.append("shown alone: its partner \(partner.path) could not be decoded: "
                                        + e.reason)
                }
            }
        }
        let fit = job.fit ?? self.fit
        var key = FrameCache.Key(source: job.source, fit: fit, caption: job.caption, width: width, height: height)
        key.version = identity
        if let cached = shared.withLock({ $0.frames.frame(for: key) }) { return (cached, pairWarnings, false, false) }
        let options = DecodeOptions(maxPixels: maxPixels, targetWidth: width, targetHeight: height, fit: fit,
                                    colour: colour)
        let frame = Bitmap(uninitializedWidth: width, height: height)  // decodeFitted writes every pixel
        let fitted = try ImageDecoder.decodeFitted(path: job.path, into: frame, fit: fit, background: background,
                                                   options: options)
        if captioned { drawCaption(job, into: frame) }
        if !fitted.animated, identity == nil || (try? FileIdentity(path: job.path)) == identity {
            // Not kept when the display changed size meanwhile.
            shared.withLock { s in
                let size = FrameSize(width: width, height: height)
                if (s.width == width && s.height == height) || s.outputSizes.contains(size) { s.frames.insert(frame, for: key) }
            }
        }
        return (frame, pairWarnings + fitted.warnings, fitted.animated, false)
    }

    /// The animation of `job` from its second frame on (its first is the slot's frame), placed
    /// into frames of `width` x `height` as the job's fit says, each with the job's caption.
    /// Opened on the worker with the preparer's limits (``DecodeOptions/maxDecoderBytes`` for the
    /// decoder's state and the frames decoded ahead). Throws ``ImageError``.
    private func animationStream(_ job: Job, width: Int, height: Int,
                                 captioned: Bool) throws(ImageError) -> AnimationStream? {
        let fit = job.fit ?? self.fit
        var options = DecodeOptions(maxPixels: maxPixels, targetWidth: width, targetHeight: height, fit: fit,
                                    colour: colour)
        // Every animation playing (up to one a slot) shares one budget: what the others hold is
        // not this one's.
        let (held, sameFile) = shared.withLock { ($0.animationBytes, $0.animationBytesByPath[job.path] ?? 0) }
        options.maxDecoderBytes = max(0, options.maxDecoderBytes - held)
        // A second copy of an animation another slot plays (both neighbours of a two-item show)
        // that cannot fit beside it: that slot's copy plays; this one is its first frame, with
        // no warning (the animation does play) and no decode to find out.
        if sameFile > options.maxDecoderBytes { return nil }
        guard let decoder = try AnimationDecoder.open(path: job.path, options: options) else { return nil }
        let text = captioned ? caption(for: job) : nil
        let stream = try AnimationStream(decoder: decoder, width: width, height: height, fit: fit,
                                         background: background, options: options) { [weak self] frame in
            self?.drawCaption(text: text, into: frame)
        }
        let bytes = stream.heldBytes
        guard bytes <= options.maxDecoderBytes else {
            throw .overMemoryBudget(path: job.path, needed: bytes, limit: options.maxDecoderBytes,
                                    reason: "the animation's decoder and its frames made ahead, beside the "
                                        + "\(held) bytes the other animations playing hold")
        }
        let path = job.path
        shared.withLock {
            $0.animationBytes += bytes
            $0.animationBytesByPath[path, default: 0] += bytes
        }
        stream.released = { [weak self] in
            self?.shared.withLock {
                $0.animationBytes -= bytes
                let left = ($0.animationBytesByPath[path] ?? bytes) - bytes
                $0.animationBytesByPath[path] = left > 0 ? left : nil
            }
        }
        return stream
    }

    /// What the animations playing hold now, bytes (their decoders and frames made ahead).
    public var animationBytes: Int { shared.withLock { $0.animationBytes } }

    /// Runs `work` on the decode worker, after the jobs already queued (an animation's next frame).
    func onWorker(_ work: @escaping @Sendable () -> Void) { queue.async(execute: work) }

    /// Looks at the files behind prepared frames off the frame loop (stat(2) on a utility
    /// queue): the ticket of each one whose identity differs from the one it was read with is
    /// posted to ``changedFiles``. For a URL that is the file the disk cache holds for it now
    /// (a revalidation took a new picture; ``ImageStore/currentFile(url:)``), whose old frames
    /// are forgotten. A file that cannot be looked at is left alone, its frame kept (a file gone
    /// from a directory leaves the show through the directory's watch); a local one is posted to
    /// ``goneFiles`` (a file SOURCE gone is waited for, ``ContentService/fileMayBeGone(_:)``).
    public func checkFiles(_ files: [(ticket: Int, path: String, identity: FileIdentity)]) {
        guard !files.isEmpty else { return }
        checkQueue.async { [changedFiles, goneFiles, images, self] in
            for file in files {
                let remote = ManifestItem.isRemote(file.path)
                let current = remote ? images?.currentFile(url: file.path) : file.path
                guard let current else { continue }
                guard var now = try? FileIdentity(path: current) else {
                    if !remote { goneFiles.post(current) }
                    continue
                }
                if remote { now = Self.cacheFileVersion(now) }
                guard now != file.identity else { continue }
                if remote { forgetFrames(source: file.path) }
                changedFiles.post(file.ticket)
            }
        }
    }

    /// A disk-cache file's identity without its times: the cache sets a file's modification
    /// time at every use (its LRU order), while a new body is always a new file (renamed in).
    static func cacheFileVersion(_ identity: FileIdentity) -> FileIdentity {
        var version = identity
        version.modified = 0
        version.changed = 0
        return version
    }

    /// Takes the finished results (in completion order). Never blocks.
    public func takeResults() -> [Result] {
        let taken = results.take()
        if !taken.isEmpty { shared.withLock { $0.pending -= taken.count } }
        return taken
    }

    /// Blocks until at least one result is waiting (or none is outstanding, or `interrupt` — a
    /// descriptor such as the signal pipe — becomes readable), then takes the results.
    public func waitForResults(interrupt: Int32 = -1) -> [Result] {
        waitForAnswers(interrupt: interrupt)
        return takeResults()
    }
}

extension SlotPreparer {
    /// The Ken Burns source of `job` for a `width` x `height` screen (docs/carousel.md "Ken
    /// Burns"): the picture decoded whole and upright at a DCT scale covering the largest source
    /// (``DecodeOptions`` with a `fill` target of the screen times ``KenBurns/zoom`` and
    /// ``KenBurns/maxExtent``), placed as `fill` into a new bitmap of
    /// ``KenBurns/sourceSize(imageWidth:imageHeight:screenWidth:screenHeight:)`` (XRGB8888,
    /// alpha flattened over ``background``), its ownership passed to the caller. The item's
    /// fit does not apply (the picture always covers the screen) and no caption is drawn (it
    /// would drift and be cropped); the memory cache is not used (its frames are screen-sized).
    /// Runs on the decode worker. Throws ``ImageError`` as ``ImageDecoder/decode(path:options:)``.
    func kenBurnsSource(_ job: Job, width: Int, height: Int) throws(ImageError) -> (Bitmap, [String]) {
        let scale = KenBurns.zoom * KenBurns.maxExtent
        let options = DecodeOptions(maxPixels: maxPixels, targetWidth: Int((Double(width) * scale).rounded(.up)),
                                    targetHeight: Int((Double(height) * scale).rounded(.up)), fit: .fill,
                                    colour: colour)
        let decoded = try ImageDecoder.decode(path: job.path, options: options)
        let size = KenBurns.sourceSize(imageWidth: decoded.bitmap.width, imageHeight: decoded.bitmap.height,
                                       screenWidth: width, screenHeight: height)
        let source = Bitmap(uninitializedWidth: size.width, height: size.height)  // place writes every pixel
        Compositor.place(decoded.bitmap, into: source, fit: .fill, background: background)
        return (source, decoded.warnings)
    }
}
