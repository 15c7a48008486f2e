import FoundationEssentials
import Glibc

/// Writes events to stdout as JSON lines (SPEC section 6), e.g.
/// `{"event":"shown","index":0,"src":"/photos/a.jpg","t":1234}`; `t` is the show time in
/// milliseconds. Each line is flushed at once so a supervisor reading the pipe sees it.
public final class EventWriter {
    struct Event: Encodable {
        var event: String
        var index: Int
        var src: String
        var t: Int64
    }

    private let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()

    public init() {}

    /// The JSON line for an event (without the newline).
    public func line(event: String, index: Int, source: String, time: Duration) -> String {
        let data = (try? encoder.encode(Event(event: event, index: index, src: source, t: time.wholeMilliseconds))) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// Writes one event line to stdout and flushes it.
    public func emit(event: String, index: Int, source: String, time: Duration) {
        let text = line(event: event, index: index, source: source, time: time) + "\n"
        _ = text.withCString { fputs($0, stdout) }
        fflush(stdout)
    }
}
