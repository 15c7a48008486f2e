// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskSystem

/// Where the frame loop reads touches from (the evdev reader, or a test's own feed): a
/// ``WakeSource`` of ``TouchFeedEvent``s, drained like the loop's other sources.
public protocol TouchFeed: AnyObject {
    /// Readable while events are waiting (polled with the loop's other descriptors).
    var wakeDescriptor: Int32 { get }
    /// Takes the waiting events, oldest first; never blocks.
    func take() -> [TouchFeedEvent]
    /// The display changed size: map touches onto a panel of `width` x `height` pixels (as
    /// mounted, before `--rotate`) from now on. Default: nothing (a feed in logical pixels).
    func setPanelSize(width: Int, height: Int)
}

public extension TouchFeed {
    func setPanelSize(width: Int, height: Int) {}
}

/// What a ``TouchFeed`` reports.
public enum TouchFeedEvent: Equatable, Sendable {
    /// The driving finger, in logical screen pixels.
    case sample(TouchSample)
    /// A touchscreen is being read: its name and node, and its resolution in logical pixels per
    /// millimetre when the device reports one (for the 2.5 mm slop).
    case attached(name: String, path: String, pixelsPerMillimetre: Double?, detail: String)
    /// The touchscreen went away (unplugged, read error); the feed keeps looking for one.
    case lost(path: String, reason: String)
    /// Something worth a log line (no touchscreen found yet, a device that could not be opened).
    /// A log line's fixed phrase, the node or folder, and why (docs/events-and-logs.md).
    case note(String, path: String?, reason: String?)
    /// The same, about a device the command line named (`--input`): a warning.
    case warning(String, path: String?, reason: String?)
    /// Touches are mapped onto a new display size from now on; the touchscreen's logical pixels
    /// per millimetre at that size (nil: unknown).
    case remapped(pixelsPerMillimetre: Double?)
}

/// Touch routing (docs/frame-loop.md): the feed's samples through the gesture recogniser into
/// gestures for the show, a finger held too long without a report let go, and the
/// input-to-screen latency of each frame. Carousel times are the loop's clock, so they never
/// run back; the samples' own kernel timestamps time the gestures.
///
/// Runs on the frame loop's thread.
final class TouchRouter {
    /// Touches, when a touchscreen is read (nil: none, as with the offscreen backend).
    let feed: TouchFeed?
    private let clock: ShowClock
    private var gestures: GestureRecognizer
    /// The touchscreen's logical pixels per millimetre, nil when unknown (for the gesture slop).
    private var pixelsPerMillimetre: Double?
    /// When the last touch sample arrived (loop clock), for the stuck-finger limit.
    private var lastTouchAt: Duration = .zero
    /// A finger held without a single report for this long no longer holds the show: a stuck
    /// contact or a hung controller must not freeze a kiosk (60 s).
    let stuckLimit: Duration
    /// The oldest touch sample not yet reflected on screen (for the input-to-screen latency).
    private var unshownTouch: Duration?
    /// Show time each frame was presented at, and the touch time it reflects (benchmarks).
    private let presented: ((_ at: Duration, _ touchTime: Duration?) -> Void)?

    init(feed: TouchFeed?, clock: ShowClock, screenWidth: Int, stuckLimit: Duration,
         presented: ((Duration, Duration?) -> Void)?) {
        self.feed = feed
        self.clock = clock
        self.stuckLimit = stuckLimit
        self.presented = presented
        gestures = GestureRecognizer(config: .standard(screenWidth: screenWidth))
    }

    /// A finger is on the screen.
    var isTouching: Bool { gestures.isTouching }

    /// When a finger held without a report is let go; nil when none is down.
    var stuckDeadline: Duration? { gestures.isTouching ? lastTouchAt + stuckLimit : nil }

    /// Takes the feed's waiting events: devices attached and lost are logged, samples that
    /// `admit` lets through (none while the screen is dark) go through the recogniser, and each
    /// gesture goes to `apply` as it is recognised.
    func take(screenWidth: Int, admit: (TouchSample) -> Bool, apply: (Gesture) -> Void) {
        guard let feed else { return }
        for event in feed.take() {
            switch event {
            case .attached(let name, let path, let ppmm, let detail):
                pixelsPerMillimetre = ppmm
                gestures = GestureRecognizer(config: .standard(screenWidth: screenWidth, pixelsPerMillimetre: ppmm))
                Log.info("touchscreen attached", path: path,
                         detail: "\(name); \(detail); slop \(Int(gestures.config.slop.rounded())) px")
            case .lost(let path, let reason):
                Log.warning("touchscreen lost", path: path, reason: reason)
                // A finger that was down is gone with the device (the reader sent a cancel first).
                for gesture in gestures.cancel(at: clock.now) { apply(gesture) }
            case .note(let what, let path, let reason):
                Log.info(what, path: path, detail: reason)
            case .warning(let what, let path, let reason):
                Log.warning(what, path: path, reason: reason)
            case .remapped(let ppmm):
                pixelsPerMillimetre = ppmm
                if !gestures.isTouching {
                    gestures = GestureRecognizer(config: .standard(screenWidth: screenWidth, pixelsPerMillimetre: ppmm))
                }
            case .sample(let sample):
                lastTouchAt = clock.now
                guard admit(sample) else { continue }  // a dark screen, or the touch that woke it
                if unshownTouch == nil { unshownTouch = sample.time }
                for gesture in gestures.feed(sample) { apply(gesture) }
            }
        }
    }

    /// A finger held ``stuckLimit`` without a single report is let go (logged): its gestures.
    func releaseStuck(at now: Duration) -> [Gesture] {
        guard gestures.isTouching, now - lastTouchAt >= stuckLimit else { return [] }
        Log.warning("touch released", reason: "a finger held \(stuckLimit.wholeMilliseconds / 1000) s without a single"
                    + " report (a stuck contact?); the show goes on")
        return gestures.cancel(at: now)
    }

    /// The display changed size: a finger measured against the old size is let go (its
    /// gestures are returned), swipes measure against the new width, and the feed maps onto the
    /// new panel.
    func resize(width: Int, panelWidth: Int, panelHeight: Int, at now: Duration) -> [Gesture] {
        let cancelled = gestures.cancel(at: now)
        gestures = GestureRecognizer(config: .standard(screenWidth: width, pixelsPerMillimetre: pixelsPerMillimetre))
        feed?.setPanelSize(width: panelWidth, height: panelHeight)
        return cancelled
    }

    /// A frame was presented at show time `at`: it reflects the touches so far.
    func framePresented(at: Duration) {
        presented?(at, unshownTouch)
        unshownTouch = nil
    }
}
