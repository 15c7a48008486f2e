import Glibc

/// One line per event on stderr, so journald keeps them (SPEC section 6):
/// `kiosk-carousel: LEVEL WHAT[ path=PATH][ detail="..."][ reason="..."]`.
public enum Log {
    public enum Level: String, Sendable { case info, warning, error }

    /// Writes one line. `what` is a short fixed phrase ("image skipped", "display opened");
    /// `path` the file or device concerned; `reason` the error's description.
    public static func write(_ level: Level, _ what: String, path: String? = nil, detail: String? = nil, reason: String? = nil) {
        var line = "kiosk-carousel: \(level.rawValue) \(what)"
        if let path { line += " path=\(quoteIfNeeded(path))" }
        if let detail { line += " detail=\(quote(detail))" }
        if let reason { line += " reason=\(quote(reason))" }
        line += "\n"
        _ = line.withCString { fputs($0, stderr) }
    }

    public static func info(_ what: String, path: String? = nil, detail: String? = nil) { write(.info, what, path: path, detail: detail) }
    public static func warning(_ what: String, path: String? = nil, reason: String? = nil) { write(.warning, what, path: path, reason: reason) }
    public static func error(_ what: String, path: String? = nil, reason: String? = nil) { write(.error, what, path: path, reason: reason) }

    private static func quoteIfNeeded(_ s: String) -> String {
        s.contains(where: { $0 == " " || $0 == "\"" || $0 == "\n" }) ? quote(s) : s
    }

    private static func quote(_ s: String) -> String {
        var out = "\""
        for c in s {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.append(c)
            }
        }
        return out + "\""
    }
}
