// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import KioskMQTT
import KioskSystem

// The frame loop's side of MQTT (docs/mqtt.md), kept apart from the loop: the client
// (KioskMQTT) takes the very event lines written to stdout and hands back commands the loop
// carries out as the control socket's (``FrameLoop/perform(_:)``). Called from one-line hooks
// where events are published (FrameLoop+Control.swift, DisplayControl.swift) and where the
// control socket's requests are carried out (FrameLoop.swift).

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

extension FrameLoop {
    /// Carries out the commands the MQTT client received (beside the control socket's, step 1
    /// of the loop) and answers each on the reply topic. Never blocks.
    func performMQTTCommands() {
        guard let mqtt else { return }
        let requests = mqtt.commands.take()
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
            }
            switch perform(command) {
            case .success: mqtt.answer(request, error: nil)
            case .failure(let failure): mqtt.answer(request, error: failure.message)
            }
        }
        publishMQTTStatus()
    }

    /// An event line just written to stdout goes to the MQTT client too (with the status when
    /// it changes what is on screen).
    func forwardToMQTT(eventLine: String) {
        guard let mqtt else { return }
        mqtt.publish(eventLine: eventLine)
        publishMQTTStatus()
    }

    /// The status topic's content: the control socket's `status`, plus the current item's
    /// caption when it has one.
    func publishMQTTStatus() {
        guard let mqtt else { return }
        var status = statusData(at: clock.now)
        if case .object(var fields) = status, let item = carousel.currentItem, item < carousel.items.count {
            fields["caption"] = carousel.items[item].caption.map { .string($0) } ?? .null
            status = .object(fields)
        }
        mqtt.publish(status: status)
    }
}
