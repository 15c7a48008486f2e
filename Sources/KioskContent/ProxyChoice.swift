// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskSystem

/// Which proxy a download goes through, and where that proxy was set, decided by the rules
/// libcurl 7.88 follows (lib/url.c: `detect_proxy` and lib/noproxy.c: `Curl_check_noproxy`), so
/// that a failure can name the proxy instead of blaming the server. libcurl still makes the
/// decision for each transfer and each redirect; this only mirrors it for messages.
///
/// - `--proxy` (``Fetcher/Configuration/proxy``, `CURLOPT_PROXY`) is used for every scheme and
///   the environment's proxies are not read.
/// - Otherwise `http_proxy` for http (never `HTTP_PROXY`: libcurl refuses it, as a CGI program's
///   environment takes it from a request's `Proxy:` header), `https_proxy` then `HTTPS_PROXY`
///   for https, and for either `all_proxy` then `ALL_PROXY` when the scheme's own is unset. An
///   empty variable counts as unset (curl_getenv).
/// - `no_proxy` (else `NO_PROXY`) applies to all of them: `*` for every host, else a list
///   separated by commas or blanks of host names (a name matches itself and its subdomains;
///   leading and trailing dots ignored; any case) and IP addresses with an optional `/bits`.
public struct ProxyChoice: Equatable, Sendable {
    /// One proxy setting: its value as given and the option or variable it came from.
    public struct Proxy: Equatable, Sendable, CustomStringConvertible {
        /// The value as given (`http://user:secret@proxy.lan:3128`, `proxy.lan:3128`).
        public var value: String
        /// `--proxy`, `http_proxy`, `https_proxy`, `HTTPS_PROXY`, `all_proxy` or `ALL_PROXY`.
        public var origin: String
        public init(value: String, origin: String) { self.value = value; self.origin = origin }

        /// `the proxy http://user:***@proxy.lan:3128 (http_proxy)`: the password hidden.
        public var description: String { "the proxy \(Log.hidingPasswords(value)) (\(origin))" }

        /// Why libcurl cannot use the value, or nil: a scheme it has no proxy for, no host, or
        /// a port that is not a number in 1...65535 (RFC 3986 section 3.2.3; libcurl's own
        /// message for these is a DNS failure). A value without a scheme is `http://` to
        /// libcurl.
        public var problem: String? {
            let chars = Array(value)
            // A user name or password with a character RFC 3986 (section 3.2.1) does not allow
            // there (a space, a quote, "/", "?", "#"): named, never quoted, since the part of
            // the text log lines hide could end at it.
            let start = chars.indices.first(where: { chars[$0...].starts(with: [":", "/", "/"] as [Character]) })
                .map { $0 + 3 } ?? 0
            if let at = chars[start...].lastIndex(of: "@"), let name = HTTPURL.disallowedInUserInfo(chars[start..<at]) {
                return "the proxy's user name or password holds \(name), which RFC 3986 (section 3.2.1) does not"
                    + " allow there: percent-encode it (not shown, as it may be a password)"
            }
            let shown = "'\(Log.hidingPasswords(value))'"
            var rest = Substring(value)
            if let mark = chars.indices.first(where: { chars[$0...].starts(with: [":", "/", "/"] as [Character]) }) {
                let scheme = String(chars[..<mark]).lowercased()
                guard ProxyChoice.schemes.contains(scheme) else {
                    return "\(shown): \(scheme): is not a proxy scheme libcurl has "
                        + "(\(ProxyChoice.schemes.joined(separator: ", ")))"
                }
                rest = Substring(String(chars[(mark + 3)...]))
            }
            if let end = rest.firstIndex(where: { "/?#".contains($0) }) { rest = rest[..<end] }
            if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
            var host = rest
            var port: Substring?
            if rest.first == "[" {
                guard let close = rest.firstIndex(of: "]") else {
                    return "\(shown): the IPv6 address has no closing ']'"
                }
                host = rest[...close]
                let after = rest[rest.index(after: close)...]
                if after.first == ":" {
                    port = after.dropFirst()
                } else if !after.isEmpty {
                    return "\(shown): '\(after)' after the IPv6 address"
                }
            } else if let colon = rest.lastIndex(of: ":") {
                host = rest[..<colon]
                port = rest[rest.index(after: colon)...]
            }
            if host.isEmpty { return "\(shown) has no host" }
            // libcurl takes `proxy:` with no digits as its default proxy port 1080, which is
            // hardly what was meant.
            if port?.isEmpty == true { return "\(shown): no port after the ':' (libcurl would use 1080)" }
            if let port, !port.isEmpty {
                guard port.utf8.allSatisfy({ (48...57).contains($0) }) else {
                    return "\(shown): port '\(port)' is not a number"
                }
                let digits = port.drop(while: { $0 == "0" })
                guard digits.utf8.count <= 5, let n = Int(digits.isEmpty ? "0" : String(digits)),
                      HTTPURL.portRange.contains(n) else {
                    return "\(shown): port \(port) is out of range (a TCP port is "
                        + "\(HTTPURL.portRange.lowerBound)...\(HTTPURL.portRange.upperBound))"
                }
            }
            return nil
        }
    }

    /// The proxy schemes libcurl 7.88 takes (CURLOPT_PROXY(3)).
    static let schemes = ["http", "https", "socks4", "socks4a", "socks5", "socks5h"]

    /// The proxy of http URLs, of https URLs (nil: direct), and the `no_proxy` list.
    public var http: Proxy?
    public var https: Proxy?
    public var noProxy: String?

    /// - Parameters:
    ///   - option: `--proxy`, or nil.
    ///   - environment: the process's variables (only the proxy ones are read).
    public init(option: String?, environment: [String: String]) {
        func variable(_ names: String...) -> Proxy? {
            for name in names { if let v = environment[name], !v.isEmpty { return Proxy(value: v, origin: name) } }
            return nil
        }
        if let option, !option.isEmpty {
            http = Proxy(value: option, origin: "--proxy")
            https = http
        } else {
            http = variable("http_proxy") ?? variable("all_proxy", "ALL_PROXY")
            https = variable("https_proxy", "HTTPS_PROXY") ?? variable("all_proxy", "ALL_PROXY")
        }
        noProxy = variable("no_proxy", "NO_PROXY")?.value
    }

    /// The proxy variables of this process's environment (getenv(3), as libcurl reads them).
    public static func processEnvironment() -> [String: String] {
        var out: [String: String] = [:]
        for name in ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"] {
            if let v = getenv(name) { out[name] = String(cString: v) }
        }
        return out
    }

    /// The proxies in force for http and https whose value libcurl cannot use (once each).
    public var unusable: [(proxy: Proxy, problem: String)] {
        var seen: [Proxy] = []
        var out: [(proxy: Proxy, problem: String)] = []
        for proxy in [http, https].compactMap({ $0 }) where !seen.contains(proxy) {
            seen.append(proxy)
            if let problem = proxy.problem { out.append((proxy, problem)) }
        }
        return out
    }

    /// The proxy a request for `url` goes through, nil when it goes direct (another scheme,
    /// no proxy set, or `no_proxy` names its host).
    public func proxy(for url: String) -> Proxy? {
        let scheme = url.prefix(while: { $0 != ":" }).lowercased()
        guard let proxy = scheme == "http" ? http : scheme == "https" ? https : nil else { return nil }
        if let noProxy, Self.excludes(noProxy, host: hostOf(url)) { return nil }
        return proxy
    }

    /// Whether the `no_proxy` list excludes `host` (a name, an IPv4 address or an IPv6 address
    /// in brackets), as Curl_check_noproxy decides.
    static func excludes(_ list: String, host: String) -> Bool {
        if list == "*" { return true }
        var name = Substring(host)
        var family: Int32?
        if name.first == "[" {
            name = name.dropFirst().prefix(while: { $0 != "]" })
            family = AF_INET6
        } else if address(String(name), AF_INET) != nil {
            family = AF_INET
        } else if name.last == "." {
            name = name.dropLast()
        }
        for raw in list.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            var token = raw
            if let family {
                var bits: Int?
                if let slash = token.firstIndex(of: "/") {
                    // libcurl reads the length with atoi into an unsigned: a negative or
                    // overflowing length matches nothing, text that is no number is 0.
                    let text = token[token.index(after: slash)...]
                    bits = Int(text) ?? (!text.isEmpty && text.allSatisfy { $0.isASCII && $0.isNumber } ? Int.max : 0)
                    token = token[..<slash]
                }
                if cidrMatch(String(name), String(token), bits: bits ?? 0, family: family) { return true }
                continue
            }
            if token.last == "." { token = token.dropLast() }
            if token.first == "." { token = token.dropFirst() }
            guard !token.isEmpty else { continue }
            let n = name.lowercased(), t = token.lowercased()
            if n == t || n.hasSuffix("." + t) { return true }
        }
        return false
    }

    /// The bytes of an IP address in `family`, or nil (inet_pton(3)).
    private static func address(_ text: String, _ family: Int32) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 16)
        guard inet_pton(family, text, &buffer) == 1 else { return nil }
        return Array(buffer.prefix(family == AF_INET ? 4 : 16))
    }

    /// Curl_cidr4_match / Curl_cidr6_match: the first `bits` bits equal (0: all of them).
    private static func cidrMatch(_ host: String, _ network: String, bits: Int, family: Int32) -> Bool {
        guard let a = address(host, family), let b = address(network, family) else { return false }
        let width = a.count * 8
        guard bits >= 0, bits <= width else { return false }
        let n = bits == 0 ? width : bits
        for i in 0..<n {
            let shift = 7 - i % 8
            if (a[i / 8] >> shift) & 1 != (b[i / 8] >> shift) & 1 { return false }
        }
        return true
    }
}
