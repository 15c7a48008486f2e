// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import KioskSystem

/// The checks every http(s) URL the program fetches goes through (`--manifest`, `--proxy`, an
/// item's `src`, a SOURCE argument), beyond what `URL(string:)` does: FoundationEssentials
/// takes `http://host:99999/` (port 99999) and `http://host:123456789012345678901/` (port nil),
/// and libcurl then fails each attempt as if the host were unreachable.
public enum HTTPURL {
    /// The TCP port range (a 16-bit field, RFC 9293 section 3.1; port 0 is reserved and cannot
    /// be connected to).
    public static let portRange = 1...65535

    /// Why `text` is not an absolute http or https URL with a host and a usable port, or nil
    /// when it is. The reason quotes `text` with any password hidden (`user:***@`).
    public static func problem(_ text: String) -> String? {
        if let bad = userInfoProblem(text) { return bad }
        let shown = "'\(Log.hidingPasswords(text))'"
        guard let url = URL(string: text) else { return "\(shown) is not a URL (RFC 3986)" }
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return "\(shown) is not an http or https URL"
        }
        guard let host = url.host, !host.isEmpty else { return "\(shown) has no host" }
        if let port = portText(text) {
            // RFC 3986 section 3.2.3: `host:` with no digits means the scheme's default port.
            if !port.isEmpty {
                guard port.utf8.allSatisfy({ (48...57).contains($0) }) else {
                    return "\(shown): port '\(port)' is not a number"
                }
                // Leading zeros are allowed (RFC 3986 section 3.2.3: port = *DIGIT): 000080 is 80.
                let digits = port.drop(while: { $0 == "0" })
                guard digits.utf8.count <= 5, let n = Int(digits.isEmpty ? "0" : String(digits)),
                      portRange.contains(n) else {
                    return "\(shown): port \(port) is out of range (a TCP port is "
                        + "\(portRange.lowerBound)...\(portRange.upperBound))"
                }
            }
        }
        return nil
    }

    /// Why the user name and password before the authority's last `@` are not RFC 3986's
    /// `userinfo` (section 3.2.1: unreserved characters, percent-encodings, sub-delims and `:`),
    /// or nil. A `"`, a space or another character outside that set would also end the part of
    /// the text that log lines and replies hide (``Log/hidingPasswords(_:)``), so the reason
    /// names the character and never quotes the URL.
    static func userInfoProblem(_ text: String) -> String? {
        let chars = Array(text)
        guard let mark = chars.indices.first(where: { chars[$0...].starts(with: [":", "/", "/"] as [Character]) })
        else { return nil }
        var authority = chars[(mark + 3)...]
        if let end = authority.firstIndex(where: { "/?#".contains($0) }) { authority = authority[..<end] }
        guard let at = authority.lastIndex(of: "@"), let name = disallowedInUserInfo(authority[..<at]) else {
            return nil
        }
        return "a URL's user name or password holds \(name), which RFC 3986 (section 3.2.1) does not allow there:"
            + " percent-encode it (not shown, as it may be a password)"
    }

    /// RFC 3986 section 3.2.1's `userinfo` characters: unreserved, percent-encodings,
    /// sub-delims and `:`.
    static let userInfoCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                        + "-._~%!$&'()*+,;=:")

    /// The first character of `userInfo` that is not a `userinfo` character, named for a
    /// message that must not quote it (`a space`, `'/'`, `a control or non-ASCII character`),
    /// or nil.
    static func disallowedInUserInfo(_ userInfo: ArraySlice<Character>) -> String? {
        guard let bad = userInfo.first(where: { !userInfoCharacters.contains($0) }) else { return nil }
        return bad == " " ? "a space"
            : bad.isASCII && bad.asciiValue! >= 0x21 && bad.asciiValue! < 0x7F ? "'\(bad)'"
            : "a control or non-ASCII character"
    }

    /// The text after the authority's port colon (`99999` in `http://u:p@host:99999/x`,
    /// `8080` in `http://[::1]:8080`), "" for `host:`, nil when there is no port.
    static func portText(_ text: String) -> String? {
        let chars = Array(text)
        guard let mark = chars.indices.first(where: { chars[$0...].starts(with: [":", "/", "/"] as [Character]) })
        else { return nil }
        var authority = chars[(mark + 3)...]
        if let end = authority.firstIndex(where: { "/?#".contains($0) }) { authority = authority[..<end] }
        if let at = authority.lastIndex(of: "@") { authority = authority[(at + 1)...] }
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            authority = authority[(close + 1)...]
            guard authority.first == ":" else { return nil }
            return String(authority.dropFirst())
        }
        guard let colon = authority.lastIndex(of: ":") else { return nil }
        return String(authority[(colon + 1)...])
    }
}
