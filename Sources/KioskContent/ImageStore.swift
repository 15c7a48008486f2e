// SPDX-License-Identifier: Apache-2.0
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

    /// A store over `cache`, filled by a fetcher with `configuration`.
    /// `failureMemory` is how long a failed download is answered from memory.
    public convenience init(cache: DiskCache, configuration: Fetcher.Configuration = Fetcher.Configuration(),
                            failureMemory: Duration = ImageStore.defaultFailureMemory) {
        self.init(cache: cache, fetcher: Fetcher(cache: cache, configuration: configuration), failureMemory: failureMemory)
    }

    /// A store over `cache`, filled by `fetcher` (which must write into that same cache);
    /// `failureMemory` is how long a failed download is answered from memory.
    public init(cache: DiskCache, fetcher: Fetcher, failureMemory: Duration = ImageStore.defaultFailureMemory) {
        self.cache = cache
        self.fetcher = fetcher
        self.failureMemory = failureMemory
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

    /// Gets every remote image of `items` into the disk cache in the background (bounded by
    /// the fetcher's concurrency; one request per URL), so the whole show plays offline later.
    public func prefetch(_ items: [PlaylistItem]) {
        for item in items where ManifestItem.isRemote(item.source) && recentFailure(item.source) == nil {
            let url = item.source
            fetcher.fetchImage(url, sha256: item.sha256) { [weak self] result in self?.remember(url, result) }
        }
    }

    /// Forgets the cached file of `url` (it did not decode): the next request downloads it
    /// again instead of failing on the same bytes forever.
    public func invalidate(url: String) { cache.remove(url: url) }

    /// Stops the transfers (queued requests fail with ``ContentError/cancelled(url:)``).
    public func shutdown() { fetcher.shutdown() }

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
