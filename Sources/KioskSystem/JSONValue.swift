// SPDX-License-Identifier: Apache-2.0
// Internal: no jansson type appears in KioskSystem's interface.
internal import CLibJansson
internal import CKioskJSON

/// A JSON value (RFC 8259) as the program reads it: a manifest or playlist, a control-socket
/// request. Read only through ``parse(_:)``, written with ``serialized()``.
///
/// Numbers: a number whose value is a whole number that fits `Int64` (`2`, `2.0`, `2e0`) is
/// ``int(_:)``, any other number ``double(_:)`` (``number`` gives either as a `Double`). A
/// boolean is never taken for a number or the other way round.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Why a text is not JSON, and where.
    public struct SyntaxError: Error, CustomStringConvertible {
        /// What is wrong, without the place (`trailing comma before ']'`), at most 200
        /// characters.
        public var message: String
        /// The line of the error, from 1; 0 when unknown.
        public var line: Int
        /// The column of the error on its line, in characters from 1 (the last character of
        /// the token jansson stopped at); 0 when the text ended at the start of a line.
        public var column: Int
        /// The byte offset in the text where reading stopped (just past the bad token).
        public var position: Int
        /// The log's reason: `message` and the place, `... (line 2, column 2)`, or
        /// `... (line 3)` for an end of text at the start of line 3.
        public var reason: String {
            if line <= 0 { return message }
            return column > 0 ? "\(message) (line \(line), column \(column))" : "\(message) (line \(line))"
        }
        public var description: String { reason }
    }

    /// Parses `bytes`, UTF-8 JSON text with any value at the top, strictly by RFC 8259 with
    /// jansson's `json_loadb`: no trailing comma (`[1,2,]` and `{"a":1,}` are refused), no
    /// duplicate key in an object (`JSON_REJECT_DUPLICATES`; RFC 8259 §4 leaves their meaning
    /// open), no `\u0000` in a string (jansson's default without `JSON_ALLOW_NUL`: Swift
    /// strings would carry it into paths and URLs), no text after the value, valid UTF-8 with
    /// no lone surrogate escapes, at most 2048 levels of nesting (jansson's limit).
    ///
    /// Memory: jansson builds the whole tree before it is converted (about 40 bytes per number,
    /// so an 8 MiB text of `[0,0,...]` would be 160 MiB); its allocations during the parse are
    /// limited to ``maxTreeBytes`` (counted in the allocator jansson calls, kc_json.c), past
    /// which the text is refused. The converted value takes about as much again.
    ///
    /// A whole number past `Int64` is read as a `Double` (jansson refuses it as an integer, so
    /// the text is read again with `JSON_DECODE_INT_AS_REAL`; every number of that text is then
    /// a `Double`, exact up to 2^53, mapped back to ``int(_:)`` when it is whole).
    /// - Throws: ``SyntaxError`` for text that is not JSON, or a number out of `Double`'s range.
    public static func parse<Bytes: Sequence>(_ bytes: Bytes) throws(SyntaxError) -> JSONValue
    where Bytes.Element == UInt8 {
        let text = Array(bytes)
        let flags = Int(JSON_DECODE_ANY | JSON_REJECT_DUPLICATES)
        var error = json_error_t()
        var exceeded: Int32 = 0
        func load(_ flags: Int, _ error: inout json_error_t) -> UnsafeMutablePointer<json_t>? {
            text.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    kc_json_loadb($0.baseAddress, $0.count, flags, maxTreeBytes, &error, &exceeded)
                }
            }
        }
        var root = load(flags, &error)
        if root == nil, exceeded == 0, json_error_code(&error) == json_error_numeric_overflow,
           Self.message(of: &error).hasPrefix("too big") {
            var again = json_error_t()
            root = load(flags | Int(JSON_DECODE_INT_AS_REAL), &again)
            if root == nil { error = again }
        }
        guard let root else {
            if exceeded != 0 {
                throw SyntaxError(message: "too large to read: its JSON tree would take more than "
                                  + "\(maxTreeBytes >> 20) MiB"
                                  + " (\(text.count) bytes of text)", line: 0, column: 0, position: 0)
            }
            throw syntaxError(&error, in: text)
        }
        defer { json_decref(root) }
        return value(of: root)
    }

    /// The most bytes jansson may allocate for one parse (its tree and lexer buffers): 64 MiB,
    /// over a thousand times what a 10,000-item manifest takes.
    public static let maxTreeBytes = 64 << 20

    /// The value of a jansson tree (not consumed: the caller still owns `json`).
    private static func value(of json: UnsafeMutablePointer<json_t>) -> JSONValue {
        switch json.pointee.type {
        case JSON_NULL: return .null
        case JSON_TRUE: return .bool(true)
        case JSON_FALSE: return .bool(false)
        case JSON_INTEGER: return .int(Int64(json_integer_value(json)))
        case JSON_REAL:
            let d = json_real_value(json)
            // Whole numbers are ints however written; 2^63 itself does not fit.
            if d == d.rounded(), d >= -0x1p63, d < 0x1p63 { return .int(Int64(d)) }
            return .double(d)
        case JSON_STRING:
            return .string(string(json_string_value(json), count: json_string_length(json)))
        case JSON_ARRAY:
            let count = json_array_size(json)
            var items: [JSONValue] = []
            items.reserveCapacity(count)
            for i in 0..<count { items.append(value(of: json_array_get(json, i))) }
            return .array(items)
        default: // JSON_OBJECT
            var fields: [String: JSONValue] = [:]
            fields.reserveCapacity(json_object_size(json))
            var iter = json_object_iter(json)
            while let i = iter {
                let key = string(json_object_iter_key(i), count: json_object_iter_key_len(i))
                fields[key] = value(of: json_object_iter_value(i))
                iter = json_object_iter_next(json, i)
            }
            return .object(fields)
        }
    }

    /// UTF-8 bytes jansson has checked (valid, no NUL) as a String.
    private static func string(_ pointer: UnsafePointer<CChar>?, count: Int) -> String {
        guard let pointer else { return "" }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: count) {
            String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
        }
    }

    private static func message(of error: inout json_error_t) -> String {
        withUnsafeBytes(of: &error.text) { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            // The last byte of `text` holds the error code (jansson.h: json_error_code).
            let end = bytes.prefix(Int(JSON_ERROR_TEXT_LENGTH) - 1).firstIndex(of: 0) ?? Int(JSON_ERROR_TEXT_LENGTH) - 1
            return String(decoding: bytes.prefix(end), as: UTF8.self)
        }
    }

    /// jansson's error in this program's words: a trailing comma and a NUL named as such, the
    /// rest as jansson says it (`']' expected near '}'`), cut at 200 characters.
    private static func syntaxError(_ error: inout json_error_t, in text: [UInt8]) -> SyntaxError {
        var message = message(of: &error)
        let position = max(0, min(Int(error.position), text.count))
        switch json_error_code(&error) {
        case json_error_invalid_syntax:
            // jansson stopped just past the closing bracket: is the byte before it a comma?
            if position > 0, let close = text[position - 1] as UInt8?,
               close == UInt8(ascii: "]") || close == UInt8(ascii: "}"),
               text[..<(position - 1)].last(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: ",") {
                let kind = close == UInt8(ascii: "]") ? "array" : "object"
                message = "trailing comma before '\(Character(Unicode.Scalar(close)))' (RFC 8259 allows none"
                    + " after the last \(kind) member)"
            }
        case json_error_null_character:
            message = "a string holds \\u0000 (NUL), which is refused"
        case json_error_numeric_overflow:
            message = "a number out of range: " + message
        case json_error_duplicate_key:
            message = "an object repeats a key: " + message
        default:
            break
        }
        if message.count > 200 { message = String(message.prefix(200)) + "…" }
        return SyntaxError(message: message, line: max(0, Int(error.line)), column: max(0, Int(error.column)),
                           position: position)
    }

    /// The value as compact JSON text, UTF-8: keys sorted, no spaces, `/` not escaped,
    /// non-ASCII as UTF-8, written by jansson's `json_dumpb`. A double is written with the
    /// fewest significant digits that read back to the same value (`0.1`, not
    /// `0.10000000000000001`); a non-finite double, which JSON cannot hold, as `null`.
    public func serialized() -> [UInt8] {
        kc_json_prepare()
        var digits: Int32 = 1
        guard let json = makeJSON(&digits) else { return Array("null".utf8) }
        defer { json_decref(json) }
        let flags = Int(JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) | Self.realPrecision(digits)
        let size = json_dumpb(json, nil, 0, flags)
        guard size > 0 else { return Array("null".utf8) }
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = buffer.baseAddress.map {
                $0.withMemoryRebound(to: CChar.self, capacity: size) { json_dumpb(json, $0, size, flags) }
            } ?? 0
        }
    }

    /// jansson.h's `JSON_REAL_PRECISION(n)` (a macro Swift does not import): bits 11-15.
    private static func realPrecision(_ n: Int32) -> Int { Int((n & 0x1F) << 11) }

    /// A new jansson tree of the value (the caller owns the reference); `digits` is raised to
    /// the significant digits the doubles need. Nil only when jansson cannot allocate.
    private func makeJSON(_ digits: inout Int32) -> UnsafeMutablePointer<json_t>? {
        switch self {
        case .null: return json_null()
        case .bool(let v): return v ? json_true() : json_false()
        case .int(let v): return json_integer(json_int_t(v))
        case .double(let v):
            guard v.isFinite else { return json_null() }
            digits = max(digits, Self.significantDigits(v))
            return json_real(v)
        case .string(let s):
            // withCString's bytes are the whole string (an embedded NUL included) plus a NUL.
            return s.withCString { json_stringn_nocheck($0, s.utf8.count) }
        case .array(let items):
            guard let array = json_array() else { return nil }
            for item in items {
                guard let element = item.makeJSON(&digits), json_array_append_new(array, element) == 0 else {
                    json_decref(array); return nil
                }
            }
            return array
        case .object(let fields):
            guard let object = json_object() else { return nil }
            for (key, field) in fields {
                guard let element = field.makeJSON(&digits),
                      key.withCString({ json_object_setn_new_nocheck(object, $0, key.utf8.count, element) }) == 0 else {
                    json_decref(object); return nil
                }
            }
            return object
        }
    }

    /// The significant digits of the shortest text that reads back as `d` (Swift's
    /// `description` is that text: `0.1`, `1e-05`, `123.25`), 1...17.
    private static func significantDigits(_ d: Double) -> Int32 {
        let mantissa = d.description.prefix { $0 != "e" && $0 != "E" }
        let digits = mantissa.filter(\.isNumber).drop { $0 == "0" }
        return Int32(min(17, max(1, digits.count)))
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
}

extension JSONValue {
    /// jansson, the parser and writer behind JSONValue (linked), for `--version`:
    /// jansson_version_str gives the loaded library's version, JANSSON_VERSION the headers'
    /// (jansson.h).
    public static var libraryVersion: LibraryVersion {
        LibraryVersion(name: "libjansson", running: String(cString: jansson_version_str()),
                       builtWith: JANSSON_VERSION, loadedFile: SharedLibrary.loadedFile("libjansson"))
    }
}
