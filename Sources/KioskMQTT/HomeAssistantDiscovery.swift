// SPDX-License-Identifier: Apache-2.0
import KioskSystem

/// The retained discovery configs that make a kiosk appear in Home Assistant with no YAML
/// (docs/mqtt.md "Home Assistant"), one device per kiosk: buttons for next, previous, pause and
/// resume, a switch for the screen, a number for the brightness, a sensor with the current
/// image. Written to Home Assistant's MQTT discovery documentation ("Single component discovery
/// payload", and the configuration variables of its MQTT button, switch, number and sensor
/// pages): one config per
/// component at `PREFIX/COMPONENT/NODE_ID/OBJECT_ID/config`, the node ID being the device's ID
/// (the documentation's way for a client to keep to its own topics, so that a broker's ACL can
/// confine each kiosk's configs too: `homeassistant/+/DEVICE-ID/#`), full option names (no
/// abbreviations), `unique_id` `DEVICE-ID_OBJECT-ID`, the `device` mapping and the `origin` in each.
public enum HomeAssistantDiscovery {
    /// One retained message: its topic and payload.
    public struct Message: Equatable, Sendable {
        public var topic: String
        public var payload: [UInt8]
    }

    /// An entity: its component, the last part of its `unique_id`, and its own options.
    struct Entity {
        var component: String
        var key: String
        var options: [String: JSONValue]
    }

    static func entities(_ topics: MQTTTopics) -> [Entity] {
        func button(_ name: MQTTCommand.Name, _ title: String, _ icon: String) -> Entity {
            Entity(component: "button", key: name.rawValue, options: [
                "name": .string(title), "icon": .string(icon),
                "command_topic": .string(topics.command(name)),
                "payload_press": .string(MQTTCommandParser.press), "qos": .int(1), "retain": .bool(false),
            ])
        }
        return [
            button(.next, "Next image", "mdi:skip-next"),
            button(.previous, "Previous image", "mdi:skip-previous"),
            button(.pause, "Pause", "mdi:pause"),
            button(.resume, "Resume", "mdi:play"),
            Entity(component: "switch", key: "display", options: [
                "name": .string("Screen"), "icon": .string("mdi:monitor"),
                "command_topic": .string(topics.command(.display)), "state_topic": .string(topics.display),
                "payload_on": .string("ON"), "payload_off": .string("OFF"),
                "qos": .int(1), "retain": .bool(false), "optimistic": .bool(false),
            ]),
            // The brightness as a slider, 1 ... 100 %: the status's `brightness.target_percent`
            // (where a ramp goes; the level during a ramp would make the slider jump back).
            Entity(component: "number", key: "brightness", options: [
                "name": .string("Brightness"), "icon": .string("mdi:brightness-6"),
                "command_topic": .string(topics.command(.brightness)), "state_topic": .string(topics.status),
                "value_template": .string("{{ value_json.brightness.target_percent | round(0) | int }}"),
                "min": .int(1), "max": .int(100), "step": .int(1), "mode": .string("slider"),
                "unit_of_measurement": .string("%"), "qos": .int(1), "retain": .bool(false),
            ]),
            // The state is the file name (a state is at most 255 characters); the whole status
            // (index, src, caption, ...) goes to the attributes.
            Entity(component: "sensor", key: "image", options: [
                "name": .string("Image"), "icon": .string("mdi:image"),
                "state_topic": .string(topics.status), "value_template": .string("{{ value_json.name }}"),
                "json_attributes_topic": .string(topics.status),
            ]),
        ]
    }

    /// The discovery messages of the device `configuration` describes (none without a discovery
    /// prefix). `model`: the device's model in Home Assistant.
    public static func messages(_ configuration: MQTTConfiguration, model: String = "kiosk-carousel") -> [Message] {
        let topics = configuration.topics
        guard let prefix = topics.discoveryPrefix else { return [] }
        let device: JSONValue = .object([
            "identifiers": .array([.string(configuration.deviceID)]),
            "name": .string(configuration.deviceName),
            "manufacturer": .string("kiosk-carousel"),
            "model": .string(model),
            "sw_version": .string(configuration.version),
        ])
        let origin: JSONValue = .object(["name": .string("kiosk-carousel"),
                                         "sw_version": .string(configuration.version)])
        return entities(topics).map { entity in
            let uniqueID = "\(configuration.deviceID)_\(entity.key)"
            var options = entity.options
            options["unique_id"] = .string(uniqueID)
            options["availability_topic"] = .string(topics.availability)
            options["payload_available"] = .string("online")
            options["payload_not_available"] = .string("offline")
            options["device"] = device
            options["origin"] = origin
            return Message(topic: "\(prefix)/\(entity.component)/\(configuration.deviceID)/\(entity.key)/config",
                           payload: JSONValue.object(options).serialized())
        }
    }

    /// The most characters of a Home Assistant state (its `MAX_LENGTH_STATE_STATE`, 255).
    public static let maxStateCharacters = 255

    /// The retained status payload (docs/mqtt.md "Topics"): the control socket's `status`
    /// object without the fields that change on every frame (`frames`, `t`), plus `name` (the
    /// last part of `src`, at most ``maxStateCharacters`` characters: the sensor's state),
    /// `seq` (the newest event's) and `outbox` (`pending`, `dropped`).
    public static func statusPayload(_ status: JSONValue, lastSeq: UInt64, pending: Int, dropped: UInt64) -> [UInt8] {
        var fields: [String: JSONValue] = [:]
        if case .object(let given) = status { fields = given }
        fields["frames"] = nil
        fields["t"] = nil
        var name = ""
        if case .string(let src)? = fields["src"] {
            let last = src.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? src
            name = String(last.prefix(maxStateCharacters))
        }
        fields["name"] = .string(name)
        fields["seq"] = .int(Int64(clamping: lastSeq))
        fields["outbox"] = .object(["pending": .int(Int64(pending)), "dropped": .int(Int64(clamping: dropped))])
        return JSONValue.object(fields).serialized()
    }
}
