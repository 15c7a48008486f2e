// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskCore
import KioskInput

/// The evemu recordings under Tests/Fixtures/evemu-touchscreens, found from this file's path so
/// the tests run from any working directory.
enum Evemu {
    static let folder: String = {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        return tests.appendingPathComponent("Fixtures/evemu-touchscreens").path
    }()

    /// Every `.desc` file name, sorted.
    static func descriptions() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".desc") }.sorted()
    }

    /// Every `.events` file name, sorted.
    static func recordings() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".events") }.sorted()
    }

    static func text(_ name: String) throws -> String {
        try String(contentsOfFile: "\(folder)/\(name)", encoding: .utf8)
    }

    /// The `.desc` a recording belongs to: the longest device name that prefixes the file name.
    static func descriptionName(forRecording name: String) throws -> String {
        let candidates = try descriptions().filter { name.hasPrefix(String($0.dropLast(5)) + ".") }
        guard let best = candidates.max(by: { $0.count < $1.count }) else { throw EvemuError("no .desc for \(name)") }
        return best
    }
}

struct EvemuError: Error, CustomStringConvertible {
    var description: String
    init(_ text: String) { description = text }
}

/// An evemu device description (`evemu-describe`): `N:` name, `P:` property bitmask bytes,
/// `B:` type then capability bitmask bytes (a type's bytes may continue over several lines),
/// `A:` axis code (hex) min max fuzz flat [resolution].
struct EvemuDevice {
    var name = ""
    var capabilities = InputCapabilities()

    init(parsing text: String) throws {
        var offsets: [Int: Int] = [:]  // bytes seen so far per event type
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard let tag = fields.first else { continue }
            switch tag {
            case "N:":
                name = String(line.dropFirst(3))
            case "P:":
                for (i, hex) in fields.dropFirst().enumerated() {
                    guard let byte = UInt8(hex, radix: 16) else { throw EvemuError("bad P: \(line)") }
                    for bit in 0 ..< 8 where byte & (1 << bit) != 0 {
                        capabilities.properties.insert(UInt16((offsets[-1, default: 0] + i) * 8 + bit))
                    }
                }
                offsets[-1, default: 0] += fields.count - 1
            case "B:":
                guard fields.count >= 2, let type = Int(fields[1], radix: 16) else {
                    throw EvemuError("bad B: \(line)")
                }
                let start = offsets[type, default: 0]
                for (i, hex) in fields.dropFirst(2).enumerated() {
                    guard let byte = UInt8(hex, radix: 16) else { throw EvemuError("bad B: \(line)") }
                    for bit in 0 ..< 8 where byte & (1 << bit) != 0 {
                        let code = UInt16((start + i) * 8 + bit)
                        switch UInt16(type) {
                        case Evdev.EV_KEY: capabilities.keys.insert(code)
                        case Evdev.EV_REL: capabilities.relativeAxes.insert(code)
                        case Evdev.EV_ABS:
                            if capabilities.absoluteAxes[code] == nil {
                                capabilities.absoluteAxes[code] = AbsoluteAxis(minimum: 0, maximum: 0)
                            }
                        default: break
                        }
                    }
                }
                offsets[type] = start + fields.count - 2
            case "A:":
                guard fields.count >= 6, let code = UInt16(fields[1], radix: 16),
                      let lo = Int32(fields[2]), let hi = Int32(fields[3]), let fuzz = Int32(fields[4]),
                      let flat = Int32(fields[5])
                else { throw EvemuError("bad A: \(line)") }
                let res = fields.count >= 7 ? Int32(fields[6]) ?? 0 : 0
                capabilities.absoluteAxes[code] = AbsoluteAxis(minimum: lo, maximum: hi, fuzz: fuzz, flat: flat,
                                                               resolution: res)
            default:
                continue
            }
        }
        if name.isEmpty { throw EvemuError("no N: line") }
    }
}

/// The `E:` lines of an evemu recording: `E: sec.usec type(hex) code(hex) value(decimal)`, an
/// optional `# comment` after.
func parseEvemuEvents(_ text: String) throws -> [EvdevEvent] {
    var events: [EvdevEvent] = []
    for line in text.split(separator: "\n") where line.hasPrefix("E:") {
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard fields.count >= 5 else { throw EvemuError("bad E: \(line)") }
        let parts = fields[1].split(separator: ".")
        guard parts.count == 2, let sec = Int64(parts[0]), let usec = Int64(parts[1]),
              let type = UInt16(fields[2], radix: 16), let code = UInt16(fields[3], radix: 16),
              let value = Int32(fields[4])
        else { throw EvemuError("bad E: \(line)") }
        events.append(EvdevEvent(time: .seconds(sec) + .microseconds(usec), type: type, code: code, value: value))
    }
    return events
}

/// A recording replayed through the decoder with its device's own ranges.
struct Replay {
    var device: EvemuDevice
    var events: [EvdevEvent]
    var mapping: TouchMapping
    var samples: [TouchSample]
    /// Samples of each frame, for checks per frame.
    var frames: [[TouchSample]]

    init(_ recording: String, panelWidth: Int = 1280, panelHeight: Int = 800, rotation: Rotation = .none) throws {
        device = try EvemuDevice(parsing: Evemu.text(try Evemu.descriptionName(forRecording: recording)))
        events = try parseEvemuEvents(Evemu.text(recording))
        guard let axes = device.capabilities.positionAxes else { throw EvemuError("\(recording): no position axes") }
        mapping = TouchMapping(xAxis: axes.x, yAxis: axes.y, rotation: rotation, panelWidth: panelWidth,
                               panelHeight: panelHeight)
        guard var decoder = TouchDecoder(capabilities: device.capabilities, mapping: mapping,
                                         showStart: events.first?.time ?? .zero) else { throw EvemuError("no decoder") }
        frames = []
        for event in events {
            let out = decoder.feed(event)
            if event.type == Evdev.EV_SYN && event.code == Evdev.SYN_REPORT { frames.append(out) }
        }
        samples = frames.flatMap { $0 }
    }

    /// The touches: from each `.down` to its `.up`, inclusive.
    var touches: [[TouchSample]] {
        var result: [[TouchSample]] = [], current: [TouchSample] = []
        for s in samples {
            current.append(s)
            if s.phase == .up { result.append(current); current = [] }
        }
        if !current.isEmpty { result.append(current) }
        return result
    }
}

/// Builds evdev frames for synthetic streams; time advances 10 ms per frame.
struct StreamBuilder {
    var time: Duration = .seconds(100)
    var events: [EvdevEvent] = []

    mutating func abs(_ code: UInt16, _ value: Int32) {
        events.append(.init(time: time, type: Evdev.EV_ABS, code: code, value: value))
    }
    mutating func key(_ code: UInt16, _ value: Int32) {
        events.append(.init(time: time, type: Evdev.EV_KEY, code: code, value: value))
    }
    mutating func mtReport() {
        events.append(.init(time: time, type: Evdev.EV_SYN, code: Evdev.SYN_MT_REPORT, value: 0))
    }
    mutating func dropped() { events.append(.init(time: time, type: Evdev.EV_SYN, code: Evdev.SYN_DROPPED, value: 0)) }
    /// Ends the frame; returns its events and starts the next 10 ms later.
    mutating func report() -> [EvdevEvent] {
        events.append(.init(time: time, type: Evdev.EV_SYN, code: Evdev.SYN_REPORT, value: 0))
        defer { events = []; time += .milliseconds(10) }
        return events
    }
}
