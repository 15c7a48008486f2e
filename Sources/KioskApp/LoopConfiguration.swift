// SPDX-License-Identifier: Apache-2.0
import KioskContent
import KioskCore
import KioskDisplay
import KioskMQTT
import KioskSystem

extension FrameLoop {
    /// Everything the frame loop is given besides its display, driver, carousel and decode
    /// worker, in one value passed at init (docs/frame-loop.md): what it reads, what it tells,
    /// how it draws and its timings. Left out: none of that (no signals, no touch, no content
    /// service, no control socket, no systemd).
    public struct Configuration {
        // MARK: Outputs
        /// stdout's event lines (docs/events-and-logs.md).
        public var events: EventWriter
        /// systemd's notify socket (READY=1, STATUS=, the watchdog), when the show runs under it.
        public var notifier: SystemdNotifier?
        /// `--on-tap`: run for every tap with the index and source of the current item.
        public var tapCommand: TapCommand?
        /// Show time each frame was presented at, and the oldest touch time it reflects (benchmarks).
        public var presented: ((_ at: Duration, _ touchTime: Duration?) -> Void)?
        /// The start-up trace whose `first frame` line is written at the first `shown` (the
        /// program's, on real time; nil: none).
        public var startupTrace: StartupTrace?

        // MARK: Inputs
        /// The signals caught (see ``LoopRequest``), and what each asks for.
        public var signals: SignalPipe?
        public var decodeSignal: (Int32) -> LoopRequest? = { _ in nil }
        /// Touches, when a touchscreen is read.
        public var touch: TouchFeed?
        /// `--touch-output`: with several outputs, the one the touchscreen is mounted on (nil:
        /// chosen, ``TouchOutputChoice``).
        public var touchOutput: String?
        /// The playlist's sources, kept current (nil: the items given to the carousel stay).
        public var content: ContentService?
        /// `--order`, `--recent-days`: the play order (docs/carousel.md "Order"); nil: as listed.
        var order: PlayOrder?
        /// `--pair-portraits`: reads the pictures' shapes off the loop, to pair them
        /// (docs/carousel.md "Pairs"); nil: never paired.
        var pairShapes: PairShapeReader?
        /// The control socket (docs/control-socket.md) and where its `screenshot` writes.
        public var control: ControlServer?
        public var screenshots: ScreenshotWriter?
        /// The MQTT client (docs/mqtt.md): its commands are carried out as the control socket's,
        /// every event goes to it (``MQTTPort``).
        public var mqtt: MQTTClient?
        /// The VT whose switches the loop acknowledges (VT_PROCESS switching enabled on it).
        public var console: ConsoleGuard?

        // MARK: Drawing
        /// The letterbox and placeholder colour.
        public var background: RGBColor = .black
        /// Draws the status screens' words (``ShowText/loopPainter()``); nil: no words.
        public var painter: (any TextPainter)?
        /// The words on screen, loaded off the loop; nil: none are loaded.
        public var text: ShowText?
        /// `--overlay`: the clock's strftime format; the clock is made once ``text`` is loaded.
        public var overlayFormat: String?

        // MARK: Time
        /// Stop after this much show time (`--run-for`); nil: run until stopped.
        public var runFor: Duration?
        /// Stop once the first image shown comes around again (the offscreen default: one round).
        public var stopAfterOneRound = false
        /// Items that failed are tried again this long after the failure (60 s).
        public var retryInterval: Duration = .seconds(60)
        /// A finger held without a single report for this long no longer holds the show (60 s).
        public var stuckTouchLimit: Duration = .seconds(60)
        /// How often the files behind the slots are looked at for a change of content (1 s).
        public var fileCheckInterval: Duration = .seconds(1)
        /// When the screen is switched off (`--display-off`); nil: only `display on|off` switches it.
        public var displaySchedule: DisplaySchedule?
        /// How long a touch wakes a screen off by the schedule (`--wake-minutes`, 2 minutes).
        public var wakeDuration: Duration = .seconds(120)

        // MARK: Presence and power (docs/power.md; ``DisplaySupervisor``)
        /// The motion sensor (`--presence`: the GPIO reader, or a test's feed); nil: none.
        public var presence: PresenceFeed?
        /// `--presence-timeout`; nil: 300 s with a sensor, presence not followed without one.
        public var presenceTimeout: Duration?
        /// `--brightness`: the tiers by the hour (a manifest's `brightness` wins); nil: none.
        public var brightness: BrightnessTiers?
        /// Where brightness goes: the panel's backlight, the pixels, or nowhere.
        public var brightnessSink: BrightnessSink = .none
        /// The TV's CEC client, started (`--cec`); nil: none, and `cecAbsence` says why.
        public var cec: CECClient?
        public var cecAbsence: String?

        public init(events: EventWriter, runFor: Duration? = nil) {
            self.events = events
            self.runFor = runFor
        }
    }
}
