import AtriumJSON
import AtriumModel
import AtriumProtocol
import XCTest

/// Every message docs/protocol.md shows decodes into the protocol's values: what a client sends
/// (`→`) as a request, or as the very refusal the example's answer shows; what the server sends
/// (`←`) as an answer or event that encodes back to the same JSON, a `result`'s data typed by the
/// request it answers.
final class ProtocolDocExampleTests: XCTestCase {
    struct Line {
        var speaker: String
        var outgoing: Bool
        var text: String
        var lineNumber: Int
    }

    /// The `→`/`←` lines of each ```text block, and each ```json block as one server line.
    static func examples() throws -> [[Line]] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/protocol.md")
        let doc = try String(contentsOf: url, encoding: .utf8)
        var blocks: [[Line]] = []
        var current: [Line]?
        var json: (start: Int, text: String)?
        for (i, raw) in doc.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw)
            if line.hasPrefix("```") {
                if let c = current {
                    blocks.append(c)
                    current = nil
                } else if let j = json {
                    // One message, or one per line.
                    let texts =
                        (try? JSONParser.parse(j.text)) != nil
                        ? [j.text] : j.text.split(separator: "\n").map(String.init)
                    blocks.append(
                        texts.enumerated().map { k, text in
                            let type = (try? JSONParser.parse(text))?["type"]?.stringValue ?? ""
                            return Line(
                                speaker: "doc", outgoing: RequestType(rawValue: type) != nil, text: text,
                                lineNumber: j.start + (texts.count > 1 ? k : 0))
                        })
                    json = nil
                } else if line == "```text" {
                    current = []
                } else if line == "```json" {
                    json = (i + 2, "")
                }
                continue
            }
            if json != nil {
                json?.text += line + "\n"
                continue
            }
            guard current != nil else { continue }
            for (arrow, outgoing) in [("→", true), ("←", false)] {
                guard let r = line.range(of: " \(arrow) ") else { continue }
                let speaker = line[..<r.lowerBound].trimmingCharacters(in: .whitespaces)
                var text = line[r.upperBound...].trimmingCharacters(in: .whitespaces)
                // An annotation after the message: `{...}        (already joined)`, `then close 4101`.
                if let note = text.range(of: #"\s{2,}[^"{}\[\]]*$"#, options: .regularExpression) {
                    text = String(text[..<note.lowerBound])
                }
                // Prose (`(the same two events)`) and shortened messages (`{...same...}`) are not examples.
                guard text.hasPrefix("{") || text.hasPrefix("["), !text.contains("...") else { continue }
                current?.append(Line(speaker: speaker, outgoing: outgoing, text: text, lineNumber: i + 1))
            }
        }
        return blocks
    }

    /// JSON does not tell 0 from 0.0: every number as a double.
    static func numbers(_ v: JSONValue) -> JSONValue {
        switch v {
        case .int(let i): .double(Double(i))
        case .array(let a): .array(a.map(numbers))
        case .object(let o):
            .object(
                o.reduce(into: JSONObject()) { out, pair in out[pair.key] = numbers(pair.value) })
        default: v
        }
    }

    static let decodeCodes: Set<String> = ["malformed_json", "bad_request", "invalid_field", "unsupported_protocol"]

    func testEveryExampleDecodes() throws {
        var requests = 0
        var refusals = 0
        var answers = 0
        var typedResults = 0
        var events = 0
        for block in try Self.examples() {
            // The request each speaker sent last with an id, to type the data of its result.
            var sent: [String: [(id: JSONValue?, type: RequestType)]] = [:]
            for (n, line) in block.enumerated() {
                let at = "docs/protocol.md:\(line.lineNumber)"
                if line.outgoing {
                    let decoded: Result<ClientMessage, ProtocolError>
                    do throws(ProtocolError) {
                        let value: JSONValue
                        do throws(JSONParseError) { value = try JSONParser.parse(line.text) } catch {
                            throw .malformedJSON("\(error)")
                        }
                        decoded = .success(try ClientMessage(json: value))
                    } catch {
                        decoded = .failure(error)
                    }
                    // The answer: the speaker's next result or error.
                    let answer = block[(n + 1)...].first { $0.speaker == line.speaker && !$0.outgoing }
                        .flatMap { try? JSONParser.parse($0.text).objectValue }
                        .flatMap { $0["type"] == "error" || $0["type"] == "result" ? $0 : nil }
                    let answerCode = answer?["error"]?["code"]?.stringValue
                    switch decoded {
                    case .success(let m):
                        requests += 1
                        sent[line.speaker, default: []].append((m.id, m.request.type))
                        // Encoding and decoding again gives the same request.
                        XCTAssertEqual(try ClientMessage(json: m.json), m, at)
                        if let answerCode, Self.decodeCodes.contains(answerCode), answerCode != "invalid_field" {
                            XCTFail("\(at): decoded, but the server answers \(answerCode)")
                        }
                    case .failure(let e):
                        refusals += 1
                        if let answerCode, Self.decodeCodes.contains(answerCode) {
                            XCTAssertEqual(e.code, answerCode, at)
                            // The parser's position text aside, the message is the documented one.
                            if e.code != "malformed_json" {
                                XCTAssertEqual(e.message, answer?["error"]?["message"]?.stringValue, at)
                            }
                        } else if answer?["type"] == "result" {
                            XCTFail("\(at): refused with \(e.code) but the server answers with a result")
                        }
                    }
                    continue
                }
                let value: JSONValue
                do { value = try JSONParser.parse(line.text) } catch {
                    XCTFail("\(at): not JSON: \(error)")
                    continue
                }
                guard value["type"]?.stringValue != nil else { continue }
                let message: ServerMessage
                do throws(ProtocolError) { message = try ServerMessage(json: value) } catch {
                    XCTFail("\(at): \(error.code): \(error.message)")
                    continue
                }
                XCTAssertEqual(
                    Self.numbers(.object(message.json)), Self.numbers(value), "\(at): encodes back to the same JSON")
                switch message {
                case .event: events += 1
                case .error: answers += 1
                case .result(let id, let data):
                    answers += 1
                    var type = sent[line.speaker]?.last(where: { $0.id == id })?.type
                    if type == nil, data["resumeToken"] != nil { type = .join }
                    guard let type else { continue }
                    do throws(ProtocolError) {
                        let r = try Response(data: .object(data), answering: type)
                        XCTAssertEqual(
                            Self.numbers(.object(r.json)), Self.numbers(.object(data)),
                            "\(at): \(type) result encodes back")
                        typedResults += 1
                    } catch {
                        XCTFail("\(at): the \(type.rawValue) result: \(error.code): \(error.message)")
                    }
                }
            }
        }
        // The document's examples, counted: a change to the document that drops them shows here.
        XCTAssertGreaterThanOrEqual(requests, 70)
        XCTAssertGreaterThanOrEqual(refusals, 15)
        XCTAssertGreaterThanOrEqual(answers, 85)
        XCTAssertGreaterThanOrEqual(typedResults, 30)
        XCTAssertGreaterThanOrEqual(events, 85)
        print(
            "protocol.md examples: \(requests) requests, \(refusals) refusals, \(answers) answers (\(typedResults) typed results), \(events) events"
        )
    }

    func testEveryRequestTypeIsDocumentedAndDecodes() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/protocol.md")
        let doc = try String(contentsOf: url, encoding: .utf8)
        for type in RequestType.allCases {
            XCTAssertTrue(doc.contains("\"type\":\"\(type.rawValue)\""), "\(type.rawValue) has an example")
        }
    }

    func testRefusalsNameTheField() {
        func refusal(_ text: String) -> ProtocolError? {
            guard let value = try? JSONParser.parse(text) else { return nil }
            do throws(ProtocolError) {
                _ = try ClientMessage(json: value)
                return nil
            } catch { return error }
        }
        XCTAssertEqual(
            refusal(#"{"type":"mute","trackId":"tr_1"}"#), .invalidField("muted", "is required"))
        XCTAssertEqual(
            refusal(#"{"type":"set_viewport","trackId":"tr_1","width":-1,"height":2}"#),
            .invalidField("width", "must be from 0 to 16384"))
        XCTAssertEqual(refusal(#"{"type":"join","protocol":"1"}"#), .invalidField("protocol", "expected an integer"))
        XCTAssertEqual(refusal(#"{"type":"join","protocol":1e300}"#), .invalidField("protocol", "expected an integer"))
        XCTAssertEqual(refusal(#"{"type":"set_share_policy","color":"red"}"#), .invalidField("color", "unknown field"))
        XCTAssertEqual(
            refusal(#"{"type":"ice_candidate","target":"both","candidate":""}"#),
            .invalidField("target", "expected publisher or subscriber"))
        XCTAssertEqual(refusal(#"{"type":"nope"}"#), .badRequest("unknown message type \"nope\""))
    }

    func testAnEntryWithABadTrackDescriptionIsKeptAsARefusalOfItsSection() throws {
        let text =
            #"{"type":"publish_offer","sdp":"v=0","tracks":[{"mid":"0","source":"camera","name":7},{"mid":"1","trackId":"tr_a"}]}"#
        let m = try ClientMessage(json: try JSONParser.parse(text))
        guard case .publishOffer(let offer) = m.request else { return XCTFail("\(m)") }
        XCTAssertEqual(offer.tracks.map(\.mid), ["0", "1"])
        guard case .invalid(.camera, let error, _) = offer.tracks[0].binding else { return XCTFail("\(offer)") }
        XCTAssertEqual(error, .invalidField("name", "expected a string, got number"))
        XCTAssertEqual(offer.tracks[1].binding, .existing(TrackID("tr_a")))
    }
}
