// SPDX-License-Identifier: Apache-2.0
import Dispatch
import FoundationEssentials
import KioskSystem

/// Keeps a remote manifest current (docs/content.md) on its own serial queue: at ``start()`` the
/// stored last good manifest is posted at once (offline first), then the URL is polled with
/// conditional GETs on the ``PollSchedule`` (interval with jitter, backoff on failure,
/// ``pollNow()`` for SIGHUP). Results reach the frame loop through ``events`` (a ``Mailbox``
/// with a wake-up descriptor); nothing here blocks the caller.
///
/// - A new valid manifest is saved to the ``ManifestStore`` (atomically) and posted.
/// - A 304 posts nothing.
/// - A manifest that is refused (encoding, JSON, types, a non-http `src`, too many items) posts
///   one warning and the previous manifest stays in force; its validators are used for the
///   next polls, so the same bad version costs a 304 and is not logged again.
/// - Failures to reach the server are logged once per streak (``PollSchedule/PollNote``).
public final class ManifestPoller: @unchecked Sendable {
    /// What the poller tells the frame loop.
    public enum Event: Sendable, Equatable {
        /// A manifest to apply. `fromStore` is true for the stored one posted at start.
        case manifest(Manifest, fromStore: Bool)
        /// A line for the log, written with the manifest's URL as `path=` (docs/events-and-logs.md):
        /// `what` a fixed phrase, `reason` the error (without that URL again, see
        /// ``ContentError/logReason(path:)``); `warning` true for warnings, else information.
        case log(String, reason: String? = nil, warning: Bool)
        /// A poll ended: `reached` is false when the server could not be reached or answered
        /// with an error (a refused manifest was still an answer). Posted after the events the
        /// poll produced, so a caller may wait for the first answer (an offscreen run on a
        /// virtual clock does).
        case polled(reached: Bool)
    }

    /// The manifest URL (`--manifest`).
    public let url: URL
    public let events: Mailbox<Event>
    private let fetcher: Fetcher
    private let store: ManifestStore?
    private let maxItems: Int
    private let allowHTTPFromHTTPS: Bool
    private let queue = DispatchQueue(label: "kiosk-carousel.manifest-poller")
    private let clock = ContinuousClock()
    private let origin: ContinuousClock.Instant
    // Owned by `queue`.
    private var schedule: PollSchedule
    private var validators: ManifestValidators?
    private var timer: DispatchSourceTimer?
    private var polling = false
    /// Whether a manifest (stored or fetched) is in force.
    private var hasManifest = false
    private var pollAgain = false
    /// The reason of the last manifest refused for its size, said once while it stays so.
    private var refusedForSize: String?
    private var stopped = false

    /// - Parameters:
    ///   - url: an http or https manifest URL.
    ///   - store: where the last good manifest is kept (nil: not kept).
    ///   - schedule: interval (default 60 s, ±10 %) and backoff (1 s doubling to 5 min).
    /// Throws ``ContentError/system(_:)`` when the wake-up pipe cannot be made.
    ///   - allowHTTPFromHTTPS: an https manifest may name plain http images (else it is refused).
    public init(url: URL, fetcher: Fetcher, store: ManifestStore?, schedule: PollSchedule.Configuration = .init(),
                maxItems: Int = Manifest.defaultMaxItems, allowHTTPFromHTTPS: Bool = false) throws(ContentError) {
        self.url = url
        self.fetcher = fetcher
        self.store = store
        self.maxItems = maxItems
        self.allowHTTPFromHTTPS = allowHTTPFromHTTPS
        do { events = try Mailbox() } catch { throw .system(error) }
        origin = clock.now
        self.schedule = PollSchedule(configuration: schedule, now: .zero)
    }

    /// Posts the stored manifest (if any, and still valid), then starts polling at once.
    public func start() {
        queue.async { [self] in
            if let store {
                switch Self.loadStored(from: store, for: url, maxItems: maxItems,
                                       allowHTTPFromHTTPS: allowHTTPFromHTTPS) {
                case .none:
                    break
                case .usable(let manifest, let stored):
                    validators = stored.validators
                    hasManifest = true
                    events.post(.manifest(manifest, fromStore: true))
                case .refused(let reason):
                    events.post(.log("stored manifest not used", reason: reason, warning: true))
                }
            }
            schedule.pollNow(at: now)
            arm()
        }
    }

    /// What the stored manifest gives the show of the manifest at `url`.
    public enum StoredOutcome {
        /// Nothing stored.
        case none
        /// A manifest stored for `url`, parsed and checked.
        case usable(Manifest, StoredManifest)
        /// One that is not used (stored for another URL, unreadable, refused): why.
        case refused(String)
    }

    /// Reads the stored manifest for the manifest at `url`: one stored for another URL (the
    /// device was pointed elsewhere) is not used, nor one that no longer parses or names plain
    /// http images from an https URL (unless `allowHTTPFromHTTPS`). File I/O.
    public static func loadStored(from store: ManifestStore, for url: URL, maxItems: Int = Manifest.defaultMaxItems,
                                  allowHTTPFromHTTPS: Bool = false) -> StoredOutcome {
        do {
            guard let stored = try store.load(), !stored.url.isEmpty else { return .none }
            guard stored.isFor(url) else {
                return .refused("it was stored for \(Log.hidingPasswords(stored.requested ?? stored.url)), "
                                + "not this manifest")
            }
            guard let base = URL(string: stored.url) else {
                return .refused("its URL \(Log.hidingPasswords(stored.url)) is not a URL")
            }
            let manifest = try Manifest.parse(Array(stored.body), origin: .remote(base), maxItems: maxItems)
            if !allowHTTPFromHTTPS, let problem = manifest.downgradeProblem(base: base) {
                return .refused(reason(problem, beside: url))
            }
            return .usable(manifest, stored)
        } catch {
            return .refused(reason(error, beside: url))
        }
    }

    /// Polls at once (SIGHUP); if a poll is running, another follows it.
    public func pollNow() {
        queue.async { [self] in
            if polling { pollAgain = true; return }
            schedule.pollNow(at: now)
            arm()
        }
    }

    /// Stops polling (a poll in flight finishes without effect).
    public func stop() {
        queue.sync {
            stopped = true
            timer?.cancel()
            timer = nil
        }
    }

    /// The schedule's state, for tests and logs.
    public var consecutiveFailures: Int { queue.sync { schedule.consecutiveFailures } }

    private var now: Duration { origin.duration(to: clock.now) }

    private func arm() {
        guard !stopped, !polling else { return }
        timer?.cancel()
        let t = DispatchSource.makeTimerSource(queue: queue)
        let delay = schedule.delay(from: now)
        t.schedule(deadline: .now() + .nanoseconds(Int(seconds(delay) * 1e9)))
        t.setEventHandler { [weak self] in self?.poll() }
        timer = t
        t.resume()
    }

    private func poll() {
        guard !stopped, !polling else { return }
        timer?.cancel()
        timer = nil
        polling = true
        fetcher.fetchManifest(url, validators: validators) { [weak self] result in
            guard let self else { return }
            self.queue.async { self.handle(result) }
        }
    }

    /// An error as the `reason` of a line whose `path=` is the manifest's URL.
    private static func reason(_ error: any Error, beside url: URL) -> String {
        (error as? ContentError)?.logReason(path: url.absoluteString) ?? "\(error)"
    }

    private func handle(_ result: Result<ManifestResponse, ContentError>) {
        polling = false
        guard !stopped else { return }
        let note: PollSchedule.PollNote?
        var reached = true
        switch result {
        case .success(.notModified):
            note = schedule.succeeded(at: now)
        case .success(.modified(let download)):
            note = schedule.succeeded(at: now)
            validators = download.validators
            do {
                let manifest = try Manifest.parse(download.body, origin: .remote(download.url), maxItems: maxItems)
                if !allowHTTPFromHTTPS, let problem = manifest.downgradeProblem(base: download.url) { throw problem }
                if let store {
                    do {
                        try store.save(StoredManifest(url: download.url.absoluteString, requested: url.absoluteString,
                                                      body: download.body, validators: download.validators))
                    } catch {
                        events.post(.log("last good manifest not stored", reason: Self.reason(error, beside: url),
                                         warning: true))
                    }
                }
                hasManifest = true
                events.post(.manifest(manifest, fromStore: false))
            } catch {
                let kept = hasManifest ? "the previous one stays in force" : "there is no earlier one to keep"
                events.post(.log("manifest refused, \(kept)", reason: Self.reason(error, beside: url), warning: true))
            }
        case .failure(.bodyTooLarge(_, let limit, let declared, let received)):
            // The server answered, with a manifest over the cap: refused for its size (not an
            // outage), the show goes on, and the server is polled at the interval as it is up.
            note = schedule.succeeded(at: now)
            let size = declared.map { "\($0) bytes" } ?? "more than that (cut after \(received) bytes)"
            let reason = "manifest too large: \(size), over the limit of \(limit >> 20) MiB (\(limit) bytes)"
            if reason != refusedForSize {
                refusedForSize = reason
                let kept = hasManifest ? "the previous one stays in force" : "there is no earlier one to keep"
                events.post(.log("manifest refused, \(kept)", reason: reason, warning: true))
            }
        case .failure(let error):
            note = schedule.failed(at: now, error: error)
            reached = false
        }
        if case .success = result { refusedForSize = nil }
        if let note {
            let warning: Bool
            if case .unreachable = note { warning = true } else { warning = false }
            var what = note.what
            if case .unreachable(_, true) = note, !hasManifest {
                what = "manifest unreachable at start and none stored yet: nothing to show until it is fetched;"
                    + " retrying in the background (logged once)"
            }
            events.post(.log(what, reason: note.error.map { Self.reason($0, beside: url) }, warning: warning))
        }
        events.post(.polled(reached: reached))
        if pollAgain {
            pollAgain = false
            schedule.pollNow(at: now)
        }
        arm()
    }
}
