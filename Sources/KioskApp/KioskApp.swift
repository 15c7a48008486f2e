// SPDX-License-Identifier: Apache-2.0
import CKioskSys
import Glibc
import KioskCore
import KioskDisplay
import KioskContent
import KioskImaging
import KioskInput
import KioskMQTT
import KioskSystem
import KioskText

/// The fatal-signal actions in place before ours, indexed by signal number (read in handlers).
nonisolated(unsafe) private let previousFatalActions: UnsafeMutablePointer<sigaction> = {
    let p = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)
    p.initialize(repeating: sigaction(), count: 65)
    return p
}()

/// The program: parses the command line, opens the display (DRM, then fbdev, then offscreen
/// with `--display auto`), puts the console into graphics mode, runs the ``FrameLoop`` and
/// puts everything back on every way out (normal exit, SIGTERM, SIGINT, fatal errors).
public enum KioskApp {
    /// Exit statuses (sysexits.h): 64 usage error (EX_USAGE), 69 no display (EX_UNAVAILABLE).
    public static let exitUsage: Int32 = 64, exitUnavailable: Int32 = 69

    /// Runs kiosk-carousel with `arguments` (without the program name); returns the exit status.
    /// The steps: catch signals, read the command line, open the display, start the content,
    /// take the console, start touch, run the frame loop; each `defer` puts its part back.
    public static func main(_ arguments: [String]) -> Int32 {
        StartupTrace.shared.mark(.main)
        reopenClosedStandardDescriptors()
        Allocator.mapLargeBlocks()  // frames go back to the kernel when freed (Allocator.swift)
        // Signals are caught from the first thing main does: one sent while the display opens
        // or the manifest is awaited waits in the pipe for the frame loop (SIGTERM then ends the
        // show cleanly) instead of killing the process with its default action. (Before main,
        // while the dynamic loader runs, nothing can catch them.)
        installSignalHandlers()
        let settings: Settings, displaySpec: DisplaySpec
        switch readCommandLine(arguments) {
        case .exit(let status): return status
        case .run(let s, let d): (settings, displaySpec) = (s, d)
        }
        // A reader that goes away (a closed pipe on stdout) must not kill the show.
        signal(SIGPIPE, SIG_IGN)
        // One kiosk per state directory, when the show writes there (a shuffle round, a stored
        // manifest, the MQTT outbox): a second one would overwrite the first's.
        var stateLock: FolderLock?
        if settings.order == .shuffle || settings.manifest != nil || settings.mqtt.url != nil {
            do {
                stateLock = try FolderLock.lock(folder: settings.stateDirectory)
            } catch .held(let path, let pid) {
                Log.error("state directory in use", path: settings.stateDirectory,
                          reason: "\(path) is locked by another kiosk-carousel" + (pid.map { " (PID \($0))" } ?? "")
                              + "; give each kiosk its own --state-dir (and --cache-dir)")
                return exitUnavailable
            } catch {
                Log.warning("state directory not locked", path: settings.stateDirectory, reason: error.description)
            }
        }
        defer { withExtendedLifetime(stateLock) {} }

        guard let display = openTheDisplay(displaySpec, settings: settings) else { return stoppedWhileWaiting ? 0 : exitUnavailable }
        StartupTrace.shared.mark(.displayOpened)
        // The sources: files, directories (watched), playlists, a remote manifest (offline first).
        let content: ContentService
        do {
            content = try ContentService(configuration: settings.content)
        } catch {
            Log.error("content sources unavailable", reason: error.description)
            return exitUnavailable
        }
        defer { content.stop() }
        checkCAFile(settings.caFile)
        let time = chooseTime(settings: settings, display: display)
        StartupTrace.shared.mark(.showStarted)
        let items = startContent(content, time: time)
        Log.info("display opened", detail: display.summary)
        if let files = display.frameFiles {
            let removed = files.removeOldFrames()
            if removed > 0 { Log.info("old frames removed", path: files.directory, detail: "\(counted(removed, "frame-*.png file")) of an earlier run") }
        }

        let preparer: SlotPreparer
        do {
            preparer = try SlotPreparer(width: display.width, height: display.height, fit: settings.fit,
                                        background: settings.background, maxPixels: settings.maxPixels)
        } catch {
            Log.error("decoder unavailable", reason: error.description)
            return exitUnavailable
        }
        preparer.images = content.images
        preparer.colour = settings.colour
        let kenBurns = settings.kenBurns && kenBurnsFits(display: display)
        preparer.kenBurns = kenBurns
        if settings.colour != .sRGB {
            Log.info("colours converted", detail: settings.colour.enabled
                     ? "to \(settings.colour.name), \(settings.colour.intent.rawValue)"
                     : "off: stored numbers shown unconverted")
        }
        // Another order starts elsewhere than the first item (a warmed frame would be wasted), and a
        // Ken Burns source is not kept in the memory cache the warmed frame waits in.
        if !display.abilities.isVirtual, settings.order == .name, !kenBurns {
            warmFirstImage(items, preparer: preparer, captions: settings.caption)
        }

        // The console: graphics mode on a VT, text mode back on every way out.
        let console = display.abilities.ownsConsole ? ConsoleGuard.enterGraphics(note: { Log.info($0) }) : nil
        if let console { Log.info("console switched to graphics mode", path: console.path) }
        defer {
            display.restore()
            if let error = console?.restore() { Log.warning("console not restored", reason: error.description) }
        }

        var config = CarouselConfig(interval: settings.interval, fade: settings.fade, showDots: settings.dots)
        config.transition = settings.transition
        config.kenBurns = kenBurns
        config.applyOverrides(interval: content.showSettings.interval, fade: content.showSettings.fade)

        let text: ShowText
        do {
            text = try ShowText.start(cacheDirectory: settings.cacheDirectory)
        } catch {
            Log.error("text unavailable", reason: error.description)
            return exitUnavailable
        }
        preparer.captionSource = settings.caption
        preparer.captionFormat = settings.captionFormat ?? CaptureCaption.defaultFormat
        if settings.caption != .off { preparer.makeCaptions = { text.renderer().map(CaptionPainter.init) } }
        // Words known to be needed (the clock, a caption, an empty playlist's screen) start
        // loading now, off the frame loop; a status screen needed later starts them then.
        let captioned = settings.caption == .date || (settings.caption != .off && items.contains { $0.caption != nil })
        if settings.overlay != nil || items.isEmpty || captioned {
            text.startLoading(frameWidth: display.width, frameHeight: display.height)
        }
        logShowStart(items: items, config: config, settings: settings, awaitingManifest: content.awaitingFirstAnswer)
        let notifier = SystemdNotifier()
        // READY=1 is sent by the frame loop once the first photo is on screen.
        defer { notifier.stopping() }
        let events = EventWriter()
        defer { events.flush() }
        let touch = startTouch(settings: settings, display: display, time: time)
        defer { touch?.input.stop() }
        let tapCommand = makeTapCommand(settings.onTap)
        var loop = FrameLoop.Configuration(events: events, runFor: settings.runFor)
        // Offscreen renders on a virtual clock, as fast as the machine can; without --run-for,
        // one round of the playlist: until the first image shown comes around again (images
        // that fail do not count; one image or none: its first frame).
        loop.stopAfterOneRound = display.abilities.isVirtual && settings.runFor == nil
        loop.signals = signals
        loop.decodeSignal = request(for:)
        loop.notifier = notifier.isActive ? notifier : nil
        loop.touch = touch
        loop.touchOutput = settings.touchOutput
        loop.tapCommand = tapCommand
        loop.content = content
        if let days = settings.recentDays, settings.order != .shuffle {
            Log.info("recent days waiting", detail: "--recent-days \(days) weights a shuffle: it applies once the"
                     + " manifest or playlist sets order shuffle (--order is \(settings.order.rawValue))")
        }
        do {
            loop.order = try PlayOrder(order: settings.order, recentDays: settings.recentDays,
                                       stateDirectory: settings.stateDirectory)
        } catch {
            Log.error("play order unavailable", reason: error.description)
            return exitUnavailable
        }
        if settings.pairPortraits {
            if kenBurns {
                Log.info("pairs off",
                         detail: "--pair-portraits does not apply with --ken-burns (each picture covers the screen)")
            } else {
                do {
                    loop.pairShapes = try PairShapeReader(maxPixels: settings.maxPixels)
                } catch {
                    Log.error("pairs unavailable", reason: error.description)
                    return exitUnavailable
                }
            }
        }
        loop.background = settings.background
        loop.painter = text.loopPainter()
        loop.text = text
        if case .real = time { loop.startupTrace = .shared }
        loop.displaySchedule = settings.displayOff
        if let schedule = settings.displayOff {
            Log.info("display-off schedule", detail: "\(schedule) (local time); the show pauses while the screen is off")
        }
        loop.console = takePartInVTSwitching(console)
        loop.wakeDuration = .seconds(60 * settings.wakeMinutes)
        // The motion sensor, brightness, the TV over CEC (KioskApp+Power.swift, docs/power.md).
        let power = setUpPower(&loop, settings: settings, display: display, time: time,
                               showSettings: (content.showSettings.brightness, content.showSettings.presenceTimeout))
        defer { power.stop() }
        if settings.overlay == nil, let format = settings.overlayFormat {
            Log.warning("--overlay-format has no effect", reason: "no --overlay clock or date is drawn to use '\(format)'")
        }
        loop.overlayFormat = settings.overlay.map { settings.overlayFormat ?? $0.defaultFormat }  // made once text is loaded
        content.start()
        defer { tapCommand?.stop() }
        // The control socket (ControlServer.swift, docs/control-socket.md).
        let control = openControlSocket(settings.controlPath)
        defer { control?.stop() }
        loop.control = control
        if control != nil {  // `screenshot` writes into its one folder only (Screenshot.swift)
            loop.screenshots = ScreenshotWriter.forShow(settings, runtimeDirectory: getenv("RUNTIME_DIRECTORY").map { String(cString: $0) })
        }
        defer { loop.screenshots?.stop() }
        // MQTT (MQTTBridge.swift, docs/mqtt.md).
        let mqtt = openMQTT(settings)
        defer { mqtt?.stop() }
        loop.mqtt = mqtt
        let show = FrameLoop(display: display, driver: time.driver, carousel: Carousel(items: items, config: config),
                             preparer: preparer, configuration: loop)
        return run(show, display: display, time: time)
    }

    /// How the show's time passes: the real clock (a real display, or touch read), or virtual
    /// time (an offscreen run: as fast as the machine can, the same frames for the same inputs).
    enum ShowTime {
        case real(RealTimeDriver)
        case virtual(VirtualTimeDriver)

        var driver: LoopDriver {
            switch self {
            case .real(let d): return d
            case .virtual(let d): return d
            }
        }
    }

    /// What the command line asks for: run with these settings, or exit at once with a status
    /// (`--help`: 0, a usage error: 64, said on stderr).
    enum CommandLineOutcome {
        case run(Settings, DisplaySpec)
        case exit(Int32)
    }

    /// Parses the command line (and `--config`) and the `--display` value.
    static func readCommandLine(_ arguments: [String]) -> CommandLineOutcome {
        if arguments.contains("--help") {
            print(CommandLineParser.help)
            return .exit(0)
        }
        if arguments.contains("--version") {
            print(KioskVersion.report)
            return .exit(0)
        }
        let settings: Settings
        do {
            settings = try CommandLineParser.parse(arguments)
        } catch {
            fputs("kiosk-carousel: \(error.description)\n", stderr)
            return .exit(exitUsage)
        }
        if settings.showHelp {
            print(CommandLineParser.help)
            return .exit(0)
        }
        do {
            return .run(settings, try DisplaySpec.parse(settings.display))
        } catch {
            fputs("kiosk-carousel: --display: \(error.description)\n", stderr)
            return .exit(exitUsage)
        }
    }

    /// Opens the display `displaySpec` names; a DRM card so that the show outlives it
    /// (``ReopeningDRMDisplay``: its driver unbound and bound again, a card reset; a reopen asks for
    /// what `--display` asked for). `auto` falls back to offscreen frames in ./kiosk-frames
    /// when the machine has no screen, except under systemd (`$NOTIFY_SOCKET` set), where
    /// nobody looks at frame files: there it waits for a display (``waitForDisplay(settings:firstFailure:)``).
    /// Nil (logged) when there is none to be had, or a stop signal came while waiting.
    static func openTheDisplay(_ displaySpec: DisplaySpec, settings: Settings) -> Display? {
        do {
            return try openDisplay(displaySpec, rotation: settings.rotation, swapRedBlue: settings.swapRedBlue,
                                   offscreenSize: settings.size, reconnecting: true)
        } catch {
            if case .auto = displaySpec, SystemdNotifier().isActive {
                return waitForDisplay(settings: settings, firstFailure: error)
            }
            guard case .auto = displaySpec, case .noDisplay = error else {
                Log.error("display unavailable", reason: error.description)
                return nil
            }
            var cwd = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let base = getcwd(&cwd, cwd.count) != nil ? String(cString: cwd) : "."
            let directory = (base == "/" ? "" : base) + "/kiosk-frames"
            Log.warning("no display found, writing frames instead", path: directory, reason: error.description)
            do {
                return try OffscreenDisplay(directory: directory, width: settings.size.width, height: settings.size.height,
                                            rotation: settings.rotation)
            } catch {
                Log.error("display unavailable", reason: error.description)
                return nil
            }
        }
    }

    /// Starts decoding the first image before the rest of the program is set up (see
    /// ``SlotPreparer/warm(_:)``): the playlist's first item when it is a local file with no
    /// schedule and no caption drawn on it (the carousel starts there).
    static func warmFirstImage(_ items: [PlaylistItem], preparer: SlotPreparer, captions: CaptionSource) {
        guard let first = items.first, first.schedule == nil, !first.fallback, !ManifestItem.isRemote(first.source),
              captions == .off || (captions == .item && first.caption == nil) else { return }
        preparer.warm(.init(slot: 0, ticket: 0, item: 0, path: first.source, fit: first.fit, sha256: first.sha256,
                            caption: first.caption))
    }

    /// Set when SIGTERM or SIGINT ended ``waitForDisplay(settings:firstFailure:)``: a clean stop.
    nonisolated(unsafe) private static var stoppedWhileWaiting = false

    /// Under systemd with `--display auto` and no usable display at start (the DRM driver still
    /// loading at boot, its device node not yet given to the video group by udev, a card being
    /// reset): says so once, and tries again every second, and whenever a node appears in
    /// `/dev/dri` or changes owner (inotify), until a display opens. The unit stays
    /// "activating" meanwhile (READY=1 comes with the first photo): STATUS= says why, and
    /// EXTEND_TIMEOUT_USEC= every second keeps the start timeout from restarting it (sd_notify(3)),
    /// as WATCHDOG=1 keeps the watchdog. Nil when SIGTERM or SIGINT comes first; other signals
    /// are dropped meanwhile (there is no show to move or reload).
    static func waitForDisplay(settings: Settings, firstFailure: DisplayError) -> Display? {
        Log.warning("waiting for a display", reason: firstFailure.description + "; trying again every second")
        let notifier = SystemdNotifier()
        notifier.status("waiting for a display: \(firstFailure)")
        var failure = firstFailure.description
        // A card node appearing in /dev/dri (or /dev/dri in /dev), or udev giving it its group,
        // wakes the wait at once (DRMCardWatch): no second lost after the driver loads at boot.
        let display = waitForDRMCard(wake: signals?.wakeDescriptor ?? -1, status: {
            // 3 s: three tries' worth, so one late turn does not end the start job.
            notifier.send("EXTEND_TIMEOUT_USEC=3000000\nWATCHDOG=1")
        }, stop: {
            guard let stop = signals?.take().first(where: { $0 == SIGTERM || $0 == SIGINT }) else { return false }
            Log.info("stopping", detail: "signal \(stop) (\(String(cString: strsignal(stop)))) while waiting for a display")
            stoppedWhileWaiting = true
            return true
        }, tryOpen: { () -> Display? in
            do throws(DisplayError) {
                return try openDisplay(.auto, rotation: settings.rotation, swapRedBlue: settings.swapRedBlue,
                                       offscreenSize: settings.size, reconnecting: true)
            } catch {
                if error.description != failure {
                    failure = error.description
                    notifier.status("waiting for a display: \(failure)")
                }
                return nil
            }
        })
        if let display {
            Log.info("display appeared", detail: display.summary)
            notifier.status("display appeared: \(display.summary)")
        }
        return display
    }

    /// Whether touch is read: looked for on a real display (`--input auto`), or read from the
    /// device named (an offscreen run with a device named follows wall time, as the finger does).
    static func wantsTouch(_ settings: Settings, display: Display) -> Bool {
        settings.input != "none" && (!display.abilities.isVirtual || touchDevice(settings) != nil)
    }

    /// The device `--input` names, nil for `auto` and `none`.
    static func touchDevice(_ settings: Settings) -> String? {
        settings.input == "none" || settings.input == "auto" ? nil : settings.input
    }

    /// The show's time: virtual for an offscreen run without touch (unless `--clock real`; its
    /// wall clock runs with show time from now), else the real clock.
    static func chooseTime(settings: Settings, display: Display) -> ShowTime {
        let offscreen = display.abilities.isVirtual
        if settings.realClock == false && !offscreen {
            Log.warning("--clock virtual ignored", reason: "a real display follows wall time")
        }
        if offscreen && !wantsTouch(settings, display: display) && settings.realClock != true { return .virtual(VirtualTimeDriver()) }
        return .real(RealTimeDriver())
    }

    /// The first playlist. On virtual time with a manifest still to answer, the content is
    /// started and its first answer awaited (virtual time must not run ahead of the network).
    static func startContent(_ content: ContentService, time: ShowTime) -> [PlaylistItem] {
        guard case .virtual = time, content.awaitingFirstAnswer else { return content.items }
        content.start()
        content.waitForFirstAnswer(timeout: .seconds(60), interrupt: signals?.wakeDescriptor ?? -1)
        return content.items
    }

    /// The "show started" line, after a note when there is nothing to show yet. It counts the
    /// playlist's items, not images shown (an item may still be downloading or never load): the
    /// frame loop says how many were shown once each was tried (ShowPolicy, `playlist round done`).
    /// Whether `--ken-burns` fits the memory the process may have (its cgroup's `memory.max`, which
    /// systemd sets from the unit's `MemoryMax=`; ``MemoryLimit/cgroupMax(root:selfCgroup:)``). Over
    /// it the show runs without the motion and the log says why (``kenBurnsVerdict(sizes:limit:)``).
    static func kenBurnsFits(display: Display) -> Bool {
        let sizes = display.outputSet?.frameSizes ?? [FrameSize(width: display.width, height: display.height)]
        let verdict = kenBurnsVerdict(sizes: sizes, limit: MemoryLimit.cgroupMax())
        if verdict.fits {
            if let line = verdict.line { Log.info("ken burns", detail: line) }
        } else {
            Log.warning("ken burns off", reason: verdict.line ?? "")
        }
        return verdict.fits
    }

    /// Whether a Ken Burns show on outputs of `sizes` fits `limit` bytes
    /// (``kenBurnsBytes(width:height:)`` summed; nil: no limit, it fits), and the log's words.
    static func kenBurnsVerdict(sizes: [FrameSize], limit: Int?) -> (fits: Bool, line: String?) {
        let need = sizes.reduce(0) { $0 + kenBurnsBytes(width: $1.width, height: $1.height) }
        guard let limit else { return (true, nil) }
        let mib = { (bytes: Int) in (bytes + (1 << 20) - 1) >> 20 }
        let screens = sizes.map { "\($0.width)x\($0.height)" }.joined(separator: " + ")
        if need > limit {
            return (false, "a \(screens) show needs about \(mib(need)) MiB with it, over the memory limit of "
                    + "\(mib(limit)) MiB (MemoryMax); the pictures stand still (docs/limits.md)")
        }
        return (true, "about \(mib(need)) MiB of the memory limit's \(mib(limit)) MiB at \(screens)")
    }

    /// The memory a Ken Burns show needs at `width` x `height`, bytes (docs/limits.md): three
    /// sources (``KenBurns/sourceBytes(screenWidth:screenHeight:)``), three screen-sized views drawn
    /// from them, the renderer's two scratch frames and the display's two scanout buffers, and
    /// 24 MiB for the rest of the process (its floor, the decoder's buffers, the text libraries).
    static func kenBurnsBytes(width: Int, height: Int) -> Int {
        3 * KenBurns.sourceBytes(screenWidth: width, screenHeight: height) + 7 * width * height * 4 + (24 << 20)
    }

    static func logShowStart(items: [PlaylistItem], config: CarouselConfig, settings: Settings, awaitingManifest: Bool) {
        if items.isEmpty && awaitingManifest {
            Log.info("waiting for the manifest", path: settings.manifest?.absoluteString,
                     detail: "nothing stored yet; the placeholder shows until it arrives")
        } else if items.isEmpty {
            Log.warning("no images to show", reason: "sources: \((settings.sources + [settings.manifest?.absoluteString].compactMap { $0 }).joined(separator: " "))")
        }
        // A manifest's or playlist's show-wide interval and fade replace the command line's
        // (docs/manifest.md): say so, or a --interval that seems ignored is a mystery.
        func origin(_ used: Duration, _ given: Duration, _ option: String) -> String {
            used == given ? "" : " (the playlist's, over \(option) \(given.wholeMilliseconds) ms)"
        }
        let interval = "interval \(config.interval.wholeMilliseconds) ms"
            + origin(config.interval, settings.interval, "--interval")
        let fade = "fade \(config.fade.wholeMilliseconds) ms" + origin(config.fade, settings.fade, "--fade")
        if let problem = LocalTimeZone.problem(tz: getenv("TZ").map { String(cString: $0) }) {
            Log.warning("time zone not known", reason: problem + "; schedules, captions and --overlay follow it")
        }
        Log.info("show started", detail: "playlist of \(counted(items.count, "item")), \(interval), \(fade)")
    }

    /// `--ca-file`, with a warning when it is not a readable regular file: https to a server of
    /// that CA will fail until it is (libcurl reads it on each transfer); the show goes on
    /// from what is cached.
    static func checkCAFile(_ path: String?) {
        guard let path else { return }
        let problem: String?
        do {
            let info = try fileStatus(path)
            if info.st_mode & S_IFMT != S_IFREG { problem = "not a regular file" } else {
                try syscall("access", path: path) { access(path, R_OK) }
                problem = nil
            }
        } catch {
            problem = error.description
        }
        if let problem {
            Log.warning("--ca-file unusable: https to servers of that CA will fail", path: path, reason: problem)
        }
    }

    /// `--on-tap` (its program looked up once, logged when it cannot be found: TapCommand.swift).
    static func makeTapCommand(_ arguments: [String]?) -> TapCommand? {
        arguments.map { TapCommand(arguments: $0) }
    }

    /// Starts the touchscreen reader when touch is wanted and the show runs on the monotonic
    /// clock (sample times are relative to its origin). Trouble is logged; the show goes on.
    static func startTouch(settings: Settings, display: Display, time: ShowTime) -> EvdevTouchFeed? {
        let wanted = wantsTouch(settings, display: display)
        if !wanted && settings.input == "auto" && display.abilities.isVirtual {
            Log.info("touch off", detail: "offscreen display; --input /dev/input/eventN reads a touchscreen anyway")
        }
        guard wanted, case .real(let driver) = time else { return nil }
        let monotonic = driver.monotonic
        let configuration = TouchInputConfiguration(devicePath: touchDevice(settings), panelWidth: display.panelWidth,
                                                    panelHeight: display.panelHeight,
                                                    rotation: settings.rotation, calibration: settings.touchCalibration,
                                                    showStart: monotonic.origin)
        do {
            let input = try TouchInput(configuration: configuration)
            try input.start()
            return EvdevTouchFeed(input)
        } catch {
            Log.warning("touch input unavailable", reason: error.description)
            return nil
        }
    }

    /// Runs the frame loop to its end and says how it ended; returns the exit status.
    static func run(_ loop: FrameLoop, display: Display, time: ShowTime) -> Int32 {
        do {
            let signal = try loop.run()
            if signal != 0 {
                Log.info("stopping", detail: "signal \(signal) (\(String(cString: strsignal(signal))))")
                // Stopped by hand, the frames written so far are where they were said to be.
                if let outputs = display.frameFiles {
                    Log.info("show done", path: outputs.directory,
                             detail: "\(counted(outputs.framesWritten, "frame")) written")
                }
            } else if let outputs = display.frameFiles {
                // On its own clock the run ends when its frames are drawn; it does not wait for a
                // missing or empty folder to fill, so say how to wait for one.
                let virtual: Bool
                if case .virtual = time { virtual = true } else { virtual = false }
                let nothingShown = loop.firstShownItem == nil && virtual
                Log.info("show done", path: outputs.directory, detail: "\(counted(outputs.framesWritten, "frame")) written"
                         + (nothingShown ? "; no image was shown, and a run on the virtual clock does not wait for one (--clock real --run-for SECONDS waits)" : ""))
            }
            return 0
        } catch {
            Log.error("display failed", reason: error.description)
            return exitUnavailable
        }
    }

    /// The signals the show answers, caught into the process's ``SignalPipe`` (nil: no pipe).
    nonisolated(unsafe) private static var signals: SignalPipe?

    /// A program started with stdin, stdout or stderr closed would hand those numbers to the
    /// next files it opens (the framebuffer, say) and write events or logs into them: each
    /// closed one is opened on /dev/null first.
    private static func reopenClosedStandardDescriptors() {
        func isClosed(_ fd: Int32) -> Bool {
            do { try syscall("fcntl F_GETFD") { fcntl(fd, F_GETFD) } } catch { return error.errno == EBADF }
            return false
        }
        for fd: Int32 in 0...2 where isClosed(fd) {
            let opened = open("/dev/null", O_RDWR)
            if opened >= 0 && opened != fd {
                _ = dup2(opened, fd)
                close(opened)
            }
        }
    }

    // MARK: VT switching (see ``DisplaySupervisor``)

    /// The signal the kernel sends when the VT is to be switched away (VT_PROCESS relsig):
    /// SIGRTMIN + 2 (SIGUSR1/SIGUSR2 already mean next/previous; glibc keeps SIGRTMIN's
    /// first two for itself, below the SIGRTMIN it reports).
    static var vtReleaseSignal: Int32 { kc_sigrtmin() + 2 }
    /// The signal for "the VT was switched back to" (VT_PROCESS acqsig): SIGRTMIN + 3.
    static var vtAcquireSignal: Int32 { kc_sigrtmin() + 3 }

    /// The VT for the loop, with VT_PROCESS switching enabled on it (once the signal handlers
    /// are in place); nil when it cannot take part.
    private static func takePartInVTSwitching(_ console: ConsoleGuard?) -> ConsoleGuard? {
        guard let console else { return nil }
        guard signals != nil else {
            Log.warning("VT switching not taken part in", reason: "no signal pipe")
            return nil
        }
        do {
            try console.enableProcessSwitching(releaseSignal: vtReleaseSignal, acquireSignal: vtAcquireSignal)
            Log.info("VT switching handled", path: console.path,
                     detail: "VT_PROCESS: the display is released when the VT is switched away and taken back after")
            return console
        } catch {
            Log.warning("VT switching not taken part in", reason: error.description
                        + "; switching VTs away from the show may leave it drawing over the console")
            return nil
        }
    }

    private static func request(for signal: Int32) -> LoopRequest? {
        switch signal {
        case SIGTERM, SIGINT: return .stop(signal: signal)
        case SIGUSR1: return .next
        case SIGUSR2: return .previous
        case SIGHUP: return .reload
        case vtReleaseSignal: return .releaseDisplay
        case vtAcquireSignal: return .acquireDisplay
        default: return nil
        }
    }

    /// SIGTERM, SIGINT, SIGUSR1, SIGUSR2, SIGHUP and the VT signals go into the ``SignalPipe``
    /// the frame loop polls (handlers do nothing else). Fatal signals put the console back into
    /// text mode (`kc_console_restore_now`, async-signal-safe) first.
    private static func installSignalHandlers() {
        guard let pipe = try? SignalPipe.install([SIGTERM, SIGINT, SIGUSR1, SIGUSR2, SIGHUP, vtReleaseSignal, vtAcquireSignal]) else { return }
        signals = pipe
        // A parent may have started us with signals blocked (the mask is inherited): unblock
        // the fatal ones too (the pipe's own are unblocked by install).
        var handled = sigset_t()
        sigemptyset(&handled)
        for sig in [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE] { sigaddset(&handled, sig) }
        pthread_sigmask(SIG_UNBLOCK, &handled, nil)
        for sig in [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE] {
            var action = sigaction()
            action.__sigaction_handler.sa_sigaction = { signo, info, _ in
                _ = kc_console_restore_now()
                // si_code <= 0: sent by kill(2), tkill or sigqueue (abort() too, and systemd's
                // watchdog SIGABRT): take the default action, ending the process. A real fault
                // goes on to what was there before (Swift's crash backtracer), which reports it;
                // returning re-runs the faulting instruction.
                if let info, info.pointee.si_code <= 0 {
                    signal(signo, SIG_DFL)
                    raise(signo)
                } else {
                    sigaction(signo, previousFatalActions + Int(signo), nil)
                }
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_SIGINFO
            sigaction(sig, &action, previousFatalActions + Int(sig))
        }
    }
}
