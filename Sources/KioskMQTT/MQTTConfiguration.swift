// SPDX-License-Identifier: Apache-2.0
import KioskSystem

/// Everything the MQTT client needs (docs/mqtt.md): the broker and the login, TLS files, the
/// device's identity and topics, Home Assistant discovery, and the outbox.
public struct MQTTConfiguration: Sendable {
    public var broker: BrokerURL
    /// The password to log in with: the URL's, or one from `--mqtt-password-file` or
    /// `$KIOSK_MQTT_PASSWORD` (``resolvePassword(file:environment:)``). Never logged.
    public var password: String?
    /// PEM CA certificates trusted for `mqtts://` besides the system's (`--ca-file`).
    public var caFile: String?
    /// A PEM client certificate and its key (no passphrase) for `mqtts://` (`--mqtt-cert`,
    /// `--mqtt-key`); both or neither.
    public var clientCertificate: String?
    public var clientKey: String?
    /// The device's ID (``checkDeviceID(_:)``): the MQTT client identifier, the base of every
    /// Home Assistant `unique_id` and of the default topic prefix.
    public var deviceID: String
    /// The device's name in Home Assistant (its host name by default).
    public var deviceName: String
    /// Every topic of this device starts with it (``checkTopicPrefix(_:)``); default
    /// `kiosk-carousel/DEVICE-ID`.
    public var topicPrefix: String
    /// Home Assistant's discovery prefix (`homeassistant`, its default); nil: no discovery.
    public var discoveryPrefix: String?
    /// The folder of the event outbox (`STATE-DIR/mqtt`); nil: kept in memory only.
    public var outboxDirectory: String?
    /// Most events the outbox keeps unacknowledged; past it the oldest are dropped (counted).
    public var outboxLimit: Int = 10_000
    /// MQTT keep-alive, seconds (PINGREQ when nothing else is sent; a broker silent for 1.5
    /// times as long is taken as gone, MQTT 5 section 3.1.2.10).
    public var keepAlive: Int = 30
    /// The version reported as the device's and origin's `sw_version`.
    public var version: String

    public init(broker: BrokerURL, deviceID: String, deviceName: String, topicPrefix: String? = nil,
                discoveryPrefix: String? = "homeassistant", outboxDirectory: String?, version: String) {
        self.broker = broker
        self.password = broker.password
        self.deviceID = deviceID
        self.deviceName = deviceName
        self.topicPrefix = topicPrefix ?? "kiosk-carousel/\(deviceID)"
        self.discoveryPrefix = discoveryPrefix
        self.outboxDirectory = outboxDirectory
        self.version = version
    }

    /// The device's topics.
    public var topics: MQTTTopics { MQTTTopics(prefix: topicPrefix, discoveryPrefix: discoveryPrefix) }

    /// The default device ID: the host name and the first 8 digits of the machine ID
    /// (`lobby-3f2a9c01`; machine-id(5)), so that two kiosks both called `raspberrypi` still
    /// differ; only the host name when there is no machine ID. Characters outside
    /// `[A-Za-z0-9_-]` become `-`; at most 64 characters.
    public static func defaultDeviceID(hostname: String?, machineID: String?) -> String {
        var id = String((hostname ?? "kiosk").unicodeScalars.map { isIDCharacter($0) ? Character($0) : "-" }.prefix(55))
        if id.isEmpty { id = "kiosk" }
        if let machineID { id += "-" + machineID.prefix(8) }
        return id
    }

    private static func isIDCharacter(_ c: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "_" || c == "-"
    }

    /// A device ID is 1...64 characters of `[A-Za-z0-9_-]`: the character class Home Assistant
    /// allows in a discovery topic's object ID (its MQTT discovery documentation, "Discovery
    /// topic"), and safe as an MQTT client identifier. Throws ``MQTTError/badSetting(option:value:reason:)``.
    public static func checkDeviceID(_ id: String) throws(MQTTError) {
        guard (1...64).contains(id.unicodeScalars.count), id.unicodeScalars.allSatisfy(isIDCharacter) else {
            throw .badSetting(option: "--mqtt-id", value: id, reason: "expected 1...64 letters, digits, '_' or '-'")
        }
    }

    /// A topic prefix (or the discovery prefix, `option` says which) is 1...200 bytes of UTF-8
    /// with no wildcard (`+`, `#`; MQTT 5 section 4.7.1), no NUL, no control character, no
    /// empty level (`a//b`, a leading or trailing `/`), and not starting with `$` (topics the
    /// broker keeps for itself, section 4.7.2). Throws ``MQTTError/badSetting(option:value:reason:)``.
    public static func checkTopicPrefix(_ prefix: String, option: String = "--mqtt-prefix") throws(MQTTError) {
        func fail(_ reason: String) -> MQTTError { .badSetting(option: option, value: prefix, reason: reason) }
        let bytes = Array(prefix.utf8)
        guard (1...200).contains(bytes.count) else { throw fail("expected 1...200 bytes") }
        guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { throw fail("a control character") }
        guard !bytes.contains(UInt8(ascii: "+")), !bytes.contains(UInt8(ascii: "#")) else {
            throw fail("a topic name cannot hold the wildcards '+' or '#'")
        }
        guard bytes.first != UInt8(ascii: "$") else { throw fail("topics starting with '$' are the broker's") }
        guard !prefix.split(separator: "/", omittingEmptySubsequences: false).contains(where: \.isEmpty) else {
            throw fail("an empty topic level (a leading, trailing or doubled '/')")
        }
    }

    /// The password: `$KIOSK_MQTT_PASSWORD` when set, else the first line of `file` (at most
    /// ``BrokerURL/maxPasswordBytes``; a trailing CR is dropped) when given, else the URL's.
    /// Both given is refused, as is an empty or non-UTF-8 password. Throws
    /// ``MQTTError/badSetting(option:value:reason:)`` or ``MQTTError/system(_:)`` (the file).
    public mutating func resolvePassword(file: String?, environment: [String: String]) throws(MQTTError) {
        let fromEnvironment = environment["KIOSK_MQTT_PASSWORD"]
        if fromEnvironment != nil && file != nil {
            throw .badSetting(option: "--mqtt-password-file", value: file!,
                              reason: "KIOSK_MQTT_PASSWORD is set too: give the password one way")
        }
        if let fromEnvironment {
            guard !fromEnvironment.isEmpty, fromEnvironment.utf8.count <= BrokerURL.maxPasswordBytes else {
                throw .badSetting(option: "KIOSK_MQTT_PASSWORD", value: "***",
                                  reason: "expected 1...\(BrokerURL.maxPasswordBytes) bytes")
            }
            password = fromEnvironment
        } else if let file {
            let bytes: [UInt8]
            do { bytes = try readRegularFile(file, limit: 4096) } catch { throw .system(error) }
            var line = Array(bytes.prefix { $0 != 0x0A })
            if line.last == 0x0D { line.removeLast() }
            guard !line.isEmpty, line.count <= BrokerURL.maxPasswordBytes, !line.contains(0),
                  let text = String(validating: line, as: UTF8.self) else {
                throw .badSetting(option: "--mqtt-password-file", value: file,
                                  reason: "expected the password on the first line"
                                      + " (1...\(BrokerURL.maxPasswordBytes) bytes of UTF-8)")
            }
            password = text
        }
        if password != nil && broker.user == nil {
            throw .badSetting(option: "--mqtt", value: broker.description,
                              reason: "a password is given but no user (mqtt://USER@HOST)")
        }
    }
}

/// The device's topics (docs/mqtt.md "Topics"), all under one prefix, so that a broker's ACL
/// can give each device its own subtree (`pattern readwrite kiosk-carousel/%c/#` in mosquitto,
/// docs/mqtt.md "Security").
public struct MQTTTopics: Equatable, Sendable {
    public let prefix: String
    public let discoveryPrefix: String?

    public init(prefix: String, discoveryPrefix: String?) {
        self.prefix = prefix
        self.discoveryPrefix = discoveryPrefix
    }

    /// `online` or `offline` (retained; the last will sets `offline`).
    public var availability: String { prefix + "/availability" }
    /// Every event line, plus `seq` (QoS 1, not retained).
    public var events: String { prefix + "/events" }
    /// What is on screen and how the show stands (retained JSON).
    public var status: String { prefix + "/status" }
    /// `ON` or `OFF`: the screen (retained).
    public var display: String { prefix + "/display" }
    /// The answer to each command (QoS 0, not retained).
    public var reply: String { prefix + "/reply" }
    /// The subscription for the commands: `PREFIX/command/+`.
    public var commandFilter: String { prefix + "/command/+" }
    /// The topic of one command.
    public func command(_ name: MQTTCommand.Name) -> String { prefix + "/command/" + name.rawValue }
    /// Home Assistant's birth and last-will topic (`homeassistant/status`): discovery is sent
    /// again when it says `online`.
    public var homeAssistantStatus: String? { discoveryPrefix.map { $0 + "/status" } }
}
