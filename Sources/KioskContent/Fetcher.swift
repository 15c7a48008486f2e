// SPDX-License-Identifier: Apache-2.0
import CKioskCurl
import CLibCurl
import Dispatch
import FoundationEssentials
import Glibc
import KioskCore
import KioskSystem

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

/// Downloads images into the ``DiskCache`` and manifests into memory with libcurl's multi
/// interface, on the fetcher's own thread, within limits that hold as the bytes arrive:
///
/// - at most ``Configuration/maxConcurrent`` transfers at once, the rest queued in order; an
///   urgent request (an image a slot needs now) goes first and may start beyond that limit, in
///   one of ``urgentLanes`` more, so that prefetches that trickle never keep the show waiting;
/// - one transfer per URL: a request for a URL already in flight joins it and gets its result;
/// - a connect timeout (no response headers in time), a total timeout (each a
///   ``ContentError/timedOut(url:phase:seconds:receivedBytes:)``), and a low-speed limit
///   (`CURLOPT_LOW_SPEED_LIMIT` / `CURLOPT_LOW_SPEED_TIME`: phase `low-speed`);
/// - `http` and `https` only, for the request and every redirect (`CURLOPT_PROTOCOLS_STR`,
///   `CURLOPT_REDIR_PROTOCOLS_STR`; a redirect elsewhere is
///   ``ContentError/redirectRefused(url:location:)``), an https one never redirected to http
///   unless ``Configuration/allowHTTPFromHTTPS``; at most ``Configuration/maxRedirects``
///   redirects, a loop stopped at once (``ContentError/tooManyRedirects(url:chain:limit:loop:)``);
/// - the hosts ``Configuration/hostPolicy`` allows, for the request, every redirect, and every
///   address libcurl is about to connect to (`CURLOPT_OPENSOCKETFUNCTION`: a name that resolves
///   to a refused address is refused too); otherwise ``ContentError/hostRefused(url:host:reason:)``;
/// - a byte cap enforced in libcurl's write callback: a `Content-Length` over it is refused at
///   the headers (and by `CURLOPT_MAXFILESIZE_LARGE`), a body without one is cut the moment it
///   passes the cap; memory held per transfer is libcurl's buffers (and, for a manifest, the
///   body up to its cap), never an image body;
/// - an image body must start with a JPEG (`FF D8 FF`) or PNG (`89 50 4E 47 0D 0A 1A 0A`)
///   signature, and is written straight into a ``CacheWriter``'s temporary file, committed
///   only once whole and checked;
/// - TLS verified against the system's CA store (`ca-certificates`) plus
///   ``Configuration/caFile``; proxies from `http_proxy` / `https_proxy` / `no_proxy` (libcurl's
///   rules) or ``Configuration/proxy``; IPv6 and IPv4 (libcurl's happy eyeballs).
///
/// Every method returns at once; completion handlers run on an internal serial queue (post
/// their results to a ``Mailbox`` to reach the frame loop).
public final class Fetcher: @unchecked Sendable {
    /// `kiosk-carousel/VERSION` (``ProgramVersion``, the top-level VERSION file), the
    /// `User-Agent` of every request.
    public static let userAgent = "kiosk-carousel/\(ProgramVersion.string)"
    /// Transfers beyond ``Configuration/maxConcurrent`` that urgent requests may use: 3, one
    /// per slot of the carousel (previous, current, next; docs/carousel.md).
    public static let urgentLanes = 3

    public struct Configuration: Sendable {
        /// Transfers at once; default 4.
        public var maxConcurrent: Int = 4
        /// Time from the start of a transfer to its response headers; default 10 s.
        public var connectTimeout: Duration = .seconds(10)
        /// Time for a whole transfer; default 120 s.
        public var totalTimeout: Duration = .seconds(120)
        /// A body slower than ``lowSpeedLimit`` bytes per second for ``lowSpeedTime`` is
        /// dropped (and retried later by whoever asked); default 1024 bytes/s for 30 s.
        public var lowSpeedLimit: Int = 1024
        /// See ``lowSpeedLimit``; whole seconds (at least 1); default 30 s.
        public var lowSpeedTime: Duration = .seconds(30)
        /// Redirects followed per request; default 5.
        public var maxRedirects: Int = 5
        /// Largest image body, bytes; default 50 MB.
        public var maxImageBytes: Int = 50_000_000
        /// Largest manifest body, bytes; default 8 MiB.
        public var maxManifestBytes: Int = 8 << 20
        /// `User-Agent` header; default ``Fetcher/userAgent``.
        public var userAgent: String = Fetcher.userAgent
        /// A PEM file of CA certificates trusted besides the system's (`--ca-file`): a private
        /// CA of a signage network. Default none.
        public var caFile: String?
        /// A proxy for every request (`--proxy`, `http://host:port`); default none: libcurl
        /// takes `http_proxy`, `https_proxy` and `no_proxy` from the environment.
        /// `no_proxy` applies to this one too.
        public var proxy: String?
        /// Which hosts may be asked: every request, every redirect and every address connected
        /// to (not a proxy's) is checked (``HostPolicy``); default: all but the refused ranges.
        public var hostPolicy = HostPolicy()
        /// Whether an https request may be redirected to plain http (`--allow-http-from-https`);
        /// default false (``ContentError/downgradeRefused(url:location:)``).
        public var allowHTTPFromHTTPS = false
        public init() {}
    }

    public let configuration: Configuration
    public let cache: DiskCache

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
    public var statistics: Statistics { engine.state.withLock { $0.stats } }

    let engine: FetchEngine
    private let workQueue = DispatchQueue(label: "kiosk-carousel.fetch.work")

    /// The fetcher's thread (and libcurl, which is opened then) starts with the first request;
    /// it ends (cancelling what runs, joined) in ``shutdown()`` or when the fetcher is released. When
    /// libcurl cannot be loaded, every request fails with ``ContentError/transport(url:reason:receivedBytes:)``
    /// saying so.
    public init(cache: DiskCache, configuration: Configuration = Configuration()) {
        self.cache = cache
        self.configuration = configuration
        engine = FetchEngine(cache: cache, configuration: configuration)
    }

    deinit { engine.shutdown() }

    /// Gets the image at `url` into the disk cache: a valid cache entry (length, and `sha256`
    /// when given) is returned without a transfer; otherwise it is downloaded, checked and
    /// stored. `completion` gets the entry or a ``ContentError`` (the URL, HTTP status, byte
    /// counts). Returns at once.
    /// `urgent` (an image a slot needs now, not a prefetch) goes to the front of the queue, and
    /// moves a waiting request for the same URL there too.
    public func fetchImage(_ url: String, sha256: String? = nil, useCache: Bool = true, urgent: Bool = false,
                           completion: @escaping @Sendable (Result<DiskCache.Entry, ContentError>) -> Void) {
        workQueue.async { [engine, cache] in
            if useCache, let entry = cache.entry(for: url, sha256: sha256) {
                engine.state.withLock { $0.stats.cacheHits += 1 }
                engine.callbackQueue.async { completion(.success(entry)) }
                return
            }
            engine.enqueue(key: "image " + url, url: url, kind: .image(sha256: sha256),
                           urgent: urgent) { [weak self] result in
                switch result {
                case .success(.entry(let entry, _)): completion(.success(entry))
                case .success(.unchanged):
                    // Joined a revalidation the server answered 304: the cached entry stands.
                    if let entry = cache.entry(for: url, sha256: sha256) { return completion(.success(entry)) }
                    guard let self else { return completion(.failure(.cancelled(url: url))) }
                    self.fetchImage(url, sha256: sha256, useCache: false, urgent: urgent, completion: completion)
                case .success(.manifest): fatalError("image job gave a manifest")
                case .failure(let error): completion(.failure(error))
                }
            }
        }
    }

    /// Asks the server whether the cached image at `url` changed: a conditional GET with the
    /// entry's validators (`If-None-Match`, `If-Modified-Since`; RFC 9110 section 13.1), or,
    /// when it has none, a plain GET. `completion` gets true when a new body replaced the entry
    /// (the old file stays readable through descriptors already open on it), false when the
    /// server answered 304 or sent the same bytes again, or the error (the entry is kept).
    /// Returns at once; one transfer per URL, as for ``fetchImage(_:sha256:useCache:urgent:completion:)``.
    public func revalidateImage(_ url: String, validators: ManifestValidators?,
                                completion: @escaping @Sendable (Result<Bool, ContentError>) -> Void) {
        workQueue.async { [engine, cache] in
            let conditional = validators.flatMap { $0.etag != nil || $0.lastModified != nil ? $0 : nil }
            engine.enqueue(key: "image " + url, url: url,
                           kind: .image(sha256: nil, validators: conditional)) { result in
                switch result {
                case .success(.entry(_, let changed)): completion(.success(changed))
                case .success(.unchanged):
                    cache.noteValidated(url: url)
                    completion(.success(false))
                case .success(.manifest): fatalError("image job gave a manifest")
                case .failure(let error): completion(.failure(error))
                }
            }
        }
    }

    /// Fetches the manifest at `url` with a conditional GET when `validators` are given
    /// (`If-None-Match` from the ETag, `If-Modified-Since` from Last-Modified; RFC 9110 §13.1,
    /// RFC 9111 §4.3.1). A 304 gives ``ManifestResponse/notModified``. Returns at once.
    public func fetchManifest(_ url: URL, validators: ManifestValidators? = nil,
                              completion: @escaping @Sendable (Result<ManifestResponse, ContentError>) -> Void) {
        workQueue.async { [engine] in
            let key = "manifest \(url.absoluteString) \(validators?.etag ?? "") \(validators?.lastModified ?? "")"
            engine.enqueue(key: key, url: url.absoluteString, kind: .manifest(validators)) { result in
                completion(result.map {
                    if case .manifest(let m) = $0 { return m }; fatalError("manifest job gave an image")
                })
            }
        }
    }

    /// Cancels every transfer (their completions get ``ContentError/cancelled(url:)``) and
    /// refuses new ones. When this returns the fetcher's thread has ended (joined: its
    /// connections closed, libcurl's multi handle cleaned up) and the completions queued so
    /// far have run. Call it from outside a completion (the program does, before it exits).
    public func shutdown() {
        workQueue.sync {}  // requests on their way to the engine get there first, and are cancelled
        engine.shutdown(drain: true)
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

/// The address in a `struct curl_sockaddr` (libcurl gives room for a whole `sockaddr_in6`
/// after its `addr` member); nil for a family other than IPv4 and IPv6.
func connectAddress(_ address: UnsafeMutablePointer<curl_sockaddr>) -> IPAddress? {
    let raw = UnsafeRawPointer(address) + MemoryLayout<curl_sockaddr>.offset(of: \curl_sockaddr.addr)!
    switch address.pointee.family {
    case AF_INET:
        var sin = raw.loadUnaligned(as: sockaddr_in.self)
        return withUnsafeBytes(of: &sin.sin_addr) { IPAddress(bytes: Array($0)) }
    case AF_INET6:
        var sin6 = raw.loadUnaligned(as: sockaddr_in6.self)
        return withUnsafeBytes(of: &sin6.sin6_addr) { IPAddress(bytes: Array($0)) }
    default:
        return nil
    }
}

/// The queue of jobs and the thread that runs libcurl's multi interface (a ``WorkerThread``:
/// ``shutdown()`` joins it, so no transfer, TLS session or libcurl clean-up outlives the fetcher).
final class FetchEngine: @unchecked Sendable {
    struct State {
        /// Jobs running or queued, by request key (`image URL` / `manifest URL ...`).
        var jobs: [String: FetchJob] = [:]
        var waiting: [FetchJob] = []
        var closed = false
        /// The first job has asked for the thread (``startLocked(_:)``).
        var started = false
        /// Why the thread could not start (libcurl missing, ...): every job fails with it.
        var unavailable: String?
        var stats = Fetcher.Statistics()
    }
    let state = Locked(State())
    let callbackQueue = DispatchQueue(label: "kiosk-carousel.fetch.callbacks")
    let cache: DiskCache
    let configuration: Fetcher.Configuration
    /// The proxies libcurl takes (``Fetcher/Configuration/proxy`` or the environment), to
    /// name the one a failure came from.
    let proxies: ProxyChoice
    /// Set once in ``startLocked(_:)``; used and cleaned up by the thread only.
    private var multi: UnsafeMutableRawPointer?
    /// The fetcher's thread, made in ``startLocked(_:)`` (under the state lock, read under it);
    /// its stop descriptor and ``wake`` are the extra descriptors of every `curl_multi_poll(3)`.
    private var worker: WorkerThread?
    /// ``worker``, read under the state lock (from any thread; not from within the lock).
    var workerThread: WorkerThread? { state.withLock { _ in worker } }
    /// Readable while new jobs wait (posted by ``enqueue``): wakes the thread's poll.
    private let wake: Mailbox<Bool>?
    /// Owned by the fetcher's thread.
    private var active: [FetchJob] = []

    /// `curl_global_init` once per process, before any handle (curl_global_init(3)).
    private static let globalInit: Bool = kc_curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    init(cache: DiskCache, configuration: Fetcher.Configuration) {
        self.cache = cache
        self.configuration = configuration
        proxies = ProxyChoice(option: configuration.proxy, environment: ProxyChoice.processEnvironment())
        wake = try? Mailbox(wake: .whenEmpty)
    }

    /// Opens libcurl (on first use, see kc_curl.h), makes the multi handle and starts the
    /// fetcher's thread; called under the state lock by the first ``enqueue``, so a show that
    /// never fetches never loads libcurl. Returns why it could not, or nil.
    private func startLocked(_ state: inout State) -> String? {
        state.started = true
        if kc_curl_load() != 0 {
            return "libcurl could not be loaded (\(String(cString: kc_curl_load_error())); install libcurl4)"
        }
        _ = Self.globalInit
        guard wake != nil else { return "the fetcher's wake-up pipe could not be made" }
        multi = kc_curl_multi_init()
        guard multi != nil else { return "curl_multi_init failed" }
        do {
            let thread = try WorkerThread(name: "fetcher")
            worker = thread
            try thread.start { [self] in run(thread) }
        } catch {
            worker = nil
            kc_curl_multi_cleanup(multi)
            multi = nil
            return error.description
        }
        return nil
    }

    func enqueue(key: String, url: String, kind: FetchJob.Kind, urgent: Bool = false,
                 completion: @escaping FetchJob.Completion) {
        if let problem = HTTPURL.problem(url) {
            callbackQueue.async { completion(.failure(.unsupportedURL(url: url, reason: problem))) }
            return
        }
        let refused: ContentError? = state.withLock { state in
            if state.closed { return .cancelled(url: url) }
            if !state.started { state.unavailable = startLocked(&state) }
            if let reason = state.unavailable { return .transport(url: url, reason: reason, receivedBytes: 0) }
            if let refused = FetchJob.check(url, for: url, after: nil, policy: configuration.hostPolicy,
                                            allowDowngrade: configuration.allowHTTPFromHTTPS, proxies: proxies) {
                return refused
            }
            if let job = state.jobs[key] {
                job.completions.append(completion)
                state.stats.joined += 1
                if urgent, let i = state.waiting.firstIndex(where: { $0 === job }) {
                    job.urgent = true
                    state.waiting.remove(at: i)
                    state.waiting.insert(job, at: 0)
                    wake?.post(true)
                }
                return nil
            }
            let isImage: Bool
            if case .image = kind { isImage = true } else { isImage = false }
            let job = FetchJob(key: key, url: url, kind: kind,
                               cap: isImage ? configuration.maxImageBytes : configuration.maxManifestBytes,
                               maxRedirects: configuration.maxRedirects, proxies: proxies,
                               policy: configuration.hostPolicy,
                               allowDowngrade: configuration.allowHTTPFromHTTPS)
            job.completions.append(completion)
            job.urgent = urgent
            state.jobs[key] = job
            if urgent { state.waiting.insert(job, at: 0) } else { state.waiting.append(job) }
            wake?.post(true)
            return nil
        }
        if let refused { callbackQueue.async { completion(.failure(refused)) } }
    }

    /// Refuses new jobs, cancels every job (their completions get
    /// ``ContentError/cancelled(url:)``), and joins the thread once it has removed its
    /// transfers and cleaned up the multi handle. `drain`: also waits until the completions
    /// queued so far have run (not from a completion itself, which runs on that queue).
    func shutdown(drain: Bool = false) {
        let (all, thread): ([FetchJob], WorkerThread?) = state.withLock { state in
            state.closed = true
            return (Array(state.jobs.values), worker)
        }
        for job in all { finish(job, .failure(.cancelled(url: job.url))) }
        thread?.stop()
        if drain { callbackQueue.sync {} }
    }

    /// Delivers the outcome to every joiner, once. The job stays joinable until its
    /// completions run on the callback queue: a request for the same URL that comes after the
    /// transfer ended but before its first completion ran (which may remember the outcome, as
    /// ``ImageStore`` remembers a failure) gets the same outcome instead of a second transfer.
    private func finish(_ job: FetchJob, _ result: Result<FetchJob.Payload, ContentError>) {
        let first: Bool = state.withLock { state in
            if job.done { return false }
            job.done = true
            state.waiting.removeAll { $0 === job }
            return true
        }
        guard first else { return }
        callbackQueue.async { [state] in
            // The job leaves the table only once every completion has run, those of requests
            // that joined while they ran included: a request made after its outcome was
            // delivered (and remembered) is a new one, a request made before joins.
            var ran = 0
            while true {
                let batch: [FetchJob.Completion] = state.withLock { state in
                    let pending = Array(job.completions[ran...])
                    if pending.isEmpty, state.jobs[job.key] === job { state.jobs[job.key] = nil }
                    return pending
                }
                if batch.isEmpty { break }
                for c in batch { c(result) }
                ran += batch.count
            }
        }
    }

    // MARK: - The fetcher's thread

    /// The thread's loop: starts waiting jobs (up to ``Fetcher/Configuration/maxConcurrent``),
    /// drives libcurl, ends jobs, and sleeps in `curl_multi_poll(3)` on libcurl's sockets plus
    /// ``wake`` and the thread's stop descriptor. Ends when the engine is closed or stopped.
    private func run(_ thread: WorkerThread) {
        var extra = [curl_waitfd(fd: wake?.wakeDescriptor ?? -1, events: Int16(CURL_WAIT_POLLIN), revents: 0),
                     curl_waitfd(fd: thread.stopDescriptor, events: Int16(CURL_WAIT_POLLIN), revents: 0)]
        while !thread.isStopRequested {
            _ = wake?.take()
            let next: [FetchJob]? = state.withLock { state in
                if state.closed { return nil }
                var list: [FetchJob] = []
                while let first = state.waiting.first, canStart(first, running: active.count + list.count) {
                    list.append(state.waiting.removeFirst())
                }
                state.stats.started += list.count
                state.stats.peakConcurrent = max(state.stats.peakConcurrent, active.count + list.count)
                return list
            }
            guard let next else { break }
            for job in next { begin(job) }
            var running: Int32 = 0
            kc_curl_multi_perform(multi, &running)
            var left: Int32 = 0
            while let message = kc_curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                      let job = active.first(where: { $0.easy == easy }) else { continue }
                end(job, job.result(kc_curl_message_result(message), connectTimeout: configuration.connectTimeout,
                                    lowSpeedTime: configuration.lowSpeedTime))
            }
            // Our own deadlines: they give the typed phase and the bytes received.
            let now = ContinuousClock.now
            var nearest = now + .seconds(1)
            for job in active {
                if !job.gotHeaders && now >= job.connectDeadline {
                    end(job, .failure(.timedOut(url: job.url, phase: "connect",
                                                seconds: seconds(configuration.connectTimeout), receivedBytes: 0)))
                } else if now >= job.totalDeadline {
                    end(job, .failure(.timedOut(url: job.url, phase: "total",
                                                seconds: seconds(configuration.totalTimeout),
                                                receivedBytes: job.received)))
                } else {
                    if !job.gotHeaders { nearest = min(nearest, job.connectDeadline) }
                    nearest = min(nearest, job.totalDeadline)
                }
            }
            // A transfer that ended in this turn freed a place: start what waits before sleeping
            // (with none left running, the sleep below would otherwise be the idle one).
            let canStartMore = state.withLock { $0.waiting.first.map { canStart($0, running: active.count) } ?? false }
            if canStartMore { continue }
            // Idle: sleep until a new job or the stop (the extra descriptors) or libcurl's timers.
            let wait = active.isEmpty ? 60_000 : max(1, min(1000, milliseconds(now.duration(to: nearest))))
            kc_curl_multi_poll(multi, &extra, UInt32(extra.count), Int32(wait), nil)
        }
        for job in active { end(job, .failure(.cancelled(url: job.url))) }
        kc_curl_multi_cleanup(multi)
        multi = nil
    }

    /// Whether `job`, first in the queue, may start with `running` transfers under way: within
    /// ``Fetcher/Configuration/maxConcurrent``, or, urgent, within ``Fetcher/urgentLanes`` more.
    private func canStart(_ job: FetchJob, running: Int) -> Bool {
        running < configuration.maxConcurrent
            || (job.urgent && running < configuration.maxConcurrent + Fetcher.urgentLanes)
    }

    /// Makes the job's easy handle and adds it to the multi handle.
    private func begin(_ job: FetchJob) {
        if state.withLock({ _ in job.done }) { return }  // cancelled while waiting
        if job.isImage {
            do {
                job.writer = try cache.makeWriter(url: job.url)
            } catch {
                finish(job, .failure(error))
                return
            }
        }
        guard let easy = kc_curl_easy_init() else {
            job.writer?.abort()
            finish(job, .failure(.transport(url: job.url, reason: "curl_easy_init failed", receivedBytes: 0)))
            return
        }
        job.easy = easy
        let now = ContinuousClock.now
        job.connectDeadline = now + configuration.connectTimeout
        job.totalDeadline = now + configuration.totalTimeout
        var headers = ["Accept-Encoding: identity"]
        var validators: ManifestValidators?
        switch job.kind {
        case .manifest(let v), .image(_, let v): validators = v
        }
        if let validators {
            if let etag = validators.etag { headers.append("If-None-Match: " + etag) }
            if let date = validators.lastModified { headers.append("If-Modified-Since: " + date) }
        }
        for line in headers { job.headerList = kc_curl_slist_append(job.headerList, line) }
        let c = configuration
        var ok = true
        func set(_ rc: CURLcode) { if rc != CURLE_OK { ok = false } }
        set(kc_curl_setopt_string(easy, CURLOPT_URL, job.url))
        set(kc_curl_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"))
        set(kc_curl_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
        set(kc_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 1))
        set(kc_curl_setopt_long(easy, CURLOPT_MAXREDIRS, c.maxRedirects))
        set(kc_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
        set(kc_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, milliseconds(c.connectTimeout)))
        // A backstop only: our own deadline gives the typed error first.
        set(kc_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, milliseconds(c.totalTimeout) + 2000))
        set(kc_curl_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, c.lowSpeedLimit))
        set(kc_curl_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, max(1, Int(c.lowSpeedTime.components.seconds))))
        set(kc_curl_setopt_off(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(job.cap)))
        set(kc_curl_setopt_string(easy, CURLOPT_USERAGENT, c.userAgent))
        set(kc_curl_setopt_pointer(easy, CURLOPT_HTTPHEADER, job.headerList))
        set(kc_curl_setopt_long(easy, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1))
        set(kc_curl_setopt_pointer(easy, CURLOPT_ERRORBUFFER, job.errorBuffer))
        if let caFile = c.caFile {
            set(kc_curl_setopt_string(easy, CURLOPT_CAINFO, caFile))
            set(kc_curl_setopt_string(easy, CURLOPT_CAPATH, "/etc/ssl/certs"))  // the system store as well
        }
        if let proxy = c.proxy { set(kc_curl_setopt_string(easy, CURLOPT_PROXY, proxy)) }
        let context = Unmanaged.passUnretained(job).toOpaque()
        set(kc_curl_setopt_callback(easy, CURLOPT_HEADERFUNCTION, { data, size, count, context in
            let job = Unmanaged<FetchJob>.fromOpaque(context!).takeUnretainedValue()
            let n = size * count
            return job.header(UnsafeBufferPointer(start: UnsafeRawPointer(data)?.assumingMemoryBound(to: UInt8.self),
                                                  count: n)) ? n : 0
        }))
        set(kc_curl_setopt_pointer(easy, CURLOPT_HEADERDATA, context))
        set(kc_curl_setopt_callback(easy, CURLOPT_WRITEFUNCTION, { data, size, count, context in
            let job = Unmanaged<FetchJob>.fromOpaque(context!).takeUnretainedValue()
            let n = size * count
            return job.body(UnsafeRawBufferPointer(start: data, count: n)) ? n : 0
        }))
        set(kc_curl_setopt_pointer(easy, CURLOPT_WRITEDATA, context))
        // Every address is checked as libcurl is about to connect to it (after DNS: a name
        // that resolves to a refused address is refused too).
        set(kc_curl_setopt_opensocket(easy, { context, purpose, address in
            guard let context, let address else { return CURL_SOCKET_BAD }
            let job = Unmanaged<FetchJob>.fromOpaque(context).takeUnretainedValue()
            if purpose == CURLSOCKTYPE_IPCXN, let ip = connectAddress(address), !job.mayConnect(to: ip) {
                return CURL_SOCKET_BAD
            }
            let a = address.pointee
            return socket(a.family, a.socktype | Int32(SOCK_CLOEXEC.rawValue), a.protocol)
        }))
        set(kc_curl_setopt_pointer(easy, CURLOPT_OPENSOCKETDATA, context))
        // A resolver thread still looking a name up is left to end by itself at clean-up
        // (curl_easy_setopt(3) CURLOPT_QUICK_EXIT, libcurl 7.87): a stop never waits for DNS.
        set(kc_curl_setopt_long(easy, CURLOPT_QUICK_EXIT, 1))
        active.append(job)
        if !ok || kc_curl_multi_add_handle(multi, easy) != CURLM_OK {
            end(job, .failure(.transport(url: job.url, reason: "libcurl refused the request's options "
                                         + "(\(c.proxy ?? "no proxy"), \(c.caFile ?? "system CA store"))",
                                         receivedBytes: 0)))
        }
    }

    /// Ends a running job: frees its handle, drops an unfinished cache file, delivers `result`.
    private func end(_ job: FetchJob, _ result: Result<FetchJob.Payload, ContentError>) {
        active.removeAll { $0 === job }
        if let easy = job.easy {
            kc_curl_multi_remove_handle(multi, easy)
            kc_curl_easy_cleanup(easy)
            job.easy = nil
        }
        kc_curl_slist_free_all(job.headerList)
        job.headerList = nil
        job.writer?.abort()
        job.writer = nil
        finish(job, result)
    }
}
