// SPDX-License-Identifier: Apache-2.0
import KioskMQTT
import KioskSystem
import Testing

// Home Assistant's documented MQTT discovery schema, as its documentation gives it: the MQTT
// integration page ("Discovery topic", "Single component discovery payload", "Adding
// information about the origin", the device registry options) and the configuration
// variables of the MQTT Button, Switch, Number and Sensor pages. Each key with its type and whether it
// is required; a config holding a key not documented for its component, or of the wrong type,
// fails (Home Assistant would ignore it, and the entity would silently lack what it was for).

enum SchemaType: Equatable { case string, boolean, integer, map, list, stringOrList }

private let entityKeys: [String: SchemaType] = [
    "availability": .list, "availability_mode": .string, "availability_template": .string,
    "availability_topic": .string, "device": .map, "enabled_by_default": .boolean, "encoding": .string,
    "entity_category": .string, "entity_picture": .string, "icon": .string, "json_attributes_template": .string,
    "json_attributes_topic": .string, "name": .string, "object_id": .string, "default_entity_id": .string,
    "payload_available": .string, "payload_not_available": .string, "qos": .integer, "unique_id": .string,
    "origin": .map,
]

private let componentKeys: [String: (keys: [String: SchemaType], required: Set<String>)] = [
    "button": (
        [
            "command_template": .string, "command_topic": .string, "device_class": .string, "payload_press": .string,
            "retain": .boolean,
        ], ["command_topic"]
    ),
    "switch": (
        [
            "command_template": .string, "command_topic": .string, "device_class": .string, "optimistic": .boolean,
            "payload_off": .string, "payload_on": .string, "retain": .boolean, "state_off": .string,
            "state_on": .string,
            "state_topic": .string, "value_template": .string,
        ], ["command_topic"]
    ),
    "number": (
        [
            "command_template": .string, "command_topic": .string, "device_class": .string, "max": .integer,
            "min": .integer, "mode": .string, "optimistic": .boolean, "payload_reset": .string,
            "retain": .boolean, "state_topic": .string, "step": .integer, "unit_of_measurement": .string,
            "value_template": .string,
        ], ["command_topic"]
    ),
    "sensor": (
        [
            "device_class": .string, "expire_after": .integer, "force_update": .boolean,
            "last_reset_value_template": .string, "options": .list, "state_class": .string, "state_topic": .string,
            "suggested_display_precision": .integer, "unit_of_measurement": .string, "value_template": .string,
        ],
        ["state_topic"]
    ),
]

private let deviceKeys: [String: SchemaType] = [
    "configuration_url": .string, "connections": .list, "hw_version": .string, "identifiers": .stringOrList,
    "manufacturer": .string, "model": .string, "model_id": .string, "name": .string, "serial_number": .string,
    "suggested_area": .string, "sw_version": .string, "via_device": .string,
]

private let originKeys: [String: SchemaType] = ["name": .string, "sw_version": .string, "support_url": .string]

private func matches(_ value: JSONValue, _ type: SchemaType) -> Bool {
    switch (type, value) {
    case (.string, .string), (.boolean, .bool), (.integer, .int), (.map, .object), (.list, .array),
         (.stringOrList, .string), (.stringOrList, .array): return true
    default: return false
    }
}

/// Every way `payload` at `topic` breaks the documented schema (empty when it keeps it).
func discoveryProblems(topic: String, payload: [UInt8], discoveryPrefix: String = "homeassistant") -> [String] {
    var problems: [String] = []
    let levels = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    // <discovery_prefix>/<component>/[<node_id>/]<object_id>/config; the IDs of [a-zA-Z0-9_-].
    guard levels.count == 4 || levels.count == 5, levels.first == discoveryPrefix, levels.last == "config" else {
        return ["topic \(topic) is not <discovery_prefix>/<component>/[<node_id>/]<object_id>/config"]
    }
    let component = levels[1]
    guard let schema = componentKeys[component] else {
        return ["component \(component) is not one this kiosk should use"]
    }
    let idCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
    for id in levels[2..<(levels.count - 1)] where id.isEmpty || !id.allSatisfy(idCharacters.contains) {
        problems.append("\(topic): the ID '\(id)' is not of [a-zA-Z0-9_-]")
    }
    guard case .object(let config)? = try? JSONValue.parse(payload) else {
        return problems + ["\(topic): not a JSON object"]
    }
    for (key, value) in config {
        guard let type = entityKeys[key] ?? schema.keys[key] else {
            problems.append("\(topic): '\(key)' is not documented for \(component)")
            continue
        }
        if !matches(value, type) { problems.append("\(topic): '\(key)' is \(value.typeName), documented as \(type)") }
        if key.hasSuffix("_topic"), case .string(let t) = value,
            t.hasPrefix("~") || t.hasSuffix("~") || t.contains("+") || t.contains("#")
        {
            problems.append("\(topic): '\(key)' \(t) is no plain topic")
        }
    }
    for key in schema.required where config[key] == nil { problems.append("\(topic): required '\(key)' is missing") }
    // A device needs a unique_id on the entity and identifiers or connections (and a name).
    if case .object(let device)? = config["device"] {
        for (key, value) in device {
            guard let type = deviceKeys[key] else {
                problems.append("\(topic): device '\(key)' is not documented")
                continue
            }
            if !matches(value, type) { problems.append("\(topic): device '\(key)' is \(value.typeName)") }
        }
        if device["identifiers"] == nil && device["connections"] == nil {
            problems.append("\(topic): device without identifiers")
        }
        if config["unique_id"] == nil { problems.append("\(topic): device info without unique_id") }
    }
    if case .object(let origin)? = config["origin"] {
        for (key, value) in origin where originKeys[key].map({ !matches(value, $0) }) ?? true {
            problems.append("\(topic): origin '\(key)' is not documented as such")
        }
        if origin["name"] == nil { problems.append("\(topic): origin without its required name") }
    }
    if config["availability"] != nil && config["availability_topic"] != nil {
        problems.append("\(topic): availability and availability_topic must not be used together")
    }
    // The kiosk's own form: the node ID is the device's first identifier, the unique_id the
    // node and object IDs joined.
    if case .string(let unique)? = config["unique_id"], levels.count != 5 || unique != levels[2] + "_" + levels[3] {
        problems.append("\(topic): unique_id \(unique) is not NODE-ID_OBJECT-ID")
    }
    if case .object(let device)? = config["device"], case .array(let ids)? = device["identifiers"], levels.count == 5,
       ids.first != .string(levels[2]) {
        problems.append("\(topic): the node ID is not the device's identifier")
    }
    return problems
}

private func configuration(discovery: String? = "homeassistant") throws -> MQTTConfiguration {
    MQTTConfiguration(broker: try BrokerURL.parse("mqtt://broker.lan"), deviceID: "lobby-3f2a9c01", deviceName: "lobby",
                      discoveryPrefix: discovery, outboxDirectory: nil, version: "1.2.3")
}

@Test func theDiscoveryConfigsKeepHomeAssistantsDocumentedSchema() throws {
    let messages = HomeAssistantDiscovery.messages(try configuration())
    #expect(messages.map(\.topic) == ["homeassistant/button/lobby-3f2a9c01/next/config",
                                      "homeassistant/button/lobby-3f2a9c01/previous/config",
                                      "homeassistant/button/lobby-3f2a9c01/pause/config",
                                      "homeassistant/button/lobby-3f2a9c01/resume/config",
                                      "homeassistant/switch/lobby-3f2a9c01/display/config",
                                      "homeassistant/number/lobby-3f2a9c01/brightness/config",
                                      "homeassistant/sensor/lobby-3f2a9c01/image/config"])
    for message in messages {
        #expect(discoveryProblems(topic: message.topic, payload: message.payload) == [])
        guard case .object(let config)? = try? JSONValue.parse(message.payload) else { continue }
        // One device for all, with its model and version; every entity says when the kiosk is away.
        #expect(
            config["device"]
                == .object([
                    "identifiers": .array([.string("lobby-3f2a9c01")]), "name": .string("lobby"),
                    "manufacturer": .string("kiosk-carousel"), "model": .string("kiosk-carousel"),
                    "sw_version": .string("1.2.3"),
                ]))
        #expect(config["availability_topic"] == .string("kiosk-carousel/lobby-3f2a9c01/availability"))
    }
    // The schema check itself catches what it is for.
    #expect(
        !discoveryProblems(topic: "homeassistant/button/x/y/config", payload: Array(#"{"command_topc":"a"}"#.utf8))
            .isEmpty)
    #expect(
        !discoveryProblems(topic: "homeassistant/switch/a.b/c/config", payload: Array(#"{"command_topic":"a"}"#.utf8))
            .isEmpty)
    #expect(
        !discoveryProblems(
            topic: "homeassistant/sensor/x/y/config", payload: Array(#"{"state_topic":"a","qos":"1"}"#.utf8)
        ).isEmpty)
    #expect(
        discoveryProblems(topic: "homeassistant/sensor/x/y/config", payload: Array(#"{"state_topic":"a"}"#.utf8))
            .isEmpty)
    #expect(HomeAssistantDiscovery.messages(try configuration(discovery: nil)).isEmpty)
}

@Test func theCommandTopicsOfTheConfigsAreTheOnesTheKioskReads() throws {
    let config = try configuration()
    for message in HomeAssistantDiscovery.messages(config) {
        guard case .object(let fields)? = try? JSONValue.parse(message.payload) else { continue }
        if case .string(let topic)? = fields["command_topic"] {
            let payload = fields["payload_press"].flatMap {
                if case .string(let s) = $0 { return s } else { return nil }
            }
            // A button's press, a switch's ON and OFF, a number's values from its min to its max.
            var payloads = payload.map { [$0] } ?? ["ON", "OFF"]
            if case .int(let low)? = fields["min"], case .int(let high)? = fields["max"] {
                payloads = [String(low), String((low + high) / 2), String(high)]
            }
            for p in payloads {
                let parsed = MQTTCommandParser.parse(topic: Array(topic.utf8), payload: Array(p.utf8), retained: false,
                                                     topics: config.topics)
                #expect((try? parsed.get()) != nil, "\(topic) \(p): \(parsed)")
            }
        }
    }
}

@Test func theStatusCarriesTheSensorsStateAndAttributes() {
    let status: JSONValue = .object([
        "index": .int(2), "src": .string("https://cdn.example/shows/" + String(repeating: "é", count: 300)),
        "frames": .int(812), "t": .int(123), "paused": .bool(false), "caption": .string("Lake"),
    ])
    guard
        case .object(let fields)? = try? JSONValue.parse(
            HomeAssistantDiscovery.statusPayload(status, lastSeq: 17, pending: 2, dropped: 1))
    else {
        Issue.record("not JSON")
        return
    }
    #expect(fields["frames"] == nil && fields["t"] == nil)
    #expect(fields["name"] == .string(String(repeating: "é", count: 255)))
    #expect(fields["seq"] == .int(17) && fields["caption"] == .string("Lake"))
    #expect(fields["outbox"] == .object(["pending": .int(2), "dropped": .int(1)]))
}
