import AtriumBytes

/// SDES: source description (RFC 3550 section 6.5), PT 202, SC chunks.
///
/// ```
/// |V=2|P|    SC   |  PT=SDES=202  |             length            |
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// |                          SSRC/CSRC_1                          |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |    type (8)   |   length (8)  |  text, ends with a null item  ...
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// ```
/// Each chunk's item list ends with a zero byte and the chunk is zero-padded to a 32-bit boundary.
public struct SourceDescription: Equatable, Sendable {
    /// SDES item types (RFC 3550 section 6.5.1-6.5.8).
    public enum ItemType {
        public static let end: UInt8 = 0
        public static let cname: UInt8 = 1
        public static let name: UInt8 = 2
        public static let tool: UInt8 = 6
        public static let note: UInt8 = 7
        public static let priv: UInt8 = 8
    }

    public struct Item: Equatable, Sendable {
        public var type: UInt8
        public var text: [UInt8]

        public init(type: UInt8, text: [UInt8]) {
            self.type = type
            self.text = text
        }

        public static func cname(_ text: String) -> Item { Item(type: ItemType.cname, text: Array(text.utf8)) }
    }

    public struct Chunk: Equatable, Sendable {
        public var source: UInt32
        public var items: [Item]

        public init(source: UInt32, items: [Item]) {
            self.source = source
            self.items = items
        }
    }

    public var chunks: [Chunk]

    public init(chunks: [Chunk]) { self.chunks = chunks }

    init(count: UInt8, _ r: inout ByteReader) throws(RTPError) {
        let bodyStart = r.position
        chunks = []
        for _ in 0..<count {
            var chunk = Chunk(source: try r.readUInt32(), items: [])
            while true {
                let type = try r.readUInt8()
                if type == ItemType.end { break }
                let length = Int(try r.readUInt8())
                chunk.items.append(Item(type: type, text: try r.readBytes(length)))
            }
            // Skip the null padding to the next 32-bit boundary.
            try r.skip((4 - (r.position - bodyStart) % 4) % 4)
            chunks.append(chunk)
        }
    }

    func write(into out: inout [UInt8]) throws(RTPError) -> Int {
        for chunk in chunks {
            out.appendBigEndian(chunk.source)
            for item in chunk.items {
                guard item.type != ItemType.end, item.text.count <= 255 else { throw .valueOutOfRange }
                out += [item.type, UInt8(item.text.count)]
                out += item.text
            }
            out.append(ItemType.end)
            out.padToWord()
        }
        return chunks.count
    }
}
