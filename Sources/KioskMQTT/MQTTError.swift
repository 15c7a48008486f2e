// SPDX-License-Identifier: Apache-2.0
import KioskSystem

/// Why the MQTT side could not be set up or a broker's answer was refused. Each case carries
/// what a person needs to see; ``description`` is the log line or usage message. No case ever
/// carries a password.
public enum MQTTError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `--mqtt`'s value is not a broker URL of the form docs/mqtt.md gives; `reason` says why.
    /// `url` has its password hidden (``Log/hidingPasswords(_:)``).
    case badURL(url: String, reason: String)
    /// An option's value (`--mqtt-id`, `--mqtt-prefix`, ...) is not allowed; `reason` says why.
    case badSetting(option: String, value: String, reason: String)
    /// libmosquitto could not be loaded (`reason`: the loader's message) or refused a setting
    /// (`reason`: the call and mosquitto_strerror's text).
    case library(reason: String)
    /// A file or system call failed (the password file, the outbox, a pipe).
    case system(SystemError)
    /// The outbox file at `path` cannot be used (`reason` says why); the show goes on with an
    /// outbox in memory.
    case outbox(path: String, reason: String)

    public var description: String {
        switch self {
        case .badURL(let url, let reason):
            return "--mqtt: '\(url)' is not a broker URL (mqtt://[USER[:PASSWORD]@]HOST[:PORT] or mqtts://...):"
                + " \(reason)"
        case .badSetting(let option, let value, let reason):
            return "\(option): '\(value)': \(reason)"
        case .library(let reason):
            return "libmosquitto: \(reason)"
        case .system(let error):
            return error.description
        case .outbox(let path, let reason):
            return "MQTT outbox \(path): \(reason)"
        }
    }
}
