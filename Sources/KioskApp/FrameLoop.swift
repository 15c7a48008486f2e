import Glibc
import KioskCore
import KioskDisplay
import KioskContent
import KioskImaging
import KioskSystem

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

/// Where the frame loop reads touches from (the evdev reader, or a test's own feed).
public protocol TouchFeed: AnyObject {
    /// Readable while events are waiting (polled with the loop's other descriptors).
    var wakeDescriptor: Int32 { get }
    /// Takes the waiting events, oldest first; never blocks.
    func takeTouchEvents() -> [TouchFeedEvent]
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
    case note(String)
    /// The same, about a device the command line named (`--input`): a warning.
    case warning(String)
}

/// What asks the frame loop to stop or move, set from signal handlers through a pipe
/// (handlers only write one byte; the loop does the work, as fbi does).
public enum LoopRequest: Equatable {
    case stop(signal: Int32)
    case next, previous
    /// SIGHUP: reload the sources (SPEC section 6).
    case reload
    /// The VT is being switched away (VT_PROCESS release signal): give the display up, then
    /// acknowledge (issue 6 item 3; see ``DisplayControl``).
    case releaseDisplay
    /// The VT was switched back to (VT_PROCESS acquire signal): take the display back and redraw.
    case acquireDisplay
}

/// Owns the show: the carousel, the three slot frames, the decode worker, the display. Runs
/// until `--run-for` is up or a stop is requested.
///
/// Pacing: nothing is drawn while the scene stays the same (an image simply on screen costs
/// no frames); during a fade frames follow the display's vertical blank (DRM page flips) or
/// a 60 Hz timer. With a ``VirtualClock`` (the offscreen backend) time jumps straight to the
/// next moment something changes and never moves on while an image is still decoding, so the
/// same inputs always give the same frames.
public final class FrameLoop {
    /// Time between frames during a fade when the display does not pace them: 1/60 s.
    public static let framePeriod: Duration = .nanoseconds(16_666_667)

    let display: Display
    let clock: ShowClock
    let virtualClock: VirtualClock?
    var carousel: Carousel
    let preparer: SlotPreparer
    let renderer: SceneRenderer
    let events: EventWriter
    let runFor: Duration?
    /// Stop once the first image shown comes around again (the offscreen default: one round).
    let stopAfterOneRound: Bool
    private var firstShownItem: Int?
    /// Readable when a signal arrived (see ``LoopRequest``); -1 for none.
    let requestDescriptor: Int32
    let decodeRequest: (UInt8) -> LoopRequest?
    /// systemd's watchdog, kept fed from the loop (real clock only).
    let notifier: SystemdNotifier?
    private var lastWatchdog: Duration = .zero
    /// The control socket (issue 6; requests carried out in FrameLoop+Control.swift), or nil.
    var control: ControlServer?

    /// The playlist's sources, kept current (nil: the items given to the carousel stay).
    let content: ContentService?
    /// The playlist last given to the carousel (items that failed are in it, to be tried again).
    private var playlist: [PlaylistItem]
    /// Items that failed (a download, a decode) are tried again this often, by giving the
    /// carousel the playlist again (60 s).
    public var retryInterval: Duration = .seconds(60)
    private var lastRetry: Duration = .zero
    /// Sources whose failure was logged (logged again only after they worked once).
    private var failedSources: Set<String> = []

    /// Touches, when a touchscreen is read (nil: none, as with the offscreen backend).
    let touch: TouchFeed?
    private var gestures: GestureRecognizer
    /// Run for every tap with the index and source of the current item (`--on-tap`).
    let tapCommand: TapCommand?
    /// The oldest touch sample not yet reflected on screen (for the input-to-screen latency).
    private var unshownTouch: Duration?
    /// Show time each frame was presented at, and the touch time it reflects (benchmarks).
    public var presented: ((_ at: Duration, _ touchTime: Duration?) -> Void)?
    private var lastPresentAt: Duration?
    /// When the last touch sample arrived (loop clock), for the stuck-finger limit.
    private var lastTouchAt: Duration = .zero
    /// A finger held without a single report for this long no longer holds the show: a stuck
    /// contact or a hung controller must not freeze a kiosk (60 s).
    public var stuckTouchLimit: Duration = .seconds(60)

    /// VT switching and display power: who may draw now (see ``DisplayControl``, end of this file).
    public let displayControl = DisplayControl()

    /// The prepared frame of each physical slot.
    private(set) var slotFrames: [Bitmap?] = [nil, nil, nil]
    private var lastScene: Scene?
    /// `shown` events waiting for the frame that shows them to be presented.
    private var pendingShown: [(item: Int, source: String, at: Duration)] = []
    /// Frames presented so far.
    public private(set) var framesPresented = 0

    public init(display: Display, clock: ShowClock, carousel: Carousel, preparer: SlotPreparer,
                background: RGBColor, events: EventWriter, runFor: Duration?, stopAfterOneRound: Bool = false,
                requestDescriptor: Int32 = -1, decodeRequest: @escaping (UInt8) -> LoopRequest? = { _ in nil },
                notifier: SystemdNotifier? = nil, touch: TouchFeed? = nil, tapCommand: TapCommand? = nil,
                content: ContentService? = nil) {
        self.notifier = notifier
        self.content = content
        playlist = carousel.items
        self.touch = touch
        self.tapCommand = tapCommand
        gestures = GestureRecognizer(config: .standard(screenWidth: display.width))
        var carousel = carousel
        carousel.config.screenWidth = display.width
        self.display = display
        self.clock = clock
        virtualClock = clock as? VirtualClock
        self.carousel = carousel
        self.preparer = preparer
        renderer = SceneRenderer(width: display.width, height: display.height, background: background)
        self.events = events
        self.runFor = runFor
        self.stopAfterOneRound = stopAfterOneRound
        self.requestDescriptor = requestDescriptor
        self.decodeRequest = decodeRequest
    }

    /// Runs the show. Returns the signal that stopped it (0 when `--run-for` ran out).
    /// Throws ``DisplayError`` when presenting a frame fails.
    public func run() throws(DisplayError) -> Int32 {
        handle(carousel.start(at: clock.now))
        while true {
            // 1. Requests from signals.
            for request in pendingRequests() {
                switch request {
                case .stop(let signal): return signal
                case .releaseDisplay: releaseDisplayForVT()   // issue 6 item 3
                case .acquireDisplay: acquireDisplayForVT()
                case .next: handle(carousel.move(.forward, at: clock.now))
                case .previous: handle(carousel.move(.backward, at: clock.now))
                case .reload:
                    Log.info("SIGHUP received", detail: content == nil ? "nothing to reload" : "reloading the sources")
                    content?.reload()
                    retryFailed(at: clock.now, force: true)
                }
            }
            // 1-. Requests from the control socket (issue 6).
            performControlRequests()
            // 1c. The display: a VT acquire to retry, the --display-off schedule (issue 6 items 3, 5).
            serviceDisplayControl()
            // 1a. A new playlist (a manifest, a directory change).
            if let content, let items = content.takeUpdate() {
                applyShowSettings(content.showSettings)
                playlist = items
                handle(carousel.replaceItems(items, at: clock.now))
            }
            retryFailed(at: clock.now, force: false)
            // 1b. Touches.
            readTouches()
            tapCommand?.reap()
            if gestures.isTouching, clock.now - lastTouchAt >= stuckTouchLimit {
                Log.warning("touch released", reason: "a finger held \(stuckTouchLimit.wholeMilliseconds / 1000) s without a single report (a stuck contact?); the show goes on")
                for gesture in gestures.cancel(at: clock.now) { apply(gesture) }
            }

            // 2. Finished decodes. With the virtual clock, wait for every outstanding one first
            //    (a signal still gets through).
            let results = virtualClock != nil
                ? preparer.waitForResults(interrupt: requestDescriptor) : preparer.takeResults()
            accept(results)
            if virtualClock != nil, preparer.outstanding > 0 { continue }

            // 3. Time.
            let now = clock.now
            handle(carousel.tick(at: now))
            if virtualClock != nil, preparer.outstanding > 0 { continue }

            // 4. Draw only when the scene changed.
            // Frames follow the display refresh, not each wake-up (a touch report, a decode): a
            // display that does not pace frames itself gets at most one per frame period.
            var scene = carousel.scene(at: now)
            // No images yet because the manifest has not answered: "Loading...", not "No images".
            if scene.base == .noImages, content?.awaitingFirstAnswer == true { scene = Scene(base: .placeholder) }
            var drawLater: Duration?
            if scene != lastScene, !display.pacesFrames, virtualClock == nil,
               let last = lastPresentAt, now - last < Self.framePeriod {
                drawLater = last + Self.framePeriod
            } else if framesPresented == 0, virtualClock == nil, scene.base == .placeholder, scene.overlay == nil,
                      preparer.outstanding > 0, now < carousel.config.startGrace {
                // At start, the first image gets the grace to be the first frame (a warm start
                // never flashes the placeholder); after it, the placeholder shows.
                drawLater = carousel.config.startGrace
            } else if scene != lastScene, displayControl.canDraw {
                let frame = renderer.render(scene, slots: slotFrames)
                try display.present(frame, showTime: now.wholeMilliseconds)
                framesPresented += 1
                if framesPresented == 1 { firstFramePresented() }  // READY=1 (issue 6)
                lastScene = scene
                lastPresentAt = now
                if let presented { presented(clock.now, unshownTouch) }
                unshownTouch = nil
            }
            if framesPresented == 0, !displayControl.canDraw { readyWithoutFrame() }  // READY=1 on a dark start (issue 6)
            var roundDone = false
            for s in pendingShown {
                events.emit(event: "shown", index: s.item, source: s.source, time: s.at)
                publishEvent("shown", index: s.item, source: s.source, time: s.at)  // control socket, STATUS= (issue 6)
                if firstShownItem == nil { firstShownItem = s.item } else if s.item == firstShownItem { roundDone = true }
            }
            pendingShown.removeAll()
            if stopAfterOneRound && roundDone { return 0 }

            // 5. Stop, or wait for the next thing to happen.
            if let end = runFor, now >= end { return 0 }
            let wake = carousel.wake
            if wake != .animating && !carousel.isHeld { renderer.releaseScratch() }
            var next: Duration?
            switch wake {
            case .animating: next = display.pacesFrames && displayControl.canDraw ? now : now + Self.framePeriod
            case .at(let t): next = t
            case .idle: next = nil
            }
            if let drawLater { next = min(next ?? drawLater, drawLater) }
            if gestures.isTouching {
                let release = lastTouchAt + stuckTouchLimit
                next = min(next ?? release, release)
            }
            if let end = runFor { next = min(next ?? end, end) }
            if let notifier, let period = notifier.watchdogInterval, virtualClock == nil {
                if now - lastWatchdog >= period / 2 || framesPresented == 1 {
                    notifier.watchdog()
                    lastWatchdog = now
                }
                next = min(next ?? (now + period / 2), now + period / 2)
            }
            if let vc = virtualClock {
                guard let next else { return 0 }  // nothing will ever change: the show is done
                vc.advance(to: next)
            } else {
                sleep(until: next, now: now)
            }
        }
    }

    /// Items that left the show (a failed download or decode) come back into it every
    /// ``retryInterval`` (or at once on SIGHUP): the carousel gets the playlist again.
    private func retryFailed(at now: Duration, force: Bool) {
        guard force || now - lastRetry >= retryInterval else { return }
        lastRetry = now
        let showing = carousel.activeCount
        guard showing < playlist.count else { return }
        handle(carousel.replaceItems(playlist, at: now))
    }

    /// A manifest's `interval` and `fade` replace the command line's.
    private func applyShowSettings(_ settings: ContentService.ShowSettings) {
        if let interval = settings.interval { carousel.config.interval = interval }
        if let fade = settings.fade { carousel.config.fade = min(fade, carousel.config.interval) }
    }

    /// Feeds waiting touch samples through the gesture recogniser into the carousel; taps go out
    /// as `tap` events (and to `--on-tap`). Carousel times are the loop's clock, so they never
    /// run back; the samples' own kernel timestamps time the gestures.
    private func readTouches() {
        guard let touch else { return }
        for event in touch.takeTouchEvents() {
            switch event {
            case .attached(let name, let path, let ppmm, let detail):
                gestures = GestureRecognizer(config: .standard(screenWidth: display.width, pixelsPerMillimetre: ppmm))
                Log.info("touchscreen attached", path: path,
                         detail: "\(name); \(detail); slop \(Int(gestures.config.slop.rounded())) px")
            case .lost(let path, let reason):
                Log.warning("touchscreen lost", path: path, reason: reason)
                // A finger that was down is gone with the device (the reader sent a cancel first).
                for gesture in gestures.cancel(at: clock.now) { apply(gesture) }
            case .note(let text):
                Log.info(text)
            case .warning(let text):
                Log.warning(text)
            case .sample(let sample):
                lastTouchAt = clock.now
                if unshownTouch == nil { unshownTouch = sample.time }
                for gesture in gestures.feed(sample) { apply(gesture) }
            }
        }
    }

    private func apply(_ gesture: Gesture) {
        let now = clock.now
        switch gesture {
        case .pressed:
            handle(carousel.touchBegan(at: now))
        case .dragged(let offset, _):
            carousel.touchDragged(offset: offset, at: now)
        case .dragEnded(_, let velocity, _):
            handle(carousel.touchEnded(velocity: velocity, at: now))
        case .tap(let x, let y, let at):
            if let item = carousel.currentItem {
                let source = carousel.items[item].source
                events.emit(event: "tap", index: item, source: source, time: at,
                            point: (Int(x.rounded(.down)), Int(y.rounded(.down))))
                publishEvent("tap", index: item, source: source, time: at,
                             point: (Int(x.rounded(.down)), Int(y.rounded(.down))))  // control socket (issue 6)
                tapCommand?.run(index: item, source: source)
            }
            handle(carousel.touchEnded(velocity: nil, at: now))
        case .released:
            handle(carousel.touchEnded(velocity: nil, at: now))
        case .cancelled:
            handle(carousel.touchEnded(velocity: nil, at: now, cancelled: true))
        }
    }

    private func handle(_ actions: [CarouselAction]) {
        for action in actions {
            switch action {
            case .prepare(let slot, let item, let ticket):
                slotFrames[slot] = nil  // the old frame goes now, before the new one is made
                let it = carousel.items[item]
                preparer.submit(.init(slot: slot, ticket: ticket, item: item, path: it.source, fit: it.fit, sha256: it.sha256))
            case .shown(let item, let source, let at):
                pendingShown.append((item, source, at))
            case .dropped:
                break  // logged with its reason where the decode failed (accept)
            }
        }
        for s in 0..<3 where carousel.status(ofSlot: s) == .empty { slotFrames[s] = nil }
    }

    private func accept(_ results: [SlotPreparer.Result]) {
        let now = clock.now
        for r in results {
            for w in r.warnings { Log.warning("image warning", path: carousel.items[r.item].source, reason: w) }
            switch r.outcome {
            case .superseded:
                continue
            case .frame(let frame):
                guard carousel.status(ofSlot: r.slot) == .pending(ticket: r.ticket) else { continue }
                if !failedSources.isEmpty, failedSources.remove(carousel.items[r.item].source) != nil {
                    Log.info("image back in the show", path: carousel.items[r.item].source)
                }
                slotFrames[r.slot] = frame
                handle(carousel.imageReady(ticket: r.ticket, at: now))
            case .failed(let error):
                // With two items one image can be asked for twice; it is logged once (and not
                // again when it is tried again later and still fails).
                guard carousel.status(ofSlot: r.slot) == .pending(ticket: r.ticket) else { continue }
                let source = carousel.items[r.item].source
                if failedSources.insert(source).inserted { Log.warning("image skipped", path: source, reason: error.reason) }
                handle(carousel.imageFailed(ticket: r.ticket, at: now))
            case .unavailable(let reason):
                guard carousel.status(ofSlot: r.slot) == .pending(ticket: r.ticket) else { continue }
                let source = carousel.items[r.item].source
                if failedSources.insert(source).inserted {
                    Log.warning("image skipped", path: source,
                                reason: reason + "; tried again every \(retryInterval.wholeMilliseconds / 1000) s")
                }
                handle(carousel.imageFailed(ticket: r.ticket, at: now))
            }
        }
    }

    private func pendingRequests() -> [LoopRequest] {
        guard requestDescriptor >= 0 else { return [] }
        var out: [LoopRequest] = []
        var buffer = [UInt8](repeating: 0, count: 16)
        while true {
            let n = read(requestDescriptor, &buffer, buffer.count)
            if n <= 0 { break }
            for b in buffer[0..<n] { if let r = decodeRequest(b) { out.append(r) } }
        }
        return out
    }

    /// Sleeps until `deadline` (nil = until woken), waking early for finished decodes and signals.
    private func sleep(until deadline: Duration?, now: Duration) {
        var fds = [pollfd(fd: preparer.wakeDescriptor, events: Int16(POLLIN), revents: 0)]
        if requestDescriptor >= 0 { fds.append(pollfd(fd: requestDescriptor, events: Int16(POLLIN), revents: 0)) }
        if let touch { fds.append(pollfd(fd: touch.wakeDescriptor, events: Int16(POLLIN), revents: 0)) }
        if let control { fds.append(pollfd(fd: control.loopWakeDescriptor, events: Int16(POLLIN), revents: 0)) }  // issue 6
        for fd in content?.wakeDescriptors ?? [] { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
        if let fd = displayControl.wakeDescriptor { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }  // issue 6
        var timeout: Int32 = -1
        // issue 6: a VT acquire that failed is tried again at acquireRetryAt.
        let deadline = [deadline, displayControl.acquireRetryAt].compactMap { $0 }.min()
        if let deadline {
            let ns = max(0, (deadline - now).wholeNanoseconds)
            timeout = Int32(clamping: (ns + 999_999) / 1_000_000)
        }
        _ = poll(&fds, nfds_t(fds.count), timeout)
    }
}

// MARK: - Control socket bridge (issue 6 item 4; the rest is in FrameLoop+Control.swift)

extension FrameLoop {
    /// Carousel actions from a control command go through the loop's own handling.
    func handleControlActions(_ actions: [CarouselAction]) { handle(actions) }
    /// The playlist's length as given (what `goto` indexes and `status` reports).
    var controlPlaylistCount: Int { playlist.count }
}

// MARK: - Display ownership: VT switching and display power (issue 6 items 3 and 5)

/// Who may draw on the screen now, for the ``FrameLoop``: the VT (switched away or not; see
/// ``ConsoleGuard/enableProcessSwitching(releaseSignal:acquireSignal:)``) and the screen's power
/// (`--display-off` schedule, `display on|off` on the control socket). Frames are drawn only
/// while ``canDraw``; the show keeps its time (a VT switched away does not stop it), but pauses
/// while the screen is off.
public final class DisplayControl {
    /// The VT whose switches the loop acknowledges (VT_RELDISP); nil when there is none.
    public var console: ConsoleGuard?
    /// When the screen is switched off (`--display-off`); nil: only `display on|off` switches it.
    public var schedule: DisplaySchedule? { didSet { evaluate = true } }
    /// False between a VT release and the next acquire.
    public internal(set) var vtActive = true
    /// False while the screen is switched off.
    public internal(set) var powerOn = true
    /// Frames go to the display only when the VT is ours and the screen is on.
    public var canDraw: Bool { vtActive && powerOn }
    /// `display on|off`: the state asked for and whether the schedule said "off" then; it holds
    /// until the schedule's state changes.
    var manual: (on: Bool, scheduledOff: Bool)?
    /// The carousel was already paused (control socket) when the screen went off: it stays so.
    var wasPaused = false
    /// The schedule must be looked at (start, timer expired, clock set).
    var evaluate = true
    var timer: DisplayScheduleTimer?
    var timerUnavailable = false
    /// When to try a failed VT acquire again (loop clock).
    public internal(set) var acquireRetryAt: Duration?

    public init() {}

    /// The schedule timer's descriptor for the loop's poll set.
    var wakeDescriptor: Int32? { timer?.descriptor }
}

extension FrameLoop {
    /// True while the screen is on (`status` on the control socket).
    var isDisplayPowerOn: Bool { displayControl.powerOn }

    /// Switches the screen off or on by hand (`display on|off` on the control socket): a manual
    /// override of `--display-off` that holds until the schedule's next change. Off pauses the
    /// show; on resumes it with a full interval (unless it was paused before) and redraws at once.
    /// `reason` goes into the log line.
    public func setDisplayPower(on: Bool, reason: String) {
        let dc = displayControl
        if let schedule = dc.schedule {
            let now = DisplayScheduleTimer.localNow()
            dc.manual = (on, schedule.isOff(minuteOfDay: now.minuteOfDay))
        }
        guard on != dc.powerOn else {
            Log.info("display already \(on ? "on" : "off")", detail: reason)
            return
        }
        applyDisplayPower(on: on, reason: reason + (dc.schedule == nil ? "" : ", until the next change of --display-off \(dc.schedule!)"))
    }

    /// The VT is being switched away: stop drawing, give the display up (DRM: drop master), then
    /// VT_RELDISP 1 so the switch goes ahead. Always acknowledged, even if releasing failed:
    /// refusing would hold the whole console hostage.
    func releaseDisplayForVT() {
        let dc = displayControl
        if dc.vtActive {
            dc.vtActive = false
            dc.acquireRetryAt = nil
            do { try display.release() } catch { Log.warning("display release incomplete", reason: error.description) }
        }
        do { try dc.console?.acknowledgeRelease() } catch { Log.warning("VT release not acknowledged", reason: error.description) }
        Log.info("display released", detail: "VT switched away; drawing stops until it is switched back")
    }

    /// The VT was switched back to: VT_RELDISP VT_ACKACQ, take the display back (DRM: master,
    /// CRTC) and redraw the current scene at once. If taking it back fails (another process holds
    /// DRM master) it is tried again every second.
    func acquireDisplayForVT() {
        let dc = displayControl
        do { try dc.console?.acknowledgeAcquire() } catch { Log.warning("VT acquire not acknowledged", reason: error.description) }
        takeDisplayBack()
    }

    private func takeDisplayBack() {
        let dc = displayControl
        do {
            try display.acquire()
        } catch {
            if dc.acquireRetryAt == nil { Log.warning("display not taken back", reason: error.description + "; trying again every second") }
            dc.acquireRetryAt = clock.now + .seconds(1)
            return
        }
        dc.acquireRetryAt = nil
        dc.vtActive = true
        lastScene = nil   // the other VT drew over the screen: redraw now
        Log.info("display acquired", detail: "VT switched back; redrawing")
    }

    /// Once per loop turn: a VT acquire to retry; the schedule when its timer fired (or at the
    /// start, or after the clock was set): switch the screen as it says (a manual override ends
    /// when the schedule's state changes) and arm the timer for the next change.
    func serviceDisplayControl() {
        let dc = displayControl
        if let retry = dc.acquireRetryAt, clock.now >= retry { takeDisplayBack() }
        guard let schedule = dc.schedule, virtualClock == nil else { return }
        if dc.timer == nil && !dc.timerUnavailable {
            var err: Int32 = 0
            dc.timer = DisplayScheduleTimer(error: &err)
            if dc.timer == nil {
                dc.timerUnavailable = true
                Log.warning("--display-off not followed", reason: "timerfd_create: \(String(cString: strerror(err)))")
                return
            }
        }
        if let timer = dc.timer, timer.consume() { dc.evaluate = true }
        guard dc.evaluate, let timer = dc.timer else { return }
        dc.evaluate = false
        let now = DisplayScheduleTimer.localNow()
        let scheduledOff = schedule.isOff(minuteOfDay: now.minuteOfDay)
        if let manual = dc.manual, manual.scheduledOff != scheduledOff {
            dc.manual = nil
            Log.info("display override ended", detail: "--display-off \(schedule) says \(scheduledOff ? "off" : "on") now")
        }
        let on = dc.manual?.on ?? !scheduledOff
        if on != dc.powerOn {
            applyDisplayPower(on: on, reason: "--display-off \(schedule)")
        }
        if let seconds = schedule.secondsUntilChange(minuteOfDay: now.minuteOfDay, second: now.second) {
            if !timer.arm(at: now.epoch + seconds) {
                Log.warning("--display-off timer not armed", reason: String(cString: strerror(errno)))
            }
        }
    }

    /// Switches the screen and pauses or resumes the show; logs the change.
    private func applyDisplayPower(on: Bool, reason: String) {
        let dc = displayControl
        guard on != dc.powerOn else { return }
        let now = clock.now
        dc.powerOn = on
        if !on {
            dc.wasPaused = carousel.isPaused
            carousel.pause(at: now)
        } else if !dc.wasPaused {
            carousel.resume(at: now)
        }
        var warning: String?
        do { try display.setPower(on: on) } catch { warning = error.description }
        if on { lastScene = nil }   // draw the current scene at once
        var detail = reason + (on ? (dc.wasPaused ? "; the show stays paused" : "; the show resumes with a full interval")
                                  : "; the show pauses")
        if let drm = display as? DRMDisplay, let dpms = drm.dpmsState {
            detail += "; DPMS \(["On", "Standby", "Suspend", "Off"][Int(min(dpms, 3))])"
        }
        Log.info(on ? "display on" : "display off", detail: detail)
        if let warning {
            Log.warning("display power not switched \(on ? "on" : "off")",
                        reason: warning + "; the show \(on ? "resumes" : "pauses") anyway")
        }
    }
}
