// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskSystem
import Testing

// kiosk-carousel against a real mosquitto on loopback: Home Assistant discovery as a
// subscriber reads it from the broker, commands, the last will, a broker outage and a SIGKILL
// with no seq missing afterwards.

@Test(.timeLimit(.minutes(10)))
func homeAssistantFindsTheKioskAndItsButtonsMoveTheShowWithinASecond() throws {
    let broker = try Broker()
    let state = makeTempDirectory("mqtt-state")
    defer { try? FileManager.default.removeItem(atPath: state) }
    let replies = try Subscriber(broker, topics: ["kiosk-carousel/lobby/reply", "kiosk-carousel/lobby/events",
                                                  "kiosk-carousel/lobby/display"])
    let kiosk = try Kiosk(["--interval", "60", "--run-for", "90", "--mqtt", broker.url, "--mqtt-id", "lobby",
                           "--state-dir", state])
    #expect(waitFor(15) { kiosk.shown == [0] && kiosk.logText.contains("mqtt connected") }, "\(kiosk.logText)")
    // The first event and the screen's state (published with the status the frame loop sends
    // after its first frame) are on the broker before the retained read below starts.
    #expect(waitFor(5) {
        replies.messages.contains { $0.topic.hasSuffix("/events") }
            && replies.messages.contains { $0.topic.hasSuffix("/display") }
    })

    // What Home Assistant reads when it (re)starts: the retained configs, availability, state.
    let retained = try Subscriber(broker, topics: ["homeassistant/#", "kiosk-carousel/lobby/#"], retainedOnly: true)
        .finish { $0.count >= 10 }
    let configs = retained.filter { $0.topic.hasPrefix("homeassistant/") }
    #expect(
        Set(configs.map(\.topic))
            == Set(
                [
                    "button/lobby/next", "button/lobby/previous", "button/lobby/pause", "button/lobby/resume",
                    "switch/lobby/display", "number/lobby/brightness", "sensor/lobby/image",
                ].map { "homeassistant/\($0)/config" }))
    for config in configs {
        #expect(discoveryProblems(topic: config.topic, payload: Array(config.payload.utf8)) == [], "\(config.payload)")
    }
    #expect(retained.contains(Message(topic: "kiosk-carousel/lobby/availability", payload: "online", retained: true)))
    #expect(
        retained.contains(Message(topic: "kiosk-carousel/lobby/display", payload: "ON", retained: true)), "\(retained)")
    let status = retained.first { $0.topic == "kiosk-carousel/lobby/status" }
    guard case .object(let fields)? = status.flatMap({ try? JSONValue.parse(Array($0.payload.utf8)) }) else {
        Issue.record("no status: \(retained)"); return
    }
    #expect(
        fields["index"] == .int(0) && fields["name"] == .string("colorfulcups-1920x1200.jpg")
            && fields["playlist_length"] == .int(5))
    // No event is retained (a new subscriber must not take an old event for a new one).
    #expect(!retained.contains { $0.topic.hasSuffix("/events") })

    // The "Next image" button: the next image is shown within a second of the press.
    let pressed = now()
    try publish(broker, "kiosk-carousel/lobby/command/next", "PRESS")
    #expect(waitFor(1) { kiosk.shown == [0, 1] }, "\(kiosk.events.all)")
    let latency = now() - pressed
    #expect(latency < 1, "next took \(latency) s")
    try publish(broker, "kiosk-carousel/lobby/command/goto", "3")
    #expect(waitFor(1) { kiosk.shown == [0, 1, 3] }, "\(kiosk.events.all)")
    // The screen switch: off, with its state and event; on again.
    try publish(broker, "kiosk-carousel/lobby/command/display", "OFF")
    #expect(
        waitFor(2) {
            replies.messages.contains { $0.topic.hasSuffix("/events") && $0.payload.contains("\"display\"") }
                && replies.messages.contains { $0.topic.hasSuffix("/display") && $0.payload == "OFF" }
        })
    let dark = try Subscriber(broker, topics: ["kiosk-carousel/lobby/display"], retainedOnly: true).finish {
        !$0.isEmpty
    }
    #expect(dark.map(\.payload) == ["OFF"])
    try publish(broker, "kiosk-carousel/lobby/command/display", "ON")
    // The brightness slider: 40 % (by the pixels offscreen), in the retained status.
    try publish(broker, "kiosk-carousel/lobby/command/brightness", "40")
    let brightnessDone = #""command":"brightness","error":"success""#
    #expect(waitFor(3) { replies.messages.contains { $0.payload.contains(brightnessDone) } }, "\(replies.messages)")
    // The retained status is published after the command's reply: read until it has come (or 3 s).
    func brightnessInStatus() throws -> [String: JSONValue]? {
        let lit = try Subscriber(broker, topics: ["kiosk-carousel/lobby/status"], retainedOnly: true).finish {
            !$0.isEmpty
        }
        guard case .object(let now)? = lit.first.flatMap({ try? JSONValue.parse(Array($0.payload.utf8)) }),
              case .object(let brightness)? = now["brightness"] else { return nil }
        return brightness
    }
    var lit = try brightnessInStatus()
    let statusBy = now() + 3
    while now() < statusBy, lit?["override"] != .bool(true) {
        usleep(100_000)
        lit = try brightnessInStatus()
    }
    if let brightness = lit {
        let target = brightness["target_percent"]
        #expect((target == .int(40) || target == .double(40)) && brightness["override"] == .bool(true), "\(brightness)")
    } else {
        Issue.record("no brightness in the status")
    }
    #expect(waitFor(2) { kiosk.logText.contains(#"info brightness detail="40.0 % by the pixels (MQTT)""#) },
            "\(kiosk.logText)")
    // A name under the command level that is no command: answered too, with its name.
    try publish(broker, "kiosk-carousel/lobby/command/BRIGHTNESS", "40")
    #expect(waitFor(3) {
        replies.messages.contains {
            $0.payload.contains(#""command":"BRIGHTNESS""#)
                && $0.payload.contains("not one of this device's command topics")
        }
    }, "\(replies.messages)")
    // A bad payload, a goto past the end: answered on the reply topic, nothing moves.
    try publish(broker, "kiosk-carousel/lobby/command/goto", "-1")
    try publish(broker, "kiosk-carousel/lobby/command/goto", "9")
    #expect(waitFor(3) { replies.messages.filter { $0.topic.hasSuffix("/reply") }.count >= 8 })
    let answers = replies.messages.filter { $0.topic.hasSuffix("/reply") }.map(\.payload)
    #expect(answers.contains(#"{"command":"next","error":"success","payload":"PRESS"}"#), "\(answers)")
    #expect(
        answers.contains { $0.contains(#""command":"goto""#) && $0.contains("expected a playlist index") }, "\(answers)"
    )
    #expect(answers.contains { $0.contains("bad index 9: the playlist has 5 items") }, "\(answers)")
    #expect(kiosk.shown == [0, 1, 3, 3] || kiosk.shown == [0, 1, 3], "\(kiosk.shown)")

    // A clean stop: offline, retained.
    kiosk.stop()
    let after = try Subscriber(broker, topics: ["kiosk-carousel/lobby/availability"], retainedOnly: true).finish {
        !$0.isEmpty
    }
    #expect(after.map(\.payload) == ["offline"])
    print("mqtt: a Next button press moved the show in \(Int(latency * 1000)) ms (mosquitto_pub's start included)")
}

@Test(.timeLimit(.minutes(10)))
func theLastWillMarksAKilledKioskOfflineAndRetainedOrForeignCommandsAreNotCarriedOut() throws {
    let broker = try Broker()
    let state = makeTempDirectory("mqtt-state")
    defer { try? FileManager.default.removeItem(atPath: state) }
    // A retained "screen off" left on the command topic by someone, before the kiosk starts.
    try publish(broker, "kiosk-carousel/hall/command/display", "OFF", retain: true)
    let kiosk = try Kiosk([
        "--interval", "60", "--run-for", "60", "--mqtt", broker.url, "--mqtt-id", "hall", "--state-dir", state,
    ])
    #expect(waitFor(15) { kiosk.logText.contains("mqtt connected") && kiosk.shown == [0] })
    #expect(waitFor(5) { kiosk.logText.contains("retained message is not a command") }, "\(kiosk.logText)")
    // Another device's command topic, a topic beside ours: nothing moves.
    try publish(broker, "kiosk-carousel/hall2/command/next", "PRESS")
    try publish(broker, "kiosk-carousel/hall/commands/next", "PRESS")
    usleep(700_000)
    #expect(kiosk.shown == [0])
    #expect(!kiosk.eventObjects.contains { $0["event"] == .string("display") })
    // Home Assistant's birth message (it restarted): the configs are sent again, within 12 s
    // (at most every 10 s, and up to 2 s later so a fleet does not answer at once).
    let live = try Subscriber(broker, topics: ["homeassistant/+/hall/+/config"])
    usleep(500_000)
    let before = live.messages.count  // the retained ones, at the subscription
    try publish(broker, "homeassistant/status", "online")
    #expect(waitFor(13) { live.messages.count >= before + 6 }, "\(live.messages.count - before) configs again")
    #expect(live.messages.suffix(6).allSatisfy { $0.topic.contains("/hall/") })
    kiosk.kill()
    // The broker publishes the will when the connection drops without a DISCONNECT.
    #expect(
        waitFor(5) {
            (try? Subscriber(broker, topics: ["kiosk-carousel/hall/availability"], retainedOnly: true).finish {
                !$0.isEmpty
            }.map(\.payload)) == ["offline"]
        })
}

/// Every seq from 1 to the highest received is there, and every event the kiosks wrote to
/// stdout (and got into the outbox) was received. Returns the seqs received and the duplicates.
private func accountFor(
    _ received: [Message], stdout: [String]
) -> (seqs: [Int], duplicates: Int, missing: [Int], unreceived: [String]) {
    let events = received.filter { $0.topic.hasSuffix("/events") }
    let seqs = events.compactMap { seq(of: $0.payload) }
    let unique = Set(seqs)
    let highest = unique.max() ?? 0
    let missing = (1...max(1, highest)).filter { !unique.contains($0) && highest > 0 }
    let bodies = Set(events.compactMap { withoutSeq($0.payload) })
    let unreceived = stdout.filter { !bodies.contains($0) }
    return (unique.sorted(), seqs.count - unique.count, missing, unreceived)
}

@Test(.timeLimit(.minutes(10)))
func aTenSecondBrokerOutageLosesNoEventAndTheShowGoesOn() throws {
    let broker = try Broker(persistence: true)
    let state = makeTempDirectory("mqtt-state")
    defer { try? FileManager.default.removeItem(atPath: state) }
    let id = "outage"
    // A consumer with a persistent session: the broker keeps its messages across its restart.
    var checker: Subscriber? = try Subscriber(broker, topics: ["kiosk-carousel/\(id)/events"], session: "checker-\(id)")
    let kiosk = try Kiosk([
        "--interval", "0.5", "--run-for", "300", "--mqtt", broker.url, "--mqtt-id", id, "--state-dir", state,
    ])
    #expect(waitFor(20) { (checker?.messages.count ?? 0) >= 4 }, "\(kiosk.logText)")
    var received = checker!.messages
    broker.stop()
    checker = nil
    let down = now()
    let shownBefore = kiosk.eventObjects.count
    usleep(10_000_000)
    let madeDuringOutage = kiosk.eventObjects.count - shownBefore
    try broker.start()
    let up = now()
    let checker2 = try Subscriber(broker, topics: ["kiosk-carousel/\(id)/events"], session: "checker-\(id)")
    // Everything written meanwhile arrives once the kiosk is back (its wait is at most 16 s).
    var caughtUp = 0.0
    #expect(waitFor(45) {
        let lines = kiosk.events.all
        let got = accountFor(received + checker2.messages, stdout: lines)
        if got.unreceived.isEmpty && caughtUp == 0 { caughtUp = now() - up }
        return got.unreceived.isEmpty && got.seqs.count >= lines.count
    }, "\(kiosk.logText)")
    kiosk.stop()
    usleep(300_000)
    received += checker2.messages
    let result = accountFor(received, stdout: kiosk.events.all)
    #expect(result.missing == [], "seqs missing: \(result.missing)")
    #expect(result.unreceived == [], "events never received: \(result.unreceived)")
    #expect(result.seqs.first == 1 && result.seqs.count == kiosk.events.all.count)
    // The show went on during the outage: an image every 0.5 s (at least 16 of the 20).
    #expect(madeDuringOutage >= 16, "\(madeDuringOutage) events in 10 s")
    #expect(kiosk.logText.contains("mqtt connection lost") && kiosk.logText.contains("mqtt connected"))
    print("mqtt outage: broker down \(String(format: "%.1f", up - down)) s, \(madeDuringOutage) events made meanwhile,"
          + " all \(result.seqs.count) seqs received \(String(format: "%.1f", caughtUp)) s after the broker came back,"
          + " \(result.duplicates) duplicates")
}

@Test(.timeLimit(.minutes(10)))
func aSIGKILLWithEventsSentButUnacknowledgedLosesNone() throws {
    let broker = try Broker(persistence: true)
    let state = makeTempDirectory("mqtt-state")
    defer { try? FileManager.default.removeItem(atPath: state) }
    let id = "killed"
    var checker: Subscriber? = try Subscriber(broker, topics: ["kiosk-carousel/\(id)/events"], session: "checker-\(id)")
    let first = try Kiosk([
        "--interval", "0.4", "--run-for", "300", "--mqtt", broker.url, "--mqtt-id", id, "--state-dir", state,
    ])
    #expect(waitFor(20) { (checker?.messages.count ?? 0) >= 3 }, "\(first.logText)")
    // The broker's state with the consumer's session is saved, then the broker stops answering:
    // the kiosk's next events go out on the socket and are never acknowledged.
    broker.save()
    let before = checker!.messages
    broker.signal(SIGSTOP)
    usleep(2_000_000)
    // SIGKILL the kiosk just after an event (its record is on disk within milliseconds).
    let count = first.events.all.count
    waitFor(2) { first.events.all.count > count }
    usleep(100_000)
    first.kill()
    // The broker dies too, losing everything it read since the save: the unacknowledged
    // events exist only in the kiosk's outbox now.
    broker.kill()
    checker = nil
    let written = first.events.all
    let outbox = (try? String(contentsOfFile: state + "/mqtt/outbox", encoding: .utf8)) ?? ""
    let unacknowledged = outbox.split(separator: "\n").filter { $0.hasPrefix("E ") }.compactMap { line in
        Int(line.split(separator: " ")[1]) }.filter { !outbox.contains("\nA \($0)\n") }
    #expect(unacknowledged.count >= 3, "events in flight at the kill: \(unacknowledged)\n\(outbox)")

    try broker.start()
    let checker2 = try Subscriber(broker, topics: ["kiosk-carousel/\(id)/events"], session: "checker-\(id)")
    let second = try Kiosk([
        "--interval", "0.4", "--run-for", "300", "--mqtt", broker.url, "--mqtt-id", id, "--state-dir", state,
    ])
    #expect(
        waitFor(30) {
            let got = accountFor(before + checker2.messages, stdout: written)
            return got.unreceived.isEmpty && second.events.all.count >= 3
        }, "\(second.logText)")
    second.stop()
    usleep(300_000)
    let all = before + checker2.messages
    let result = accountFor(all, stdout: written + second.events.all)
    #expect(result.missing == [], "seqs missing: \(result.missing)")
    #expect(result.unreceived == [], "never received: \(result.unreceived)")
    // The events in flight at the kill came from the outbox after the restart, and seq went on
    // from the last one instead of starting again.
    let resent = Set(checker2.messages.compactMap { seq(of: $0.payload) })
    #expect(Set(unacknowledged).isSubset(of: resent), "\(unacknowledged) not sent again: \(resent.sorted())")
    let secondSeqs = checker2.messages.filter { m in second.events.all.contains { $0 == withoutSeq(m.payload) } }
        .compactMap { seq(of: $0.payload) }
    #expect((secondSeqs.min() ?? 0) > (unacknowledged.max() ?? 0))
    print("mqtt SIGKILL: \(written.count) events before the kill, \(unacknowledged.count) sent but unacknowledged,"
          + " all sent again after the restart; \(result.seqs.count) seqs 1...\(result.seqs.last ?? 0)"
          + " with none missing, \(result.duplicates) duplicates")
}
