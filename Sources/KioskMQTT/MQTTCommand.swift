// SPDX-License-Identifier: Apache-2.0
import KioskSystem

/// A command received on one of the device's command topics (docs/mqtt.md "Commands"): the
/// same commands the control socket takes, less `status` (the status topic has it) and
/// `screenshot` (a file on the device is no business of the network).
public enum MQTTCommand: Equatable, Sendable {
    case next, previous, pause, resume
    /// `PREFIX/command/goto` with the playlist index as the payload (`3`).
    case goto(Int)
    /// `PREFIX/command/display` with `ON` or `OFF` (Home Assistant's switch payloads).
    case display(on: Bool)
    /// `PREFIX/command/brightness` with a whole percentage `1` ... `100` (what Home Assistant's
    /// number entity sends) or `auto` (nil: back to `--brightness`'s tiers), as the control
    /// socket's `brightness` (docs/power.md).
    case brightness(percent: Int?)

    /// The last level of each command topic.
    public enum Name: String, CaseIterable, Sendable {
        case next, previous, pause, resume, goto, display, brightness
    }

    public var name: Name {
        switch self {
        case .next: return .next
        case .previous: return .previous
        case .pause: return .pause
        case .resume: return .resume
        case .goto: return .goto
        case .display: return .display
        case .brightness: return .brightness
        }
    }
}

/// A message on a command topic that is not carried out, and why (the text goes to the log
/// and to the reply topic).
public struct MQTTCommandRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// The command topic's last level when it is one of ours, else nil.
    public var command: MQTTCommand.Name?
    public var reason: String
    public var description: String { (command.map { "\($0.rawValue): " } ?? "") + reason }
}

/// Reads command messages strictly (docs/mqtt.md "Commands"): the topic must be exactly one of
/// the device's command topics, the payload at most ``maxPayloadBytes`` of exactly the form
/// documented (no spaces, no other case, no JSON around it), and a retained message is refused
/// (it would be carried out again at every reconnect, long after it was sent).
public enum MQTTCommandParser {
    /// Longest payload read, bytes; longer ones are refused unread.
    public static let maxPayloadBytes = 32
    /// Longest topic compared, bytes.
    public static let maxTopicBytes = 512

    /// The payload a Home Assistant button sends (`payload_press`'s default).
    public static let press = "PRESS"

    /// The command in a message on `topic` with `payload`; `retained` is the message's retain
    /// flag.
    public static func parse(topic: [UInt8], payload: [UInt8], retained: Bool,
                             topics: MQTTTopics) -> Result<MQTTCommand, MQTTCommandRefusal> {
        guard topic.count <= maxTopicBytes else {
            return .failure(MQTTCommandRefusal(command: nil, reason: "topic longer than \(maxTopicBytes) bytes"))
        }
        let base = Array((topics.prefix + "/command/").utf8)
        guard topic.starts(with: base),
              let name = MQTTCommand.Name(rawValue: String(decoding: topic[base.count...], as: UTF8.self)),
              Array(topics.command(name).utf8) == topic else {
            return .failure(MQTTCommandRefusal(command: nil, reason: "not one of this device's command topics: "
                + String(decoding: topic.prefix(200), as: UTF8.self)))
        }
        func refuse(_ reason: String) -> Result<MQTTCommand, MQTTCommandRefusal> {
            .failure(MQTTCommandRefusal(command: name, reason: reason))
        }
        guard !retained else {
            return refuse("a retained message is not a command (clear it: mosquitto_pub -r -n -t TOPIC)")
        }
        guard payload.count <= maxPayloadBytes else {
            return refuse("payload of \(payload.count) bytes, more than \(maxPayloadBytes)")
        }
        let text = String(decoding: payload, as: UTF8.self)
        let printable = payload.allSatisfy { (0x20...0x7E).contains($0) }
        let shown = printable ? "'\(text)'" : "\(payload.count) bytes not printable ASCII"
        switch name {
        case .next, .previous, .pause, .resume:
            guard payload.isEmpty || text == press else { return refuse("expected \(press) or nothing, got \(shown)") }
            switch name {
            case .next: return .success(.next)
            case .previous: return .success(.previous)
            case .pause: return .success(.pause)
            default: return .success(.resume)
            }
        case .display:
            guard text == "ON" || text == "OFF" else { return refuse("expected ON or OFF, got \(shown)") }
            return .success(.display(on: text == "ON"))
        case .goto:
            // A playlist index: decimal digits, no sign, no leading zero, 0...999999999.
            guard (1...9).contains(payload.count), payload.allSatisfy({ (0x30...0x39).contains($0) }),
                  payload.count == 1 || payload[0] != 0x30, let index = Int(text) else {
                return refuse("expected a playlist index 0...999999999 in decimal digits, got \(shown)")
            }
            return .success(.goto(index))
        case .brightness:
            if text == "auto" { return .success(.brightness(percent: nil)) }
            // Home Assistant's MQTT number sends an integral value without a decimal point
            // ("40"), which is all a step of 1 gives; "40.0" and the like are refused.
            guard (1...3).contains(payload.count), payload.allSatisfy({ (0x30...0x39).contains($0) }),
                  payload.count == 1 || payload[0] != 0x30, let percent = Int(text), (1...100).contains(percent) else {
                return refuse("expected a whole percentage 1...100 in decimal digits or auto, got \(shown)")
            }
            return .success(.brightness(percent: percent))
        }
    }
}
