// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskDisplay
import KioskInput
import KioskSystem

// Presence and power at start (docs/power.md): the motion sensor's reader, where brightness
// goes, the TV's CEC adapter. The frame loop's side is DisplaySupervisor+Power.swift.

extension KioskApp {
    /// Gives the loop's configuration its motion sensor, brightness tiers and sink and CEC
    /// client (the display supervision adds the tiers' `off` ranges to the schedule). Trouble is
    /// logged and the show goes on without the part concerned. Returns what must be given back
    /// at the end (``PowerDevices/stop()``).
    static func setUpPower(_ loop: inout FrameLoop.Configuration, settings: Settings, display: Display,
                           time: ShowTime, showSettings: (brightness: BrightnessTiers?, presenceTimeout: Duration?))
        -> PowerDevices {
        loop.presenceTimeout = settings.presenceTimeout
        loop.brightness = settings.brightness
        var devices = PowerDevices()
        if let spec = settings.presence {
            if case .real(let driver) = time {
                do {
                    let input = try GPIOPresenceInput(spec: spec, showStart: driver.monotonic.origin)
                    try input.start()
                    loop.presence = input
                    devices.sensor = input
                } catch {
                    Log.warning("motion sensor unavailable", reason: error.description)
                }
            } else {
                Log.warning(
                    "--presence not followed",
                    reason: "an offscreen run on the virtual clock follows no sensor (--clock real does)")
            }
        }
        loop.brightnessSink = brightnessSink(settings, display: display)
        if case .backlight(let light) = loop.brightnessSink { devices.backlight = light }
        if settings.brightness != nil || showSettings.brightness != nil {
            let sink = loop.brightnessSink
            Log.info("brightness by the \(sink.name)", detail: {
                if case .backlight(let light) = sink { return light.summary }
                return "the pixels are scaled in the copy to the screen"
            }())
        }
        (loop.cec, loop.cecAbsence) = startCEC(settings: settings, display: display)
        devices.cec = loop.cec
        return devices
    }

    /// What the show's power parts hold of the machine, given back at the end: the CEC thread,
    /// the sensor's line, the backlight's level found at start.
    struct PowerDevices {
        var cec: CECClient?
        var sensor: GPIOPresenceInput?
        var backlight: Backlight?

        func stop() {
            cec?.stop()
            sensor?.stop()
            backlight?.restore()
        }
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
            if display.frameFiles != nil { return pixels }  // offscreen frames
            let drm = display.drmOutput
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

    /// The CEC client of `--cec` (auto: ``CECClient/choose(for:directory:)``), started; or why
    /// there is none.
    static func startCEC(settings: Settings, display: Display) -> (CECClient?, absence: String?) {
        var path = settings.cec
        if path == "none" { return (nil, "--cec none") }
        if path == "auto" {
            if display.frameFiles != nil { return (nil, "offscreen display") }
            let choice = CECClient.choose(for: display)
            guard let found = choice.path else {
                Log.info("CEC off", detail: choice.why)
                return (nil, choice.why)
            }
            path = found
            Log.info("CEC adapter", path: found, detail: choice.why)
        }
        do {
            let client = try CECClient(device: path)
            try client.start()
            return (client, nil)
        } catch {
            Log.warning("CEC unavailable", path: path, reason: error.description)
            return (nil, error.description)
        }
    }
}
