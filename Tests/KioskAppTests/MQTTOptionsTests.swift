// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskMQTT
import KioskSystem
@testable import KioskApp

@Test func theMQTTOptionsAreReadAndCheckedAtTheStart() throws {
    let s = try CommandLineParser.parse([
        "--mqtt", "mqtts://kiosk:pw@broker.lan", "--mqtt-id", "lobby-1", "--mqtt-prefix", "shop/7/lobby",
        "--mqtt-discovery", "none", "--mqtt-cert", "/etc/kiosk/c.pem", "--mqtt-key", "/etc/kiosk/c.key",
        "--mqtt-outbox", "500", "--mqtt-password-file", "/run/credentials/pw", "photos",
    ])
    #expect(s.mqtt.url == BrokerURL(tls: true, host: "broker.lan", port: 8883, user: "kiosk", password: "pw"))
    #expect(s.mqtt.deviceID == "lobby-1" && s.mqtt.topicPrefix == "shop/7/lobby" && s.mqtt.discoveryPrefix == nil)
    #expect(s.mqtt.certificate == "/etc/kiosk/c.pem" && s.mqtt.key == "/etc/kiosk/c.key" && s.mqtt.outboxLimit == 500)
    #expect(s.mqtt.passwordFile == "/run/credentials/pw")
    let plain = try CommandLineParser.parse(["photos"])
    #expect(plain.mqtt.url == nil && plain.mqtt.discoveryPrefix == "homeassistant" && plain.mqtt.outboxLimit == 10_000)
    #expect(try CommandLineParser.parse(["--mqtt", "mqtt://h", "--mqtt", "none", "photos"]).mqtt.url == nil)
    for name in [
        "--mqtt URL", "--mqtt-password-file PATH", "--mqtt-id ID", "--mqtt-prefix TOPIC", "--mqtt-discovery PREFIX",
        "--mqtt-cert PATH", "--mqtt-key PATH", "--mqtt-outbox N",
    ] {
        #expect(CommandLineParser.help.contains(name), "\(name)")
    }
}

@Test(arguments: [
    (["--mqtt", "http://broker.lan"], "--mqtt: 'http://broker.lan' is not a broker URL"),
    (["--mqtt", "mqtt://kiosk:hunter2@broker.lan:0"], "mqtt://kiosk:***@broker.lan:0"),
    (["--mqtt-id", "lobby 1"], "--mqtt-id: 'lobby 1': expected 1...64 letters"),
    (["--mqtt-id", String(repeating: "a", count: 65)], "--mqtt-id"),
    (["--mqtt-prefix", "shop/+/lobby"], "wildcards"),
    (["--mqtt-prefix", "shop//lobby"], "empty topic level"),
    (["--mqtt-prefix", "$SYS/x"], "the broker's"),
    (["--mqtt-discovery", "home#"], "--mqtt-discovery"),
    (["--mqtt-password-file", "pw.txt"], "absolute path"),
    (["--mqtt-outbox", "0"], "1...1000000"),
    (["--mqtt", "mqtts://b", "--mqtt-cert", "/c.pem"], "go together"),
    (["--mqtt", "mqtt://b", "--mqtt-cert", "/c.pem", "--mqtt-key", "/c.key"], "needs an mqtts://"),
])
func badMQTTOptionsAreUsageErrors(_ arguments: [String], _ expected: String) {
    do {
        _ = try CommandLineParser.parse(arguments + ["photos"])
        Issue.record("\(arguments) accepted")
    } catch {
        #expect(error.message.contains(expected), "\(arguments): \(error.message)")
        #expect(!error.message.contains("hunter2"))
    }
}

@Test func aManifestURLMayNameTheHostAndTheMachine() throws {
    let host = DeviceIdentity.hostname()!
    let s = try CommandLineParser.parse(["--manifest", "https://cdn.example/shows/{hostname}.json"])
    #expect(s.manifest?.absoluteString == "https://cdn.example/shows/\(host).json")
    if let id = try? DeviceIdentity.machineID() {
        let m = try CommandLineParser.parse([
            "--manifest", "https://cdn.example/{machine-id}/manifest.json?h={hostname}",
        ])
        #expect(m.manifest?.absoluteString == "https://cdn.example/\(id)/manifest.json?h=\(host)")
    } else {
        #expect(throws: UsageError.self) {
            try CommandLineParser.parse(["--manifest", "https://cdn.example/{machine-id}.json"])
        }
    }
    // In a configuration file too.
    var settings = Settings()
    try CommandLineParser.applyConfig(
        Array("manifest https://cdn.example/{hostname}.json\nmqtt-password-file /etc/kiosk carousel/pw\n".utf8),
        file: "/etc/kiosk-carousel/kiosk-carousel.conf", to: &settings)
    #expect(settings.manifest?.absoluteString == "https://cdn.example/\(host).json")
    #expect(settings.mqtt.passwordFile == "/etc/kiosk carousel/pw")
}

@Test func thePasswordComesFromOnePlaceOnly() throws {
    var c = MQTTConfiguration(broker: try BrokerURL.parse("mqtt://kiosk:fromurl@b"), deviceID: "x", deviceName: "x",
                              outboxDirectory: nil, version: "1")
    try c.resolvePassword(file: nil, environment: [:])
    #expect(c.password == "fromurl")
    try c.resolvePassword(file: nil, environment: ["KIOSK_MQTT_PASSWORD": "fromenv"])
    #expect(c.password == "fromenv")
    #expect(throws: MQTTError.self) {
        try c.resolvePassword(file: "/etc/hostname", environment: ["KIOSK_MQTT_PASSWORD": "x"])
    }
    var anonymous = MQTTConfiguration(
        broker: try BrokerURL.parse("mqtt://b"), deviceID: "x", deviceName: "x", outboxDirectory: nil,
        version: "1")
    #expect(throws: MQTTError.self) {
        try anonymous.resolvePassword(file: nil, environment: ["KIOSK_MQTT_PASSWORD": "x"])
    }
    #expect(
        MQTTConfiguration.defaultDeviceID(hostname: "raspberrypi", machineID: "3f2a9c01deadbeef3f2a9c01deadbeef")
            == "raspberrypi-3f2a9c01")
    #expect(MQTTConfiguration.defaultDeviceID(hostname: "lobby.shop.lan", machineID: nil) == "lobby-shop-lan")
}
