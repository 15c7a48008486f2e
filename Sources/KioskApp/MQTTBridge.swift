// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import KioskMQTT
import KioskSystem

// The frame loop's side of MQTT (docs/mqtt.md), kept apart from the loop: the client
// (KioskMQTT) takes the very event lines written to stdout and hands back commands the loop
// carries out as the control socket's: ``MQTTPort``, one of ``ShowOutput``'s sinks, served
// beside the ``ControlPort`` (docs/frame-loop.md).

extension KioskApp {
    /// Makes and starts the MQTT client `settings.mqtt` asks for (nil: none). Trouble is logged
    /// and the show goes on without it, as without a control socket.
    static func openMQTT(_ settings: Settings) -> MQTTClient? {
        guard let url = settings.mqtt.url else { return nil }
        let hostname = DeviceIdentity.hostname()
        let id = settings.mqtt.deviceID
            ?? MQTTConfiguration.defaultDeviceID(hostname: hostname, machineID: try? DeviceIdentity.machineID())
        var configuration = MQTTConfiguration(broker: url, deviceID: id,
                                              deviceName: settings.mqtt.deviceID ?? hostname ?? id,
                                              topicPrefix: settings.mqtt.topicPrefix,
                                              discoveryPrefix: settings.mqtt.discoveryPrefix,
                                              outboxDirectory: settings.stateDirectory + "/mqtt",
                                              version: KioskVersion.string)
        configuration.caFile = settings.caFile
        configuration.clientCertificate = settings.mqtt.certificate
        configuration.clientKey = settings.mqtt.key
        configuration.outboxLimit = settings.mqtt.outboxLimit
        do {
            try configuration.resolvePassword(file: settings.mqtt.passwordFile,
                                              environment: ProcessInfo.processInfo.environment)
            if !url.tls, configuration.password != nil, !["localhost", "127.0.0.1", "::1"].contains(url.host) {
                Log.warning("mqtt password sent in the clear", path: url.description,
                            reason: "mqtt:// has no TLS: use mqtts:// for a broker beyond this machine")
            }
            let client = try MQTTClient(configuration: configuration)
            try client.start()
            return client
        } catch {
            Log.error("mqtt unavailable", path: url.description, reason: error.description)
            return nil
        }
    }
}

/// The frame loop's side of the MQTT client: commands received are carried out between frames
/// as the control socket's (``serve(perform:status:)``, answered on the reply topic), and every
/// event goes to the broker as the very line stdout gets, with the status after it
/// (a ``ShowEventSink`` of ``ShowOutput``). Runs on the frame loop's thread.
final class MQTTPort: ShowEventSink {
    let client: MQTTClient
    let lines: EventWriter
    /// The status topic's content now (set by the frame loop).
    var status: () -> JSONValue = { .null }

    init(client: MQTTClient, lines: EventWriter) {
        self.client = client
        self.lines = lines
    }

    /// Readable when commands came.
    var wakeDescriptor: Int32 { client.commands.wakeDescriptor }

    /// Carries out the commands received since the last call, oldest first, through `perform`
    /// (the control socket's commands), answers each, then publishes the status. Never blocks.
    func serve(perform: (ControlCommand, String) -> Result<JSONValue?, ControlFailure>) {
        let requests = client.commands.take()
        guard !requests.isEmpty else { return }
        for request in requests {
            let command: ControlCommand
            switch request.command {
            case .next: command = .next
            case .previous: command = .previous
            case .pause: command = .pause
            case .resume: command = .resume
            case .goto(let index): command = .goto(index)
            case .display(let on): command = .display(on: on)
            case .brightness(let percent): command = .brightness(percent: percent)
            }
            switch perform(command, "MQTT") {
            case .success: client.answer(request, error: nil)
            case .failure(let failure): client.answer(request, error: failure.message)
            }
        }
        client.publish(status: status())
    }

    func publish(_ event: ShowEvent) {
        client.publish(eventLine: lines.line(for: event))
        client.publish(status: status())
    }
}

extension FrameLoop {
    /// The status topic's content: the control socket's `status`, plus the current item's
    /// caption when it has one.
    func mqttStatus() -> JSONValue {
        var status = statusData(at: clock.now)
        if case .object(var fields) = status, let item = carousel.currentItem, item < carousel.items.count {
            fields["caption"] = carousel.items[item].caption.map { .string($0) } ?? .null
            status = .object(fields)
        }
        return status
    }
}
