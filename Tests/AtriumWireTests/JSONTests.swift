import Testing

@testable import AtriumJSON

@Suite struct JSONTests {
    @Test func roundTrip() throws {
        let text = #"{"a":1,"b":[true,false,null,"x\"y\n\u0001"],"c":{"d":-2.5},"e":"é☃"}"#
        let v = try JSONParser.parse(text)
        #expect(v["a"] == .int(1))
        #expect(v["c"]?["d"] == .double(-2.5))
        #expect(try JSONParser.parse(v.serialized()) == v)
        #expect(v.serialized() == text)
    }

    @Test func keepsKeyOrder() throws {
        let v = try JSONParser.parse(#"{"z":1,"a":2,"m":3}"#)
        #expect(v.objectValue?.keys == ["z", "a", "m"])
    }

    /// Malformed input is an error with a position, never a crash.
    @Test(arguments: [
        "", "{", "{\"a\":", "[1,2", "{\"a\" 1}", "tru", "\"unterminated", "{\"a\":1,}", "[1,]", "01", "NaN",
        "{\"a\":1}{", "1e99999", "99999999999999999999999", "{\"a\":1,\"a\":2}", "\"\\uD800\"", "\u{FEFF}{}",
    ])
    func malformed(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSONParser.parse(text) }
    }

    @Test func invalidUTF8IsRefused() {
        #expect(throws: JSONParseError.self) { try JSONParser.parse([0x22, 0xff, 0xfe, 0x22]) }
        #expect(throws: JSONParseError.self) { try JSONParser.parse([0x22, 0xc3, 0x22]) }
    }

    @Test func deepNestingIsAnErrorNotAStackOverflow() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        do {
            _ = try JSONParser.parse(deep)
            Issue.record("10,000 levels were accepted")
        } catch {
            #expect(error.message.contains("depth"))
        }
    }

    @Test func positionIsReported() {
        do {
            _ = try JSONParser.parse("{\n  \"a\": tru }")
            Issue.record("accepted")
        } catch {
            #expect(error.line == 2)
            #expect(error.position > 0)
        }
    }

    @Test func embeddedNulSurvives() throws {
        let v = try JSONParser.parse(#""a\u0000b""#)
        #expect(v == .string("a\u{0}b"))
        #expect(v.serialized() == #""a\u0000b""#)
    }
}
