// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import KioskContent
import KioskCore
import KioskImaging
import KioskInput
import KioskMQTT
import KioskSystem
import KioskText

/// Everything the command line sets, with the defaults of kiosk-carousel(1) (the option table below).
public struct Settings: Sendable {
    /// `--display`: `auto`, `fbdev[:PATH]`, `drm[:DEVICE][,connector=NAME][,mode=WxH[@HZ]]`, `offscreen:DIR`.
    public var display = "auto"
    /// `--size WxH`: the offscreen frame size in pixels.
    public var size = (width: 1920, height: 1080)
    /// `--interval`: time from one image being fully shown to the next.
    public var interval: Duration = .seconds(5)
    /// `--fade`: cross-fade length.
    public var fade: Duration = .milliseconds(500)
    public var fit: FitMode = .fit
    /// `--transition`: how the show moves to the next picture (docs/carousel.md "Transitions").
    public var transition: TransitionStyle = .fade
    /// `--ken-burns`: a slow pan and zoom over each picture (docs/carousel.md "Ken Burns").
    public var kenBurns = false
    /// `--pair-portraits`: two portraits side by side on a landscape screen, two landscapes
    /// stacked on a portrait one (docs/carousel.md "Pairs").
    public var pairPortraits = false
    public var background: RGBColor = .black
    public var dots = false
    public var rotation: Rotation = .none
    public var swapRedBlue = false
    /// `--caption`, `--overlay`, `--overlay-format` (docs/text.md).
    public var caption: CaptionSource = .item
    /// `--caption-format`: the strftime(3) format of `--caption date` (with `{ago}`); nil: the
    /// default (``CaptureCaption/defaultFormat``).
    public var captionFormat: String?
    /// `--order`, `--recent-days` (docs/carousel.md "Order").
    public var order: PlaylistOrder = .name
    public var recentDays: Int?
    public var overlay: ClockOverlay.Kind?
    public var overlayFormat: String?
    /// `--max-pixels`: the largest image (width x height, as stored) that is decoded.
    public var maxPixels = 100_000_000
    /// `--screen-profile`, `--rendering-intent`: what pictures' colours are converted to
    /// (docs/colour.md).
    public var colour: ColourTarget = .sRGB
    /// `--run-for`: stop after this much show time (virtual time with the offscreen backend).
    public var runFor: Duration?
    /// `--input`: `auto` (find the touchscreen by its capabilities; the default on a real
    /// display, none with offscreen), `none`, or an evdev node such as `/dev/input/event3`.
    public var input = "auto"
    /// `--touch-calibration`: a libinput-style 2x3 matrix or swap-xy/invert-x/invert-y.
    public var touchCalibration: TouchCalibration = .identity
    /// `--touch-output`: the output (a connector's name, `DSI-1`) the touchscreen is mounted on,
    /// with several outputs; nil: chosen (``TouchOutputChoice``, docs/touch.md "Several screens").
    public var touchOutput: String?
    /// `--on-tap`: the program and arguments run on each tap (split at spaces; no shell).
    public var onTap: [String]?
    /// `--display-off`: daily ranges of local time when the screen is off (docs/deployment.md "Configure").
    public var displayOff: DisplaySchedule?
    /// `--wake-minutes`: how long a touch lights a screen `--display-off` switched off (0: never).
    public var wakeMinutes = 2
    /// `--presence`: the motion sensor's GPIO line (docs/power.md); nil: none.
    public var presence: PresenceSensorSpec?
    /// `--presence-timeout`: the screen goes off this long after the last motion or touch; nil:
    /// not given (300 s with a sensor; without one, touches alone count only when it is given).
    public var presenceTimeout: Duration?
    /// `--cec`: `auto` (the adapter of the display's connector, or the only one), `none`, or a
    /// `/dev/cecN` path.
    public var cec = "auto"
    /// `--brightness`: daily brightness tiers; nil: full brightness, the backlight left alone.
    public var brightness: BrightnessTiers?
    /// `--backlight`: `auto` (the built-in panel's, /sys/class/backlight), `none` (the pixels),
    /// or a /sys/class/backlight/NAME directory.
    public var backlight = "auto"
    /// The SOURCE arguments: directories, image files, image URLs, `.json` playlists.
    public var sources: [String] = []
    /// `--manifest`: the remote manifest's http(s) URL.
    public var manifest: URL?
    /// Whether a manifest (``manifest``) or a local `.json` playlist among ``sources`` may set the
    /// show's `order` (docs/manifest.md), so that the order in effect may differ from ``order``.
    public var orderMaySwitch: Bool {
        manifest != nil || sources.contains { !ManifestItem.isRemote($0) && $0.lowercased().hasSuffix(".json") }
    }
    /// `--manifest-interval`: time between polls (±10 % jitter).
    public var manifestInterval: Duration = .seconds(60)
    /// `--cache-dir`: the disk cache of downloaded images.
    public var cacheDirectory = ContentDirectories.cache(environment: ProcessInfo.processInfo.environment)
    /// `--state-dir`: where the last good manifest is kept.
    public var stateDirectory = ContentDirectories.state(environment: ProcessInfo.processInfo.environment)
    /// `--cache-size`: bound of the disk cache, bytes (500 MB).
    public var cacheBytes = 500_000_000
    /// Largest image download, bytes (50 MB).
    public var maxImageBytes = 50_000_000
    /// `--ca-file PATH`: PEM CA certificates trusted for https besides the system's store.
    public var caFile: String?
    /// `--proxy URL`: the proxy of every download (default: `http_proxy` / `https_proxy` /
    /// `no_proxy` from the environment, libcurl's rules; `no_proxy` applies to this one too).
    public var proxy: String?
    /// `--allow-hosts LIST`: the only hosts fetched from besides the configured ones (names,
    /// domains, CIDR ranges; docs/security.md); nil: any but link-local and metadata addresses.
    public var allowHosts: [HostPolicy.Pattern]?
    /// `--allow-http-from-https`: an https manifest may name, and an https request be
    /// redirected to, plain http URLs.
    public var allowHTTPFromHTTPS = false
    /// `--requests-per-poll N`: the most image requests a manifest poll makes (downloads and
    /// revalidations of cached images; the rest wait for later polls).
    public var requestsPerPoll = ImageStore.defaultRequestsPerRound
    /// The content part of the settings (sources, manifest, caches), for ``ContentService``.
    public var content: ContentService.Configuration {
        var c = ContentService.Configuration(sources: sources, manifest: manifest, cacheDirectory: cacheDirectory,
                                             stateDirectory: stateDirectory)
        c.manifestInterval = manifestInterval
        c.cacheBytes = cacheBytes
        c.maxImageBytes = maxImageBytes
        c.caFile = caFile
        c.proxy = proxy
        c.allowHosts = allowHosts
        c.allowHTTPFromHTTPS = allowHTTPFromHTTPS
        c.requestsPerPoll = requestsPerPoll
        return c
    }
    /// `--clock`: nil = the backend's own (virtual for offscreen, real otherwise).
    public var realClock: Bool?
    /// `--config FILE`: the configuration file read before the command line (see
    /// ``CommandLineParser/applyConfigFile(_:to:)``).
    public var configFile: String?
    /// `--control PATH`: the control socket (docs/control-socket.md); nil for none.
    /// Default `$RUNTIME_DIRECTORY/control` (systemd's RuntimeDirectory=; the first one when it
    /// lists several), else none.
    public var controlPath: String? = ProcessInfo.processInfo.environment["RUNTIME_DIRECTORY"]
        .flatMap { $0.split(separator: ":").first.map { "\($0)/control" } }
    /// `--screenshot-dir DIR|none`: the one folder `screenshot` writes in; nil: `screenshots` in
    /// the runtime directory (``ScreenshotWriter/defaultFolder(runtimeDirectory:controlPath:)``).
    public var screenshotDirectory: String?
    /// False after `--screenshot-dir none`.
    public var screenshots = true
    /// `--screenshot-limit FILES,MB,PER_MINUTE`: the folder's caps.
    public var screenshotLimits = ScreenshotWriter.Limits()
    /// `--mqtt` and the options around it (docs/mqtt.md); `mqtt.url` nil: no MQTT.
    public var mqtt = MQTTSettings()
    public var showHelp = false
    /// `--version`: print ``KioskVersion/report`` and exit.
    public var showVersion = false

    public init() {}
}

/// The MQTT options (docs/mqtt.md), read into ``MQTTConfiguration`` at the start
/// (``KioskApp/openMQTT(_:)``).
public struct MQTTSettings: Sendable {
    /// `--mqtt URL`: the broker.
    public var url: BrokerURL?
    /// `--mqtt-password-file PATH`.
    public var passwordFile: String?
    /// `--mqtt-id ID` (default: host name and machine ID, ``MQTTConfiguration/defaultDeviceID(hostname:machineID:)``).
    public var deviceID: String?
    /// `--mqtt-prefix TOPIC` (default `kiosk-carousel/ID`).
    public var topicPrefix: String?
    /// `--mqtt-discovery PREFIX|none` (default `homeassistant`).
    public var discoveryPrefix: String? = "homeassistant"
    /// `--mqtt-cert PATH`, `--mqtt-key PATH`.
    public var certificate: String?
    public var key: String?
    /// `--mqtt-outbox N`: most events kept for the broker.
    public var outboxLimit = 10_000
    public init() {}
}

/// A command-line mistake; the description is the message printed before exiting with 64 (EX_USAGE).
/// A URL's password in it is written as `***` (``Log/hidingPasswords(_:)``).
public struct UsageError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = Log.hidingPasswords(message) }
    public var description: String { message }
}

/// One command-line option: its name, the placeholder of its value (nil for a flag), its help
/// text and how it is applied. The table ``CommandLineParser/options`` drives parsing, validation and
/// `--help`, so an option is declared exactly once.
struct OptionSpec {
    var name: String
    var value: String?
    var help: String
    var apply: (inout Settings, String) throws(UsageError) -> Void
}

/// Parses `kiosk-carousel [options] SOURCE...`.
public enum CommandLineParser {
    static let options: [OptionSpec] = [
        OptionSpec(name: "--config", value: "FILE", help: "read options from FILE first, one per line: 'name value' or 'name = value' with the long option names without --, 'source PATH' for each SOURCE, a flag alone, # comments; the command line overrides the file and its SOURCEs replace the file's") { s, v throws(UsageError) in
            guard !v.isEmpty else { throw UsageError("--config: empty value") }
            s.configFile = v
        },
        OptionSpec(name: "--display", value: "WHERE",
                   help: "auto (DRM, then fbdev, then offscreen), fbdev[:PATH], drm[:DEVICE][,connector=NAME][,mode=WxH[@HZ]], or offscreen:DIR (default auto)") { s, v throws(UsageError) in
            guard !v.isEmpty else { throw UsageError("--display: empty value") }
            s.display = v
        },
        OptionSpec(name: "--size", value: "WxH", help: "frame size for the offscreen backend, in pixels (default 1920x1080)") { s, v throws(UsageError) in
            let parts = v.split(separator: "x", omittingEmptySubsequences: false)
            guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]),
                  (16...8192).contains(w), (16...8192).contains(h) else {
                throw UsageError("--size: expected WxH with each side 16...8192 pixels, got '\(v)'")
            }
            s.size = (w, h)
        },
        OptionSpec(name: "--interval", value: "SECONDS", help: "time each image is shown, fade included (default 5)") { s, v throws(UsageError) in
            s.interval = try seconds(v, option: "--interval", range: CarouselConfig.intervalRange)
        },
        OptionSpec(name: "--fade", value: "MS", help: "cross-fade length in milliseconds, 0 for a cut (default 500)") { s, v throws(UsageError) in
            guard let ms = Int(v), (0...60_000).contains(ms) else {
                throw UsageError("--fade: expected whole milliseconds 0...60000, got '\(v)'")
            }
            s.fade = .milliseconds(ms)
        },
        OptionSpec(name: "--fit", value: "MODE", help: "fit (letterbox), fill (centre crop), stretch, or blur (fit over itself blurred) (default fit)") { s, v throws(UsageError) in
            guard let f = FitMode(rawValue: v) else {
                throw UsageError("--fit: expected fit, fill, stretch or blur, got '\(v)'")
            }
            s.fit = f
        },
        OptionSpec(name: "--transition", value: "STYLE",
                   help: "fade (cross-fade, the default), slide (the next picture scrolls in sideways, the way of the "
                       + "last swipe) or cut (at once), over the --fade time"
        ) { s, v throws(UsageError) in
            guard let t = TransitionStyle(rawValue: v) else {
                throw UsageError("--transition: expected fade, slide or cut, got '\(v)'")
            }
            s.transition = t
        },
        OptionSpec(name: "--ken-burns", value: nil,
                   help: "a slow pan and zoom over each picture while it is shown (it fills the screen)"
        ) { s, _ throws(UsageError) in s.kenBurns = true },
        OptionSpec(name: "--pair-portraits", value: nil,
                   help: "two portrait photos side by side on a landscape screen (two landscapes stacked on a "
                       + "portrait one), a partner looked for a few items ahead; shown and timed as one item"
        ) { s, _ throws(UsageError) in s.pairPortraits = true },
        OptionSpec(name: "--background", value: "RRGGBB", help: "letterbox and placeholder colour (default 000000)") { s, v throws(UsageError) in
            guard let c = RGBColor(hex: v) else { throw UsageError("--background: expected six hex digits RRGGBB, got '\(v)'") }
            s.background = c
        },
        OptionSpec(name: "--dots", value: nil, help: "draw page dots near the bottom edge") { s, _ throws(UsageError) in s.dots = true },
        OptionSpec(name: "--caption", value: "SOURCE",
                   help: "item (each item's caption, the default), exif (the item's, else the image's own "
                       + "description), date (the item's, else when the photo was taken, as --caption-format), "
                       + "name (the item's, else its file name without the extension) or off"
        ) { s, v throws(UsageError) in
            guard let c = CaptionSource(rawValue: v) else {
                throw UsageError("--caption: expected item, exif, date, name or off, got '\(v)'")
            }
            s.caption = c
        },
        OptionSpec(name: "--caption-format", value: "FORMAT",
                   help: "strftime(3) format of --caption date, {ago} for 'N years ago' (default '%-d %B %Y')"
        ) { s, v throws(UsageError) in
            guard !v.isEmpty, v.utf8.count <= 64 else {
                throw UsageError("--caption-format: expected 1...64 bytes of strftime format, got '\(v)'")
            }
            let sample = EXIFDateTime(date: LocalDate(year: 2016, month: 12, day: 2), secondOfDay: 52_205)
            let today = LocalDate(year: 2026, month: 12, day: 2)
            guard !CaptureCaption.format(v, taken: .exif(sample), today: today).isEmpty else {
                throw UsageError("--caption-format: '\(v)' gives no text or more than 255 bytes (strftime(3))")
            }
            s.captionFormat = v
        },
        OptionSpec(name: "--order", value: "ORDER",
                   help: "name (as listed, the default), shuffle (each image once per round, the round kept in "
                       + "--state-dir), date (taken, oldest first), newest, or on-this-day (taken on today's date "
                       + "in earlier years, else all by date)"
        ) { s, v throws(UsageError) in
            guard let o = PlaylistOrder(rawValue: v) else {
                throw UsageError("--order: expected name, shuffle, date, newest or on-this-day, got '\(v)'")
            }
            s.order = o
        },
        OptionSpec(name: "--recent-days", value: "DAYS",
                   help: "with --order shuffle (or a manifest's shuffle), photos taken within DAYS days come"
                       + " twice per round (default: none)"
        ) { s, v throws(UsageError) in
            guard let d = Int(v), (1...36_500).contains(d) else {
                throw UsageError("--recent-days: expected whole days 1...36500, got '\(v)'")
            }
            s.recentDays = d
        },
        OptionSpec(name: "--overlay", value: "WHAT", help: "clock or date: the local time in the top right corner, redrawn each minute (none: the default)") { s, v throws(UsageError) in
            if v == "none" { s.overlay = nil; return }
            guard let k = ClockOverlay.Kind(rawValue: v) else { throw UsageError("--overlay: expected clock, date or none, got '\(v)'") }
            s.overlay = k
        },
        OptionSpec(name: "--overlay-format", value: "FORMAT", help: "strftime(3) format of the overlay (default %H:%M for clock, '%a %-d %b  %H:%M' for date)") { s, v throws(UsageError) in
            guard !v.isEmpty, v.utf8.count <= 64 else { throw UsageError("--overlay-format: expected 1...64 bytes of strftime format, got '\(v)'") }
            // Tried on the time now: a format whose text is empty or over 255 bytes would draw nothing.
            guard !ClockOverlay.format(v, epochSeconds: Int(time(nil))).isEmpty else {
                throw UsageError("--overlay-format: '\(v)' gives no text or more than 255 bytes (strftime(3))")
            }
            s.overlayFormat = v
        },
        OptionSpec(name: "--rotate", value: "DEGREES", help: "0, 90, 180 or 270: clockwise rotation for a screen mounted in portrait or upside down (applied in the copy to DRM or fbdev; offscreen frames are written as composed)") { s, v throws(UsageError) in
            guard let d = Int(v), let r = Rotation(rawValue: d) else {
                throw UsageError("--rotate: expected 0, 90, 180 or 270, got '\(v)'")
            }
            s.rotation = r
        },
        OptionSpec(name: "--swap-rb", value: nil, help: "swap red and blue (fbdev panels wired BGR)") { s, _ throws(UsageError) in s.swapRedBlue = true },
        OptionSpec(name: "--max-pixels", value: "N", help: "refuse images larger than N pixels (width x height) before decoding (default 100000000)") { s, v throws(UsageError) in
            guard let n = Int(v), (1...4_294_967_295).contains(n) else {
                throw UsageError("--max-pixels: expected a whole number 1...4294967295 (65535 x 65535), got '\(v)'")
            }
            s.maxPixels = n
        },
        OptionSpec(name: "--screen-profile", value: "FILE",
                   help: "the screen's ICC profile: pictures' colours (their embedded profile, their colour "
                       + "description, HDR tone-mapped) are converted to it; srgb converts to sRGB, off shows the "
                       + "stored numbers unconverted (default srgb)") { s, v throws(UsageError) in
            switch v {
            case "srgb", "sRGB": s.colour.screenProfile = nil; s.colour.enabled = true
            case "off": s.colour.screenProfile = nil; s.colour.enabled = false
            default:
                guard !v.isEmpty else { throw UsageError("--screen-profile: empty value") }
                do throws(ImageError) {
                    s.colour.screenProfile = try ScreenProfile(path: v)
                    s.colour.enabled = true
                } catch {
                    throw UsageError("--screen-profile: \(error.description)")
                }
            }
        },
        OptionSpec(name: "--rendering-intent", value: "INTENT",
                   help: "perceptual or relative-colorimetric: how colours outside the screen's gamut are brought "
                       + "in (default perceptual)") { s, v throws(UsageError) in
            guard let intent = ColourTarget.Intent(rawValue: v) else {
                throw UsageError("--rendering-intent: expected perceptual or relative-colorimetric, got '\(v)'")
            }
            s.colour.intent = intent
        },
        OptionSpec(name: "--run-for", value: "SECONDS", help: "stop after this much show time (virtual time with offscreen; default: forever, offscreen: one round of the playlist)") { s, v throws(UsageError) in
            s.runFor = try seconds(v, option: "--run-for", range: 0.001...31_536_000)
        },
        OptionSpec(name: "--manifest", value: "URL",
                   help: "play the http(s) JSON manifest at URL, polled with conditional requests; the last good one"
                       + " and its images are kept for offline starts; {hostname} and {machine-id} in URL are"
                       + " replaced by the device's") { s, v throws(UsageError) in
            let v = try expandDevicePlaceholders(v, option: "--manifest")
            if let problem = HTTPURL.problem(v) { throw UsageError("--manifest: expected an http or https URL: \(problem)") }
            guard let url = URL(string: v) else { throw UsageError("--manifest: '\(v)' is not a URL") }
            s.manifest = url
        },
        OptionSpec(name: "--manifest-interval", value: "SECONDS", help: "time between manifest polls, with 10 % jitter (default 60); SIGHUP polls at once") { s, v throws(UsageError) in
            s.manifestInterval = try seconds(v, option: "--manifest-interval", range: 1...86_400)
        },
        OptionSpec(name: "--ca-file", value: "PATH", help: "PEM file of CA certificates trusted for https besides the system's (a private CA)") { s, v throws(UsageError) in
            guard v.hasPrefix("/") else { throw UsageError("--ca-file: expected an absolute path, got '\(v)'") }
            s.caFile = v
        },
        OptionSpec(name: "--proxy", value: "URL", help: "HTTP proxy for every download, e.g. http://proxy.lan:3128 (default: http_proxy, https_proxy and no_proxy from the environment)") { s, v throws(UsageError) in
            // Checked here, not by libcurl at the first download: `http://u:p@[::1` would fail
            // every download of the show with a message about the proxy far from the cause.
            if let problem = HTTPURL.problem(v) { throw UsageError("--proxy: expected an http:// or https:// URL: \(problem)") }
            s.proxy = v
        },
        OptionSpec(name: "--allow-hosts", value: "LIST", help: "fetch only from these hosts besides those of --manifest and URL SOURCEs: comma-separated names (cdn.example.com), domains (.example.com: it and below), addresses and CIDR ranges (10.0.0.0/8, 2001:db8::/32); a range also admits the link-local and metadata addresses otherwise refused (default: any host but those; see docs/security.md)") { s, v throws(UsageError) in
            do {
                s.allowHosts = try HostPolicy.parsePatterns(v)
            } catch {
                throw UsageError("--allow-hosts: \(error)")
            }
        },
        OptionSpec(name: "--requests-per-poll", value: "N", help: "the most image requests one manifest poll makes: downloads of images not cached, then conditional GETs of cached ones (an image replaced on its server is shown once it decodes); the rest wait for the next polls (1 ... 10000, default 50)") { s, v throws(UsageError) in
            guard let n = Int(v), (1...10_000).contains(n) else { throw UsageError("--requests-per-poll: expected a whole number 1...10000, got '\(v)'") }
            s.requestsPerPoll = n
        },
        OptionSpec(name: "--allow-http-from-https", value: nil, help: "let an https manifest name plain http images and an https request be redirected to http (default: refused, no downgrade)") { s, _ throws(UsageError) in
            s.allowHTTPFromHTTPS = true
        },
        OptionSpec(name: "--cache-dir", value: "DIR", help: "disk cache of downloaded images (default $CACHE_DIRECTORY, else $XDG_CACHE_HOME or ~/.cache, then /kiosk-carousel)") { s, v throws(UsageError) in
            guard v.hasPrefix("/") else { throw UsageError("--cache-dir: expected an absolute path, got '\(v)'") }
            s.cacheDirectory = v
        },
        OptionSpec(name: "--state-dir", value: "DIR", help: "where the last good manifest is kept (default $STATE_DIRECTORY, else $XDG_STATE_HOME or ~/.local/state, then /kiosk-carousel)") { s, v throws(UsageError) in
            guard v.hasPrefix("/") else { throw UsageError("--state-dir: expected an absolute path, got '\(v)'") }
            s.stateDirectory = v
        },
        OptionSpec(name: "--cache-size", value: "MB", help: "bound of the disk cache in megabytes, least recently used out; entries unused for 7 days expire (default 500)") { s, v throws(UsageError) in
            guard let mb = Int(v), (1...1_000_000).contains(mb) else {
                throw UsageError("--cache-size: expected megabytes 1...1000000, got '\(v)'")
            }
            s.cacheBytes = mb * 1_000_000
        },
        OptionSpec(name: "--clock", value: "KIND", help: "real or virtual: offscreen runs use a virtual clock (as fast as frames can be drawn) unless real is asked for; displays always follow wall time") { s, v throws(UsageError) in
            guard v == "real" || v == "virtual" else { throw UsageError("--clock: expected real or virtual, got '\(v)'") }
            s.realClock = v == "real"
        },
        OptionSpec(name: "--input", value: "DEVICE", help: "the touchscreen: auto (found by its capabilities among /dev/input/event*, picked up when plugged in later; not with offscreen), none, or an evdev node such as /dev/input/event3 (an offscreen run reading one follows wall time) (default auto)") { s, v throws(UsageError) in
            guard v == "auto" || v == "none" || v.hasPrefix("/") else {
                throw UsageError("--input: expected auto, none or a device path such as /dev/input/event3, got '\(v)'")
            }
            s.input = v
        },
        OptionSpec(name: "--touch-calibration", value: "MATRIX", help: "map touches: six numbers 'a b c d e f' as libinput's LIBINPUT_CALIBRATION_MATRIX (x' = a x + b y + c, y' = d x + e y + f on coordinates 0...1), or swap-xy, invert-x, invert-y (comma separated) (default none)") { s, v throws(UsageError) in
            do {
                s.touchCalibration = try TouchCalibration.parse(v)
            } catch {
                throw UsageError("\(error)")  // InputError's text names the option and the value
            }
        },
        OptionSpec(name: "--touch-output", value: "NAME",
                   help: "with several outputs, the one the touchscreen is mounted on, by its connector's name"
                       + " (DSI-1, HDMI-A-2): touches map onto it; auto: the one built-in panel (DSI, DPI, LVDS,"
                       + " eDP), else the one panel of at most 1280x800 beside a larger screen, else the first"
                       + " output (default auto)") { s, v throws(UsageError) in
            guard !v.isEmpty, !v.contains(" ") else {
                throw UsageError("--touch-output: expected auto or a connector's name such as DSI-1, got '\(v)'")
            }
            s.touchOutput = v == "auto" ? nil : v
        },
        OptionSpec(name: "--on-tap", value: "COMMAND", help: "run COMMAND on each tap, split at spaces into a program (looked up once at start in the absolute folders of PATH) and its arguments, no shell, with an environment of its own: PATH=/usr/local/bin:/usr/bin:/bin, the show's LANG, LC_*, TZ, HOME, USER, and KIOSK_INDEX and KIOSK_SRC; its stdout goes to stderr; at most one at a time (default none)") { s, v throws(UsageError) in
            let words = v.split(separator: " ").map(String.init)
            guard !words.isEmpty else { throw UsageError("--on-tap: empty command") }
            s.onTap = words
        },
        OptionSpec(name: "--control", value: "PATH", help: "the control socket, JSON lines as in mpv's IPC (next, previous, pause, resume, goto, status, display, screenshot, brightness, presence_timeout); none for no socket (default $RUNTIME_DIRECTORY/control when set, else none)") { s, v throws(UsageError) in
            guard v != "none" else { s.controlPath = nil; return }
            guard !v.isEmpty, v.utf8.count < 108 else { throw UsageError("--control: expected a socket path of 1...107 bytes or none, got '\(v)'") }
            s.controlPath = v
        },
        OptionSpec(name: "--screenshot-dir", value: "DIR", help: "the one folder the control socket's screenshot writes in, made if missing (mode 0750), opened once at start; not a SOURCE folder nor inside one; none for no screenshots (default $RUNTIME_DIRECTORY/screenshots, else screenshots beside the control socket)") { s, v throws(UsageError) in
            guard v != "none" else { s.screenshots = false; return }
            guard v.hasPrefix("/"), v.count > 1 else { throw UsageError("--screenshot-dir: expected an absolute path or none, got '\(v)'") }
            s.screenshots = true
            s.screenshotDirectory = v
        },
        OptionSpec(name: "--screenshot-limit", value: "FILES,MB,PER_MINUTE", help: "caps of the screenshot folder: the most screenshots kept (the oldest are deleted to make room), megabytes they take, and requests a minute (default 10,32,30)") { s, v throws(UsageError) in
            guard let limits = ScreenshotWriter.Limits.parse(v) else {
                throw UsageError("--screenshot-limit: expected FILES,MB,PER_MINUTE (1...10000, 1...100000, 1...10000), got '\(v)'")
            }
            s.screenshotLimits = limits
        },
        OptionSpec(name: "--display-off", value: "HH:MM-HH:MM", help: "switch the screen off (DRM DPMS, fbdev blanking) at these local times, daily; a range may cross midnight (22:00-07:00), several are separated by commas; the show pauses meanwhile and resumes with a full interval (default: always on)") { s, v throws(UsageError) in
            do {
                s.displayOff = try DisplaySchedule.parse(v)
            } catch {
                throw UsageError("--display-off: \(error)")
            }
        },
        OptionSpec(name: "--wake-minutes", value: "N", help: "a touch on a screen --display-off switched off lights it for N minutes (0 ... 1440; 0: touches do nothing then; the waking touch is no tap) (default 2)") { s, v throws(UsageError) in
            guard let n = Int(v), (0...1440).contains(n) else { throw UsageError("--wake-minutes: expected minutes in 0...1440, got '\(v)'") }
            s.wakeMinutes = n
        },
        OptionSpec(name: "--presence", value: "gpio:CHIP:LINE",
                   help: "a motion sensor (PIR) on a GPIO line, read through the GPIO character device: CHIP a name,"
                       + " path, label or number (gpiochip0), LINE an offset or a name; options after commas:"
                       + " active-low, debounce=MS (default 50), pull-up, pull-down, bias-disable; none: no sensor"
                       + " (default none)") {
            s, v throws(UsageError) in
            guard v != "none" else { s.presence = nil; return }
            do { s.presence = try PresenceSensorSpec.parse(v) } catch { throw UsageError("\(error)") }
        },
        OptionSpec(name: "--presence-timeout", value: "SECONDS",
                   help: "switch the screen off this long after the last motion or touch, and on again at the next"
                       + " (within --display-off's and the brightness tiers' on times); touches alone count when there"
                       + " is no --presence (default 300 with --presence)") {
            s, v throws(UsageError) in
            s.presenceTimeout = try seconds(v, option: "--presence-timeout", range: 1...86_400)
        },
        OptionSpec(name: "--cec", value: "ADAPTER",
                   help: "tell the TV over HDMI-CEC: Standby when the screen goes off, Image View On and Active Source"
                       + " when it comes on; auto (the adapter of the display's connector, or the only one), none, or"
                       + " a /dev/cecN path (default auto)") {
            s, v throws(UsageError) in
            guard v == "auto" || v == "none" || v.hasPrefix("/") else {
                throw UsageError("--cec: expected auto, none or a device path such as /dev/cec0, got '\(v)'")
            }
            s.cec = v
        },
        OptionSpec(name: "--brightness", value: "HH:MM=PCT,...",
                   help: "daily brightness tiers, each from its local time to the next: PCT 1 ... 100 or off (as a"
                       + " --display-off range), e.g. 07:00=100,20:00=40,23:00=off; through the panel's backlight,"
                       + " else by scaling the pixels; changes ramp over 1.5 s (default: full, the backlight left"
                       + " alone)") {
            s, v throws(UsageError) in
            do { s.brightness = try BrightnessTiers.parse(v) } catch { throw UsageError("--brightness: \(error)") }
        },
        OptionSpec(name: "--backlight", value: "WHICH",
                   help: "where --brightness goes: auto (the built-in panel's backlight in /sys/class/backlight; none"
                       + " for HDMI and other external screens), none (the pixels), or a /sys/class/backlight/NAME"
                       + " directory (default auto)") {
            s, v throws(UsageError) in
            guard v == "auto" || v == "none" || v.hasPrefix("/") else {
                throw UsageError("--backlight: expected auto, none or a directory such as "
                                 + "/sys/class/backlight/rpi_backlight, got '\(v)'")
            }
            s.backlight = v
        },
        OptionSpec(name: "--mqtt", value: "URL",
                   help: "publish events and status to an MQTT broker and take commands from it, with Home Assistant"
                       + " discovery: mqtt://[USER[:PASSWORD]@]HOST[:PORT] or mqtts:// for TLS, verified against the"
                       + " system's CAs and --ca-file (see docs/mqtt.md) (default none)") { s, v throws(UsageError) in
            guard v != "none" else { s.mqtt.url = nil; return }
            do throws(MQTTError) { s.mqtt.url = try BrokerURL.parse(v) } catch { throw UsageError(error.description) }
        },
        OptionSpec(name: "--mqtt-password-file", value: "PATH",
                   help: "read the broker password from the first line of PATH (e.g. systemd's %d/mqtt-password with"
                       + " LoadCredential=), so it stays out of ps and the unit; $KIOSK_MQTT_PASSWORD works too") {
            s, v throws(UsageError) in
            guard v.hasPrefix("/") else {
                throw UsageError("--mqtt-password-file: expected an absolute path, got '\(v)'")
            }
            s.mqtt.passwordFile = v
        },
        OptionSpec(name: "--mqtt-id", value: "ID",
                   help: "the device's MQTT client ID and Home Assistant device ID, 1...64 of [A-Za-z0-9_-] (default:"
                       + " the host name and the first 8 digits of /etc/machine-id)") { s, v throws(UsageError) in
            do throws(MQTTError) {
                try MQTTConfiguration.checkDeviceID(v)
            } catch { throw UsageError(error.description) }
            s.mqtt.deviceID = v
        },
        OptionSpec(name: "--mqtt-prefix", value: "TOPIC",
                   help: "the topic every topic of this device starts with (default kiosk-carousel/ID)") {
            s, v throws(UsageError) in
            do throws(MQTTError) {
                try MQTTConfiguration.checkTopicPrefix(v)
            } catch { throw UsageError(error.description) }
            s.mqtt.topicPrefix = v
        },
        OptionSpec(name: "--mqtt-discovery", value: "PREFIX",
                   help: "Home Assistant's discovery prefix, or none for no discovery configs"
                       + " (default homeassistant)") {
            s, v throws(UsageError) in
            guard v != "none" else { s.mqtt.discoveryPrefix = nil; return }
            do throws(MQTTError) {
                try MQTTConfiguration.checkTopicPrefix(v, option: "--mqtt-discovery")
            } catch { throw UsageError(error.description) }
            s.mqtt.discoveryPrefix = v
        },
        OptionSpec(name: "--mqtt-cert", value: "PATH",
                   help: "PEM client certificate for mqtts:// (with --mqtt-key)") {
            s, v throws(UsageError) in
            guard v.hasPrefix("/") else { throw UsageError("--mqtt-cert: expected an absolute path, got '\(v)'") }
            s.mqtt.certificate = v
        },
        OptionSpec(name: "--mqtt-key", value: "PATH",
                   help: "the PEM private key of --mqtt-cert, without a passphrase") {
            s, v throws(UsageError) in
            guard v.hasPrefix("/") else { throw UsageError("--mqtt-key: expected an absolute path, got '\(v)'") }
            s.mqtt.key = v
        },
        OptionSpec(name: "--mqtt-outbox", value: "N",
                   help: "most events kept on disk (in the state directory) while the broker is away; past it the"
                       + " oldest are dropped and counted (default 10000)") { s, v throws(UsageError) in
            guard let n = Int(v), (1...1_000_000).contains(n) else {
                throw UsageError("--mqtt-outbox: expected events 1...1000000, got '\(v)'")
            }
            s.mqtt.outboxLimit = n
        },
        OptionSpec(name: "--help", value: nil, help: "print this help and exit") { s, _ throws(UsageError) in s.showHelp = true },
        OptionSpec(name: "--version", value: nil, help: "print the version and the libraries it runs with, and exit") { s, _ throws(UsageError) in s.showVersion = true },
    ]

    private static func seconds(_ v: String, option: String, range: ClosedRange<Double>) throws(UsageError) -> Duration {
        guard let d = Double(v), d.isFinite, range.contains(d) else {
            throw UsageError("\(option): expected seconds in \(Self.format(range.lowerBound))...\(Self.format(range.upperBound)), got '\(v)'")
        }
        return .milliseconds(Int64((d * 1000).rounded()))
    }

    private static func format(_ d: Double) -> String {
        d == d.rounded() ? String(Int64(d)) : String(d)
    }

    /// Parses the arguments after the program name. Accepts `--name value` and `--name=value`;
    /// `--` ends the options. Throws ``UsageError`` naming the option and the bad value.
    /// With `--config FILE` the file is applied first and the command line over it, wherever
    /// `--config` stands; SOURCEs on the command line replace the file's.
    public static func parse(_ arguments: [String]) throws(UsageError) -> Settings {
        var settings = Settings()
        var given: [(spec: OptionSpec, value: String)] = []
        var sources: [String] = []
        var i = 0
        var onlySources = false
        while i < arguments.count {
            let arg = arguments[i]
            i += 1
            if onlySources || !arg.hasPrefix("-") || arg == "-" {
                sources.append(arg)
                continue
            }
            if arg == "--" { onlySources = true; continue }
            var name = arg
            var inline: String?
            if let eq = arg.firstIndex(of: "=") {
                name = String(arg[..<eq])
                inline = String(arg[arg.index(after: eq)...])
            }
            guard let spec = options.first(where: { $0.name == name }) else {
                throw UsageError("unknown option '\(name)' (see --help)")
            }
            var value = ""
            if spec.value != nil {
                if let inline {
                    value = inline
                } else {
                    guard i < arguments.count else { throw UsageError("\(name) needs a value \(spec.value!)") }
                    value = arguments[i]
                    i += 1
                }
            } else if inline != nil {
                throw UsageError("\(name) takes no value")
            }
            given.append((spec, value))
        }
        // The configuration file first (the last --config given), then the command line over it.
        if !given.contains(where: { $0.spec.name == "--help" || $0.spec.name == "--version" }) {
            for (spec, value) in given where spec.name == "--config" { try spec.apply(&settings, value) }
            if let file = settings.configFile { try applyConfigFile(file, to: &settings) }
        }
        for (spec, value) in given { try spec.apply(&settings, value) }
        if !sources.isEmpty { settings.sources = sources }
        if settings.showHelp || settings.showVersion { return settings }
        if settings.sources.isEmpty && settings.manifest == nil {
            throw UsageError("no SOURCE given: name a directory of images, image files or a --manifest URL (see --help)")
        }
        for source in settings.sources {
            if source.allSatisfy(\.isWhitespace) {
                // An empty word: an unset variable in a unit's ExecStart= or a script.
                throw UsageError("SOURCE: an empty SOURCE ('\(source)'); a SOURCE is a directory, an image file, a .json playlist or an http(s) URL")
            } else if ManifestItem.isRemote(source) {
                if let problem = HTTPURL.problem(source) { throw UsageError("SOURCE: \(problem)") }
                // A URL SOURCE is one image; a remote .json is a manifest, polled with --manifest.
                let path = source.split(separator: "?", maxSplits: 1)[0].split(separator: "#", maxSplits: 1)[0]
                if path.lowercased().hasSuffix(".json") {
                    throw UsageError("SOURCE: '\(Log.hidingPasswords(source))' is a remote .json,"
                                     + " but a URL SOURCE is one image: give a remote manifest with"
                                     + " --manifest \(Log.hidingPasswords(source))"
                                     + " (a .json playlist SOURCE is a local file)")
                }
            } else if let scheme = urlScheme(source) {
                // `ftp://…`, `file:///…`: a URL of a scheme the program does not fetch, not a
                // file name (RFC 3986 section 3.1: a letter, then letters, digits, + - .).
                throw UsageError("SOURCE: '\(Log.hidingPasswords(source))' is a URL of the scheme \(scheme):; a SOURCE is a directory, an image file, a .json playlist or an http(s) URL (a local file is named by its path)")
            } else if let scheme = schemePrefix(source), !pathExists(source) {
                // `javascript:alert(1)`, `mailto:x`: a URL needs no `//` (RFC 3986 section 3);
                // an existing file of that name (`a:b.jpg`) is still a file.
                throw UsageError("SOURCE: '\(Log.hidingPasswords(source))' is a URL of the scheme \(scheme): (no file of that name exists); a SOURCE is a directory, an image file, a .json playlist or an http(s) URL (a local file is named by its path)")
            }
        }
        if settings.display.hasPrefix("offscreen:") {
            // Frames written into a SOURCE folder would join the show as pictures, each one
            // making the next (a folder below a SOURCE is not watched, so it may be one).
            let frames = String(settings.display.dropFirst("offscreen:".count))
            for source in settings.sources where !ManifestItem.isRemote(source) && sameFolder(source, frames) {
                throw UsageError("--display offscreen:\(frames): the frames folder is the SOURCE folder '\(source)':"
                                 + " its frames would be shown as pictures; write them to another folder"
                                 + " (one inside it is fine: a SOURCE's subfolders are not read)")
            }
        }
        // The environment's proxy, checked before the show starts as --proxy is: a value libcurl
        // cannot use (`http://proxy:99999`, `http://proxy:abc`) would fail every download as a
        // DNS error far from its cause. Only when the show downloads (docs/deployment.md "Configure").
        if settings.proxy == nil, settings.manifest != nil || settings.sources.contains(where: ManifestItem.isRemote) {
            if let (proxy, problem) = ProxyChoice(option: nil, environment: ProxyChoice.processEnvironment()).unusable.first {
                throw UsageError("\(proxy.origin): expected a proxy URL such as http://proxy.lan:3128: \(problem) (fix or unset it, or give --proxy URL)")
            }
        }
        if (settings.mqtt.certificate == nil) != (settings.mqtt.key == nil) {
            throw UsageError("--mqtt-cert and --mqtt-key go together: give both or neither")
        }
        if settings.mqtt.certificate != nil, settings.mqtt.url?.tls != true {
            throw UsageError("--mqtt-cert: a client certificate needs an mqtts:// broker URL")
        }
        if let days = settings.recentDays, settings.order != .shuffle, !settings.orderMaySwitch {
            // Only a shuffle round has places to give twice; any other order would take it silently.
            // A manifest or a playlist may set `order` to shuffle: then it waits for that (logged).
            throw UsageError("--recent-days \(days) weights a shuffle: it needs --order shuffle,"
                             + " but --order is \(settings.order.rawValue)")
        }
        if settings.fade > settings.interval {
            throw UsageError("--fade \(settings.fade.wholeMilliseconds) ms is longer than --interval \(Double(settings.interval.wholeMilliseconds) / 1000) s")
        }
        return settings
    }

    /// The `--help` text, built from the option table.
    public static var help: String {
        // The formats from the format table: "JPEG, PNG, WebP, HEIF/HEIC, AVIF and GIF".
        let formats = ImageFormat.listed(ImageFormat.shown.map { format in
            format.title + (format.alias.map { "/" + $0 } ?? "") + (format.note.map { " (\($0))" } ?? "")
        }, "and")
        let about = "A slideshow for kiosks, signs and photo frames: shows \(formats) images full screen on DRM/KMS"
            + " or the Linux framebuffer, cross-fading on a timer. SOURCE is a directory (its images in name"
            + " order, watched for changes), an image file, an http(s) image URL, or a .json playlist (the"
            + " manifest format; may name files). Formats are told by their first bytes."
        // Wrapped at 82 columns, as this paragraph always was (the options' text below at 80).
        var lines = ["usage: kiosk-carousel [options] SOURCE...   (or --manifest URL)", ""]
        for word in about.split(separator: " ") {
            if let last = lines.last, !last.isEmpty, last.count + 1 + word.count <= 82 {
                lines[lines.count - 1] += " " + word
            } else {
                lines.append(String(word))
            }
        }
        lines += ["", "options:"]
        let indent = String(repeating: " ", count: 24)
        for o in options {
            let head = "  " + (o.value.map { "\(o.name) \($0)" } ?? o.name)
            // The help text wrapped to 80 columns, starting in column 25, at least two spaces
            // after the head (else the head on a line of its own).
            var row = head.count < 23 ? head + String(repeating: " ", count: 24 - head.count) : head + "\n" + indent
            var width = row.count - (row.lastIndex(of: "\n").map { row.distance(from: row.startIndex, to: $0) + 1 } ?? 0)
            for word in o.help.split(separator: " ") {
                if width + 1 + word.count > 80, width > 24 {
                    row += "\n" + indent
                    width = 24
                } else if width > 24 {
                    row += " "
                    width += 1
                }
                row += word
                width += word.count
            }
            lines.append(row)
        }
        lines += [
            "",
            "Events go to stdout as JSON lines, one per image fully shown and one per tap:",
            "  {\"event\":\"shown\",\"index\":0,\"src\":\"/photos/a.jpg\",\"t\":1234}  (t: ms)",
            "  {\"event\":\"tap\",\"index\":0,\"src\":\"/photos/a.jpg\",\"x\":512,\"y\":300,\"t\":2345}",
            "Touch: swipe sideways for the next or previous image; a finger on the screen",
            "pauses the show; auto-advance follows the direction of the last swipe.",
            "Log lines go to stderr. Signals: SIGTERM/SIGINT exit cleanly, SIGUSR1 shows the",
            "next image, SIGUSR2 the previous one, SIGHUP reloads the sources (polls the",
            "manifest, reads playlists again, looks again for missing sources).",
            "Exit status: 0 done, 64 usage error, 69 no display could be opened.",
            "The manual page kiosk-carousel(1) has the configuration file, the control socket,",
            "the environment and the files.",
        ]
        return lines.joined(separator: "\n")
    }
}

// MARK: - The configuration file (`--config FILE`)

extension CommandLineParser {
    /// The options whose value in a configuration file is the rest of the line, blanks and all:
    /// lists and commands (`touch-calibration 0 1 0 -1 0 1`, `on-tap /usr/local/bin/tap.sh --loud`,
    /// `overlay-format %a %-d %b`, `display-off 22:00-07:00, 12:00-13:00`) and paths, which may
    /// hold spaces (as `source` does). Every other option takes one word.
    static let freeTextOptions: Set<String> = ["touch-calibration", "on-tap", "overlay-format", "display-off",
                                               "display", "input", "cache-dir", "state-dir", "ca-file", "control",
                                               "brightness", "backlight", "cec",
                                               "mqtt-password-file", "mqtt-cert", "mqtt-key"]

    /// The largest configuration file read, in bytes.
    static let configFileLimit = 1 << 20

    /// Reads the configuration file at `path` and applies it to `settings` through the option
    /// table (``applyConfig(_:file:to:)``). A file that cannot be read, is not a regular file,
    /// or is over 1 MiB is a ``UsageError`` starting with `--config:`.
    static func applyConfigFile(_ path: String, to settings: inout Settings) throws(UsageError) {
        let bytes: [UInt8]
        do {
            bytes = try readRegularFile(path, limit: configFileLimit)
        } catch {
            switch error.errno {
            case EINVAL: throw UsageError("--config: \(path): not a regular file")
            case EFBIG: throw UsageError("--config: \(path): larger than \(configFileLimit / 1024) KiB")
            default: throw UsageError("--config: \(error.description)")
            }
        }
        try applyConfig(bytes, file: path, to: &settings)
    }

    /// Applies configuration-file text to `settings`: one option per line, `name value` or
    /// `name = value`, `name` being a long option of ``options`` without its `--` (written with
    /// it is accepted too); the value is the rest of the line with the blanks around it removed
    /// (no quoting: `touch-calibration 0 1 0 -1 0 1` and `on-tap /usr/local/bin/tap.sh --loud`
    /// work as written). A flag stands alone. `source PATH` adds a SOURCE (one per line; they
    /// replace any SOURCEs already in `settings`). Blank lines and lines starting with `#` are
    /// skipped; CRLF line ends and a UTF-8 byte-order mark are accepted. `config` and `help` are
    /// refused. Each error starts with `FILE:LINE: `, then the option's own message:
    /// `/etc/kiosk-carousel/kiosk-carousel.conf:7: --interval: expected seconds in 0.05...86400, got 'x'`.
    static func applyConfig(_ bytes: [UInt8], file: String, to settings: inout Settings) throws(UsageError) {
        var content = bytes[...]
        if content.starts(with: [0xEF, 0xBB, 0xBF]) { content = content.dropFirst(3) }
        var sources: [String] = []
        for (number, rawLine) in content.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            let at = "\(file):\(number + 1): "
            var lineBytes = rawLine
            if lineBytes.last == 0x0D { lineBytes = lineBytes.dropLast() }
            guard let decoded = String(validating: lineBytes, as: UTF8.self) else {
                throw UsageError(at + "not UTF-8 text")
            }
            if decoded.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F }) {
                throw UsageError(at + "control character in the line")
            }
            let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
            let line = Substring(decoded).drop(while: isBlank)
            let text = line[..<(line.lastIndex(where: { !isBlank($0) }).map { line.index(after: $0) } ?? line.startIndex)]
            if text.isEmpty || text.hasPrefix("#") { continue }
            let nameEnd = text.firstIndex(where: { isBlank($0) || $0 == "=" }) ?? text.endIndex
            var name = String(text[..<nameEnd])
            if name.hasPrefix("--") { name.removeFirst(2) }
            var rest = text[nameEnd...].drop(while: isBlank)
            let hasEquals = rest.first == "="
            if hasEquals { rest = rest.dropFirst().drop(while: isBlank) }
            let value = String(rest)
            if name.isEmpty { throw UsageError(at + "expected 'name value' or 'name = value'") }
            if name == "source" {
                guard !value.isEmpty else { throw UsageError(at + "source needs a value PATH") }
                sources.append(configSource(value, file: file))
                continue
            }
            if name == "config" || name == "help" || name == "version" {
                throw UsageError(at + "--\(name) is not allowed in a configuration file")
            }
            guard let spec = options.first(where: { $0.name == "--" + name }) else {
                throw UsageError(at + "unknown option '\(name)' (see --help; a SOURCE is written 'source PATH')")
            }
            if let placeholder = spec.value {
                guard !value.isEmpty else { throw UsageError(at + "--\(name) needs a value \(placeholder)") }
                if !Self.freeTextOptions.contains(name), let blank = value.firstIndex(where: isBlank) {
                    // `manifest URL extra`: not a value with a space in it (a URL would get `%20`).
                    let extra = value[blank...].drop(while: isBlank).prefix(while: { !isBlank($0) })
                    throw UsageError(at + "--\(name) takes one value \(placeholder), but '\(extra)' follows '\(value[..<blank])'"
                                     + (extra.hasPrefix("#") ? " (a # comment needs a line of its own)" : ""))
                }
                if Self.freeTextOptions.contains(name),
                   let hash = value.indices.first(where: { value[$0] == "#" && $0 > value.startIndex
                                                            && isBlank(value[value.index(before: $0)]) }) {
                    // `on-tap /usr/local/bin/tap.sh  # lights`: the comment would be taken as part
                    // of the value (passed to the command, drawn by the clock).
                    throw UsageError(at + "--\(name): '\(value[hash...])' after the value would be taken as part of"
                                     + " it: a # comment needs a line of its own")
                }
            } else if hasEquals || !value.isEmpty {
                throw UsageError(at + "--\(name) takes no value")
            }
            do {
                try spec.apply(&settings, value)
            } catch {
                throw UsageError(at + error.message)
            }
        }
        if !sources.isEmpty { settings.sources = sources }
    }
}

/// A configuration file's `source` value as the show reads it: a relative path is taken against
/// the folder of the configuration file `file` (as written, so a relative `file` gives a relative
/// path), not the working directory; an absolute path, an http(s) URL or any other URL is kept.
func configSource(_ value: String, file: String) -> String {
    guard !value.hasPrefix("/"), !ManifestItem.isRemote(value), urlScheme(value) == nil,
          let slash = file.lastIndex(of: "/") else {
        return value
    }
    let resolved = String(file[..<slash]) + "/" + value
    // `javascript:x` stays as written (refused as a URL) unless a file of that name is there.
    return schemePrefix(value) != nil && !pathExists(resolved) ? value : resolved
}

/// `text` with `{hostname}` and `{machine-id}` replaced by the device's (``DeviceIdentity``), the
/// host name percent-encoded outside RFC 3986's unreserved characters. A placeholder whose value
/// cannot be read is a ``UsageError`` naming `option`.
func expandDevicePlaceholders(_ text: String, option: String) throws(UsageError) -> String {
    do {
        return try DeviceIdentity.expand(text, hostname: { () throws(SystemError) -> String in
            guard let name = DeviceIdentity.hostname() else {
                throw SystemError(operation: "gethostname", path: "{hostname}", errno: errno == 0 ? ENOENT : errno)
            }
            var encoded = ""
            for c in name.utf8 {
                let unreserved = (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c)
                    || c == 0x2D || c == 0x2E || c == 0x5F || c == 0x7E
                let hex = String(c, radix: 16, uppercase: true)
                encoded += unreserved ? String(UnicodeScalar(c)) : "%" + (c < 16 ? "0" : "") + hex
            }
            return encoded
        }, machineID: { () throws(SystemError) -> String in try DeviceIdentity.machineID() })
    } catch {
        let placeholder = error.path == "{hostname}" ? "{hostname}" : "{machine-id}"
        throw UsageError("\(option): cannot fill in \(placeholder): \(error)")
    }
}

/// The scheme of `text` when it starts as a URL with an authority (`scheme://`; RFC 3986
/// section 3.1: a letter, then letters, digits, `+`, `-`, `.`), lowercased; nil otherwise
/// (`/srv/a://b.gif` is a path).
func urlScheme(_ text: String) -> String? {
    let bytes = Array(text.utf8)
    guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: [58, 47, 47]) }) else { return nil }  // "://"
    let scheme = bytes[..<end]
    guard let first = scheme.first, isASCIILetter(first),
          scheme.allSatisfy(isSchemeByte) else { return nil }
    return String(decoding: scheme, as: UTF8.self).lowercased()
}

/// The scheme of `text` when it starts as `scheme:` (RFC 3986 section 3.1, with or without
/// `//`: `javascript:alert(1)`, `mailto:x`), lowercased; nil otherwise (`12:30.jpg`, `/a:b`).
func schemePrefix(_ text: String) -> String? {
    let bytes = Array(text.utf8)
    guard let colon = bytes.firstIndex(of: 58), let first = bytes.first, isASCIILetter(first),
          bytes[..<colon].allSatisfy(isSchemeByte) else { return nil }
    return String(decoding: bytes[..<colon], as: UTF8.self).lowercased()
}

/// Whether `a` and `b` name one folder: the same file (device and inode) when both exist, else
/// the same path once made absolute (against the working directory) with `.`, `..`, repeated
/// and trailing slashes taken out (a folder not made yet, such as the frames folder).
func sameFolder(_ a: String, _ b: String) -> Bool {
    var sa = stat(), sb = stat()
    if stat(a, &sa) == 0, stat(b, &sb) == 0 {
        return sa.st_mode & S_IFMT == S_IFDIR && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
    }
    func normalised(_ path: String) -> [Substring] {
        var full = path
        if !path.hasPrefix("/"), let cwd = getcwd(nil, 0) {
            full = String(cString: cwd) + "/" + path
            free(cwd)
        }
        var parts: [Substring] = []
        for part in full.split(separator: "/") where part != "." {
            if part == ".." { _ = parts.popLast() } else { parts.append(part) }
        }
        return parts
    }
    return normalised(a) == normalised(b)
}

/// Whether something (a file, a directory, a dangling symbolic link) is at `path` (lstat(2)).
private func pathExists(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0
}

private func isASCIILetter(_ c: UInt8) -> Bool { (65...90).contains(c) || (97...122).contains(c) }

/// RFC 3986 section 3.1: ALPHA / DIGIT / "+" / "-" / ".".
private func isSchemeByte(_ c: UInt8) -> Bool {
    if isASCIILetter(c) || (48...57).contains(c) { return true }
    return c == 43 || c == 45 || c == 46
}
