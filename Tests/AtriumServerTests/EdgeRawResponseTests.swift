import AtriumHTTP
import Testing

@testable import AtriumEdge

/// The HTTP/1.1 answers the edge writes in one piece (408 at the deadline, 503 over the caps, 405 to
/// CONNECT, h2c requests answered in HTTP/1.1): framing a client can parse.
@Suite struct EdgeRawResponseTests {
    static func text(_ r: HTTPResponse, headOnly: Bool = false) -> String {
        String(decoding: EdgeServer.http1Bytes(r, headOnly: headOnly), as: UTF8.self)
    }

    @Test func statusLineHeadersLengthAndBody() {
        var r = HTTPResponse(status: 408, headers: [("Content-Type", "application/json")], body: Array("{}".utf8))
        r.closeConnection = true
        #expect(
            Self.text(r)
                == "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\ncontent-length: 2\r\n"
                + "connection: close\r\n\r\n{}")
    }

    @Test func headKeepsTheLengthAndDropsTheBody() {
        let r = HTTPResponse(status: 200, headers: [], body: Array("hello".utf8))
        #expect(Self.text(r, headOnly: true) == "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n")
    }

    @Test(arguments: [204, 304])
    func bodilessStatusesHaveNoLength(_ status: Int) {
        let t = Self.text(HTTPResponse(status: status, headers: [], body: []))
        #expect(!t.contains("content-length"))
        #expect(t.hasSuffix("\r\n\r\n"))
    }

    @Test(arguments: [(400, "Bad Request"), (405, "Method Not Allowed"), (503, "Service Unavailable"), (599, "Status")])
    func reasonPhrases(_ c: (Int, String)) {
        #expect(EdgeServer.statusText(c.0) == c.1)
    }
}

/// `Content-Length` as the edge reads it: digits only; a very long run of digits is "too large", not
/// an overflow.
@Suite struct ContentLengthTests {
    static let rows: [(String, Int?)] = [
        ("0", 0), ("5", 5), ("000123", 123), ("999999999999999999", 999_999_999_999_999_999),
        ("9223372036854775807", Int.max), ("99999999999999999999999999", Int.max),
        ("", nil), ("+5", nil), ("-0", nil), ("-1", nil), ("5abc", nil), ("1e300", nil), ("1 2", nil),
        ("0x10", nil), ("١٢", nil),
    ]

    @Test(arguments: rows)
    func parse(_ r: (String, Int?)) {
        #expect(EdgeServer.contentLength(r.0) == r.1, "\(r.0.debugDescription)")
    }
}
