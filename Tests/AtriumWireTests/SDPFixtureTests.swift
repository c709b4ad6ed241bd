import AtriumTestSupport
import Foundation
import Testing

@testable import AtriumSDP

/// Every captured SDP from Chrome 156, Firefox ESR 153, aiortc 1.16 and Janus 1.1.2 parses, and
/// survives parse -> serialize -> parse unchanged.
@Suite struct SDPFixtureTests {
    @Test func fixturesArePresent() {
        #expect(SDPFixtures.names.count == 41)
    }

    @Test(arguments: SDPFixtures.names)
    func parsesAndRoundTrips(_ name: String) throws {
        let bytes = SDPFixtures.bytes(name)
        #expect(bytes.count > 100, "fixture \(name) is missing")
        let sdp = try SessionDescription.parse(bytes)
        #expect(!sdp.media.isEmpty)
        let text = sdp.serialized()
        #expect(text.hasSuffix("\r\n"))
        #expect(!text.contains("\r\n\r\n"))
        let again = try SessionDescription.parse(text)
        #expect(again == sdp)
        // The serializer is stable: a second round gives the same text.
        #expect(again.serialized() == text)
    }

    /// Every line survives: the same number of attribute lines per section, and the same
    /// `a=` lines as a multiset, apart from the normalisations the serializer documents.
    @Test(arguments: SDPFixtures.names)
    func keepsEveryLine(_ name: String) throws {
        let original = SDPFixtures.text(name)
        let sdp = try SessionDescription.parse(original)
        let written = sdp.serialized()
        let normalise = { (text: String) -> [String] in
            text.split(separator: "\r\n").map { line in
                line.replacingOccurrences(of: "msid-semantic: ", with: "msid-semantic:")
            }
        }
        #expect(normalise(written) == normalise(original))
    }

    @Test func bareLineFeedsParseLikeCRLF() throws {
        let crlf = SDPFixtures.text("janus-1.1.2-offer-to-subscriber.sdp")
        let lf = crlf.replacingOccurrences(of: "\r\n", with: "\n")
        #expect(try SessionDescription.parse(lf) == SessionDescription.parse(crlf))
    }
}
