// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import KioskCore
import KioskImaging
@testable import KioskApp

// Brightness end to end (docs/power.md): the real executable, the offscreen backend whose frames
// show the pixel path, a folder laid out like /sys/class/backlight/NAME for the backlight path,
// the control socket and a playlist's show-wide settings.

/// A white 64x40 PNG (and its folder), the one image of these shows.
private func whiteImage() throws -> (dir: String, image: String) {
    let dir = controlTestDirectory()
    try PNGWriter.write(Bitmap(width: 64, height: 40, fill: 0xFFFF_FFFF), to: "\(dir)/white.png")
    return (dir, "\(dir)/white.png")
}

/// The frames written so far in `folder`, by name (show time order), with their centre pixel's red.
private func frameLevels(_ folder: String) -> [(name: String, red: Int)] {
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix("frame-") }
        .sorted()
    return names.compactMap { name in
        guard let b = try? ImageDecoder.decode(path: "\(folder)/\(name)").bitmap else { return nil }
        return (name, Int((b[b.width / 2, b.height / 2] >> 16) & 0xFF))
    }
}

private func runToEnd(_ arguments: [String]) throws -> (status: Int32?, stderr: String) {
    let child = try KioskChild(arguments)
    _ = waitFor(30) { !child.process.isRunning }
    let status = child.stop(timeout: 1)
    return (status, child.stderr.text)
}

@Test func theOffscreenFramesShowTheTiersLevelAndABacklightTakesItInstead() throws {
    let (dir, image) = try whiteImage()
    // Pixels: white at 40 % of its light is sRGB 170 in every frame.
    var run = try runToEnd(["--display", "offscreen:\(dir)/pixels", "--size", "64x40", "--run-for", "1",
                            "--brightness", "00:00=40", image])
    #expect(run.status == 0, "\(run.stderr)")
    var levels = frameLevels("\(dir)/pixels")
    #expect(!levels.isEmpty && levels.allSatisfy { $0.red == 170 }, "\(levels) \(run.stderr)")
    #expect(run.stderr.contains("brightness by the pixels"), "\(run.stderr)")
    // Without --brightness nothing is dimmed.
    run = try runToEnd(["--display", "offscreen:\(dir)/full", "--size", "64x40", "--run-for", "1", image])
    levels = frameLevels("\(dir)/full")
    #expect(!levels.isEmpty && levels.allSatisfy { $0.red == 255 }, "\(levels)")

    // A backlight: 40 % of max_brightness 255 is written, the pixels stay as they are (never
    // both), and the brightness found is put back at the end.
    let light = "\(dir)/backlight/panel0"
    try FileManager.default.createDirectory(atPath: light, withIntermediateDirectories: true)
    try "255\n".write(toFile: "\(light)/max_brightness", atomically: false, encoding: .utf8)
    try "200\n".write(toFile: "\(light)/brightness", atomically: false, encoding: .utf8)
    try "raw\n".write(toFile: "\(light)/type", atomically: false, encoding: .utf8)
    let child = try KioskChild([
        "--display", "offscreen:\(dir)/lit", "--size", "64x40", "--clock", "real", "--run-for", "100",
                                "--brightness", "00:00=40", "--backlight", light, image])
    #expect(
        waitFor(15) { (try? String(contentsOfFile: "\(light)/brightness", encoding: .utf8)) == "102\n" },
        "\(child.stderr.text)")
    #expect(waitFor(15) { !frameLevels("\(dir)/lit").isEmpty })
    #expect(frameLevels("\(dir)/lit").allSatisfy { $0.red == 255 })
    #expect(child.stop() == 0)
    #expect((try? String(contentsOfFile: "\(light)/brightness", encoding: .utf8)) == "200\n", "put back at exit")
    #expect(child.stderr.text.contains("brightness by the backlight"), "\(child.stderr.text)")
}

@Test func theControlSocketRampsTheBrightnessAndStatusSaysWhyAndHow() throws {
    let (dir, image) = try whiteImage()
    let socket = "\(dir)/control"
    let child = try KioskChild(["--display", "offscreen:\(dir)/frames", "--size", "64x40", "--clock", "real",
                                "--run-for", "100000", "--interval", "60", "--brightness", "00:00=40,12:00=40",
                                "--control", socket, image])
    defer { _ = child.stop() }
    guard waitFor(15, { access(socket, F_OK) == 0 && !child.shown.isEmpty }) else {
        Issue.record("no socket or no first image: \(child.stderr.text)")
        return
    }
    let client = try ControlClient(path: socket)
    var data = try client.request(#"{"command":["status"]}"#)["data"] as? [String: Any] ?? [:]
    var brightness = data["brightness"] as? [String: Any] ?? [:]
    #expect(brightness["percent"] as? Double == 40 && brightness["via"] as? String == "pixels", "\(data)")
    #expect(brightness["tiers"] as? String == "00:00=40,12:00=40")
    #expect(data["display_reason"] as? String == "schedule")
    #expect((data["presence"] as? [String: Any])?["state"] as? String == "off")
    #expect((data["cec"] as? [String: Any])?["state"] as? String == "off")
    #expect((data["cec"] as? [String: Any])?["reason"] as? String == "offscreen display")

    let before = frameLevels("\(dir)/frames").count
    #expect(try client.request(#"{"command":["brightness",100]}"#)["error"] as? String == "success")
    #expect(waitFor(5) { frameLevels("\(dir)/frames").last?.red == 255 })
    let ramp = frameLevels("\(dir)/frames").dropFirst(before).map(\.red)
    // The ramp: rising from 170 to 255 through several steps in between, never falling.
    #expect(ramp.count >= 6 && ramp.last == 255, "\(ramp)")
    #expect(zip(ramp, ramp.dropFirst()).allSatisfy { $0 <= $1 }, "\(ramp)")
    #expect(ramp.filter { $0 > 170 && $0 < 255 }.count >= 4, "\(ramp)")
    // (The last steps of the eased ramp are within a level of 255 already.)
    #expect(waitFor(2) {
        data = (try? client.request(#"{"command":["status"]}"#)["data"] as? [String: Any]) ?? [:]
        brightness = data["brightness"] as? [String: Any] ?? [:]
        return brightness["percent"] as? Double == 100
    }, "\(data)")
    #expect(brightness["override"] as? Bool == true && brightness["target_percent"] as? Double == 100, "\(data)")
    // Back to the tiers.
    #expect(try client.request(#"{"command":["brightness","auto"]}"#)["error"] as? String == "success")
    #expect(waitFor(5) { frameLevels("\(dir)/frames").last?.red == 170 })
    let refused = try client.request(#"{"command":["brightness",0]}"#)["error"] as? String ?? ""
    #expect(refused.contains("expected a whole percentage 1 ... 100"), "\(refused)")
    #expect(try client.request(#"{"command":["presence_timeout",30]}"#)["error"] as? String == "success")
    data = try client.request(#"{"command":["status"]}"#)["data"] as? [String: Any] ?? [:]
    let presence = data["presence"] as? [String: Any] ?? [:]
    #expect(presence["state"] as? String == "present" && presence["timeout_s"] as? Int == 30, "\(data)")
}

@Test func aPlaylistsBrightnessAndPresenceTimeoutApply() throws {
    let (dir, image) = try whiteImage()
    try #"{"brightness": "00:00=25", "presence_timeout": 0, "items": [{"src": "\#(image)"}]}"#
        .write(toFile: "\(dir)/show.json", atomically: false, encoding: .utf8)
    let run = try runToEnd([
        "--display", "offscreen:\(dir)/frames", "--size", "64x40", "--run-for", "1", "\(dir)/show.json",
    ])
    #expect(run.status == 0, "\(run.stderr)")
    let levels = frameLevels("\(dir)/frames")
    #expect(
        !levels.isEmpty && levels.allSatisfy { $0.red == Int(PixelBrightness(permille: 250).table![255]) },
        "\(levels) \(run.stderr)")
    // A bad value is the manifest's error, naming the key.
    try #"{"brightness": "07:00=120", "items": [{"src": "\#(image)"}]}"#.write(
        toFile: "\(dir)/bad.json", atomically: false, encoding: .utf8)
    let bad = try runToEnd([
        "--display", "offscreen:\(dir)/bad", "--size", "64x40", "--run-for", "1", "\(dir)/bad.json",
    ])
    #expect(
        bad.stderr.contains("brightness") && bad.stderr.contains("'120' in '07:00=120' is not a brightness"),
        "\(bad.stderr)")
}

@Test func thePowerOptionsParseAndBadValuesSayWhy() throws {
    let s = try CommandLineParser.parse(["--presence", "gpio:gpiochip0:17,active-low", "--presence-timeout", "90",
        "--cec", "/dev/cec1", "--brightness", "07:00=100,23:00=off", "--backlight", "none", "/p",
    ])
    #expect(s.presence?.line == "17" && s.presence?.activeLow == true && s.presenceTimeout == .seconds(90))
    #expect(s.cec == "/dev/cec1" && s.backlight == "none" && s.brightness?.description == "07:00=100,23:00=off")
    func usage(_ args: [String]) -> String {
        do { _ = try CommandLineParser.parse(args + ["/p"]); return "accepted" } catch { return error.description }
    }
    #expect(usage(["--presence", "gpiochip0:17"]).contains("expected gpio:CHIP:LINE"))
    #expect(usage(["--presence-timeout", "0"]).contains("--presence-timeout: expected seconds in 1...86400"))
    #expect(usage(["--cec", "cec0"]).contains("--cec: expected auto, none or a device path"))
    #expect(usage(["--brightness", "07:00=100,23:00"]).hasPrefix("--brightness: '23:00' is not a tier"))
    #expect(usage(["--backlight", "panel"]).contains("--backlight: expected auto, none or a directory"))
    // In a configuration file, the tiers may have spaces after the commas.
    var settings = Settings()
    try CommandLineParser.applyConfig(
        Array("brightness 07:00=100, 20:00=40\ncec none\n".utf8), file: "k.conf", to: &settings)
    #expect(settings.brightness?.tiers.count == 2 && settings.cec == "none")
}
