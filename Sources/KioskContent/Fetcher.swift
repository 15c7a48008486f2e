import Dispatch
import KioskImaging
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The validators of a stored manifest, sent back as `If-None-Match` / `If-Modified-Since`
/// (RFC 9110 §13.1) so that an unchanged manifest costs a `304 Not Modified`.
public struct ManifestValidators: Equatable, Sendable {
    /// The `ETag` the server sent, verbatim (quotes and `W/` included).
    public var etag: String?
    /// The `Last-Modified` the server sent, verbatim (an HTTP-date).
    public var lastModified: String?
    public init(etag: String? = nil, lastModified: String? = nil) { self.etag = etag; self.lastModified = lastModified }
}

/// A manifest body as downloaded.
public struct ManifestDownload: Equatable, Sendable {
    /// The URL that answered (after redirects): the base for relative `src` (RFC 3986 §5.1.3).
    public var url: URL
    /// The body bytes, as received.
    public var body: [UInt8]
    /// The validators of this version, to send on the next poll.
    public var validators: ManifestValidators
}

/// The answer to a conditional manifest request.
public enum ManifestResponse: Equatable, Sendable {
    /// `304 Not Modified`: the stored manifest is still current.
    case notModified
    /// A `2xx` with a body.
    case modified(ManifestDownload)
}

/// Downloads images into the ``DiskCache`` and manifests into memory, over URLSession
/// (FoundationNetworking, libcurl underneath), within limits (issue 5 §5):
///
/// - at most ``Configuration/maxConcurrent`` transfers at once, the rest queued in order;
/// - one transfer per URL: a request for a URL already in flight joins it and gets its result;
/// - a connect timeout (no response headers in time) and a total timeout, each a
///   ``ContentError/timedOut(url:phase:seconds:receivedBytes:)``;
/// - at most ``Configuration/maxRedirects`` redirects, a loop stopped at once
///   (``ContentError/tooManyRedirects(url:chain:limit:loop:)``);
/// - a byte cap enforced while the body streams in (a `Content-Length` over it is refused at
///   the headers, a body without one is cut when it passes the cap);
/// - an image body must start with a JPEG (`FF D8 FF`) or PNG (`89 50 4E 47 0D 0A 1A 0A`)
///   signature, and is streamed into a ``CacheWriter`` (never held whole in memory), committed
///   only once whole and checked.
///
/// Every method returns at once; completion handlers run on an internal serial queue (post
/// their results to a ``Mailbox`` to reach the frame loop). No `URLCache`: caching is ours.
public final class Fetcher: NSObject, @unchecked Sendable {
    public struct Configuration: Sendable {
        /// Transfers at once; default 4.
        public var maxConcurrent: Int = 4
        /// Time from the start of a transfer to its response headers; default 10 s.
        public var connectTimeout: Duration = .seconds(10)
        /// Time for a whole transfer; default 120 s.
        public var totalTimeout: Duration = .seconds(120)
        /// Redirects followed per request; default 5.
        public var maxRedirects: Int = 5
        /// Largest image body, bytes; default 50 MB.
        public var maxImageBytes: Int = 50_000_000
        /// Largest manifest body, bytes; default 8 MiB.
        public var maxManifestBytes: Int = 8 << 20
        /// `User-Agent` header.
        public var userAgent: String = "kiosk-carousel"
        public init() {}
    }

    public let configuration: Configuration
    public let cache: DiskCache

    private var session: URLSession!
    private let lock = NSLock()
    /// Jobs running or queued, by request key (`image URL` / `manifest URL`).
    private var jobs: [String: Job] = [:]
    private var byTask: [Int: Job] = [:]
    private var waiting: [Job] = []
    private var running = 0
    private var closed = false
    private let timerQueue = DispatchQueue(label: "kiosk-carousel.fetch.timers")
    private let callbackQueue = DispatchQueue(label: "kiosk-carousel.fetch.callbacks")
    private let workQueue = DispatchQueue(label: "kiosk-carousel.fetch.work")

    /// Counters, for tests and logs.
    public struct Statistics: Equatable, Sendable {
        /// Transfers started (HTTP requests made, redirects not counted).
        public var started = 0
        /// Requests that joined a transfer already in flight.
        public var joined = 0
        /// Image requests answered from the disk cache without a transfer.
        public var cacheHits = 0
        /// The most transfers that ran at once.
        public var peakConcurrent = 0
    }
    private var stats = Statistics()
    public var statistics: Statistics { lock.withLock { stats } }

    public init(cache: DiskCache, configuration: Configuration = Configuration()) {
        self.cache = cache
        self.configuration = configuration
        super.init()
        let config = URLSessionConfiguration.ephemeral
        config.urlCache = nil
        config.requestCachePolicy = .reloadIgnoringLocalCacheData
        config.httpMaximumConnectionsPerHost = max(1, configuration.maxConcurrent)
        // Backstops only: our own timers give the typed errors.
        config.timeoutIntervalForRequest = seconds(configuration.totalTimeout) + 5
        config.timeoutIntervalForResource = seconds(configuration.totalTimeout) + 5
        // Bodies uncompressed only: a compressed body would be inflated (and buffered) by the
        // transport before our byte cap could see it, so a small gzip bomb could cost gigabytes.
        config.httpAdditionalHeaders = ["User-Agent": configuration.userAgent, "Accept-Encoding": "identity"]
        let delegateQueue = OperationQueue()
        delegateQueue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: config, delegate: self, delegateQueue: delegateQueue)
    }

    /// Gets the image at `url` into the disk cache: a valid cache entry (length, and `sha256`
    /// when given) is returned without a transfer; otherwise it is downloaded, checked and
    /// stored. `completion` gets the entry or a ``ContentError`` (the URL, HTTP status, byte
    /// counts). Returns at once.
    /// `urgent` (an image a slot needs now, not a prefetch) goes to the front of the queue, and
    /// moves a waiting request for the same URL there too.
    public func fetchImage(_ url: String, sha256: String? = nil, useCache: Bool = true, urgent: Bool = false,
                           completion: @escaping @Sendable (Result<DiskCache.Entry, ContentError>) -> Void) {
        workQueue.async { [self] in
            if useCache, let entry = cache.entry(for: url, sha256: sha256) {
                lock.withLock { stats.cacheHits += 1 }
                callbackQueue.async { completion(.success(entry)) }
                return
            }
            enqueue(key: "image " + url, url: url, kind: .image(sha256: sha256), urgent: urgent) { result in
                completion(result.map { if case .entry(let e) = $0 { return e }; fatalError("image job gave a manifest") })
            }
        }
    }

    /// Fetches the manifest at `url` with a conditional GET when `validators` are given
    /// (`If-None-Match` from the ETag, `If-Modified-Since` from Last-Modified; RFC 9110 §13.1,
    /// RFC 9111 §4.3.1). A 304 gives ``ManifestResponse/notModified``. Returns at once.
    public func fetchManifest(_ url: URL, validators: ManifestValidators? = nil,
                              completion: @escaping @Sendable (Result<ManifestResponse, ContentError>) -> Void) {
        workQueue.async { [self] in
            enqueue(key: "manifest " + url.absoluteString + " " + (validators?.etag ?? "") + " " + (validators?.lastModified ?? ""),
                    url: url.absoluteString, kind: .manifest(validators)) { result in
                completion(result.map { if case .manifest(let m) = $0 { return m }; fatalError("manifest job gave an image") })
            }
        }
    }

    /// Cancels every transfer (their completions get ``ContentError/cancelled(url:)``) and
    /// refuses new ones.
    public func shutdown() {
        let all: [Job] = lock.withLock {
            closed = true
            let list = Array(jobs.values)
            return list
        }
        for job in all { finish(job, .failure(.cancelled(url: job.url))) }
        session.invalidateAndCancel()
    }

    // MARK: - Jobs

    enum Kind { case image(sha256: String?), manifest(ManifestValidators?) }
    enum Payload { case entry(DiskCache.Entry), manifest(ManifestResponse) }

    final class Job {
        let key: String
        let url: String
        let kind: Kind
        var completions: [@Sendable (Result<Payload, ContentError>) -> Void] = []
        var task: URLSessionDataTask?
        var chain: [String]
        var response: HTTPURLResponse?
        var declared: Int?
        var received = 0
        var head: [UInt8] = []
        var body: [UInt8] = []
        var writer: CacheWriter?
        var outcome: Result<Payload, ContentError>?
        var done = false
        var timers: [DispatchSourceTimer] = []
        init(key: String, url: String, kind: Kind) { self.key = key; self.url = url; self.kind = kind; chain = [url] }
    }

    private func enqueue(key: String, url: String, kind: Kind, urgent: Bool = false,
                         completion: @escaping @Sendable (Result<Payload, ContentError>) -> Void) {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == "http" || scheme == "https",
              parsed.host != nil else {
            callbackQueue.async { completion(.failure(.unsupportedURL(url: url))) }
            return
        }
        let start: Job? = lock.withLock {
            if closed { return nil }
            if let job = jobs[key] {
                job.completions.append(completion)
                stats.joined += 1
                if urgent, let i = waiting.firstIndex(where: { $0 === job }), i > 0 {
                    waiting.remove(at: i)
                    waiting.insert(job, at: 0)
                }
                return nil
            }
            let job = Job(key: key, url: url, kind: kind)
            job.completions.append(completion)
            jobs[key] = job
            if urgent { waiting.insert(job, at: 0) } else { waiting.append(job) }
            return job
        }
        if start == nil, lock.withLock({ closed }) {
            callbackQueue.async { completion(.failure(.cancelled(url: url))) }
            return
        }
        startWaiting()
    }

    private func startWaiting() {
        while true {
            let next: Job? = lock.withLock {
                guard running < configuration.maxConcurrent, !waiting.isEmpty, !closed else { return nil }
                running += 1
                stats.started += 1
                stats.peakConcurrent = max(stats.peakConcurrent, running)
                return waiting.removeFirst()
            }
            guard let job = next else { return }
            start(job)
        }
    }

    private func start(_ job: Job) {
        var request = URLRequest(url: URL(string: job.url)!)
        request.cachePolicy = .reloadIgnoringLocalCacheData
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        request.timeoutInterval = seconds(configuration.totalTimeout) + 5
        if case .manifest(let validators?) = job.kind {
            if let etag = validators.etag { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
            if let date = validators.lastModified { request.setValue(date, forHTTPHeaderField: "If-Modified-Since") }
        }
        if case .image = job.kind {
            do {
                job.writer = try cache.makeWriter(url: job.url)
            } catch {
                lock.withLock { running -= 1 }
                finish(job, .failure(error))
                startWaiting()
                return
            }
        }
        let task = session.dataTask(with: request)
        lock.withLock {
            job.task = task
            byTask[task.taskIdentifier] = job
        }
        arm(job, after: configuration.connectTimeout) { [self] in
            if lock.withLock({ job.response == nil }) {
                fail(job, .timedOut(url: job.url, phase: "connect", seconds: seconds(configuration.connectTimeout), receivedBytes: 0))
            }
        }
        arm(job, after: configuration.totalTimeout) { [self] in
            let received = lock.withLock { job.received }
            fail(job, .timedOut(url: job.url, phase: "total", seconds: seconds(configuration.totalTimeout), receivedBytes: received))
        }
        task.resume()
    }

    private func arm(_ job: Job, after delay: Duration, _ action: @escaping @Sendable () -> Void) {
        let timer = DispatchSource.makeTimerSource(queue: timerQueue)
        let (s, atto) = delay.components
        timer.schedule(deadline: .now() + .nanoseconds(Int(s) * 1_000_000_000 + Int(atto / 1_000_000_000)))
        timer.setEventHandler(handler: action)
        lock.withLock { job.timers.append(timer) }
        timer.resume()
    }

    /// Records `error` as the job's outcome (unless it has one) and cancels its transfer; the
    /// completion runs when URLSession reports the task complete.
    private func fail(_ job: Job, _ error: ContentError) {
        let task: URLSessionDataTask? = lock.withLock {
            if job.outcome == nil { job.outcome = .failure(error) }
            return job.task
        }
        task?.cancel()
    }

    /// Delivers the outcome to every joiner, once, and frees the slot.
    private func finish(_ job: Job, _ result: Result<Payload, ContentError>) {
        let completions: [@Sendable (Result<Payload, ContentError>) -> Void]? = lock.withLock {
            if job.done { return nil }
            job.done = true
            if jobs[job.key] === job { jobs[job.key] = nil }
            if let task = job.task {
                byTask[task.taskIdentifier] = nil
                running -= 1
            } else {
                waiting.removeAll { $0 === job }
            }
            for timer in job.timers { timer.cancel() }
            job.timers.removeAll()
            return job.completions
        }
        guard let completions else { return }
        job.writer?.abort()
        job.writer = nil
        callbackQueue.async { for c in completions { c(result) } }
        startWaiting()
    }

    private func job(for task: URLSessionTask) -> Job? { lock.withLock { byTask[task.taskIdentifier] } }

    /// The byte cap for a job's body.
    private func limit(_ job: Job) -> Int {
        if case .image = job.kind { return configuration.maxImageBytes }
        return configuration.maxManifestBytes
    }

    /// Called when the transfer has ended without an error of ours: checks and commits.
    private func complete(_ job: Job) -> Result<Payload, ContentError> {
        guard let response = job.response else {
            return .failure(.transport(url: job.url, reason: "no response", receivedBytes: job.received))
        }
        if let declared = job.declared, declared != job.received {
            return .failure(.truncated(url: job.url, expectedBytes: declared, receivedBytes: job.received))
        }
        switch job.kind {
        case .manifest:
            let headers = response.allHeaderFields
            let validators = ManifestValidators(etag: header(headers, "ETag"), lastModified: header(headers, "Last-Modified"))
            let finalURL = response.url ?? URL(string: job.chain.last!)!
            return .success(.manifest(.modified(ManifestDownload(url: finalURL, body: job.body, validators: validators))))
        case .image(let sha256):
            if let bad = Self.magicProblem(job.head, complete: true) {
                return .failure(.notAnImage(url: job.url, firstBytes: bad))
            }
            guard let writer = job.writer else { return .failure(.cancelled(url: job.url)) }
            job.writer = nil
            do {
                return .success(.entry(try writer.commit(expectedSHA256: sha256)))
            } catch {
                return .failure(error)
            }
        }
    }

    /// The first bytes of a body kept to judge it: enough for an ISO BMFF `ftyp` box with a
    /// few compatible brands (HEIF, AVIF).
    static let magicLength = 32

    /// nil when `head` (the first ``magicLength`` bytes) is a format the decoder shows
    /// (``FileFormat/identify(_:)``), or, while incomplete and shorter than that, may still
    /// become one; otherwise the first bytes in hex.
    static func magicProblem(_ head: [UInt8], complete: Bool) -> String? {
        if FileFormat.identify(head).decodable != nil { return nil }
        if !complete && head.count < magicLength { return nil }
        return head.isEmpty ? "(empty body)" : hexString(head.prefix(8))
    }
}

// MARK: - URLSession delegate (runs on the session's serial delegate queue)

extension Fetcher: URLSessionDataDelegate {
    public func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                           newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        guard let job = job(for: task), let next = request.url?.absoluteString else { completionHandler(nil); return }
        let problem: ContentError? = lock.withLock {
            if job.chain.contains(next) {
                return .tooManyRedirects(url: job.url, chain: job.chain + [next], limit: configuration.maxRedirects, loop: true)
            }
            if job.chain.count > configuration.maxRedirects {
                return .tooManyRedirects(url: job.url, chain: job.chain + [next], limit: configuration.maxRedirects, loop: false)
            }
            let scheme = request.url?.scheme?.lowercased()
            if scheme != "http" && scheme != "https" { return .unsupportedURL(url: next) }
            job.chain.append(next)
            return nil
        }
        if let problem {
            completionHandler(nil)
            fail(job, problem)
        } else {
            completionHandler(request)
        }
    }

    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                           completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        guard let job = job(for: dataTask), let http = response as? HTTPURLResponse else {
            completionHandler(.cancel)
            return
        }
        let problem: ContentError? = lock.withLock {
            job.response = http
            if case .manifest = job.kind, http.statusCode == 304 {
                job.outcome = .success(.manifest(.notModified))
                return nil
            }
            guard (200..<300).contains(http.statusCode) else { return .httpStatus(url: job.url, status: http.statusCode) }
            let encoding = header(http.allHeaderFields, "Content-Encoding")?.lowercased()
            if let encoding, encoding != "identity" {
                // We asked for identity; an inflated body would escape the byte cap.
                return .transport(url: job.url, reason: "the server sent a \(encoding)-encoded body although only identity was accepted", receivedBytes: 0)
            }
            if http.expectedContentLength >= 0 {
                job.declared = Int(http.expectedContentLength)
                if job.declared! > limit(job) {
                    return .bodyTooLarge(url: job.url, limit: limit(job), declaredBytes: job.declared, receivedBytes: 0)
                }
            }
            return nil
        }
        if let problem {
            completionHandler(.cancel)
            fail(job, problem)
        } else if lock.withLock({ job.outcome != nil }) {
            completionHandler(.cancel)  // 304: nothing more to read
        } else {
            completionHandler(.allow)
        }
    }

    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let job = job(for: dataTask) else { return }
        let cap = limit(job)
        let problem: ContentError? = lock.withLock {
            if job.outcome != nil { return nil }
            let before = job.received
            job.received += data.count
            if job.received > cap {
                return .bodyTooLarge(url: job.url, limit: cap, declaredBytes: job.declared, receivedBytes: before)
            }
            if job.head.count < Self.magicLength { job.head += data.prefix(Self.magicLength - job.head.count) }
            if case .image = job.kind, let bad = Self.magicProblem(job.head, complete: false) {
                return .notAnImage(url: job.url, firstBytes: bad)
            }
            return nil
        }
        if let problem { fail(job, problem); return }
        if lock.withLock({ job.outcome != nil }) { return }
        switch job.kind {
        case .manifest:
            job.body += data
        case .image:
            do {
                try data.withUnsafeBytes { raw in Result { () throws(ContentError) in try job.writer?.append(raw) } }.get()
            } catch {
                fail(job, error)
            }
        }
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let job = job(for: task) else { return }
        let decided = lock.withLock { job.outcome }
        let result: Result<Payload, ContentError>
        if let decided {
            result = decided
        } else if let error {
            let received = lock.withLock { job.received }
            if let declared = job.declared, received < declared {
                result = .failure(.truncated(url: job.url, expectedBytes: declared, receivedBytes: received))
            } else {
                let ns = error as NSError
                let reason = (ns.userInfo[NSLocalizedDescriptionKey] as? String) ?? "\(error)"
                result = .failure(.transport(url: job.url, reason: reason + " (URLError \(ns.code))", receivedBytes: received))
            }
        } else {
            result = complete(job)
        }
        finish(job, result)
    }
}

/// A header's value, looked up case-insensitively.
private func header(_ headers: [AnyHashable: Any], _ name: String) -> String? {
    for (key, value) in headers {
        if let k = key as? String, k.caseInsensitiveCompare(name) == .orderedSame { return value as? String }
    }
    return nil
}

/// A `Duration` as seconds (`TimeInterval`).
func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}
