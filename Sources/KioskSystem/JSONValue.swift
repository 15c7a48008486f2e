// Internal: no FoundationEssentials type appears in KioskSystem's interface.
internal import FoundationEssentials

/// A JSON value (RFC 8259) as the program reads it: a manifest or playlist, a control-socket
/// request. Read only through ``parse(_:)``, written with ``serialized()`` or as `Codable`.
///
/// Numbers: a whole number that fits `Int64` is ``int(_:)``, any other number ``double(_:)``
/// (``number`` gives either as a `Double`). A boolean is never taken for a number or the other
/// way round.
public enum JSONValue: Codable, Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Why a text is not JSON: ``reason`` for the log, ``underlying`` the decoder's own error.
    public struct SyntaxError: Error, CustomStringConvertible {
        /// The decoder's error (a `DecodingError`), for callers that word the reason themselves.
        public var underlying: any Error
        /// A one-line reason, at most 200 characters.
        public var reason: String
        public var description: String { reason }
    }

    /// Parses `bytes` (UTF-8 JSON text, any value at the top). The one entry point of JSON
    /// reading in the program: decoded with FoundationEssentials' `JSONDecoder`.
    /// Throws ``SyntaxError`` for text that is not JSON, or a number out of `Double`'s range.
    public static func parse<Bytes: Sequence>(_ bytes: Bytes) throws(SyntaxError) -> JSONValue where Bytes.Element == UInt8 {
        do {
            return try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        } catch {
            throw SyntaxError(underlying: error, reason: shortReason(error))
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let v = try? c.decode(Bool.self) { self = .bool(v) }
        else if let v = try? c.decode(Int64.self) { self = .int(v) }
        else if let v = try? c.decode(Double.self) { self = .double(v) }
        else if let v = try? c.decode(String.self) { self = .string(v) }
        else if let v = try? c.decode([JSONValue].self) { self = .array(v) }
        else if let v = try? c.decode([String: JSONValue].self) { self = .object(v) }
        else {
            // In practice a number too large for a Double (1e999).
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "a value that cannot be read (a number out of range?)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let v): try c.encode(v)
        case .int(let v): try c.encode(v)
        case .double(let v): try c.encode(v)
        case .string(let v): try c.encode(v)
        case .array(let v): try c.encode(v)
        case .object(let v): try c.encode(v)
        }
    }

    /// The encoder for written JSON: keys sorted, `/` not escaped.
    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()

    /// The value as compact JSON text (keys sorted), UTF-8.
    public func serialized() -> [UInt8] {
        guard let data = try? Self.encoder.encode(self) else { return Array("null".utf8) }
        return Array(data)
    }

    /// The value as JSON text (for messages: `got "x"`, `got [1,2]`).
    public var text: String { String(decoding: serialized(), as: UTF8.self) }

    /// An ``int(_:)`` or ``double(_:)`` as a `Double`; nil for anything else.
    public var number: Double? {
        switch self {
        case .int(let v): return Double(v)
        case .double(let v): return v
        default: return nil
        }
    }

    /// `null`, `a boolean`, `a number`, `a string`, `an array`, `an object` (for messages).
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    private static func shortReason(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error {
            if let underlying = context.underlyingError {
                let text = "\(underlying)"
                return text.count > 200 ? String(text.prefix(200)) + "…" : text
            }
            return context.debugDescription
        }
        return "\(error)"
    }
}
