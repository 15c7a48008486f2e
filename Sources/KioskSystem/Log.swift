// SPDX-License-Identifier: Apache-2.0
import Glibc

/// One line per event on stderr, so journald keeps them (docs/events-and-logs.md):
/// `kiosk-carousel: LEVEL WHAT[ path=PATH][ detail="..."][ reason="..."]`.
public enum Log {
    public enum Level: String, Sendable { case info, warning, error }

    /// Writes one line. `what` is a short fixed phrase ("image skipped", "display opened");
    /// `path` the file or device concerned; `reason` the error's description.
    public static func write(_ level: Level, _ what: String, path: String? = nil, detail: String? = nil,
                             reason: String? = nil) {
        let text = line(level, what, path: path, detail: detail, reason: reason) + "\n"
        _ = text.withCString { fputs($0, stderr) }
    }

    /// The log line (without the newline) that ``write(_:_:path:detail:reason:)`` writes.
    public static func line(_ level: Level, _ what: String, path: String? = nil, detail: String? = nil,
                            reason: String? = nil) -> String {
        // `what` may carry text from outside (a manifest's error): control characters are
        // escaped there too, and every field is cut at 4096 characters, so no line can be forged
        // or flood the journal.
        var line = "kiosk-carousel: \(level.rawValue) \(escapeControls(cut(what)))"
        if let path { line += " path=\(quoteIfNeeded(cut(path)))" }
        if let detail { line += " detail=\(quote(cut(detail)))" }
        if let reason { line += " reason=\(quote(cut(reason)))" }
        return line
    }

    /// Longest field, in characters; longer ones end with "…(N more)".
    static let fieldLimit = 4096

    /// `s` with the password of every URL in it hidden: `scheme://user:secret@host` becomes
    /// `scheme://user:***@host` (RFC 3986 section 3.2.1 deprecates a password in a URL; a
    /// manifest URL may still carry one, and the journal must not). Every output of the program
    /// that may hold a URL goes through it: log lines, `shown` and `tap` events, control-socket
    /// replies, systemd's STATUS, the tap command's `KIOSK_SRC` and usage errors.
    public static func hidingPasswords(_ s: String) -> String {
        guard s.contains("@") else { return s }
        let c = Array(s)
        var out = ""
        var i = 0
        while i < c.count {
            guard i + 2 < c.count, c[i] == ":", c[i + 1] == "/", c[i + 2] == "/" else {
                out.append(c[i]); i += 1; continue
            }
            out += "://"
            i += 3
            // The authority ends at the first "/", "?", "#", space or quote.
            var end = i
            while end < c.count, !"/?#\" ".contains(c[end]) { end += 1 }
            let authority = c[i..<end]
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                out += String(authority[...colon]) + "***" + String(authority[at...])
                i = end
                continue
            }
            // A password holding "/", "?" or "#" (not allowed unencoded by RFC 3986 section
            // 3.2.1, but people type them): the word's last "@" ends the user information
            // when a ":" before the first "/" starts something that is no port number
            // (`http://u:pa/ss@proxy:3128`; `http://host:8080/logo@2x.png` is left alone).
            var wordEnd = end
            while wordEnd < c.count, !"\" '".contains(c[wordEnd]) { wordEnd += 1 }
            if let colon = authority.firstIndex(of: ":"), let at = c[end..<wordEnd].lastIndex(of: "@"),
               case let port = c[(colon + 1)..<end], port.isEmpty || !port.allSatisfy({ $0.isASCII && $0.isNumber }) {
                out += String(c[i...colon]) + "***" + String(c[at..<wordEnd])
                i = wordEnd
                continue
            }
            out += String(authority)
            i = end
        }
        return out.contains("@") ? hidingSchemelessPasswords(out) : out
    }

    /// The second pass of ``hidingPasswords(_:)``: a word (between spaces and quotes) without
    /// `://` whose part before its first `@` (after its last `/`) has a `:` is a URL written
    /// without the two slashes (`user:pw@proxy:3128`, `https:/user:pw@host`), which libcurl
    /// takes too: what follows that `:` is hidden. `me@example.org` has no `:` there, and a
    /// path (a word starting with `/` or `.`) is left as it is.
    private static func hidingSchemelessPasswords(_ s: String) -> String {
        var out = ""
        var word = ""
        func flush() {
            defer { word = "" }
            // A path (`/srv/12:30@2x.jpg`, `./a:b@c.png`) is not a URL.
            guard !word.contains("://"), word.first != "/", word.first != ".", let at = word.firstIndex(of: "@") else {
                out += word; return
            }
            let prefix = word[..<at]
            let start = prefix.lastIndex(of: "/").map { prefix.index(after: $0) } ?? prefix.startIndex
            guard let colon = prefix[start...].firstIndex(of: ":"), prefix.index(after: colon) < at else {
                out += word; return
            }
            out += String(word[...colon]) + "***" + String(word[at...])
        }
        for ch in s {
            if ch == " " || ch == "\"" || ch == "'" || ch == "=" { flush(); out.append(ch) } else { word.append(ch) }
        }
        flush()
        return out
    }

    private static func cut(_ s: String) -> String {
        let s = hidingPasswords(s)
        let scalars = s.unicodeScalars
        guard scalars.count > fieldLimit else { return s }
        var out = String(String.UnicodeScalarView(scalars.prefix(fieldLimit)))
        out += "…(\(scalars.count - fieldLimit) more)"
        return out
    }

    /// Whether `c` is written as an escape: the C0 controls and DEL, the C1 controls
    /// (U+0080...U+009F: a terminal takes U+009B as CSI), the bidirectional formatting
    /// characters (U+061C, U+200E, U+200F, U+202A...U+202E, U+2066...U+2069, Unicode UAX #9:
    /// a log viewer would reorder the line around them), the zero-width and invisible ones
    /// (U+200B...U+200D, U+2060...U+2064, U+FEFF: two names that look the same would read the
    /// same) and the line and paragraph separators (U+2028, U+2029).
    static func isEscaped(_ c: Unicode.Scalar) -> Bool {
        switch c.value {
        case 0..<0x20, 0x7F...0x9F, 0x061C, 0x200B...0x200F, 0x2028...0x202E, 0x2060...0x2069, 0xFEFF: return true
        default: return false
        }
    }

    /// Control characters written as escapes, without quotes.
    private static func escapeControls(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: isEscaped) else { return s }
        let q = quote(s)
        return String(q.dropFirst().dropLast())
    }

    public static func info(_ what: String, path: String? = nil, detail: String? = nil) {
        write(.info, what, path: path, detail: detail)
    }
    public static func warning(_ what: String, path: String? = nil, reason: String? = nil) {
        write(.warning, what, path: path, reason: reason)
    }
    public static func error(_ what: String, path: String? = nil, reason: String? = nil) {
        write(.error, what, path: path, reason: reason)
    }

    private static func quoteIfNeeded(_ s: String) -> String {
        s.unicodeScalars.contains(where: { $0 == " " || $0 == "\"" || $0 == "\\" || isEscaped($0) }) ? quote(s) : s
    }

    /// Double-quoted, with `"` and `\` escaped and control characters (newline, carriage
    /// return, tab, ESC …; ``isEscaped(_:)``) written as escapes (`\x1b`, `\u202e`), so a
    /// hostile file name cannot forge, garble or reorder a log line.
    private static func quote(_ s: String) -> String {
        var out = "\""
        for c in s.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where c.value < 0x20 || c.value == 0x7F:
                let hex = String(c.value, radix: 16)
                out += "\\x" + (hex.count < 2 ? "0" : "") + hex
            case _ where isEscaped(c):
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }
}
