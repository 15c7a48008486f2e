// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskMQTT

private let topics = MQTTTopics(prefix: "kiosk-carousel/lobby", discoveryPrefix: "homeassistant")

private func parse(
    _ topic: String, _ payload: String, retained: Bool = false
) -> Result<MQTTCommand, MQTTCommandRefusal> {
    MQTTCommandParser.parse(topic: Array(topic.utf8), payload: Array(payload.utf8), retained: retained, topics: topics)
}

@Test func eachCommandTopicWithItsDocumentedPayload() {
    let base = "kiosk-carousel/lobby/command/"
    #expect(parse(base + "next", "PRESS") == .success(.next))
    #expect(parse(base + "next", "") == .success(.next))
    #expect(parse(base + "previous", "PRESS") == .success(.previous))
    #expect(parse(base + "pause", "PRESS") == .success(.pause))
    #expect(parse(base + "resume", "") == .success(.resume))
    #expect(parse(base + "display", "ON") == .success(.display(on: true)))
    #expect(parse(base + "display", "OFF") == .success(.display(on: false)))
    #expect(parse(base + "goto", "0") == .success(.goto(0)))
    #expect(parse(base + "goto", "42") == .success(.goto(42)))
    #expect(parse(base + "goto", "999999999") == .success(.goto(999_999_999)))
    #expect(topics.command(.goto) == base + "goto")
    #expect(parse(base + "brightness", "1") == .success(.brightness(percent: 1)))
    #expect(parse(base + "brightness", "40") == .success(.brightness(percent: 40)))
    #expect(parse(base + "brightness", "100") == .success(.brightness(percent: 100)))
    #expect(parse(base + "brightness", "auto") == .success(.brightness(percent: nil)))
}

@Test func payloadsAreReadStrictly() {
    let base = "kiosk-carousel/lobby/command/"
    for (name, payload) in [
        ("next", "press"), ("next", "PRESS\n"), ("next", " PRESS"), ("next", "{\"command\":[\"next\"]}"),
        ("display", "on"), ("display", "1"), ("display", "true"), ("display", ""), ("display", "ON "),
        ("goto", ""), ("goto", "-1"), ("goto", "+1"), ("goto", "01"), ("goto", "1.0"), ("goto", "1e3"),
        ("goto", "1000000000"), ("goto", " 3"), ("goto", "٣"),
        ("brightness", "0"), ("brightness", "101"), ("brightness", "040"), ("brightness", "40.0"),
        ("brightness", "-5"), ("brightness", ""), ("brightness", "AUTO"), ("brightness", "PRESS"),
    ] {
        guard case .failure(let refusal) = parse(base + name, payload) else {
            Issue.record("\(name) \(payload.debugDescription) accepted")
            continue
        }
        #expect(refusal.command?.rawValue == name, "\(refusal)")
    }
    // Over the bound: refused without being read.
    guard case .failure(let long) = parse(base + "goto", String(repeating: "1", count: 33)) else {
        Issue.record("long accepted")
        return
    }
    #expect(long.reason.contains("more than 32"))
    // Bytes that are not text are not echoed.
    guard
        case .failure(let binary) = MQTTCommandParser.parse(
            topic: Array((base + "display").utf8), payload: [0xFF, 0x00],
            retained: false, topics: topics)
    else { return }
    #expect(binary.reason.contains("2 bytes not printable ASCII"))
}

@Test func onlyTheDevicesOwnCommandTopicsAreCommands() {
    for topic in [
        "kiosk-carousel/lobby/command/reboot", "kiosk-carousel/lobby/command/next/x", "kiosk-carousel/lobby/command/",
        "kiosk-carousel/lobby2/command/next", "kiosk-carousel/lob/command/next", "kiosk-carousel/lobby/commands/next",
        "kiosk-carousel/lobby/command/NEXT", "kiosk-carousel/lobby/events", "homeassistant/status",
        "x/kiosk-carousel/lobby/command/next",
    ] {
        guard case .failure(let refusal) = parse(topic, "PRESS") else {
            Issue.record("\(topic) accepted")
            continue
        }
        #expect(refusal.command == nil, "\(topic): \(refusal)")
    }
}

@Test func aRetainedCommandIsNotCarriedOut() {
    guard case .failure(let refusal) = parse("kiosk-carousel/lobby/command/display", "OFF", retained: true) else {
        Issue.record("accepted"); return
    }
    #expect(refusal.command == .display && refusal.reason.contains("retained"))
}
