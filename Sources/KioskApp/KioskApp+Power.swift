// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskDisplay
import KioskInput
import KioskSystem

// Presence and power at start (docs/power.md): the motion sensor's reader, where brightness
// goes, the TV's CEC adapter. The frame loop's side is FrameLoop+Power.swift.

extension KioskApp {
    /// Gives `loop` its motion sensor, brightness tiers and sink, CEC client and the schedule
    /// with the tiers' `off` ranges in it. Trouble is logged and the show goes on without the
    /// part concerned. Returns what must be stopped at the end (``PowerControl/stop()``).
    static func setUpPower(_ loop: FrameLoop, settings: Settings, display: Display, clock: ShowClock,
                           showSettings: (brightness: BrightnessTiers?, presenceTimeout: Duration?)) -> PowerControl {
        let pc = loop.power
        pc.baseSchedule = settings.displayOff
        pc.commandLineTimeout = settings.presenceTimeout
        pc.commandLineTiers = settings.brightness
        if let spec = settings.presence {
            if let monotonic = clock as? MonotonicClock {
                do {
                    let input = try GPIOPresenceInput(spec: spec, showStart: monotonic.origin)
                    try input.start()
                    pc.presenceFeed = input
                } catch {
                    Log.warning("motion sensor unavailable", reason: error.description)
                }
            } else {
                Log.warning(
                    "--presence not followed",
                    reason: "an offscreen run on the virtual clock follows no sensor (--clock real does)")
            }
        }
        pc.sink = brightnessSink(settings, display: display)
        if settings.brightness != nil || showSettings.brightness != nil {
            Log.info("brightness by the \(pc.sink.name)", detail: {
                if case .backlight(let light) = pc.sink { return light.summary }
                return "the pixels are scaled in the copy to the screen"
            }())
        }
        startCEC(pc, settings: settings, display: display)
        pc.cec?.screen(on: loop.displayControl.powerOn)  // at start: the TV on and showing us
        loop.applyPowerSettings(brightness: showSettings.brightness, presenceTimeout: showSettings.presenceTimeout)
        return pc
    }

    /// The panel's backlight (`--backlight auto` or a directory), else the pixels of a display
    /// that can scale them, else nothing.
    static func brightnessSink(_ settings: Settings, display: Display) -> BrightnessSink {
        let pixels: BrightnessSink = (display as? PixelDimmable).map { .pixels($0) } ?? .none
        var directory: String?
        switch settings.backlight {
        case "none":
            return pixels
        case "auto":
            if display is OffscreenDisplay { return pixels }
            let drm = (display as? DRMDisplay) ?? (display as? ReopeningDRMDisplay)?.current
            let choice = Backlight.choose(connectorName: drm?.connectorName)
            guard let found = choice.directory else {
                if settings.brightness != nil {
                    Log.info("no backlight for --brightness", detail: choice.why + "; the pixels are scaled")
                }
                return pixels
            }
            directory = found
        default:
            directory = settings.backlight
        }
        do {
            return .backlight(try Backlight(directory: directory!))
        } catch {
            Log.warning(
                "backlight unusable", path: directory, reason: error.description + "; --brightness scales the pixels")
            return pixels
        }
    }

    /// The CEC client of `--cec` (auto: ``CECClient/choose(for:directory:)``), started.
    static func startCEC(_ pc: PowerControl, settings: Settings, display: Display) {
        var path = settings.cec
        if path == "none" { pc.cecAbsence = "--cec none"; return }
        if path == "auto" {
            if display is OffscreenDisplay { pc.cecAbsence = "offscreen display"; return }
            let choice = CECClient.choose(for: display)
            guard let found = choice.path else {
                pc.cecAbsence = choice.why
                Log.info("CEC off", detail: choice.why)
                return
            }
            path = found
            Log.info("CEC adapter", path: found, detail: choice.why)
        }
        do {
            let client = try CECClient(device: path)
            try client.start()
            pc.cec = client
        } catch {
            pc.cecAbsence = error.description
            Log.warning("CEC unavailable", path: path, reason: error.description)
        }
    }
}
