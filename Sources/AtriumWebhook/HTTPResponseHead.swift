/// The status line of an HTTP/1.x response (RFC 9112 section 4): `HTTP/1.1 200 OK`. Pure.
public enum HTTPResponseHead {
    /// The status code once `bytes` hold the status line, nil while it is incomplete or when it is not
    /// an HTTP/1 status line (`malformed` is then true).
    public static func status(_ bytes: [UInt8]) -> (code: Int?, malformed: Bool) {
        guard let end = bytes.firstIndex(of: UInt8(ascii: "\n")) else {
            return (nil, bytes.count > 8 && !bytes.starts(with: Array("HTTP/1.".utf8)))
        }
        let line = bytes[..<end]
        let prefix = Array("HTTP/1.".utf8)
        guard line.count >= 12, line.starts(with: prefix), line[line.startIndex + 8] == UInt8(ascii: " ") else {
            return (nil, true)
        }
        var code = 0
        for b in line[(line.startIndex + 9)..<(line.startIndex + 12)] {
            guard b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9") else { return (nil, true) }
            code = code * 10 + Int(b - UInt8(ascii: "0"))
        }
        return (code, false)
    }
}
