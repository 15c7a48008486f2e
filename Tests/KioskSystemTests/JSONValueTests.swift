// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskSystem

private func parse(_ text: String) throws(JSONValue.SyntaxError) -> JSONValue { try JSONValue.parse(Array(text.utf8)) }

@Test func numbersBooleansAndNestingAreReadAsWritten() throws {
    #expect(try parse(#"{"a":[1,1.5,true,null,"x"],"b":{}}"#)
            == .object(["a": .array([.int(1), .double(1.5), .bool(true), .null, .string("x")]), "b": .object([:])]))
    #expect(try parse("0") == .int(0))
    #expect(try parse("false") == .bool(false), "a boolean is not a number")
    #expect(try parse("9223372036854775808") == .double(9223372036854775808), "past Int64: a Double")
    #expect(try parse("[18446744073709551616, 3]") == .array([.double(18446744073709551616), .int(3)]))
    #expect(try parse("9223372036854775807") == .int(.max), "Int64 exactly")
    #expect(try parse("[2.0, 2e0, -0.0, 1e2]") == .array([.int(2), .int(2), .int(0), .int(100)]),
            "whole numbers are ints however written")
    #expect(try parse(#""caf\u00e9 \ud83d\ude00""#) == .string("café 😀"))
    #expect(try parse("2").number == 2)
    #expect(try parse("2.5").number == 2.5)
    #expect(try parse("true").number == nil)
    #expect(try parse("[]").typeName == "an array")
    #expect(try parse("1").typeName == "a number")
}

@Test func textThatIsNotJSONSaysWhy() {
    #expect(throws: JSONValue.SyntaxError.self) { try parse("{nope") }
    do { _ = try parse("[1e999]"); Issue.record("1e999 read") } catch {
        #expect(error.reason.contains("out of range"), "\(error.reason)")
    }
    do { _ = try parse(String(repeating: "[", count: 3) + "x") } catch {
        #expect(!error.reason.isEmpty && error.reason.count <= 201)
    }
}

@Test func onlyStrictRFC8259IsRead() {
    func reason(_ text: String) -> String {
        do { _ = try parse(text); return "read" } catch { return error.reason }
    }
    #expect(reason("[1,2,]")
            == "trailing comma before ']' (RFC 8259 allows none after the last array member) (line 1, column 6)")
    #expect(reason(#"{"a":[1,2,],}"#).hasPrefix("trailing comma before ']'"))
    #expect(reason(#"{"a":1,}"#)
            == "trailing comma before '}' (RFC 8259 allows none after the last object member) (line 1, column 8)")
    #expect(reason("{\"a\":1,\n\t}").hasSuffix("(line 2, column 2)"))
    #expect(reason("[,]").hasPrefix("unexpected token"), "a lone comma is not a trailing one")
    #expect(reason(#"{"a":1,"a":2}"#).contains("repeats a key"))
    #expect(reason(#"["a\u0000b"]"#).hasPrefix("a string holds \\u0000 (NUL)"))
    #expect(reason("[1] 2").hasPrefix("end of file expected"))
    #expect(reason("") == "unexpected token near end of file (line 1)")
    #expect(reason("[1,\n").hasSuffix("near end of file (line 2)"))
    #expect(reason("[NaN]") != "read")
    #expect(reason("// comment\n1") != "read")
    #expect(reason("[\"\u{7}\"]") != "read", "a raw control character in a string")
    #expect(reason(#"["\ud800"]"#) != "read", "a lone surrogate")
    #expect(reason("[\"\u{FF}\"]") == "read", "U+00FF written as UTF-8 is fine")
    do { _ = try JSONValue.parse([0x22, 0xFF, 0x22]); Issue.record("byte FF read") } catch {
        #expect(error.reason.contains("0xff"), "\(error.reason)")
    }
}

@Test func serialisationSortsKeysAndRoundTrips() throws {
    let value = JSONValue.object(["src": .string("/photos/a b.jpg"), "index": .int(2), "on": .bool(false), "x": .null])
    #expect(value.text == #"{"index":2,"on":false,"src":"/photos/a b.jpg","x":null}"#)
    #expect(try JSONValue.parse(value.serialized()) == value)
    #expect(JSONValue.string("a\"b").text == #""a\"b""#)
    #expect(JSONValue.string("a/b é\n\u{1}").text == #""a/b é\n\u0001""#)
    #expect(JSONValue.array([.double(0.1), .double(1.5), .double(-2.5e-7), .double(1e300), .double(.nan),
                             .double(.infinity)]).text
            == "[0.1,1.5,-2.5e-7,1e300,null,null]", "shortest digits; JSON has no NaN")
    let doubles = JSONValue.array([.double(0.1), .double(123456.789), .double(.leastNonzeroMagnitude),
                                   .double(1.7976931348623157e308), .double(2.0 / 3)])
    #expect(try JSONValue.parse(doubles.serialized()) == doubles)
    #expect(JSONValue.int(.min).text == "-9223372036854775808")
}

@Test func aTextWhoseTreeWouldBeHugeIsRefusedBeforeItIsBuilt() throws {
    // 8 MiB of `[0,0,...]`: 4 million numbers, some 160 MiB as jansson values.
    var text: [UInt8] = [UInt8(ascii: "[")]
    text.reserveCapacity(8 << 20)
    for _ in 0..<(4 << 20) - 1 { text += [UInt8(ascii: "0"), UInt8(ascii: ",")] }
    text += [UInt8(ascii: "0"), UInt8(ascii: "]")]
    do { _ = try JSONValue.parse(text); Issue.record("4 million values read") } catch {
        #expect(error.reason.hasPrefix("too large to read: its JSON tree would take more than 64 MiB"),
                "\(error.reason)")
    }
    // The budget is per parse: the next text is read as usual, a large one within it too.
    #expect(try parse(#"{"a":[1,2]}"#) == .object(["a": .array([.int(1), .int(2)])]))
    let tenThousand = "["
        + Array(repeating: #"{"src":"https://cdn.example/a.jpg","duration":5}"#, count: 10_000).joined(separator: ",")
        + "]"
    guard case .array(let items) = try parse(tenThousand) else { Issue.record("not an array"); return }
    #expect(items.count == 10_000)
}
