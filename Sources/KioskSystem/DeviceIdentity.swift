// SPDX-License-Identifier: Apache-2.0
import Glibc

/// What tells one device of a fleet from another: its host name and its machine ID, for
/// `{hostname}` and `{machine-id}` in a `--manifest` URL and for the MQTT client's identity
/// (docs/mqtt.md).
public enum DeviceIdentity {
    /// The host name (gethostname(2)), at most 64 bytes (HOST_NAME_MAX on Linux); nil when it
    /// cannot be read or is empty.
    public static func hostname() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let name = String(cString: buffer)
        return name.isEmpty ? nil : name
    }

    /// Where systemd keeps the machine ID (machine-id(5)).
    public static let machineIDPath = "/etc/machine-id"

    /// The machine ID: the first line of `path`, which machine-id(5) defines as 32 lowercase
    /// hexadecimal digits. Throws ``SystemError`` when the file cannot be read, or with `EINVAL`
    /// (operation `read machine ID (expected 32 hex digits)`) when it holds anything else, such
    /// as the `uninitialized` of a first boot.
    public static func machineID(path: String = machineIDPath) throws(SystemError) -> String {
        let bytes = try readRegularFile(path, limit: 4096)
        let line = bytes.prefix { $0 != 0x0A }
        guard line.count == 32, line.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw SystemError(operation: "read machine ID (expected 32 hex digits)", path: path, errno: EINVAL)
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// The placeholders ``expand(_:hostname:machineID:)`` replaces.
    public static let placeholders = ["{hostname}", "{machine-id}"]

    /// `template` with `{hostname}` and `{machine-id}` replaced by the values given; a value is
    /// asked for only when its placeholder occurs (so a missing `/etc/machine-id` matters only
    /// to a URL that names it). Throws what a value's closure throws.
    public static func expand(_ template: String, hostname: () throws(SystemError) -> String,
                              machineID: () throws(SystemError) -> String) throws(SystemError) -> String {
        var text = template
        if text.contains("{hostname}") { text = text.replacing("{hostname}", with: try hostname()) }
        if text.contains("{machine-id}") { text = text.replacing("{machine-id}", with: try machineID()) }
        return text
    }
}
