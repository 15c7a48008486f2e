// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskDisplay
import KioskContent
import KioskImaging
import KioskMQTT
import KioskSystem
import KioskText

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

/// What asks the frame loop to stop or move, set from signal handlers through the
/// ``SignalPipe`` (handlers only write one byte; the loop does the work, as fbi does).
public enum LoopRequest: Equatable {
    case stop(signal: Int32)
    case next, previous
    /// SIGHUP: reload the sources (docs/events-and-logs.md "Signals").
    case reload
    /// The VT is being switched away (VT_PROCESS release signal): give the display up, then
    /// acknowledge (see ``DisplayControl``).
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
    /// Draws scenes at the display's logical size (made again when the display changes size).
    var renderer: SceneRenderer
    let events: EventWriter
    let runFor: Duration?
    /// Stop once the first image shown comes around again (the offscreen default: one round).
    let stopAfterOneRound: Bool
    private(set) var firstShownItem: Int?
    /// The signals caught (see ``LoopRequest``); nil for none.
    let signals: SignalPipe?
    let decodeSignal: (Int32) -> LoopRequest?
    /// systemd's watchdog, kept fed from the loop (real clock only).
    let notifier: SystemdNotifier?
    /// Every timed duty of the loop, with its deadline: the loop sleeps until the earliest.
    var deadlines = Deadlines<LoopDuty>()
    /// The control socket (docs/control-socket.md; its requests are carried out in
    /// FrameLoop+Control.swift), or nil.
    public var control: ControlServer?
    /// The MQTT client (docs/mqtt.md; its commands are carried out in MQTTBridge.swift), or nil.
    public var mqtt: MQTTClient?
    /// Where the control socket's `screenshot` writes its PNGs (FrameLoop+Screenshot.swift), or nil.
    var screenshots: ScreenshotWriter?

    /// The playlist's sources, kept current (nil: the items given to the carousel stay).
    let content: ContentService?
    /// The playlist last given to the carousel (items that failed are in it, to be tried again).
    var playlist: [PlaylistItem]
    /// The device's clock and time zone for item schedules (FrameLoop+Schedule.swift); a test
    /// or the virtual clock gives its own.
    public var wallClock: WallClock = RealtimeClock()
    public var timeZone: TimeZoneRules = LocalTimeZone()
    /// The playlist indices in the rotation by their schedules; nil: all (no schedules).
    var rotation: [Int]?
    /// A schedule took the image on screen out of the rotation: move on from it now.
    var leaveRetired = false
    /// Fallback items standing by, or in, for a rotation none of whose images can be shown.
    var standIn = FallbackStandIn()
    /// Items that failed (a download, a decode) are tried again this long after the failure, by
    /// giving the carousel the playlist again (60 s; the retry is a deadline the loop wakes for).
    public var retryInterval: Duration = .seconds(60)
    /// Sources whose failure was logged (logged again only after they worked once).
    private var failedSources: Set<String> = []

    /// Touches, when a touchscreen is read (nil: none, as with the offscreen backend).
    let touch: TouchFeed?
    var gestures: GestureRecognizer
    /// The touchscreen's logical pixels per millimetre, nil when unknown (for the gesture slop).
    var touchPixelsPerMillimetre: Double?
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

    /// Puts each scene on planes or renders it on the CPU (ScenePresenter.swift).
    public let presenter = ScenePresenter()

    /// VT switching and display power: who may draw now (see ``DisplayControl``, DisplayControl.swift).
    public let displayControl = DisplayControl()
    /// Presence, brightness and CEC (``PowerControl``, FrameLoop+Power.swift).
    public let power = PowerControl()

    /// The prepared frame of each physical slot.
    var slotFrames: [Bitmap?] = [nil, nil, nil]
    /// The local file behind each slot's frame, with the identity it was read with.
    var slotFiles: [(ticket: Int, path: String, identity: FileIdentity)?] = [nil, nil, nil]
    /// How often the files behind the slots are looked at for a change of content (1 s; a
    /// directory's watch reports its own changes as they happen).
    public var fileCheckInterval: Duration = .seconds(1)
    /// The scene last presented (nil: draw the next one whatever it is).
    var lastScene: Scene?
    /// `shown` events waiting for the frame that shows them to be presented.
    var pendingShown: [(item: Int, source: String, at: Duration)] = []
    /// The items of this playlist shown so far (FrameLoop+Round.swift).
    var round = PlaylistRound()
    /// Frames presented so far.
    public private(set) var framesPresented = 0
    /// `--overlay`: the clock blended into every frame (FrameLoop+Overlay.swift).
    public var clockOverlay: ClockOverlay? { didSet { renderer.frameOverlay = clockOverlay; deadlines[.overlay] = nil } }
    /// The words on screen, loaded off the loop (FrameLoop+Text.swift); nil: none are loaded.
    public var text: ShowText?
    /// `--overlay`: the clock's strftime format; the clock is made once ``text`` is loaded.
    public var overlayFormat: String?
    /// The wall-clock time (seconds since 1970) the virtual clock's zero stands for.
    public var overlayEpochAtStart = Int(time(nil))

    public init(display: Display, clock: ShowClock, carousel: Carousel, preparer: SlotPreparer,
                background: RGBColor, events: EventWriter, runFor: Duration?, stopAfterOneRound: Bool = false,
                signals: SignalPipe? = nil, decodeSignal: @escaping (Int32) -> LoopRequest? = { _ in nil },
                notifier: SystemdNotifier? = nil, touch: TouchFeed? = nil, tapCommand: TapCommand? = nil,
                content: ContentService? = nil, painter: (any TextPainter)? = nil) {
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
        renderer = SceneRenderer(width: display.width, height: display.height, background: background, painter: painter)
        self.events = events
        self.runFor = runFor
        self.stopAfterOneRound = stopAfterOneRound
        self.signals = signals
        self.decodeSignal = decodeSignal
    }

    /// Runs the show. Returns the signal that stopped it (0 when `--run-for` ran out).
    /// Throws ``DisplayError`` when presenting a frame fails.
    public func run() throws(DisplayError) -> Int32 {
        applyRotation(at: clock.now, replace: true)
        handle(carousel.start(at: clock.now))
        while true {
            // 1. Requests from signals.
            for request in (signals?.take() ?? []).compactMap(decodeSignal) {
                switch request {
                case .stop(let signal): return signal
                case .releaseDisplay: releaseDisplayForVT()   // VT_PROCESS release signal
                case .acquireDisplay: acquireDisplayForVT()
                case .next: handle(carousel.move(.forward, at: clock.now))
                case .previous: handle(carousel.move(.backward, at: clock.now))
                case .reload:
                    Log.info("SIGHUP received", detail: content == nil ? "nothing to reload" : "reloading the sources")
                    content?.reload()
                    retryFailed(at: clock.now)
                }
            }
            // 1-. Requests from the control socket.
            performControlRequests()
            performMQTTCommands()  // MQTTBridge.swift
            // 1c. The display: a VT acquire to retry, the motion sensor, brightness, the
            //     --display-off schedule (FrameLoop+Power.swift, DisplayControl.swift).
            servicePower()
            serviceDisplayControl()
            try serviceDisplayDevice()  // a card lost or back, maybe at another size (ReconnectingDisplay)
            // 1a. A new playlist (a manifest, a directory change).
            if let content, let items = content.takeUpdate() {
                carousel.config.applyOverrides(interval: content.showSettings.interval, fade: content.showSettings.fade)
                applyPowerSettings(
                    brightness: content.showSettings.brightness, presenceTimeout: content.showSettings.presenceTimeout)
                playlist = items
                restartRound()
                applyRotation(at: clock.now, replace: true)
            }
            if deadlines.isDue(.schedule, at: clock.now) { applyRotation(at: clock.now, replace: false) }
            if deadlines.isDue(.retry, at: clock.now) { retryFailed(at: clock.now) }
            serviceText()  // the words, once loaded off the loop (FrameLoop+Text.swift)
            serviceOverlay(at: clock.now)
            // 1d. Files behind the slots that changed under the same name.
            checkSlotFiles(at: clock.now)
            // 1b. Touches.
            readTouches()
            tapCommand?.reap()
            if gestures.isTouching, clock.now - lastTouchAt >= stuckTouchLimit {
                deadlines[.stuckTouch] = nil
                Log.warning("touch released", reason: "a finger held \(stuckTouchLimit.wholeMilliseconds / 1000) s without a single report (a stuck contact?); the show goes on")
                for gesture in gestures.cancel(at: clock.now) { apply(gesture) }
            }

            // 2. Finished decodes. With the virtual clock, wait for every outstanding one first
            //    (a signal still gets through).
            let results = virtualClock != nil
                ? preparer.waitForResults(interrupt: signals?.wakeDescriptor ?? -1) : preparer.takeResults()
            accept(results)
            if virtualClock != nil, preparer.outstanding > 0 { continue }

            // 3. Time.
            let now = clock.now
            handle(carousel.tick(at: now))
            if leaveRetired { leaveRetiredImage(at: now) }
            if virtualClock != nil, preparer.outstanding > 0 { continue }

            // 4. Draw only when the scene changed.
            // Frames follow the display refresh, not each wake-up (a touch report, a decode): a
            // display that does not pace frames itself gets at most one per frame period.
            var scene = carousel.scene(at: now)
            // No images yet because the manifest has not answered: "Loading...", not "No images".
            let loading = scene.base == .noImages && content?.awaitingFirstAnswer == true
            if loading { scene = Scene(base: .placeholder) }
            var drawLater: Duration?
            if scene != lastScene, !display.pacesFrames, virtualClock == nil,
               let last = lastPresentAt, now - last < Self.framePeriod {
                drawLater = last + Self.framePeriod
            } else if framesPresented == 0, virtualClock == nil, scene.base == .placeholder, scene.overlay == nil,
                      preparer.outstanding > 0, now < carousel.config.startGrace {
                // At start, the first image gets the grace to be the first frame (a warm start
                // never flashes the placeholder); after it, the placeholder shows. Half-way
                // through, its words start loading (off the loop) if the image is still not there.
                let halfway = carousel.config.startGrace / 2
                if now >= halfway { textWillBeNeeded() }
                drawLater = now < halfway ? halfway : carousel.config.startGrace
            } else if scene != lastScene, displayControl.canDraw {
                // On planes where the display can, else rendered on the CPU (ScenePresenter.swift).
                try presenter.present(scene, renderer: renderer, slots: slotFrames, display: display,
                                      showTime: now.wholeMilliseconds, useLayers: virtualClock == nil) {
                    var frame = renderer.render(scene, slots: slotFrames)
                    if renderAgainWithWords() { frame = renderer.render(scene, slots: slotFrames) }  // virtual clock
                    return frame
                }
                StartupTrace.shared.mark(.rendered)
                StartupTrace.shared.mark(.presented)
                if (display as? ReconnectingDisplay)?.isLost == true, try serviceDisplayDevice() { continue }  // gone under this frame
                framesPresented += 1
                readyIfShowing(scene, loading: loading)  // READY=1 with the first photo on screen
                lastScene = scene
                lastPresentAt = now
                if let presented { presented(clock.now, unshownTouch) }
                unshownTouch = nil
            }
            if framesPresented == 0, !displayControl.canDraw { readyWithoutFrame() }  // READY=1 on a dark start
            var roundDone = false
            announceWhenVisible(scene: lastScene, now: now)  // no `shown` on a dark screen; one when it lights
            for s in pendingShown {
                readyIfShowing(nil, loading: false)  // a `shown` photo is on screen
                events.emit(event: "shown", index: s.item, source: s.source, time: s.at)
                publishEvent("shown", index: s.item, source: s.source, time: s.at)  // control socket, STATUS=
                if firstShownItem == nil { firstShownItem = s.item; if virtualClock == nil { StartupTrace.shared.reportFirstShown() } } else if s.item == firstShownItem { roundDone = true }
                noteShown(s.item)  // FrameLoop+Round.swift
            }
            pendingShown.removeAll()
            if stopAfterOneRound && roundDone { return 0 }

            // 5. Stop, or wait for the next thing to happen.
            if let end = runFor, now >= end { return 0 }
            let wake = carousel.wake
            if wake != .animating && !carousel.isHeld { renderer.releaseScratch() }
            scheduleDeadlines(wake: wake, drawLater: drawLater, now: now)
            if let vc = virtualClock {
                // Retries are for the real clock: on the virtual clock a show with nothing else
                // to do is over.
                var timed = deadlines
                timed[.retry] = nil
                // schedules and brightness tiers repeat: without --run-for they would never end
                if runFor == nil { timed[.schedule] = nil; timed[.brightness] = nil }
                timed[.overlay] = nil  // the clock alone does not keep a finished show going
                guard let next = timed.earliest?.at else { return 0 }  // nothing will ever change: the show is done
                vc.advance(to: min(next, deadlines[.overlay] ?? next))
            } else {
                sleep(timeout: deadlines.pollTimeout(from: now))
            }
        }
    }

    /// Sets the deadlines of this turn (the carousel's next fade or frame, a frame held back by
    /// pacing or the start grace, the stuck-finger release, the end of `--run-for`, the
    /// watchdog, a VT acquire to retry); the retry deadline is set where an image fails. Feeds
    /// the watchdog when its time has come.
    private func scheduleDeadlines(wake: Carousel.Wake, drawLater: Duration?, now: Duration) {
        switch wake {
        case .animating: deadlines[.carousel] = display.pacesFrames && displayControl.canDraw ? now : now + Self.framePeriod
        case .at(let t): deadlines[.carousel] = t
        case .idle: deadlines[.carousel] = nil
        }
        deadlines[.drawLater] = drawLater
        deadlines[.stuckTouch] = gestures.isTouching ? lastTouchAt + stuckTouchLimit : nil
        deadlines[.runFor] = runFor
        deadlines[.displayAcquire] = virtualClock == nil ? displayControl.acquireRetryAt : nil
        if virtualClock != nil || slotFiles.allSatisfy({ $0 == nil }) {
            deadlines[.fileCheck] = nil
        } else if deadlines[.fileCheck] == nil {
            deadlines[.fileCheck] = now + fileCheckInterval
        }
        if let notifier, let period = notifier.watchdogInterval, virtualClock == nil {
            if deadlines.isDue(.watchdog, at: now) || deadlines[.watchdog] == nil || framesPresented == 1 {
                notifier.watchdog()
                deadlines[.watchdog] = now + period / 2
            }
        }
    }

    /// Items that left the show (a failed download or decode) come back into it every
    /// ``retryInterval`` after they failed (or at once on SIGHUP): the carousel gets the playlist
    /// again. One that fails again sets the next retry deadline.
    private func retryFailed(at now: Duration) {
        deadlines[.retry] = nil
        let showing = carousel.activeCount
        guard showing < rotation?.count ?? playlist.count else { return }
        handle(carousel.replaceItems(playlist, showing: rotation, at: now))
    }

    /// The files behind the prepared slots: looked at every ``fileCheckInterval`` off the loop
    /// (real clock only); a file whose content changed under the same name has its item
    /// prepared again (``Carousel/imageChanged(item:at:)``: never a cut on screen).
    private func checkSlotFiles(at now: Duration) {
        var changed: [Int] = []
        for ticket in preparer.changedFiles.take() {
            for s in 0..<3 where slotFiles[s]?.ticket == ticket {
                slotFiles[s] = nil
                if let item = carousel.item(inSlot: s), !changed.contains(item) { changed.append(item) }
            }
        }
        for item in changed {
            Log.info("image changed", path: carousel.items[item].source, detail: "prepared again")
            handle(carousel.imageChanged(item: item, at: now))
        }
        if deadlines.isDue(.fileCheck, at: now) {
            preparer.checkFiles(slotFiles.compactMap { $0 })
            deadlines[.fileCheck] = now + fileCheckInterval
        }
    }

    /// Feeds waiting touch samples through the gesture recogniser into the carousel; taps go out
    /// as `tap` events (and to `--on-tap`). Carousel times are the loop's clock, so they never
    /// run back; the samples' own kernel timestamps time the gestures.
    private func readTouches() {
        guard let touch else { return }
        for event in touch.take() {
            switch event {
            case .attached(let name, let path, let ppmm, let detail):
                touchPixelsPerMillimetre = ppmm
                gestures = GestureRecognizer(config: .standard(screenWidth: display.width, pixelsPerMillimetre: ppmm))
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
                touchPixelsPerMillimetre = ppmm
                if !gestures.isTouching { gestures = GestureRecognizer(config: .standard(screenWidth: display.width, pixelsPerMillimetre: ppmm)) }
            case .sample(let sample):
                lastTouchAt = clock.now
                guard touchReachesShow(sample) else { continue }  // a dark screen, or the touch that woke it
                if unshownTouch == nil { unshownTouch = sample.time }
                for gesture in gestures.feed(sample) { apply(gesture) }
            }
        }
    }

    func apply(_ gesture: Gesture) {
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
                             point: (Int(x.rounded(.down)), Int(y.rounded(.down))))  // control socket
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
                slotFiles[slot] = nil
                let it = carousel.items[item]
                preparer.submit(.init(slot: slot, ticket: ticket, item: item, path: it.source, fit: it.fit, sha256: it.sha256,
                                      caption: it.caption))
            case .shown(let item, let source, let at):
                pendingShown.append((item, source, at))
            case .dropped:
                break  // logged with its reason where the decode failed (accept)
            }
        }
        for s in 0..<3 where carousel.status(ofSlot: s) == .empty { slotFrames[s] = nil; slotFiles[s] = nil }
    }

    private func accept(_ results: [SlotPreparer.Result]) {
        let now = clock.now
        for r in results {
            // Only a result its slot still waits for counts. A new playlist may have come while
            // the job ran: the slot's item (renumbered into the new list) is the one it shows,
            // never the index the job was asked with, which may now be past the end of a
            // shorter list or name another image.
            guard carousel.status(ofSlot: r.slot) == .pending(ticket: r.ticket), let item = carousel.item(inSlot: r.slot) else { continue }
            let source = carousel.items[item].source
            for w in r.warnings { Log.warning("image warning", path: source, reason: w) }
            switch r.outcome {
            case .superseded:
                continue
            case .frame(let frame):
                if !failedSources.isEmpty, failedSources.remove(source) != nil {
                    Log.info("image back in the show", path: source)
                }
                slotFrames[r.slot] = frame
                slotFiles[r.slot] = r.identity.map { (r.ticket, source, $0) }
                handle(carousel.imageReady(ticket: r.ticket, at: now))
            case .failed(let error):
                // With two items one image can be asked for twice; it is logged once (and not
                // again when it is tried again later and still fails).
                let actions = carousel.imageFailed(ticket: r.ticket, at: now)
                let kept = carousel.readySlots(ofItem: item)
                if !kept.isEmpty, let identity = r.identity {
                    // A changed file that does not decode (yet): its old picture stays, and the
                    // file is watched again from what it is now.
                    Log.warning("image changed, new picture not readable", path: source,
                                reason: error.reason + "; the previous picture stays until the file changes again")
                    for s in kept { slotFiles[s] = (r.ticket, source, identity) }
                } else {
                    if failedSources.insert(source).inserted { Log.warning("image skipped", path: source, reason: error.reason) }
                    deadlines.setEarliest(.retry, now + retryInterval)
                }
                handle(actions)
            case .unavailable(let reason):
                if failedSources.insert(source).inserted {
                    Log.warning("image skipped", path: source,
                                reason: reason + "; tried again every \(retryInterval.wholeMilliseconds / 1000) s")
                }
                deadlines.setEarliest(.retry, now + retryInterval)
                handle(carousel.imageFailed(ticket: r.ticket, at: now))
            }
        }
        reviewStandIn(at: now)
        reviewRound()
    }

    /// The descriptors of everything that hands the loop work: finished decodes, signals,
    /// touches, control requests, content, the display-off timer.
    private var wakeDescriptors: [Int32] {
        var fds = [preparer.results.wakeDescriptor, preparer.changedFiles.wakeDescriptor]
        if let signals { fds.append(signals.wakeDescriptor) }
        if let touch { fds.append(touch.wakeDescriptor) }
        if let control { fds.append(control.requests.wakeDescriptor) }
        if let mqtt { fds.append(mqtt.commands.wakeDescriptor) }
        if let screenshots { fds.append(screenshots.finished.wakeDescriptor) }
        if let text { fds.append(text.ready.wakeDescriptor) }
        fds += content?.wakeDescriptors ?? []
        if let fd = displayControl.wakeDescriptor { fds.append(fd) }
        fds += power.wakeDescriptors
        if let fd = (display as? ReconnectingDisplay)?.wakeDescriptor { fds.append(fd) }
        return fds
    }

    /// Sleeps for `timeout` ms (poll(2): -1 = until woken), waking early when any source has work.
    private func sleep(timeout: Int32) {
        var fds = wakeDescriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        _ = poll(&fds, nfds_t(fds.count), timeout)
    }
}

/// The frame loop's timed duties, each with at most one deadline in ``FrameLoop/deadlines``.
/// (The `--display-off` schedule wakes the loop through its own timerfd, the manifest poller
/// and the directory watches through their mailboxes.)
enum LoopDuty: Hashable, Sendable {
    /// The carousel's next frame during a fade or settle, or its next auto-advance (the
    /// interval, or an item's own duration).
    case carousel
    /// A frame held back by frame pacing or the start grace.
    case drawLater
    /// A finger held without a report for ``FrameLoop/stuckTouchLimit`` is let go.
    case stuckTouch
    /// The end of `--run-for`.
    case runFor
    /// systemd's watchdog is fed every half of its interval.
    case watchdog
    /// Items that failed are tried again (``FrameLoop/retryInterval`` after the failure).
    case retry
    /// A VT acquire that failed is tried again.
    case displayAcquire
    /// A lost card is looked for again, or the connector looked at (``ReconnectingDisplay/retryAt``).
    case displayReopen
    /// The files behind the prepared slots are checked for a change of content.
    case fileCheck
    /// The next boundary of an item's schedule (FrameLoop+Schedule.swift).
    case schedule
    /// The end of a touch's wake of a screen off by `--display-off` (`--wake-minutes`).
    case wakeEnd
    /// `--overlay`: the clock's text is formatted again (the start of each minute).
    case overlay
    /// The motion sensor's level settles, or its timeout runs out (FrameLoop+Power.swift).
    case presence
    /// The next change of a `--brightness` tier.
    case brightness
    /// The next step of a brightness ramp.
    case brightnessStep
}

// MARK: - Control socket bridge (the rest is in FrameLoop+Control.swift)

extension FrameLoop {
    /// Carousel actions from a control command go through the loop's own handling.
    func handleControlActions(_ actions: [CarouselAction]) { handle(actions) }
    /// The playlist's length as given (what `goto` indexes and `status` reports).
    var controlPlaylistCount: Int { playlist.count }
}
