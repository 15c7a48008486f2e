// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskContent
import KioskDisplay
import KioskSystem

/// What asks the frame loop to stop or move, set from signal handlers through the
/// ``SignalPipe`` (handlers only write one byte; the loop does the work, as fbi does).
public enum LoopRequest: Equatable {
    case stop(signal: Int32)
    case next, previous
    /// SIGHUP: reload the sources (docs/events-and-logs.md "Signals").
    case reload
    /// The VT is being switched away (VT_PROCESS release signal): give the display up, then
    /// acknowledge (see ``DisplaySupervisor``).
    case releaseDisplay
    /// The VT was switched back to (VT_PROCESS acquire signal): take the display back and redraw.
    case acquireDisplay
}

/// The frame loop's timed duties, each with at most one deadline: the loop sleeps until the
/// earliest (``LoopDriver/wait(for:wakeDescriptors:now:)``). (The `--display-off` schedule
/// wakes the loop through its own timerfd, the manifest poller and the directory watches
/// through their mailboxes.)
public enum LoopDuty: Hashable, Sendable {
    /// The carousel's next frame during a fade or settle, or its next auto-advance (the
    /// interval, or an item's own duration).
    case carousel
    /// A frame held back by frame pacing or the start grace.
    case drawLater
    /// The next frame of an animation on screen (``SlotAnimations``).
    case animation
    /// A finger held without a report for ``FrameLoop/Configuration/stuckTouchLimit`` is let go.
    case stuckTouch
    /// The end of `--run-for`.
    case runFor
    /// systemd's watchdog is fed every half of its interval.
    case watchdog
    /// Items that failed are tried again (``ShowPolicy/nextRetry``).
    case retry
    /// A VT acquire that failed is tried again.
    case displayAcquire
    /// A lost card is looked for again, or the connector looked at (``ReconnectingDisplay/retryAt``).
    case displayReopen
    /// The files behind the prepared slots are checked for a change of content.
    case fileCheck
    /// The next boundary of an item's schedule (``ShowPolicy/nextScheduleLook``).
    case schedule
    /// The local midnight after which `--order on-this-day` is worked out again (``PlayOrder/nextDayLook``).
    case orderDay
    /// The end of a touch's wake of a screen off by `--display-off` (`--wake-minutes`).
    case wakeEnd
    /// `--overlay`: the clock's text is formatted again (the start of each minute).
    case overlay
    /// The motion sensor's level settles, or its timeout runs out (DisplaySupervisor+Power.swift).
    case presence
    /// The next change of a `--brightness` tier.
    case brightness
    /// The next step of a brightness ramp.
    case brightnessStep
}

/// The show's frame loop (docs/frame-loop.md): the place where its parts meet, each owning its
/// own state. The carousel and the show's policy (``ShowPolicy``) decide what is on screen; the
/// slot frames (``SlotFrames``) are prepared off the loop; touches come through the touch
/// router (``TouchRouter``); the display supervision (``DisplaySupervisor``) says whether it
/// may draw; ``FrameMaker`` presents the scenes; ``ShowOutput`` tells the world; the driver
/// (``LoopDriver``) says how time passes. Runs until `--run-for` is up or a stop is requested.
///
/// Pacing: nothing is drawn while the scene stays the same (an image simply on screen costs
/// no frames); during a fade frames follow the display's vertical blank (DRM page flips) or
/// a 60 Hz timer. On virtual time (the offscreen backend) time jumps straight to the next
/// moment something changes and never moves on while an image is still decoding, so the same
/// inputs always give the same frames.
public final class FrameLoop {
    let configuration: Configuration
    let driver: LoopDriver
    var carousel: Carousel
    /// Rotation, stand-in, round, retries (KioskCore).
    var policy: ShowPolicy
    let slots: SlotFrames
    let touch: TouchRouter
    let supervisor: DisplaySupervisor
    let frames: FrameMaker
    let output: ShowOutput
    let control: ControlPort?
    /// The MQTT client's commands and events (MQTTBridge.swift), or nil.
    let mqtt: MQTTPort?
    /// The playlist's sources, kept current (nil: the items given to the carousel stay).
    let content: ContentService?
    /// Every timed duty of the loop, with its deadline: the loop sleeps until the earliest.
    var deadlines = Deadlines<LoopDuty>()
    /// `shown` events waiting for the frame that shows them to be presented.
    var pendingShown: [PendingShown] = []
    /// The output touches map onto, with several outputs (``TouchOutputChoice``; docs/touch.md
    /// "Several screens"); nil: the display's own (first) output.
    var touchGeometry: OutputGeometry?
    /// The last choice's log line, so a choice is said once, not at every output change.
    var touchChoiceSaid: String?
    /// The first item shown (the offscreen default stops when it comes around again).
    private(set) var firstShownItem: Int?
    /// The image warnings said (``sayWarnings(_:source:identity:)``).
    private var saidWarnings: Set<SaidWarning> = []
    /// One warning of one version of one file.
    struct SaidWarning: Hashable {
        var source: String
        var identity: FileIdentity?
        var text: String
    }

    /// - Parameters:
    ///   - display: where frames go.
    ///   - driver: how time passes (``RealTimeDriver``, ``VirtualTimeDriver``).
    ///   - carousel: the playlist and its timing; the screen width is the display's.
    ///   - preparer: the decode worker, at the display's size.
    ///   - configuration: everything else the loop is given, once.
    public init(display: Display, driver: LoopDriver, carousel: Carousel, preparer: SlotPreparer,
                configuration: Configuration) {
        self.configuration = configuration
        self.driver = driver
        var carousel = carousel
        carousel.config.screenWidth = display.width
        self.carousel = carousel
        policy = ShowPolicy(playlist: carousel.items, retryInterval: configuration.retryInterval)
        preparer.outputSizes = FrameMaker.otherSizes(of: display)
        slots = SlotFrames(preparer: preparer, checkInterval: configuration.fileCheckInterval)
        touch = TouchRouter(feed: configuration.touch, clock: driver.clock, screenWidth: display.width,
                            stuckLimit: configuration.stuckTouchLimit, presented: configuration.presented)
        let power = PowerControl(feed: configuration.presence, timeout: configuration.presenceTimeout,
                                 tiers: configuration.brightness, sink: configuration.brightnessSink,
                                 cec: configuration.cec, cecAbsence: configuration.cecAbsence)
        supervisor = DisplaySupervisor(display: display, console: configuration.console,
                                       schedule: configuration.displaySchedule,
                                       wakeDuration: configuration.wakeDuration, clock: driver.clock, driver: driver,
                                       power: power)
        frames = FrameMaker(display: display, driver: driver, background: configuration.background,
                            painter: configuration.painter, text: configuration.text,
                            overlayFormat: configuration.overlayFormat)
        configuration.events.outputNames = { [weak display] in display?.outputSet?.outputNames ?? [] }
        output = ShowOutput(events: configuration.events, notifier: configuration.notifier,
                            control: configuration.control, tapCommand: configuration.tapCommand,
                            startupTrace: configuration.startupTrace)
        control = configuration.control.map { ControlPort(server: $0, screenshots: configuration.screenshots) }
        mqtt = configuration.mqtt.map { MQTTPort(client: $0, lines: configuration.events) }
        content = configuration.content
        if let mqtt {
            mqtt.status = { [unowned self] in mqttStatus() }
            output.subscribe(mqtt)
        }
        // The playlist's brightness and presence timeout, as the show starts with them.
        supervisor.applyPowerSettings(brightness: content?.showSettings.brightness,
                                      presenceTimeout: content?.showSettings.presenceTimeout)
    }

    var display: Display { supervisor.display }
    var clock: ShowClock { driver.clock }

    /// Runs the show. Returns the signal that stopped it (0 when `--run-for` ran out, or a show
    /// on virtual time is done). Throws ``DisplayError`` when presenting a frame fails.
    public func run() throws(DisplayError) -> Int32 {
        defer { configuration.order?.flush() }  // the shuffle round as it stands, on every way out
        configuration.order?.use(manifestOrder: content?.showSettings.order)
        if configuration.pairShapes != nil {
            policyStep { $0.setPairLayout(PairLayout(screenWidth: display.width, screenHeight: display.height),
                                          at: clock.now, carousel: &$1) }
            askShapes(of: policy.playlist)
        }
        var first = configuration.order?.sequence(for: policy.playlist, current: nil, wall: driver, at: clock.now)
        configuration.order?.awaitFirstTimes(driver: driver, interrupt: configuration.signals?.wakeDescriptor ?? -1)
        if let timed = configuration.order?.timesArrived(current: nil, wall: driver, at: clock.now) { first = timed }
        noteRound()
        policyStep { $0.begin(sequence: first, at: clock.now, wall: driver, carousel: &$1) }
        chooseTouchOutput()
        awaitFirstShapes()
        handle(carousel.start(at: clock.now))
        while true {
            // What came in: signals, control requests, the display's doings (the VT, the schedule,
            // presence and brightness), a new playlist.
            for request in takeRequests() { if let signal = perform(request) { return signal } }
            control?.serve(perform: { perform($0) }, screen: screen)
            mqtt?.serve(perform: { perform($0, from: $1) })
            apply(supervisor.service(carousel: &carousel))
            apply(try supervisor.serviceDevice(carousel: &carousel))
            takeNewPlaylist()
            takeCaptureTimes()
            takeShapes()
            // Timed duties: the schedules, retries, the words and the clock, changed files, touches.
            serviceTimedDuties(at: clock.now)
            takeTouches()
            // Finished decodes (on virtual time none is outstanding before time moves on).
            driver.settle(slots.preparer, interrupt: configuration.signals?.wakeDescriptor ?? -1)
            accept(slots.preparer.takeResults())
            if driver.holdsTime(for: slots.preparer) { continue }
            // The animations' frames made on the worker (on virtual time: all those asked for).
            driver.settle(slots.animations, interrupt: configuration.signals?.wakeDescriptor ?? -1)
            slots.animations.takeAnswers()
            // Time.
            let now = clock.now
            handle(carousel.tick(at: now))
            policyStep { $0.leaveRetiredImage(at: now, carousel: &$1) }
            if driver.holdsTime(for: slots.preparer) { continue }
            // An animation's frame due replaces its slot's frame (on a dark screen they stand still).
            if slots.advanceAnimations(supervisor.canDraw ? carousel.scene(at: now) : nil, at: now) {
                frames.invalidate()
            }
            // A frame when the scene changed, then its `shown` events.
            guard case .made(let drawLater) = try makeFrame(at: now) else { continue }
            if announceShown(at: now) { return 0 }
            // Stop, or wait for the next thing to happen.
            if let end = configuration.runFor, now >= end { return 0 }
            // A `shown` may pair the sequence again and ask for frames: on virtual time no time
            // passes until they are decoded (else the clock would jump past the show's next turns).
            if driver.holdsTime(for: slots.preparer) { continue }
            scheduleDeadlines(drawLater: drawLater, now: now)
            guard driver.wait(for: deadlines, wakeDescriptors: wakeDescriptors, now: now) else { return 0 }
        }
    }

    // MARK: Inputs

    /// The requests the signals made.
    private func takeRequests() -> [LoopRequest] {
        (configuration.signals?.take() ?? []).compactMap(configuration.decodeSignal)
    }

    /// Carries out `request` (a signal, or a test acting for one); returns the signal when it
    /// stops the show.
    public func perform(_ request: LoopRequest) -> Int32? {
        switch request {
        case .stop(let signal): return signal
        case .releaseDisplay: apply(supervisor.releaseForVT())  // VT_PROCESS release signal
        case .acquireDisplay: apply(supervisor.acquireForVT())
        case .next: handle(carousel.move(.forward, at: clock.now))
        case .previous: handle(carousel.move(.backward, at: clock.now))
        case .reload:
            Log.info("SIGHUP received", detail: content == nil ? "nothing to reload" : "reloading the sources")
            content?.reload()
            policyStep { $0.retryFailed(at: clock.now, carousel: &$1) }
        }
        return nil
    }

    /// A new playlist (a manifest, a directory change): the carousel's timing and the policy take it.
    private func takeNewPlaylist() {
        guard let content, let items = content.takeUpdate() else { return }
        carousel.config.applyOverrides(interval: content.showSettings.interval, fade: content.showSettings.fade)
        supervisor.applyPowerSettings(brightness: content.showSettings.brightness,
                                      presenceTimeout: content.showSettings.presenceTimeout)
        configuration.order?.use(manifestOrder: content.showSettings.order)
        let onScreen = carousel.currentItem.map { carousel.items[$0].source }
        let sequence = configuration.order?.sequence(for: items, current: onScreen, wall: driver, at: clock.now)
        askShapes(of: items)
        noteRound()
        policyStep { $0.begin(items, sequence: sequence, at: clock.now, wall: driver, carousel: &$1) }
    }

    /// Capture times read off the loop (``PlayOrder``): the playlist ordered again by them. On
    /// virtual time they are waited for, so the order does not depend on the machine's speed.
    private func takeCaptureTimes() {
        guard let order = configuration.order else { return }
        driver.settle(order.reader, interrupt: configuration.signals?.wakeDescriptor ?? -1)
        let onScreen = carousel.currentItem.map { carousel.items[$0].source }
        guard let sequence = order.timesArrived(current: onScreen, wall: driver, at: clock.now) else { return }
        noteRound()
        policyStep { $0.reorder(sequence, at: clock.now, carousel: &$1) }
    }

    private func serviceTimedDuties(at now: Duration) {
        if let look = policy.nextScheduleLook, now >= look {
            policyStep { $0.lookAtSchedules(at: now, wall: driver, carousel: &$1) }
        }
        if let retry = policy.nextRetry, now >= retry { policyStep { $0.retryFailed(at: now, carousel: &$1) } }
        frames.takeWords()
        frames.updateOverlay(at: now)
        for item in slots.changedItems(carousel) {
            Log.info("image changed", path: carousel.items[item].source, detail: "prepared again")
            handle(carousel.imageChanged(item: item, at: now))
        }
        // A file behind a frame that cannot be looked at now: a file SOURCE gone (a symbolic link
        // whose target went) is waited for, its picture kept (looked at off the loop).
        for path in Set(slots.preparer.goneFiles.take()) { content?.fileMayBeGone(path) }
        slots.checkFilesIfDue(at: now, driver: driver)
    }

    /// Touches through the display supervision (a dark screen takes none) into gestures; a
    /// finger stuck on the glass let go.
    private func takeTouches() {
        touch.take(screenWidth: touchGeometry?.width ?? display.width, admit: { sample in
            let (admitted, effects) = supervisor.admits(sample, carousel: &carousel)
            apply(effects)
            return admitted
        }, apply: apply)
        output.service()
        for gesture in touch.releaseStuck(at: clock.now) { apply(gesture) }
    }

    /// What the control socket's `screenshot` needs of the screen.
    private func screen() -> ControlPort.Screen {
        ControlPort.Screen(display: display, canDraw: supervisor.canDraw, powerOn: supervisor.powerOn,
                           current: carousel.currentItem.map { ($0, carousel.items[$0].source) })
    }

    // MARK: The parts' answers

    /// A gesture's effect on the show; taps go out as `tap` events (and to `--on-tap`).
    func apply(_ gesture: Gesture) {
        let now = clock.now
        switch gesture {
        case .pressed:
            handle(carousel.touchBegan(at: now))
        case .dragged(let offset, _):
            carousel.touchDragged(offset: offset * touchScale, at: now)
        case .dragEnded(_, let velocity, _):
            handle(carousel.touchEnded(velocity: velocity * touchScale, at: now))
        case .tap(let x, let y, let at):
            if let item = carousel.currentItem {
                // A pair: the half tapped names its picture (docs/carousel.md "Pairs").
                let hit = tappedItem(item, x: x, y: y, width: touchGeometry?.width ?? frames.width,
                                     height: touchGeometry?.height ?? frames.height)
                output.publish(.tap(index: hit.item, source: carousel.items[hit.item].source, at: at,
                                    x: Int(x.rounded(.down)), y: Int(y.rounded(.down)), half: hit.half,
                                    output: touchGeometry?.name))
            }
            handle(carousel.touchEnded(velocity: nil, at: now))
        case .released:
            handle(carousel.touchEnded(velocity: nil, at: now))
        case .cancelled:
            handle(carousel.touchEnded(velocity: nil, at: now, cancelled: true))
        }
    }

    /// What the display supervision asks of the show.
    func apply(_ effects: [DisplaySupervisor.Effect]) {
        for effect in effects {
            switch effect {
            case .visibility(let on, let reason, let at): output.publish(.display(on: on, reason: reason, at: at))
            case .redraw: frames.invalidate()
            case .status(let text): output.status(text)
            case .reopened:
                adoptDisplaySize()
                chooseTouchOutput()  // an output came or went: the touchscreen's may have
            }
        }
    }

    /// The carousel's actions: frames to prepare, `shown` events to announce with their frame.
    func handle(_ actions: [CarouselAction]) {
        for action in actions {
            switch action {
            case .prepare(let slot, let item, let ticket):
                slots.prepare(slot: slot, ticket: ticket, index: item, item: carousel.items[item],
                              partner: partner(of: item))
            case .shown(let item, let source, let at):
                pendingShown.append(PendingShown(item: item, source: source, at: at))
            case .dropped:
                break  // logged with its reason where the decode failed (accept)
            }
        }
        slots.dropEmpty(carousel)
    }

    /// One of the policy's steps on the carousel: its actions are handled, its notes logged.
    func policyStep(_ step: (inout ShowPolicy, inout Carousel) -> [CarouselAction]) {
        let pairsBefore = policy.partners
        handle(step(&policy, &carousel))
        if policy.partners != pairsBefore { reprepareChangedPairs() }
        takePolicyNotes()
    }

    /// An image's warnings (a damaged ICC profile, an animation that cannot play), each said once
    /// per version of its file: a two-item show or a loop prepares the same file again and
    /// again, and the log said the same line each time. Keyed by the file's identity too, but a
    /// replaced file was seen not to say them again (not looked into yet). At most
    /// ``warningsRemembered`` are remembered (then forgotten all at once, and said again).
    private func sayWarnings(_ warnings: [String], source: String, identity: FileIdentity?) {
        for w in warnings {
            let key = SaidWarning(source: source, identity: identity, text: w)
            guard !saidWarnings.contains(key) else { continue }
            if saidWarnings.count >= Self.warningsRemembered { saidWarnings.removeAll() }
            saidWarnings.insert(key)
            Log.warning("image warning", path: source, reason: w)
        }
    }

    /// How many image warnings ``sayWarnings(_:source:identity:)`` remembers (4096).
    static let warningsRemembered = 4096

    /// Hands the policy the shuffle round's places to come (``ShowPolicy/roundToCome``) where the
    /// bag may have changed: a new playlist or sequence, a `shown`. Only when pictures pair (it
    /// is one pass over the round), not on every turn.
    private func noteRound() {
        if policy.pairLayout != nil { policy.roundToCome = configuration.order?.roundToCome }
    }

    /// What the policy said since the last call: logged, or the empty screen's words changed.
    func takePolicyNotes() {
        for note in policy.takeNotes() { take(note) }
    }

    /// Finished decodes: each result its slot still waits for goes to its slot and the carousel.
    private func accept(_ results: [SlotPreparer.Result]) {
        let now = clock.now
        for r in results {
            if r.outputsOnly {  // the other outputs' frames at their new sizes
                if slots.outputsReady(r) { frames.invalidate() }
                continue
            }
            // Only a result its slot still waits for counts. A new playlist may have come while
            // the job ran: the slot's item (renumbered into the new list) is the one it shows,
            // never the index the job was asked with, which may now be past the end of a
            // shorter list or name another image.
            guard carousel.status(ofSlot: r.slot) == .pending(ticket: r.ticket),
                  let item = carousel.item(inSlot: r.slot) else { continue }
            let source = carousel.items[item].source
            sayWarnings(r.warnings, source: source, identity: r.identity)
            switch r.outcome {
            case .superseded:
                continue
            case .frame(let frame):
                policy.imageReady(source: source)
                takePolicyNotes()
                slots.ready(slot: r.slot, frame: frame, others: r.outputFrames, ticket: r.ticket, source: source,
                            identity: r.identity, animation: r.animation, partner: r.partner)
                handle(carousel.imageReady(ticket: r.ticket, at: now))
            case .failed(let error):
                // A file SOURCE that is a folder now: read again off the loop, its images join the show.
                let isFolder: Bool
                if case .unreadable(_, EISDIR) = error { isFolder = true } else { isFolder = false }
                if isFolder { content?.sourceIsFolderNow(source) }
                if case .unreadable(_, ENOENT) = error { content?.fileMayBeGone(source) }
                // With two items one image can be asked for twice; it is logged once (and not
                // again when it is tried again later and still fails).
                let actions = carousel.imageFailed(ticket: r.ticket, at: now)
                let kept = carousel.readySlots(ofItem: item)
                if !kept.isEmpty, let identity = r.identity {
                    // A changed file that does not decode (yet): its old picture stays, and the
                    // file is watched again from what it is now.
                    Log.warning("image changed, new picture not readable", path: source,
                                reason: error.reason + (isFolder ? "; a folder now: read again as one"
                                                        : "; the previous picture stays until the file changes again"))
                    slots.keepWatching(slots: kept, ticket: r.ticket, source: source, identity: identity)
                } else {
                    policy.imageFailed(source: source, reason: error.reason, at: now)
                    takePolicyNotes()
                }
                handle(actions)
            case .unavailable(let reason):
                policy.imageFailed(source: source, reason: reason, unavailable: true, at: now)
                takePolicyNotes()
                handle(carousel.imageFailed(ticket: r.ticket, at: now))
            }
        }
        policyStep { $0.review(at: now, carousel: &$1) }
    }

    /// The display came back at another size (another monitor, simpledrm's firmware
    /// framebuffer handed over to the real driver; docs/deployment.md "Check"): one log line with the new
    /// size; the frames are laid out for it, swipes measure against the new width and touches
    /// map onto the new panel; the memory cache (all of the old size) is emptied and every slot
    /// prepared again on the decode worker, the current image first. Until it is ready the
    /// scene shows the placeholder, never an old frame stretched (``SceneRenderer`` draws a
    /// slot frame of another size as the placeholder).
    private func adoptDisplaySize() {
        let width = display.width, height = display.height
        let outputSizes = FrameMaker.otherSizes(of: display)
        guard width != frames.width || height != frames.height else {
            if outputSizes != frames.outputSizes { adoptOutputSizes(outputSizes) }
            return
        }
        Log.info("display size changed", detail: "\(frames.width)x\(frames.height) -> \(width)x\(height) pixels"
                 + " (panel \(display.panelWidth)x\(display.panelHeight)); the show goes on at its image,"
                 + " prepared again at the new size")
        frames.resize(width: width, height: height, outputSizes: outputSizes)
        let now = clock.now
        let cancelled = touch.resize(width: width, panelWidth: display.panelWidth, panelHeight: display.panelHeight,
                                     at: now)
        for gesture in cancelled { apply(gesture) }  // a finger measured against the old size
        carousel.config.screenWidth = width
        slots.resize(width: width, height: height, outputSizes: outputSizes)
        if configuration.pairShapes != nil {  // a screen turned pairs the other shape
            policyStep { $0.setPairLayout(PairLayout(screenWidth: width, screenHeight: height), at: now,
                                          carousel: &$1) }
        }
        handle(carousel.resized(at: now))
        frames.invalidate()
    }

    /// The other outputs' sizes changed (one came or went, or came back at another size;
    /// docs/displays.md "Several outputs"), the first output's did not: the frames of those
    /// sizes are laid out again and made again on the decode worker for the slots that have
    /// their frame, while the show goes on (those outputs show the placeholder meanwhile).
    private func adoptOutputSizes(_ outputSizes: [FrameSize]) {
        Log.info("output sizes changed", detail: "other outputs: "
                 + (outputSizes.isEmpty ? "none of another size"
                    : outputSizes.map(\.description).joined(separator: ", ")))
        frames.resize(width: frames.width, height: frames.height, outputSizes: outputSizes)
        slots.resizeOutputs(outputSizes)
        frames.invalidate()
    }

    // MARK: The frame

    /// How a turn's frame went.
    private enum FrameOutcome {
        /// Drawn, or not needed; `drawLater`: when a frame held back (pacing, the start grace) is due.
        case made(drawLater: Duration?)
        /// The card went away under the frame: the turn starts again.
        case cardGone
    }

    /// Presents the scene at `now` when it changed and the screen may be drawn on.
    private func makeFrame(at now: Duration) throws(DisplayError) -> FrameOutcome {
        var scene = carousel.scene(at: now)
        // No images yet because the manifest has not answered: "Loading...", not "No images".
        let loading = scene.base == .noImages && content?.awaitingFirstAnswer == true
        if loading { scene = Scene(base: .placeholder) }
        var drawLater: Duration?
        let paced = display.pacesFrames ? nil : frames.lastPresentAt.map(driver.nextFrame)
        if frames.needsFrame(scene), let paced, now < paced {
            // Frames follow the display refresh, not each wake-up (a touch report, a decode).
            drawLater = paced
        } else if frames.framesPresented == 0, scene.base == .placeholder, scene.overlay == nil,
                  slots.preparer.outstanding > 0, now < carousel.config.startGrace {
            // At start, the first image gets the grace to be the first frame (a warm start
            // never flashes the placeholder); after it, the placeholder shows. Half-way
            // through, its words start loading (off the loop) if the image is still not there.
            let halfway = carousel.config.startGrace / 2
            if now >= halfway { frames.textWillBeNeeded() }
            drawLater = now < halfway ? halfway : carousel.config.startGrace
        } else if frames.needsFrame(scene), supervisor.canDraw {
            try frames.present(scene, slots: slots.frames, outputSlots: slots.outputFrames, at: now,
                               trace: configuration.startupTrace)
            if supervisor.isLost {  // gone under this frame
                apply(try supervisor.serviceDevice(carousel: &carousel))
                if supervisor.isLost { return .cardGone }
            }
            frames.presented(scene, at: now)
            output.readyIfShowing(scene, loading: loading, on: display.summary, playlistLength: policy.playlist.count)
            touch.framePresented(at: clock.now)
        }
        if frames.framesPresented == 0, !supervisor.canDraw { output.readyWithoutFrame(powerOn: supervisor.powerOn) }
        return .made(drawLater: drawLater)
    }

    /// The `shown` events of what is now on a lit screen (none on a dark one; one when it is lit
    /// again). Returns true when the offscreen default's one round is done.
    private func announceShown(at now: Duration) -> Bool {
        var roundDone = false
        supervisor.filterShown(&pendingShown, framesPresented: frames.framesPresented, drawn: frames.lastScene != nil,
                               carousel: carousel, now: now)
        for s in pendingShown {
            output.readyIfShowing(nil, loading: false, on: display.summary, playlistLength: policy.playlist.count)
            output.publish(.shown(index: s.item, source: s.source, at: s.at, playlistLength: policy.playlist.count))
            if let p = partnerOnScreen(of: s.item), p.item < policy.playlist.count {
                // The partner of a pair is on screen too: announced after its first, and counted
                // as shown (in the shuffle bag before its first, so the bag goes on after the first).
                output.publish(.shown(index: p.item, source: policy.playlist[p.item].source, at: s.at,
                                      playlistLength: policy.playlist.count))
                if countShown(p.item, partner: true, at: now) { roundDone = true }
            }
            if firstShownItem == nil {
                firstShownItem = s.item
                output.firstShown()
            } else if s.item == firstShownItem {
                roundDone = true
            }
            if countShown(s.item, at: now) { roundDone = true }
            takePolicyNotes()
        }
        pendingShown.removeAll()
        return configuration.stopAfterOneRound && roundDone
    }

    /// Counts playlist item `item` as shown by the policy and by the play order (the shuffle bag
    /// takes it; the carousel's next item follows the bag's): true when it ends a shuffle round.
    /// `partner`: the partner of a pair, counted before its first
    /// (``ShowOrder/shown(item:playlist:sequence:partner:)``).
    private func countShown(_ item: Int, partner: Bool = false, at now: Duration) -> Bool {
        policy.shown(item: item, carousel: carousel)
        guard let order = configuration.order else { return false }
        let step = order.shown(item: item, playlist: policy.playlist, sequence: policy.sequence, partner: partner,
                               at: now)
        noteRound()
        if let new = step.newSequence { policyStep { $0.reorder(new, at: now, carousel: &$1) } }
        guard step.roundDone else { return false }
        Log.info("shuffle round done", detail: counted(policy.playlist.count, "image"))
        return true
    }

    // MARK: Waiting

    /// Sets the deadlines of this turn (the carousel's next fade or frame, a frame held back by
    /// pacing or the start grace, the stuck-finger release, the end of `--run-for`, the
    /// watchdog, the parts' own); feeds the watchdog when its time has come.
    private func scheduleDeadlines(drawLater: Duration?, now: Duration) {
        let wake = carousel.wake
        if wake != .animating && !carousel.isHeld { frames.releaseScratch() }
        switch wake {
        case .animating:
            deadlines[.carousel] = display.pacesFrames && supervisor.canDraw ? now : now + RealTimeDriver.framePeriod
        case .at(let t): deadlines[.carousel] = t
        case .idle: deadlines[.carousel] = nil
        }
        deadlines[.drawLater] = drawLater
        deadlines[.animation] = slots.animations.nextDue(after: now)
        deadlines[.stuckTouch] = touch.stuckDeadline
        deadlines[.runFor] = configuration.runFor
        deadlines[.schedule] = policy.nextScheduleLook
        deadlines[.retry] = policy.nextRetry
        deadlines[.orderDay] = configuration.order?.nextDayLook
        deadlines[.overlay] = frames.overlayAt
        supervisor.setDeadlines(&deadlines)
        slots.scheduleCheck(at: now, driver: driver)
        deadlines[.fileCheck] = slots.nextCheck
        output.feedWatchdog(at: now, deadlines: &deadlines, firstFrame: frames.framesPresented == 1, driver: driver)
    }

    /// The descriptors of everything that hands the loop work: finished decodes, signals,
    /// touches, control requests, content, the card's directory.
    private var wakeDescriptors: [Int32] {
        var fds = slots.wakeDescriptors
        if let signals = configuration.signals { fds.append(signals.wakeDescriptor) }
        if let feed = touch.feed { fds.append(feed.wakeDescriptor) }
        fds += control?.wakeDescriptors ?? []
        if let mqtt { fds.append(mqtt.wakeDescriptor) }
        if let fd = frames.wakeDescriptor { fds.append(fd) }
        fds += content?.wakeDescriptors ?? []
        if let fd = supervisor.wakeDescriptor { fds.append(fd) }
        fds += supervisor.power.wakeDescriptors  // the motion sensor
        if let order = configuration.order { fds.append(order.reader.answers.wakeDescriptor) }  // capture times
        return fds
    }
}
