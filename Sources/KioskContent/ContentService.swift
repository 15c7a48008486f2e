// SPDX-License-Identifier: Apache-2.0
import Dispatch
import FoundationEssentials
import Glibc
import KioskCore
import KioskSystem

/// The show's playlist from its sources, kept current (docs/content.md): image files, image
/// URLs, directories (watched with inotify: files added, removed or renamed show up; a file
/// still being copied in only once complete), local playlist files (`.json`, a manifest that may
/// name files and URLs) and a remote manifest (`--manifest URL`, polled with conditional GETs,
/// offline first: the last good one is stored and the show starts from it before any network
/// answer). Remote images go through the ``ImageStore`` (disk cache and fetcher); every
/// playlist is prefetched in the background so the whole show survives going offline.
///
/// Owned by the frame loop's thread: the watches and the poller run on their own threads and
/// post into mailboxes whose descriptors the loop polls (``wakeDescriptors``); nothing here
/// blocks the loop (re-reading local playlists and rescanning directories on SIGHUP happens on a
/// background queue, which posts its results the same way).
public final class ContentService {
    /// One SOURCE argument or the `--manifest` URL, with what it currently contributes.
    enum Source {
        case file(String)
        /// A SOURCE that did not exist (or could not be looked at: `errno` of its `stat`) when
        /// last looked at, waited for by its watch (nil when that could not start: then looked
        /// for again on SIGHUP).
        case missing(path: String, errno: Int32, watch: MissingSourceWatch?)
        /// A file SOURCE that was there and cannot be looked at now (deleted, or a symbolic link
        /// whose target went: `errno` of its `stat`): it keeps its item, so the pictures the show
        /// has of it stay, and is waited for by its watch like a missing one, then read again.
        case goneFile(path: String, errno: Int32, watch: MissingSourceWatch?)
        case remoteImage(String)
        case directory(path: String, watch: DirectoryWatch?, files: [String])
        case playlist(path: String, manifest: Manifest?)
        case manifest(ManifestPoller, manifest: Manifest?)
    }

    /// Where the show's content comes from and where it is kept (the command line's SOURCE
    /// arguments, `--manifest`, `--manifest-interval`, `--cache-dir`, `--state-dir`,
    /// `--cache-size`, `--ca-file`, `--proxy`).
    public struct Configuration: Sendable {
        /// The SOURCE arguments: directories, image files, image URLs, `.json` playlists.
        public var sources: [String] = []
        /// The remote manifest's http(s) URL, polled.
        public var manifest: URL?
        /// Time between manifest polls (±10 % jitter); default 60 s.
        public var manifestInterval: Duration = .seconds(60)
        /// The disk cache of downloaded images.
        public var cacheDirectory: String
        /// Where the last good manifest is kept.
        public var stateDirectory: String
        /// Bound of the disk cache, bytes; default 500 MB.
        public var cacheBytes = 500_000_000
        /// Largest image download, bytes; default 50 MB.
        public var maxImageBytes = 50_000_000
        /// `--ca-file`: PEM CA certificates trusted for https besides the system's; default none.
        public var caFile: String?
        /// `--proxy`: the proxy of every download; default none (`http_proxy`, `https_proxy`,
        /// `no_proxy` from the environment).
        public var proxy: String?
        /// `--allow-hosts`: the hosts fetched from besides the configured ones (``HostPolicy``);
        /// nil: any but the refused ranges.
        public var allowHosts: [HostPolicy.Pattern]?
        /// `--allow-http-from-https`: no downgrade check.
        public var allowHTTPFromHTTPS = false
        /// `--requests-per-poll`: the most image requests (downloads and revalidations) one
        /// poll makes (``ImageStore/requestsPerRound``).
        public var requestsPerPoll = ImageStore.defaultRequestsPerRound

        /// The fetch policy: `--allow-hosts`, with the hosts of `--manifest` and the URL SOURCE
        /// arguments always allowed.
        public var hostPolicy: HostPolicy {
            let configured = ([manifest?.absoluteString].compactMap { $0 } + sources.filter(ManifestItem.isRemote))
            return HostPolicy(allowed: allowHosts, trustedHosts: Set(configured.compactMap(urlHost)))
        }

        public init(sources: [String] = [], manifest: URL? = nil, cacheDirectory: String, stateDirectory: String) {
            self.sources = sources; self.manifest = manifest
            self.cacheDirectory = cacheDirectory; self.stateDirectory = stateDirectory
        }
    }

    /// Show-wide settings a manifest may give (`interval`, `fade`, `fit`, `brightness`,
    /// `presence_timeout`).
    public struct ShowSettings: Equatable, Sendable {
        public var interval: Duration?
        public var fade: Duration?
        public var fit: FitMode?
        public var brightness: BrightnessTiers?
        public var presenceTimeout: Duration?
        /// The manifest's `order` (docs/carousel.md "Order").
        public var order: PlaylistOrder?
        public init(interval: Duration? = nil, fade: Duration? = nil, fit: FitMode? = nil) {
            self.interval = interval; self.fade = fade; self.fit = fit
        }
    }

    private var sources: [Source]
    /// The remote images (disk cache and fetcher); nil when no source is remote.
    public let images: ImageStore?
    private let reloads: Mailbox<(index: Int, source: Source)>
    private let reloadQueue = DispatchQueue(label: "kiosk-carousel.content-reload")
    /// The sources whose SIGHUP read is under way (queued, running, or its result not taken yet),
    /// each with whether another SIGHUP came meanwhile (then it is read once more when the result
    /// is taken). So a burst of signals reads each source at most twice, not once per signal:
    /// each read of a folder holds an inotify instance (a user has 128,
    /// `fs.inotify.max_user_instances`) and a thread until it is taken, and a burst read once per
    /// signal ran out of them ("directory not watched", EMFILE), the folder left unwatched when
    /// the last read was one of those. The frame loop's, as ``reload()`` and ``takeUpdate()`` are.
    private var reloading: [Int: Bool] = [:]
    /// The sources read again because a change was noticed (a folder's watch ended, a file
    /// SOURCE found to be a folder), not for SIGHUP: their result says `source changed`.
    private var noticed: Set<Int> = []
    /// The playlist as last composed.
    public private(set) var items: [PlaylistItem] = []
    /// The manifest's show-wide settings (the remote manifest's, else a local playlist's).
    public private(set) var showSettings = ShowSettings()
    /// True until the remote manifest's first poll has ended (an offscreen run on the virtual
    /// clock waits for it).
    public private(set) var awaitingFirstAnswer = false
    /// True while a remote manifest has never been had: not fetched yet in this run and none
    /// stored from an earlier one (the empty screen then says it waits for the show, not that
    /// image files should be added). Read on the frame loop, as ``takeUpdate()`` changes it.
    public var waitingForManifest: Bool {
        sources.contains { if case .manifest(_, nil) = $0 { return true } else { return false } }
    }
    /// A SOURCE that does not exist (or cannot be looked at), as the empty screen names it.
    public struct MissingSource: Equatable, Sendable {
        /// The SOURCE argument as given.
        public var path: String
        /// The `errno` of its `stat(2)` (`ENOENT`, `EACCES`, ...).
        public var errno: Int32
        /// Whether it is named as an image file (by its extension), rather than a folder.
        public var isImageFile: Bool

        public init(path: String, errno: Int32, isImageFile: Bool) {
            self.path = path; self.errno = errno; self.isImageFile = isImageFile
        }
    }

    /// The SOURCE arguments that do not exist now, in the order given; each is watched and
    /// taken into the show when it appears (the playlist changes then, or, for an empty folder,
    /// ``takeUpdate()`` hands the same playlist again so the empty screen's words change).
    public var missingSources: [MissingSource] {
        sources.compactMap { source in
            let path: String, code: Int32
            switch source {
            case .missing(let p, let e, _), .goneFile(let p, let e, _): (path, code) = (p, e)
            default: return nil
            }
            return MissingSource(path: path, errno: code,
                                 isImageFile: DirectoryWatch.isImageName(String(path.split(separator: "/").last ?? "")))
        }
    }
    private var started = false
    /// Time between prefetch rounds when no manifest is polled (URL SOURCEs and playlists
    /// naming URLs only): the manifest interval.
    private let roundInterval: Duration
    /// When the next such round is due.
    private var nextRound = ContinuousClock.now

    /// Builds the sources: lists directories and starts watching them, reads local playlists,
    /// opens the caches and loads the stored manifest when there is a remote source. Runs
    /// before the show starts (blocking I/O is fine here). Problems are logged and leave the
    /// source empty; only a remote source whose cache or state directory cannot be made throws.
    /// - Throws: ``ContentError`` naming the directory.
    public init(configuration settings: Configuration) throws(ContentError) {
        do { reloads = try Mailbox() } catch { throw .system(error) }
        roundInterval = settings.manifestInterval
        let local = settings.sources.map { Self.makeSource($0) }
        // Downloads are set up for a manifest, an image URL given as a SOURCE, and a local
        // playlist that names one (a `.json` playlist has the manifest's format).
        let remote = settings.manifest != nil || settings.sources.contains(where: ManifestItem.isRemote)
            || local.contains { source in
                if case .playlist(_, let manifest?) = source {
                    return manifest.items.contains { ManifestItem.isRemote($0.src) }
                }
                return false
            }
        if remote {
            // An unusable cache directory (a file, read-only, missing permissions) must not stop
            // the show: a private one under the temporary directory takes its place, for this run.
            var cache: DiskCache
            do {
                cache = try DiskCache(.init(directory: settings.cacheDirectory, maxBytes: settings.cacheBytes))
                do {
                    try syscall("access W_OK", path: settings.cacheDirectory) { access(settings.cacheDirectory, W_OK) }
                } catch { throw ContentError.system(error) }
            } catch {
                let fallback = Self.privateTemporaryDirectory("kiosk-carousel-cache-\(getuid())")
                Log.warning("disk cache unusable, using a temporary one for this run", path: settings.cacheDirectory,
                            reason: "\(error); using \(fallback)")
                cache = try DiskCache(.init(directory: fallback, maxBytes: settings.cacheBytes))
            }
            var configuration = Fetcher.Configuration()
            configuration.maxImageBytes = settings.maxImageBytes
            configuration.caFile = settings.caFile
            configuration.proxy = settings.proxy
            configuration.hostPolicy = settings.hostPolicy
            configuration.allowHTTPFromHTTPS = settings.allowHTTPFromHTTPS
            // Each poll asks about every cached image (conditional GETs), one confirmed less
            // than half an interval ago excepted.
            images = ImageStore(cache: cache, configuration: configuration, requestsPerRound: settings.requestsPerPoll,
                                revalidateAfter: min(.seconds(30), settings.manifestInterval / 2))
            let removed = cache.removeExpired()
            Log.info("disk cache opened", path: cache.directory,
                     detail: "\(counted(cache.count, "file")), \(cache.totalBytes / 1_000_000) MB"
                         + (removed > 0 ? ", \(removed) expired removed" : ""))
        } else {
            images = nil
        }
        sources = local
        if let url = settings.manifest, let images {
            let store: ManifestStore?
            do {
                store = try ManifestStore(directory: settings.stateDirectory)
            } catch {
                Log.warning("manifest not kept across restarts", path: settings.stateDirectory,
                            reason: error.description)
                store = nil
            }
            // Offline first: the stored manifest, read now, is the show until the server answers
            // (only one stored for this URL: a device pointed at another manifest does not play
            // the old show).
            var stored: Manifest?
            if let store {
                switch ManifestPoller.loadStored(from: store, for: url,
                                                 allowHTTPFromHTTPS: settings.allowHTTPFromHTTPS) {
                case .none: break
                case .usable(let manifest, let saved):
                    stored = manifest
                    Log.info("stored manifest loaded", path: saved.url, detail: counted(manifest.items.count, "item"))
                case .refused:
                    break  // the poller says why when it starts
                }
            }
            var schedule = PollSchedule.Configuration()
            schedule.interval = settings.manifestInterval
            let poller = try ManifestPoller(url: url, fetcher: images.fetcher, store: store, schedule: schedule,
                                            allowHTTPFromHTTPS: settings.allowHTTPFromHTTPS)
            sources.append(.manifest(poller, manifest: stored))
            awaitingFirstAnswer = true
        }
        items = compose()
    }

    /// Starts the poller (after the first frame is queued, so the show never waits for it).
    public func start() {
        guard !started else { return }
        started = true
        for case .manifest(let poller, _) in sources { poller.start() }
        prefetch()
    }

    /// Stops watching and polling.
    public func stop() {
        for source in sources {
            switch source {
            case .directory(_, let watch?, _): watch.stop()
            case .missing(_, _, let watch?), .goneFile(_, _, let watch?): watch.stop()
            case .manifest(let poller, _): poller.stop()
            default: break
            }
        }
        images?.shutdown()
    }

    /// Descriptors readable when something arrived (for the frame loop's poll).
    public var wakeDescriptors: [Int32] {
        var fds = [reloads.wakeDescriptor]
        for source in sources {
            switch source {
            case .directory(_, let watch?, _): fds.append(watch.changes.wakeDescriptor)
            case .missing(_, _, let watch?), .goneFile(_, _, let watch?): fds.append(watch.appeared.wakeDescriptor)
            case .manifest(let poller, _): fds.append(poller.events.wakeDescriptor)
            default: break
            }
        }
        return fds
    }

    /// Takes what arrived; returns the new playlist when it differs from ``items``, or the same
    /// one when ``missingSources`` changed (a missing folder appeared empty, or a watched one was
    /// deleted: the empty screen's words change). Called on every turn of the frame loop: the
    /// playlist is composed again only when a source actually brought something.
    public func takeUpdate() -> [PlaylistItem]? {
        var changed = false
        var polled = false
        let missingBefore = missingSources
        for reloaded in reloads.take() where reloaded.index < sources.count {
            changed = true
            if case .directory(_, let old?, _) = sources[reloaded.index] {
                if case .directory(_, let new, _) = reloaded.source, new !== old { old.stop() }
            }
            switch sources[reloaded.index] {
            case .missing(_, _, let old?), .goneFile(_, _, let old?): old.stop()
            default: break
            }
            Self.logChange(from: sources[reloaded.index], to: reloaded.source,
                           noticed: noticed.remove(reloaded.index) != nil)
            sources[reloaded.index] = reloaded.source
            if reloading.removeValue(forKey: reloaded.index) == true { reloadSource(reloaded.index) }
        }
        for i in sources.indices {
            switch sources[i] {
            case .missing(let path, _, let watch?):
                guard !watch.appeared.take().isEmpty else { break }
                Log.info("source appeared", path: path)
                reloadQueue.async { [reloads] in reloads.post((i, Self.makeSource(path))) }
            case .goneFile(let path, let code, let watch?):
                guard !watch.appeared.take().isEmpty else { break }
                Log.info("source appeared", path: path)
                sources[i] = .goneFile(path: path, errno: code, watch: nil)  // read again, once
                reloadSource(i)
            case .directory(let path, let watch?, let files):
                if let latest = watch.changes.take().last {
                    if latest.isEmpty, watch.ended {
                        // The folder itself went (deleted, renamed away, unmounted) or its path
                        // leads elsewhere now (a file, another folder, a link retargeted): read
                        // again as at the start, off the loop (waited for when missing); the
                        // playlist changes when that read is taken.
                        watch.stop()
                        sources[i] = .directory(path: path, watch: nil, files: files)
                        noticed.insert(i)
                        reloadSource(i)
                        continue
                    }
                    changed = true
                    Log.info("directory changed", path: path, detail: counted(latest.count, "image"))
                    sources[i] = .directory(path: path, watch: watch, files: latest)
                }
            case .manifest(let poller, let current):
                var manifest = current
                for event in poller.events.take() {
                    switch event {
                    case .manifest(let m, let fromStore):
                        if !fromStore || manifest == nil {
                            if !fromStore {
                                var detail = counted(m.items.count, "item")
                                if let i = m.interval { detail += ", interval \(i.wholeMilliseconds) ms" }
                                if let f = m.fade { detail += ", fade \(f.wholeMilliseconds) ms" }
                                if let f = m.fit { detail += ", fit \(f.rawValue)" }
                                Log.info("manifest applied", path: poller.url.absoluteString, detail: detail)
                            }
                            manifest = m
                            changed = true
                        }
                    case .log(let text, let reason, let warning):
                        Log.write(warning ? .warning : .info, text, path: poller.url.absoluteString, reason: reason)
                    case .polled:
                        awaitingFirstAnswer = false
                        polled = true
                    }
                }
                sources[i] = .manifest(poller, manifest: manifest)
            default:
                break
            }
        }
        // A round of downloads and revalidations at each poll (and, with no manifest polled,
        // every interval), and when the playlist changes: one per turn at most.
        var roundDue = polled
        if !sources.contains(where: { if case .manifest = $0 { return true }; return false }), images != nil,
           ContinuousClock.now >= nextRound {
            roundDue = true
        }
        defer { if roundDue { prefetch() } }
        guard changed else { return nil }
        let composed = compose()
        guard composed != items || missingSources != missingBefore else { return nil }
        items = composed
        roundDue = true
        return composed
    }

    /// SIGHUP: polls the manifest now, reads local playlists again, rescans directories (a
    /// directory missing at start is watched once it exists), looks at file SOURCEs again (one
    /// that is now a folder is listed and watched), and asks again for images whose
    /// download failed less than a minute ago. Returns at once.
    public func reload() {
        images?.forgetFailures()
        for (i, source) in sources.enumerated() {
            if case .manifest(let poller, _) = source { poller.pollNow() } else { reloadSource(i) }
        }
    }

    /// An image of the playlist could not be read because `path` is a folder now (`EISDIR`):
    /// each file SOURCE of that path is read again off the loop, so the folder's images join the
    /// show (``takeUpdate()`` hands the new playlist). Other paths are left alone. Returns at once.
    public func sourceIsFolderNow(_ path: String) {
        for (i, source) in sources.enumerated() {
            guard case .file(let p) = source, p == path, reloading[i] == nil else { continue }
            noticed.insert(i)
            reloadSource(i)
        }
    }

    /// A local image at `path` could not be looked at (the file check's `stat`, or a read that
    /// failed with `ENOENT`): each file SOURCE of that path is looked at again off the loop, and
    /// one that is gone (deleted, a symbolic link whose target went) is said once (`source
    /// missing`, with the link's target) and waited for, keeping its item: the pictures the show
    /// has of it stay, and it is taken up again when it appears (within the watch's 2 s), not at
    /// the 60 s retry. Other paths, and sources read already, are left alone. Returns at once.
    public func fileMayBeGone(_ path: String) {
        for (i, source) in sources.enumerated() {
            guard case .file(let p) = source, p == path, reloading[i] == nil else { continue }
            reloadSource(i)
        }
    }

    /// The `source changed` line, once per change: a file SOURCE read again as a folder, a folder
    /// SOURCE read again as a file, or (`noticed`: its watch ended) as another folder.
    static func logChange(from old: Source, to new: Source, noticed: Bool) {
        switch (old, new) {
        case (.file, .directory(let path, _, let files)), (.goneFile, .directory(let path, _, let files)):
            Log.info("source changed", path: path, detail: "a folder now, watched: " + counted(files.count, "image"))
        case (.directory, .directory(let path, _, let files)) where noticed:
            Log.info("source changed", path: path,
                     detail: "another folder now, watched: " + counted(files.count, "image"))
        case (.directory, .file(let path)), (.directory, .goneFile(let path, _, _)):
            Log.info("source changed", path: path, detail: "an image file now, not a folder")
        default:
            break
        }
    }

    /// Reads local source `i` again on ``reloadQueue``; while a read of it is under way, marks it
    /// to be read once more when that one is taken (``reloading``).
    private func reloadSource(_ i: Int) {
        let path: String
        var wasFile = false
        switch sources[i] {
        case .file(let p), .goneFile(let p, _, nil):
            // A file looked at again too: a folder that was briefly a file (or a file that
            // became a folder) is a folder again; one gone keeps its item, waited for.
            path = p
            wasFile = true
        case .playlist(let p, _), .missing(let p, _, nil):
            path = p
        case .directory(let p, _, _):
            // Watched again from scratch: a directory deleted and made anew is followed again.
            path = p
        default:
            return
        }
        if reloading[i] != nil { reloading[i] = true; return }
        reloading[i] = false
        reloadQueue.async { [reloads, wasFile] in reloads.post((i, Self.makeSource(path, wasFile: wasFile))) }
    }

    /// Blocks until the reads queued by ``reload()`` so far have been posted (tests).
    func waitForQueuedReloads() { reloadQueue.sync {} }

    /// Blocks until the remote manifest's first poll has ended, or `timeout` (an offscreen run on
    /// the virtual clock: time must not move on before the network answers), or `interrupt` (the
    /// signal pipe) becomes readable; what is in it is left for the frame loop.
    public func waitForFirstAnswer(timeout: Duration, interrupt: Int32 = -1) {
        let end = ContinuousClock.now + timeout
        while awaitingFirstAnswer, ContinuousClock.now < end {
            var set = PollSet(readable: wakeDescriptors)
            let interruptIndex = interrupt >= 0 ? set.add(interrupt) : nil
            _ = try? set.wait(milliseconds: 100)
            if let interruptIndex, set.isReady(interruptIndex) { return }
            _ = takeUpdate()
        }
    }

    // MARK: Internals

    /// A SOURCE argument: an image URL, a `.json` playlist, a directory, or an image file.
    /// Blocking I/O (listing, reading): at start-up or on the reload queue.
    /// `wasFile`: the SOURCE was an image file until now: gone, it is a ``Source/goneFile(path:errno:watch:)``
    /// (its item kept) rather than missing.
    static func makeSource(_ argument: String, wasFile: Bool = false) -> Source {
        if ManifestItem.isRemote(argument) { return .remoteImage(argument) }
        if argument.lowercased().hasSuffix(".json") {
            do {
                let manifest = withoutNestedPlaylists(try Manifest.load(path: argument), in: argument)
                Log.info("playlist read", path: argument, detail: counted(manifest.items.count, "item"))
                return .playlist(path: argument, manifest: manifest)
            } catch {
                Log.warning("playlist not read", path: argument, reason: error.logReason(path: argument))
                return .playlist(path: argument, manifest: nil)
            }
        }
        let st: stat
        do { st = try fileStatus(argument) } catch {
            return wasFile ? goneFile(argument, errno: error.errno) : missingSource(argument, errno: error.errno)
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { return .file(argument) }
        if let folder = opendir(argument) {
            closedir(folder)
        } else if case let code = errno, code == EACCES || code == EPERM {
            // There but not readable (mode 000, another user's): said as a permission problem
            // and waited for, so a `chmod` back is taken up without SIGHUP.
            return missingSource(argument, errno: code, operation: "opendir")
        }
        do {
            let watch = try DirectoryWatch(path: argument)
            if watch.initialFiles.isEmpty { Log.warning("no image files in directory", path: argument) }
            return .directory(path: argument, watch: watch, files: watch.initialFiles)
        } catch {
            Log.warning("directory not watched", path: argument, reason: error.description)
            return .directory(path: argument, watch: nil, files: SourceList.items(from: [argument]).map(\.source))
        }
    }

    /// `manifest` (read from `path`) without its items that name a playlist (a `src` whose path
    /// ends in `.json`, any case): a playlist cannot name another. Each one left out is logged
    /// with the playlist's path, its place and its `src`, instead of failing later as an image
    /// of an unknown format.
    static func withoutNestedPlaylists(_ manifest: Manifest, in path: String) -> Manifest {
        var kept = manifest
        kept.items = []
        for (i, item) in manifest.items.enumerated() {
            let name = item.src.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
                .split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
            guard name.lowercased().hasSuffix(".json") else { kept.items.append(item); continue }
            Log.warning("playlist item skipped", path: path,
                        reason: "items[\(i)].src \(Log.hidingPasswords(item.src)) is a playlist: nested playlists"
                            + " are not supported (give it as a SOURCE of its own)")
        }
        return kept
    }

    /// `FOLDER/NAME` (`$TMPDIR`, else `/tmp`) as a folder only this user can use: made with mode 0700,
    /// or taken when it is already a folder (not a symbolic link) owned by this user, then set
    /// to 0700. One that is not (another user's, in a shared /tmp) is never used: a new
    /// `mkdtemp(3)` folder beside it is, and failing that the name itself (the cache then
    /// fails with its own clear error).
    static func privateTemporaryDirectory(
        _ name: String, in folder: String = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    ) -> String {
        let base = folder + "/" + name
        do {
            try syscall("mkdir", path: base) { mkdir(base, 0o700) }
            return base
        } catch where error.errno == EEXIST {
            if let st = try? fileStatus(base, followLinks: false), st.st_mode & S_IFMT == S_IFDIR,
               st.st_uid == getuid(), chmod(base, 0o700) == 0 {
                return base
            }
        } catch {}
        var template = Array((base + "-XXXXXX").utf8CString)
        return template.withUnsafeMutableBufferPointer { buffer in
            mkdtemp(buffer.baseAddress!) != nil ? String(cString: buffer.baseAddress!) : base
        }
    }

    /// A SOURCE whose `stat` (or, for a folder, `operation`) failed with `code`: logged once
    /// (path and errno), and watched until it appears (``MissingSourceWatch``).
    static func missingSource(_ path: String, errno code: Int32, operation: String = "stat") -> Source {
        let watch: MissingSourceWatch?
        // Not there (ENOENT, ENOTDIR) or there but not usable (a permission, a symlink loop).
        let what = code == ENOENT || code == ENOTDIR ? "source missing"
            : code == ELOOP ? "source is a symbolic link loop" : "source not readable"
        var failure = SystemError(operation: operation, path: path, errno: code).description
        // A symbolic link that dangles (its target removed) says where it leads.
        if code == ENOENT, let target = linkTarget(path) {
            failure += "; a symbolic link to \(target), which does not exist"
        }
        do { watch = try MissingSourceWatch(path: path) } catch {
            Log.warning(what, path: path, reason: failure + "; not watched (\(error)): looked for again on SIGHUP")
            return .missing(path: path, errno: code, watch: nil)
        }
        Log.warning(what, path: path, reason: failure + "; the show takes it up when it appears")
        return .missing(path: path, errno: code, watch: watch)
    }

    /// A file SOURCE that was there and whose `stat` fails now with `code`: logged once (`source
    /// missing`, naming a symbolic link's target), its item kept, and watched until it appears.
    static func goneFile(_ path: String, errno code: Int32) -> Source {
        var reason = SystemError(operation: "stat", path: path, errno: code).description
        if let target = linkTarget(path) {
            reason += "; a symbolic link to \(target), which " + (code == ENOENT ? "does not exist" : "cannot be used")
        }
        let kept = "its picture stays on screen"
        guard let watch = try? MissingSourceWatch(path: path) else {
            Log.warning("source missing", path: path, reason: reason + "; \(kept), looked for again on SIGHUP")
            return .goneFile(path: path, errno: code, watch: nil)
        }
        Log.warning("source missing", path: path, reason: reason + "; \(kept) and the show takes it up when it appears")
        return .goneFile(path: path, errno: code, watch: watch)
    }

    /// What the symbolic link `path` points to (readlink(2)), nil when it is not one.
    static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n >= 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func compose() -> [PlaylistItem] {
        var out: [PlaylistItem] = []
        var settings = ShowSettings()
        func add(_ manifest: Manifest) {
            for item in manifest.items {
                out.append(PlaylistItem(source: item.src, duration: item.duration, fit: item.fit ?? manifest.fit,
                                        sha256: item.sha256, schedule: item.schedule, fallback: item.fallback,
                                        caption: item.caption, transition: item.transition ?? manifest.transition))
            }
            settings = ShowSettings(interval: manifest.interval ?? settings.interval,
                                    fade: manifest.fade ?? settings.fade, fit: manifest.fit ?? settings.fit)
            settings.brightness = manifest.brightness ?? settings.brightness
            settings.presenceTimeout = manifest.presenceTimeout ?? settings.presenceTimeout
            settings.order = manifest.order ?? settings.order
        }
        for source in sources {
            switch source {
            case .file(let path), .goneFile(let path, _, _):
                out.append(PlaylistItem(source: path))
            case .missing:
                break
            case .remoteImage(let url):
                out.append(PlaylistItem(source: url))
            case .directory(_, _, let files):
                out += files.map { PlaylistItem(source: $0) }
            case .playlist(_, let manifest?), .manifest(_, let manifest?):
                add(manifest)
            case .playlist(_, nil), .manifest(_, nil):
                break
            }
        }
        showSettings = settings
        return out
    }

    /// Gets the remote images of the playlist into the disk cache in the background, so the
    /// whole show plays offline later, and asks whether cached ones changed on their servers
    /// (``ImageStore/prefetch(_:completion:)``: at most `--requests-per-poll` requests).
    private func prefetch() {
        guard let images else { return }
        nextRound = ContinuousClock.now + roundInterval
        images.prefetch(items)
    }
}
