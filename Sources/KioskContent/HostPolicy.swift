// SPDX-License-Identifier: Apache-2.0
import Glibc

/// An IPv4 or IPv6 address, as 4 or 16 bytes in network byte order.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 bytes (IPv6), network byte order.
    public let bytes: [UInt8]

    /// From 4 or 16 bytes; nil for any other count.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    public var isIPv4: Bool { bytes.count == 4 }

    /// The IPv4 address an IPv6 one carries, for the checks: an IPv4-mapped address
    /// (`::ffff:a.b.c.d`, RFC 4291 section 2.5.5.2), an IPv4-compatible one (`::a.b.c.d`,
    /// deprecated by the same section), the NAT64 well-known prefix (`64:ff9b::/96`, RFC 6052)
    /// and 6to4 (`2002:AABB:CCDD::/48`, RFC 3056). nil for other IPv6 addresses and for IPv4.
    public var embeddedIPv4: IPAddress? {
        guard bytes.count == 16 else { return nil }
        let b = bytes
        let v4 = Array(b[12..<16])
        if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF { return IPAddress(bytes: v4) }
        // ::a.b.c.d, but not :: and ::1 (unspecified and loopback).
        if b[0..<12].allSatisfy({ $0 == 0 }) && (b[12] != 0 || b[13] != 0 || b[14] != 0) { return IPAddress(bytes: v4) }
        if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xFF && b[3] == 0x9B && b[4..<12].allSatisfy({ $0 == 0 }) {
            return IPAddress(bytes: v4)
        }
        if b[0] == 0x20 && b[1] == 0x02 { return IPAddress(bytes: Array(b[2..<6])) }
        return nil
    }

    /// Dotted decimal for IPv4, RFC 5952 text for IPv6 (inet_ntop(3)).
    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = isIPv4 ? AF_INET : AF_INET6
        let ok = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) } != nil
        return ok ? String(cString: text) : bytes.map { String($0) }.joined(separator: ".")
    }

    /// Parses a URL's host as an address, normalising every numeric form a resolver takes
    /// for one, so that the checks see the address that is connected to:
    /// - IPv6 in brackets or not, with a zone (`[fe80::1%25eth0]`, `fe80::1%eth0`) dropped;
    /// - IPv4 in the forms of inet_aton(3) and the WHATWG URL standard's IPv4 parser: one to
    ///   four parts split by `.` (one trailing `.` allowed, more are invalid), each decimal,
    ///   octal (a leading `0`) or hexadecimal (`0x`), the last part filling the bytes left
    ///   (`2130706433`, `0x7f000001`, `0177.1` and `127.1` are all 127.0.0.1).
    ///
    /// Returns ``Parsed/name`` for a host that is no address (a DNS name), and
    /// ``Parsed/invalid`` for one that ends in a number but is no valid address (`1.2.3.999`,
    /// `0x1.2.3.4.5`: WHATWG's "ends in a number" rule), which no resolver should be given.
    public static func parse(host: String) -> Parsed {
        var text = Substring(host)
        let bracketed = text.hasPrefix("[") && text.hasSuffix("]") && text.count >= 2
        if bracketed { text = text.dropFirst().dropLast() }
        if bracketed || text.contains(":") {
            if let percent = text.firstIndex(of: "%") { text = text[..<percent] }
            var raw = [UInt8](repeating: 0, count: 16)
            guard !text.isEmpty, text.utf8.count <= 45,
                  String(text).withCString({ inet_pton(AF_INET6, $0, &raw) }) == 1 else { return .invalid }
            return .address(IPAddress(bytes: raw)!)
        }
        return parseIPv4(text)
    }

    /// The outcome of ``parse(host:)``.
    public enum Parsed: Equatable, Sendable {
        case address(IPAddress)
        /// A DNS name (not numeric).
        case name
        /// Numeric-looking but not an address.
        case invalid
    }

    private static func parseIPv4(_ host: Substring) -> Parsed {
        var parts = host.split(separator: ".", omittingEmptySubsequences: false)
        var trailingDots = 0
        while parts.count > 1, parts.last?.isEmpty == true {
            parts.removeLast()
            trailingDots += 1
        }
        guard let last = parts.last, !last.isEmpty else { return .name }
        // WHATWG URL "ends in a number": the last part is all digits, or 0x and hex digits.
        let lastIsNumber = number(last) != nil || last.utf8.allSatisfy { (48...57).contains($0) }
        guard lastIsNumber else { return .name }
        // `127.1..` is neither an address nor a name a resolver takes (an empty label), and
        // without its dots it would be one: invalid, so that no form of it is a name.
        guard parts.count <= 4, trailingDots <= 1 else { return .invalid }
        var values: [UInt64] = []
        for part in parts {
            guard let value = number(part) else { return .invalid }
            values.append(value)
        }
        for value in values.dropLast() where value > 255 { return .invalid }
        let lastLimit = UInt64(1) << (8 * UInt64(5 - values.count))
        guard values[values.count - 1] < lastLimit else { return .invalid }
        var address = values[values.count - 1]
        for (i, value) in values.dropLast().enumerated() { address |= value << (8 * UInt64(3 - i)) }
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: address >> (8 * UInt64(3 - $0))) }
        return .address(IPAddress(bytes: bytes)!)
    }

    /// One IPv4 part: `0x` hex (empty digits is 0, as WHATWG), a leading `0` octal, else
    /// decimal; nil when it is none of them. A value over 2^32 - 1 is given as 2^32 (over
    /// every limit): still a number, so the host is invalid rather than a name (WHATWG).
    private static func number(_ part: Substring) -> UInt64? {
        var digits = part
        var radix: UInt64 = 10
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") {
            digits = digits.dropFirst(2)
            radix = 16
            if digits.isEmpty { return 0 }
        } else if digits.count > 1 && digits.hasPrefix("0") {
            digits = digits.dropFirst()
            radix = 8
        }
        guard !digits.isEmpty else { return nil }
        let over = UInt64(UInt32.max) + 1
        var value: UInt64 = 0
        for c in digits.utf8 {
            let d: UInt64
            switch c {
            case 48...57: d = UInt64(c - 48)
            case 97...102: d = UInt64(c - 87)
            case 65...70: d = UInt64(c - 55)
            default: return nil
            }
            guard d < radix else { return nil }
            value = min(over, value * radix + d)
        }
        return value
    }
}

/// A block of addresses: a prefix and its length (CIDR, RFC 4632; RFC 4291 section 2.3).
public struct IPRange: Hashable, Sendable, CustomStringConvertible {
    /// The first address (bits past ``prefixLength`` are zero).
    public let base: IPAddress
    /// Leading bits that count: 0...32 for IPv4, 0...128 for IPv6.
    public let prefixLength: Int

    /// `address/prefixLength`, host bits cleared; nil when the length is out of range.
    public init?(_ address: IPAddress, prefixLength: Int) {
        let bits = address.bytes.count * 8
        guard (0...bits).contains(prefixLength) else { return nil }
        var bytes = address.bytes
        for i in bytes.indices {
            let kept = max(0, min(8, prefixLength - i * 8))
            bytes[i] &= kept == 8 ? 0xFF : ~(UInt8(0xFF) >> kept)
        }
        base = IPAddress(bytes: bytes)!
        self.prefixLength = prefixLength
    }

    /// `10.0.0.0/8`, `2001:db8::/32`, or one address (a /32 or /128); nil otherwise.
    public init?(parsing text: String) {
        let pieces = text.split(separator: "/", omittingEmptySubsequences: false)
        guard pieces.count <= 2, case .address(let address) = IPAddress.parse(host: String(pieces[0])) else {
            return nil
        }
        let bits = address.bytes.count * 8
        var length = bits
        if pieces.count == 2 {
            guard !pieces[1].isEmpty, pieces[1].utf8.count <= 3, pieces[1].utf8.allSatisfy({ (48...57).contains($0) }),
                  let n = Int(pieces[1]) else { return nil }
            length = n
        }
        self.init(address, prefixLength: length)
    }

    /// Whether `address` is in the block (an IPv4 block never holds an IPv6 address: callers
    /// check ``IPAddress/embeddedIPv4`` as well).
    public func contains(_ address: IPAddress) -> Bool {
        guard address.bytes.count == base.bytes.count else { return false }
        return IPRange(address, prefixLength: prefixLength)?.base == base
    }

    public var description: String { "\(base)/\(prefixLength)" }
}

/// Which hosts the program may fetch from, asked of every request, every redirect and every
/// connection (docs/security.md):
///
/// - **Trusted hosts** (``trustedHosts``): the hosts of the URLs the administrator configured
///   (`--manifest`, URL SOURCE arguments) are always allowed, whatever they resolve to.
/// - **Refused by default** (``refusedRanges``, ``refusedNames``): link-local addresses and the
///   cloud metadata services, unless a range in ``allowed`` covers the address itself.
///   Numeric hosts are normalised first (``IPAddress/parse(host:)``), and IPv6 forms that carry
///   an IPv4 address are checked as that address.
/// - **`--allow-hosts`** (``allowed``, nil when not given): every other host must be one of
///   its names, below one of its domains, or an address in one of its ranges (a name is
///   then checked against the ranges by the address it resolves to).
///
/// Names are compared without case and without a trailing dot. A pure value: the fetcher asks
/// ``decide(host:)`` of a URL's host and ``decide(address:host:)`` of the address libcurl is
/// about to connect to (not through a proxy: a proxy resolves the name itself).
public struct HostPolicy: Equatable, Sendable {
    /// One `--allow-hosts` entry.
    public enum Pattern: Equatable, Sendable, CustomStringConvertible {
        /// That host name only.
        case name(String)
        /// The domain and every name below it (`.example.com` or `*.example.com`).
        case domain(String)
        /// The addresses in a range (`10.0.0.0/8`, `2001:db8::/32`, one address).
        case range(IPRange)

        public var description: String {
            switch self {
            case .name(let n): return n
            case .domain(let d): return "." + d
            case .range(let r): return r.description
            }
        }
    }

    /// `--allow-hosts`: nil allows every host but the refused ones.
    public var allowed: [Pattern]?
    /// Hosts always allowed (normalised with ``normalise(_:)``).
    public var trustedHosts: Set<String>

    public init(allowed: [Pattern]? = nil, trustedHosts: Set<String> = []) {
        self.allowed = allowed
        self.trustedHosts = Set(trustedHosts.map(Self.normalise))
    }

    /// Addresses refused unless trusted or allowed by a range: IPv4 link-local `169.254.0.0/16`
    /// (RFC 3927; the metadata service of AWS, Azure, GCP and OpenStack at 169.254.169.254 and
    /// AWS ECS's at 169.254.170.2 among them), IPv6 link-local `fe80::/10` (RFC 4291), AWS's
    /// IPv6 metadata address `fd00:ec2::254`, Alibaba Cloud's `100.100.100.200`, Oracle
    /// Cloud's `192.0.0.192`, and "this network" `0.0.0.0/8` and `::` (RFC 1122 section
    /// 3.2.1.3: Linux connects them to the local host).
    public static let refusedRanges: [(range: IPRange, what: String)] = [
        ("169.254.0.0/16", "link-local (RFC 3927), where cloud metadata services answer"),
        ("fe80::/10", "IPv6 link-local (RFC 4291)"),
        ("fd00:ec2::254/128", "the AWS metadata service (IPv6)"),
        ("100.100.100.200/32", "the Alibaba Cloud metadata service"),
        ("192.0.0.192/32", "the Oracle Cloud metadata service"),
        ("0.0.0.0/8", "\"this network\" (RFC 1122), which reaches the local host"),
        ("::/128", "the unspecified address, which reaches the local host"),
    ].map { (IPRange(parsing: $0.0)!, $0.1) }

    /// Names of cloud metadata services, refused unless trusted or named in ``allowed``
    /// (through a proxy the address they resolve to cannot be checked).
    public static let refusedNames: Set<String> = ["metadata.google.internal", "metadata.goog",
                                                   "instance-data.ec2.internal"]

    /// The decision on a URL's host.
    public enum Decision: Equatable, Sendable {
        case allowed
        /// Allowed if the address connected to passes ``HostPolicy/decide(address:host:)``
        /// (a name that only a range of ``allowed`` could admit); refused through a proxy.
        case needsAddress
        case refused(reason: String)
    }

    /// Lower case, without a trailing dot; an address in its canonical text (so
    /// `0x7f000001` and `127.0.0.1` are one host), IPv6 without brackets and zone.
    /// A numeric host that is no address (``IPAddress/Parsed/invalid``) is only lower-cased:
    /// without its trailing dots it could read as an address.
    public static func normalise(_ host: String) -> String {
        switch IPAddress.parse(host: host) {
        case .address(let address): return address.description
        case .invalid: return host.lowercased()
        case .name: break
        }
        var name = host.lowercased()
        while name.count > 1, name.hasSuffix(".") { name.removeLast() }
        return name
    }

    /// Whether `host` is one the administrator configured.
    public func isTrusted(_ host: String) -> Bool { trustedHosts.contains(Self.normalise(host)) }

    /// The decision on `host` (a URL's host as libcurl's URL parser gives it).
    public func decide(host: String) -> Decision {
        let normal = Self.normalise(host)
        if trustedHosts.contains(normal) { return .allowed }
        switch IPAddress.parse(host: host) {
        case .invalid:
            return .refused(reason: "'\(host)' ends in a number but is not a valid IPv4 address")
        case .address(let address):
            return decide(address: address, host: host).map { .refused(reason: $0) } ?? .allowed
        case .name:
            let matched = allowed.map { patterns in patterns.contains { Self.matches($0, name: normal) } }
            if Self.refusedNames.contains(normal), matched != true {
                return .refused(reason: "\(normal) is a cloud metadata service")
            }
            guard let allowed, matched == false else { return .allowed }
            if allowed.contains(where: { if case .range = $0 { return true }; return false }) { return .needsAddress }
            return .refused(reason: notAllowed(normal))
        }
    }

    /// Why a connection to `address` for a URL whose host is `host` is refused, or nil when it
    /// may be made. The reason starts with the address (`169.254.169.254 is link-local ...`).
    public func decide(address: IPAddress, host: String) -> String? {
        if isTrusted(host) { return nil }
        let checked = address.embeddedIPv4 ?? address
        let coveredByRange = allowed?.contains { pattern in
            guard case .range(let range) = pattern else { return false }
            return range.contains(address) || range.contains(checked)
        } ?? false
        if coveredByRange { return nil }
        if let refused = Self.refusedRanges.first(where: { $0.range.contains(checked) || $0.range.contains(address) }) {
            let shown = checked == address ? "\(address)" : "\(address) (\(checked))"
            return "\(shown) is \(refused.what): refused unless --allow-hosts names its range"
        }
        guard allowed != nil else { return nil }
        let normal = Self.normalise(host)
        if case .name = IPAddress.parse(host: host), allowed!.contains(where: { Self.matches($0, name: normal) }) {
            return nil
        }
        return notAllowed(address.description)
    }

    private func notAllowed(_ host: String) -> String {
        "\(host) is not among --allow-hosts (\(allowed!.map(\.description).joined(separator: ",")))"
    }

    private static func matches(_ pattern: Pattern, name: String) -> Bool {
        switch pattern {
        case .name(let n): return n == name
        case .domain(let d): return name == d || name.hasSuffix("." + d)
        case .range: return false
        }
    }

    /// Parses `--allow-hosts`: entries split by commas (spaces around them allowed), each a
    /// name (`cdn.example.com`), a domain and everything below it (`.example.com` or
    /// `*.example.com`), an address or a CIDR range (`10.0.0.0/8`, `2001:db8::/32`, IPv6 with
    /// or without brackets). Throws a message naming the bad entry.
    public static func parsePatterns(_ text: String) throws(HostPatternError) -> [Pattern] {
        var patterns: [Pattern] = []
        for raw in text.split(separator: ",", omittingEmptySubsequences: false) {
            let entry = raw.trimmingASCIISpaces()
            guard !entry.isEmpty else { throw HostPatternError(entry: String(raw), reason: "an empty entry") }
            if entry.contains("/") || entry.contains(":") {
                let unbracketed = entry.replacingBrackets()
                guard let range = IPRange(parsing: unbracketed) else {
                    throw HostPatternError(entry: entry,
                                           reason: "not an address or CIDR range (10.0.0.0/8, 2001:db8::/32)")
                }
                patterns.append(.range(range))
                continue
            }
            var name = entry.lowercased()
            var domain = false
            if name.hasPrefix("*.") {
                name.removeFirst(2); domain = true
            } else if name.hasPrefix(".") {
                name.removeFirst(); domain = true
            }
            while name.count > 1, name.hasSuffix(".") { name.removeLast() }
            switch IPAddress.parse(host: name) {
            case .address(let address) where !domain:
                patterns.append(.range(IPRange(address, prefixLength: address.bytes.count * 8)!))
                continue
            case .address, .invalid:
                throw HostPatternError(entry: entry, reason: "not a host name, a domain or an address")
            case .name:
                break
            }
            let allowedCharacters = name.utf8.allSatisfy { c in
                (97...122).contains(c) || (48...57).contains(c) || c == UInt8(ascii: "-") || c == UInt8(ascii: ".")
                    || c == UInt8(ascii: "_")
            }
            guard !name.isEmpty, allowedCharacters, !name.hasPrefix("."), !name.contains("..") else {
                throw HostPatternError(entry: entry,
                                       reason: "not a host name (letters, digits, '-', '.'; IDNs in their xn-- form)")
            }
            patterns.append(domain ? .domain(name) : .name(name))
        }
        return patterns
    }
}

/// A bad `--allow-hosts` entry.
public struct HostPatternError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The entry as given.
    public var entry: String
    public var reason: String
    public var description: String { "'\(entry)': \(reason)" }
}

extension StringProtocol {
    /// `[2001:db8::]/32` as `2001:db8::/32`.
    fileprivate func replacingBrackets() -> String {
        var s = String(self)
        if s.hasPrefix("["), let close = s.firstIndex(of: "]") {
            s.remove(at: close)
            s.removeFirst()
        }
        return s
    }
}
