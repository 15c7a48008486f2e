// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Glibc
import KioskCore
import KioskSystem

/// The one door to remote images: the ``DiskCache`` and the ``Fetcher`` that fills it, behind
/// three calls (get an image's file, prefetch a playlist, forget a bad entry). Modelled on
/// Kingfisher's `ImageCache` over its storages and downloader: callers never touch the cache
/// or the transfers themselves.
///
/// Every call returns at once; completions run on the fetcher's callback queue.
/// Thread-safe (the cache and the fetcher are).
public final class ImageStore: @unchecked Sendable {
    /// An image file ready to decode, held open so the cache may evict the entry (a prefetch
    /// making room) without taking the bytes from under the decoder.
    public final class OpenImage: @unchecked Sendable {
        /// A path that reads the open file: `/proc/self/fd/N` (or the cache entry's own path
        /// when it could not be opened; the decoder then reports the failure with that path).
        public let path: String
        /// The URL the file was downloaded from.
        public let url: String
        private let descriptor: FileDescriptor?

        init(url: String, entryPath: String) {
            self.url = url
            descriptor = try? FileDescriptor.open(entryPath, O_RDONLY)
            path = descriptor.map { "/proc/self/fd/\($0.rawValue)" } ?? entryPath
        }

        /// Closes the file (also done when the last reference goes).
        public func close() { descriptor?.close() }
    }

    let cache: DiskCache
    let fetcher: Fetcher
    /// How long a failed download is answered from memory instead of asked again: 60 s, the
    /// show's retry interval (docs/content.md), so neither a prefetch nor a slot asks a broken
    /// server again before the show's own retry comes.
    public static let defaultFailureMemory: Duration = .seconds(60)
    /// This store's failure memory (``defaultFailureMemory`` unless given at init).
    public let failureMemory: Duration
    /// The last failure of each URL and when it came (``ContinuousClock``).
    private let failures = Locked<[String: (error: ContentError, at: ContinuousClock.Instant)]>([:])
    /// The most requests one ``prefetch(_:)`` round makes (downloads and revalidations): 50
    /// unless given at init. A manifest of thousands of items is fetched over several polls
    /// instead of in one burst.
    public let requestsPerRound: Int
    /// The default of ``requestsPerRound`` (`--requests-per-poll`).
    public static let defaultRequestsPerRound = 50
    /// An entry the server confirmed (or sent) less than this long ago is not asked about again
    /// in a round.
    public let revalidateAfter: Duration
    /// Where rounds run: each looks at the disk cache (file I/O), off the caller's thread.
    private let rounds = DispatchQueue(label: "kiosk-carousel.image-rounds")

    /// A store over `cache`, filled by a fetcher with `configuration`.
    /// `failureMemory` is how long a failed download is answered from memory.
    public convenience init(cache: DiskCache, configuration: Fetcher.Configuration = Fetcher.Configuration(),
                            failureMemory: Duration = ImageStore.defaultFailureMemory,
                            requestsPerRound: Int = ImageStore.defaultRequestsPerRound,
                            revalidateAfter: Duration = .seconds(30)) {
        self.init(cache: cache, fetcher: Fetcher(cache: cache, configuration: configuration),
                  failureMemory: failureMemory,
                  requestsPerRound: requestsPerRound, revalidateAfter: revalidateAfter)
    }

    /// A store over `cache`, filled by `fetcher` (which must write into that same cache);
    /// `failureMemory` is how long a failed download is answered from memory;
    /// `requestsPerRound` and `revalidateAfter` bound ``prefetch(_:)``.
    public init(cache: DiskCache, fetcher: Fetcher, failureMemory: Duration = ImageStore.defaultFailureMemory,
                requestsPerRound: Int = ImageStore.defaultRequestsPerRound, revalidateAfter: Duration = .seconds(30)) {
        self.cache = cache
        self.fetcher = fetcher
        self.failureMemory = failureMemory
        self.requestsPerRound = max(1, requestsPerRound)
        self.revalidateAfter = revalidateAfter
    }

    /// Gets `item`'s image (an http or https `source`) as an open file: from the disk cache
    /// when a valid entry is there (length, and the item's `sha256` when it has one), else
    /// downloaded, checked and stored first. `urgent` (a slot needs it now, not a prefetch)
    /// goes to the front of the transfer queue. `completion` gets the open file or a
    /// ``ContentError`` (URL, HTTP status, byte counts).
    public func image(for item: PlaylistItem, urgent: Bool,
                      completion: @escaping @Sendable (Result<OpenImage, ContentError>) -> Void) {
        let url = item.source
        if let error = recentFailure(url) {
            completion(.failure(error))
            return
        }
        fetcher.fetchImage(url, sha256: item.sha256, urgent: urgent) { [weak self] result in
            self?.remember(url, result)
            completion(result.map { OpenImage(url: url, entryPath: $0.path) })
        }
    }

    /// Notes a download failure of `url` (and forgets an older one on success).
    private func remember<T>(_ url: String, _ result: Result<T, ContentError>) {
        switch result {
        case .failure(let error) where error.isDownloadFailure:
            failures.withLock { $0[url] = (error, ContinuousClock.now) }
        case .success:
            failures.withLock { $0[url] = nil }
        default:
            break
        }
    }

    /// The failure of `url` within the last ``failureMemory``, if any.
    func recentFailure(_ url: String) -> ContentError? {
        failures.withLock { failures in
            guard let last = failures[url] else { return nil }
            if ContinuousClock.now - last.at < failureMemory { return last.error }
            failures[url] = nil
            return nil
        }
    }

    /// Forgets every remembered failure (SIGHUP: the person asked for everything again now).
    public func forgetFailures() { failures.withLock { $0.removeAll() } }

    /// What one ``prefetch(_:)`` round asked for.
    public struct Round: Equatable, Sendable {
        /// Images not in the disk cache, downloaded.
        public var downloads = 0
        /// Cached images asked about with a conditional GET (or a plain one, without validators).
        public var revalidations = 0
        /// Images left for a later round by ``requestsPerRound``.
        public var deferred = 0
        public init() {}
    }

    /// One round of keeping the remote images of `items` current, in the background (the
    /// frame loop calls it at each manifest poll; docs/security.md): images not in the disk
    /// cache are downloaded, in playlist order; cached ones without a `sha256` (whose bytes the
    /// manifest does not pin) are asked about with a conditional GET, least recently confirmed
    /// first, so an image replaced on its server under the same name is taken up (the show
    /// notices its cache file changed, ``currentFile(url:)``, and prepares it again, keeping
    /// the old picture until the new one decodes). At most ``requestsPerRound`` requests in
    /// all; the rest wait for the next round. A URL that failed within ``failureMemory`` is not
    /// asked. `completion`, when given, gets what the round asked for once the requests are
    /// made (not answered). Returns at once.
    public func prefetch(_ items: [PlaylistItem], completion: (@Sendable (Round) -> Void)? = nil) {
        rounds.async { [self] in
            let now = cache.configuration.now()
            var seen = Set<String>()
            var missing: [PlaylistItem] = []
            var cached: [(url: String, entry: DiskCache.Entry)] = []
            for item in items where ManifestItem.isRemote(item.source) && seen.insert(item.source).inserted
                && recentFailure(item.source) == nil {
                if let entry = cache.entry(for: item.source, sha256: item.sha256) {
                    if item.sha256 == nil && now - entry.validated >= revalidateAfter {
                        cached.append((item.source, entry))
                    }
                } else {
                    missing.append(item)
                }
            }
            var round = Round()
            for item in missing.prefix(requestsPerRound) {
                let url = item.source
                fetcher.fetchImage(url, sha256: item.sha256) { [weak self] result in self?.remember(url, result) }
                round.downloads += 1
            }
            cached.sort { $0.entry.validated < $1.entry.validated }
            for (url, entry) in cached.prefix(requestsPerRound - round.downloads) {
                // A failure here is not remembered: the cached picture stays in the show.
                fetcher.revalidateImage(url, validators: entry.validators) { _ in }
                round.revalidations += 1
            }
            round.deferred = missing.count + cached.count - round.downloads - round.revalidations
            completion?(round)
        }
    }

    /// The cache file that holds `url`'s image now, without counting a use; nil when none does.
    /// A file that differs from the one a frame was made from is a new picture.
    public func currentFile(url: String) -> String? { cache.currentEntry(url: url)?.path }

    /// Forgets the cached file of `url` (it did not decode): the next request downloads it
    /// again instead of failing on the same bytes forever.
    public func invalidate(url: String) { cache.remove(url: url) }

    /// Stops the transfers (queued requests fail with ``ContentError/cancelled(url:)``).
    public func shutdown() {
        rounds.sync {}  // a round under way makes its requests first (they are cancelled)
        fetcher.shutdown()
    }

    /// The fetcher's counters (transfers started, joined, cache hits), for tests and logs.
    public var statistics: Fetcher.Statistics { fetcher.statistics }
}

extension ContentError {
    /// What the server or the network did (a status, a cut, a timeout, a body that is not an
    /// image...), remembered for ``ImageStore/failureMemory``; not a cancellation at shutdown
    /// nor a local error of the cache, which say nothing about the next request.
    var isDownloadFailure: Bool {
        switch self {
        case .cancelled, .system, .manifestEncoding, .manifestSyntax, .manifestInvalid: return false
        default: return true
        }
    }
}
