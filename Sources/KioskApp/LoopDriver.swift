// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskDisplay
import KioskSystem

/// How the frame loop's time passes and how it waits between turns (docs/frame-loop.md): on the
/// real clock with poll(2) (``RealTimeDriver``), or on a virtual clock that moves only from one
/// deadline to the next (``VirtualTimeDriver``). swift-nio's two event loops are the model
/// (NIOPosix on real sockets and time, NIOEmbedded on time a test advances): the same loop code
/// runs on both and never asks which one it has; what differs is each requirement's answer.
///
/// Also the show's ``WallTimeSource``: item schedules and the `--overlay` clock read wall time here.
public protocol LoopDriver: WallTimeSource {
    /// The show's clock: time since the show started.
    var clock: ShowClock { get }

    /// Before the loop takes what `work` (the decode worker, the text load) has finished: the
    /// real driver never waits (what has arrived is taken, the rest comes on a later turn); the
    /// virtual one waits while jobs are outstanding, so that no time passes while an image is
    /// decoding and the same inputs always give the same frames. `interrupt` (the signal pipe)
    /// ends the wait early.
    func settle(_ work: some OffLoopWork, interrupt: Int32)

    /// Whether the loop must come round again before time may move on: on virtual time while
    /// `work` has jobs outstanding (a signal still gets through); never on the real clock.
    func holdsTime(for work: some OffLoopWork) -> Bool

    /// The earliest show time a changed scene may be presented after a frame presented at
    /// `last`, on a display that does not pace its frames: a frame period on (1/60 s; frames
    /// follow a refresh, not every wake-up of the loop) on the real clock; `last` itself on
    /// virtual time, which has no refresh to keep to.
    func nextFrame(after last: Duration) -> Duration

    /// Whether a scene may go out as layers on the display's planes where it takes them
    /// (``ScenePresenter``, docs/planes.md): on the real clock yes; on virtual time no, its
    /// frames are the composed reference (the same inputs give the same pixels on any display).
    var allowsPlanes: Bool { get }

    /// The deadline `at` of a duty that follows the world outside the show (systemd's watchdog,
    /// a look at the files behind the slots, a VT acquire tried again): kept on the real clock;
    /// virtual time has no such world, so there is none (nil).
    func worldDeadline(_ at: Duration) -> Duration?

    /// The timer the `--display-off` schedule is followed with (``DisplayScheduleTimer``: a
    /// timerfd on CLOCK_REALTIME that also fires when the clock is set), made on first use and
    /// polled by the driver; nil when there is none: virtual time follows no wall-clock schedule,
    /// and a real timer that could not be made was logged once.
    func displayScheduleTimer() -> DisplayScheduleTimer?

    /// Ends a turn begun at `now`: sleeps until the earliest of `deadlines` or until a
    /// descriptor of `wakeDescriptors` is readable (real clock: poll(2)); moves virtual time
    /// straight to the next deadline that keeps the show going. Returns false when nothing will
    /// ever happen again (virtual time only): the show is done.
    func wait(for deadlines: Deadlines<LoopDuty>, wakeDescriptors: [Int32], now: Duration) -> Bool
}

/// Work the frame loop hands off and whose answers it takes (the decode worker, the text
/// load); see ``LoopDriver/settle(_:interrupt:)``.
public protocol OffLoopWork: AnyObject {
    /// Jobs asked for and not answered yet.
    var outstanding: Int { get }
    /// Blocks until an answer waits, none is outstanding, or `interrupt` is readable (-1: none).
    func waitForAnswers(interrupt: Int32)
}

/// The monotonic clock (`CLOCK_MONOTONIC`), read as time since the show started.
public final class MonotonicClock: ShowClock {
    /// The raw `CLOCK_MONOTONIC` reading at the show's start (what evdev timestamps, read on
    /// `CLOCK_MONOTONIC` through `EVIOCSCLOCKID`, are made relative to).
    public let origin: Duration
    public init() { origin = Self.raw() }
    public var now: Duration { Self.raw() - origin }
    /// `CLOCK_MONOTONIC` now.
    public static func raw() -> Duration {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return .seconds(Int64(ts.tv_sec)) + .nanoseconds(Int64(ts.tv_nsec))
    }
}

extension RealtimeClock: WallClock {}
extension LocalTimeZone: TimeZoneRules {}

/// The real clock: ``MonotonicClock`` for show time, poll(2) between turns, CLOCK_REALTIME and
/// libc's time zone for wall time, and the duties of the world outside the show kept.
public final class RealTimeDriver: LoopDriver {
    /// Time between frames of a fade on a display that does not pace them: 1/60 s.
    public static let framePeriod: Duration = .nanoseconds(16_666_667)
    /// The farthest ahead the next look at the schedules is put (60 s): a wall clock that was
    /// set (NTP, `date -s`) or a changed time zone is taken up within it.
    public static let scheduleRecheck: Duration = .seconds(60)

    /// The show's clock (its origin is what touch samples are timed from).
    public let monotonic: MonotonicClock
    public var clock: ShowClock { monotonic }
    private let wall = RealtimeClock()
    private let zone = LocalTimeZone()
    private var timer: DisplayScheduleTimer?
    private var timerUnavailable = false

    public init(clock: MonotonicClock = MonotonicClock()) { monotonic = clock }

    public func readWallTime() -> (sinceEpoch: Duration, zone: any TimeZoneRules) {
        zone.refresh()
        return (wall.sinceEpoch, zone)
    }
    public var scheduleRecheck: Duration? { Self.scheduleRecheck }

    public func settle(_ work: some OffLoopWork, interrupt: Int32) {}
    public func holdsTime(for work: some OffLoopWork) -> Bool { false }
    public func nextFrame(after last: Duration) -> Duration { last + Self.framePeriod }
    public var allowsPlanes: Bool { true }
    public func worldDeadline(_ at: Duration) -> Duration? { at }

    public func displayScheduleTimer() -> DisplayScheduleTimer? {
        if timer == nil && !timerUnavailable {
            do { timer = try DisplayScheduleTimer() } catch {
                timerUnavailable = true
                Log.warning("--display-off not followed", reason: error.description)
            }
        }
        return timer
    }

    /// poll(2) on `wakeDescriptors` (and the `--display-off` timer) until the earliest deadline.
    public func wait(for deadlines: Deadlines<LoopDuty>, wakeDescriptors: [Int32], now: Duration) -> Bool {
        var set = PollSet(readable: wakeDescriptors + [timer?.descriptor].compactMap { $0 })
        _ = try? set.wait(milliseconds: deadlines.pollTimeout(from: now))
        return true
    }
}

/// Virtual time (the offscreen backend's default, and tests): a ``VirtualClock`` that jumps from
/// one deadline to the next and stands still while work the show waits for is outstanding, a
/// wall clock that runs with it from `wallStart`, and none of the real world's duties. A test
/// can add things that happen at set show times (``at(_:_:)``: a touch, a signal, a control
/// command), done from inside the loop's wait as a poll would hand them over.
///
/// A show on virtual time is over when nothing is left that could change it: the failed items'
/// retries, the schedules (without `--run-for`: they repeat forever), the `--overlay` clock and,
/// without `--run-for`, an animation's next frame (it may loop forever) alone do not keep it going.
public final class VirtualTimeDriver: LoopDriver {
    /// The show's clock.
    public let virtualClock: VirtualClock
    public var clock: ShowClock { virtualClock }
    private let wall: ShowWallClock
    private let zone: any TimeZoneRules
    private var scheduled: [(at: Duration, action: () -> Void)] = []

    /// `wallStart`: the wall time (since the Unix epoch) at show time zero; `zone`: the time zone
    /// schedules and the overlay are read in.
    public init(clock: VirtualClock = VirtualClock(), wallStart: Duration = .seconds(Int64(time(nil))),
                zone: any TimeZoneRules = LocalTimeZone()) {
        virtualClock = clock
        wall = ShowWallClock(start: wallStart, clock: clock)
        self.zone = zone
    }

    /// Does `action` on the loop's thread once show time reaches `time` (from inside the loop's
    /// wait, before its next turn). Things scheduled keep the show going until they are done.
    public func at(_ time: Duration, _ action: @escaping () -> Void) {
        let index = scheduled.firstIndex { $0.at > time } ?? scheduled.count
        scheduled.insert((time, action), at: index)
    }

    public func readWallTime() -> (sinceEpoch: Duration, zone: any TimeZoneRules) { (wall.sinceEpoch, zone) }
    public var scheduleRecheck: Duration? { nil }

    public func settle(_ work: some OffLoopWork, interrupt: Int32) {
        if work.outstanding > 0 { work.waitForAnswers(interrupt: interrupt) }
    }
    public func holdsTime(for work: some OffLoopWork) -> Bool { work.outstanding > 0 }
    public func nextFrame(after last: Duration) -> Duration { last }
    public var allowsPlanes: Bool { false }
    public func worldDeadline(_ at: Duration) -> Duration? { nil }
    public func displayScheduleTimer() -> DisplayScheduleTimer? { nil }

    /// Moves the clock to the earliest deadline that keeps the show going, or to the `--overlay`
    /// clock's next change when that comes first; then does what was scheduled up to then.
    public func wait(for deadlines: Deadlines<LoopDuty>, wakeDescriptors: [Int32], now: Duration) -> Bool {
        var timed = deadlines
        timed[.retry] = nil  // retries are for the real clock: a show with nothing else to do is over
        // Schedules, brightness tiers and days repeat: without --run-for they would never end.
        if timed[.runFor] == nil { timed[.schedule] = nil; timed[.brightness] = nil; timed[.orderDay] = nil }
        timed[.overlay] = nil  // the clock alone does not keep a finished show going
        // An animation loops for ever: without --run-for it does not keep a finished show going.
        if timed[.runFor] == nil { timed[.animation] = nil }
        let next = [timed.earliest?.at, scheduled.first?.at].compactMap { $0 }.min()
        guard let next else { return false }  // nothing will ever change: the show is done
        let passing = [deadlines[.overlay], deadlines[.animation]].compactMap { $0 }.min() ?? next
        virtualClock.advance(to: min(next, passing))
        while let first = scheduled.first, first.at <= virtualClock.now {
            scheduled.removeFirst()
            first.action()
        }
        return true
    }
}

extension SlotPreparer: OffLoopWork {
    /// Waits for a result (``waitForResults(interrupt:)`` without taking them).
    public func waitForAnswers(interrupt: Int32) {
        while outstanding > 0 {
            if results.waitForValues(timeout: .seconds(1), interrupt: interrupt) != .timedOut { break }
        }
    }
}
