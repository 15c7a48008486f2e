import Testing
import KioskSystem

private func parse(_ text: String) throws(JSONValue.SyntaxError) -> JSONValue { try JSONValue.parse(Array(text.utf8)) }

@Test func numbersBooleansAndNestingAreReadAsWritten() throws {
    #expect(try parse(#"{"a":[1,1.5,true,null,"x"],"b":{}}"#)
            == .object(["a": .array([.int(1), .double(1.5), .bool(true), .null, .string("x")]), "b": .object([:])]))
    #expect(try parse("0") == .int(0))
    #expect(try parse("false") == .bool(false), "a boolean is not a number")
    #expect(try parse("9223372036854775808") == .double(9223372036854775808), "past Int64: a Double")
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

@Test func serialisationSortsKeysAndRoundTrips() throws {
    let value = JSONValue.object(["src": .string("/photos/a b.jpg"), "index": .int(2), "on": .bool(false), "x": .null])
    #expect(value.text == #"{"index":2,"on":false,"src":"/photos/a b.jpg","x":null}"#)
    #expect(try JSONValue.parse(value.serialized()) == value)
    #expect(JSONValue.string("a\"b").text == #""a\"b""#)
}
