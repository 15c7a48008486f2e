// SPDX-License-Identifier: Apache-2.0
import KioskSystem

/// Where the broker is and how to log in: `mqtt://[USER[:PASSWORD]@]HOST[:PORT]` (MQTT over
/// TCP, port 1883 by default) or `mqtts://...` (over TLS, port 8883), the URI schemes and ports
/// IANA registers for MQTT. USER and PASSWORD are percent-decoded (RFC 3986 section 2.1), so a
/// password holding `@`, `:` or `/` is written `%40`, `%3A`, `%2F`. HOST is a name, an IPv4
/// address or an IPv6 address in brackets (`[::1]`). Nothing may follow but one `/`.
public struct BrokerURL: Equatable, Sendable, CustomStringConvertible {
    public var tls: Bool
    /// The host as given (an IPv6 address without its brackets).
    public var host: String
    /// 1...65535.
    public var port: Int
    public var user: String?
    /// From the URL; a password file or the environment may give one instead (docs/mqtt.md).
    public var password: String?

    public init(tls: Bool, host: String, port: Int, user: String? = nil, password: String? = nil) {
        self.tls = tls
        self.host = host
        self.port = port
        self.user = user
        self.password = password
    }

    /// Longest user name and password, in bytes after decoding (MQTT allows 65535; nobody
    /// needs more than this, and a value from a file stays bounded).
    public static let maxUserBytes = 256, maxPasswordBytes = 1024

    /// The URL as logged: the password written as `***`.
    public var description: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        var login = ""
        if let user { login = percentEncoded(user) + (password != nil ? ":***" : "") + "@" }
        return "\(tls ? "mqtts" : "mqtt")://\(login)\(hostPart):\(port)"
    }

    /// Parses `text`. Throws ``MQTTError/badURL(url:reason:)`` (with the password hidden)
    /// naming what is wrong.
    public static func parse(_ text: String) throws(MQTTError) -> BrokerURL {
        func fail(_ reason: String) -> MQTTError { .badURL(url: Log.hidingPasswords(text), reason: reason) }
        let bytes = Array(text.utf8)
        guard !bytes.contains(where: { $0 < 0x21 || $0 == 0x7F }) else {
            throw fail("it holds a space or a control character (percent-encode them: %20)")
        }
        guard let schemeEnd = bytes.firstIndex(of: UInt8(ascii: ":")),
              bytes[schemeEnd...].starts(with: Array("://".utf8)) else {
            throw fail("expected mqtt:// or mqtts:// at the start")
        }
        let scheme = String(decoding: bytes[..<schemeEnd], as: UTF8.self).lowercased()
        guard scheme == "mqtt" || scheme == "mqtts" else {
            throw fail("the scheme \(scheme): is not mqtt: or mqtts:")
        }
        let rest = bytes[(schemeEnd + 3)...]
        let authorityEnd = rest.firstIndex { "/?#".utf8.contains($0) } ?? rest.endIndex
        let tail = rest[authorityEnd...]
        guard tail.isEmpty || Array(tail) == [UInt8(ascii: "/")] else {
            throw fail("a broker URL has no path, query or fragment (topics are set with --mqtt-prefix)")
        }
        var authority = rest[..<authorityEnd]
        var user: String?, password: String?
        if let at = authority.lastIndex(of: UInt8(ascii: "@")) {
            let login = authority[..<at]
            authority = authority[(at + 1)...]
            let colon = login.firstIndex(of: UInt8(ascii: ":"))
            user = try decode(login[..<(colon ?? login.endIndex)], what: "the user name", limit: maxUserBytes, fail)
            if let colon {
                password = try decode(login[(colon + 1)...], what: "the password", limit: maxPasswordBytes, fail)
            }
            if user == "" { throw fail("the user name before '@' is empty") }
        }
        var hostBytes = authority
        var portBytes: ArraySlice<UInt8>?
        if hostBytes.first == UInt8(ascii: "[") {
            guard let close = hostBytes.firstIndex(of: UInt8(ascii: "]")) else {
                throw fail("an IPv6 address lacks its ']'")
            }
            let inside = hostBytes[(hostBytes.startIndex + 1)..<close]
            guard !inside.isEmpty, inside.allSatisfy({ isHex($0) || ":.".utf8.contains($0) }),
                  inside.contains(UInt8(ascii: ":")) else {
                throw fail("'[\(String(decoding: inside, as: UTF8.self))]' is not an IPv6 address")
            }
            let after = hostBytes[(close + 1)...]
            if !after.isEmpty {
                guard after.first == UInt8(ascii: ":") else { throw fail("expected ':PORT' after the IPv6 address") }
                portBytes = after.dropFirst()
            }
            hostBytes = inside
        } else if let colon = hostBytes.firstIndex(of: UInt8(ascii: ":")) {
            portBytes = hostBytes[(colon + 1)...]
            hostBytes = hostBytes[..<colon]
        }
        let host = String(decoding: hostBytes, as: UTF8.self)
        guard !hostBytes.isEmpty else { throw fail("no host") }
        guard hostBytes.count <= 253 else { throw fail("the host name is longer than 253 bytes") }
        guard authority.first == UInt8(ascii: "[") || hostBytes.allSatisfy(isHostByte) else {
            throw fail("the host '\(host)' holds a character a host name cannot"
                       + " (letters, digits, '-', '.' and '_' only)")
        }
        var port = scheme == "mqtts" ? 8883 : 1883
        if let portBytes {
            guard !portBytes.isEmpty, portBytes.count <= 5, portBytes.allSatisfy({ (0x30...0x39).contains($0) }),
                  let p = Int(String(decoding: portBytes, as: UTF8.self)), (1...65535).contains(p) else {
                throw fail("the port '\(String(decoding: portBytes, as: UTF8.self))' is not a number in 1...65535")
            }
            port = p
        }
        return BrokerURL(tls: scheme == "mqtts", host: host, port: port, user: user, password: password)
    }

    /// Percent-decodes a user name or password: valid UTF-8, no NUL (libmosquitto takes C
    /// strings), at most `limit` bytes.
    private static func decode(_ bytes: ArraySlice<UInt8>, what: String, limit: Int,
                               _ fail: (String) -> MQTTError) throws(MQTTError) -> String {
        var out: [UInt8] = []
        var i = bytes.startIndex
        while i < bytes.endIndex {
            if bytes[i] == UInt8(ascii: "%") {
                guard i + 2 < bytes.endIndex, let hi = hexValue(bytes[i + 1]), let lo = hexValue(bytes[i + 2]) else {
                    throw fail("\(what) has a '%' not followed by two hex digits")
                }
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        guard !out.contains(0) else { throw fail("\(what) holds a NUL byte (%00)") }
        guard out.count <= limit else { throw fail("\(what) is longer than \(limit) bytes") }
        guard let text = String(validating: out, as: UTF8.self) else { throw fail("\(what) is not UTF-8") }
        return text
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }

    private static func isHex(_ c: UInt8) -> Bool { hexValue(c) != nil }

    /// RFC 1123 host names (letters, digits, '-', '.'), IPv4 addresses, and '_' that some
    /// local names carry.
    private static func isHostByte(_ c: UInt8) -> Bool {
        (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c)
            || c == UInt8(ascii: "-") || c == UInt8(ascii: ".") || c == UInt8(ascii: "_")
    }

    /// `s` percent-encoded but for RFC 3986's unreserved characters (for ``description``).
    private func percentEncoded(_ s: String) -> String {
        var out = ""
        for c in s.utf8 {
            let unreserved = (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c)
            if unreserved || "-._~".utf8.contains(c) {
                out.unicodeScalars.append(Unicode.Scalar(c))
            } else {
                out += "%" + String(c, radix: 16, uppercase: true).leftPadded(2)
            }
        }
        return out
    }
}

extension String {
    /// The string with `0`s before it up to `width` characters.
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
