/// VP8 over RTP (RFC 7741): a frame cut into payloads behind the payload descriptor, and a frame put
/// back together from the payloads of one picture. Pure values; a native client's sender and receiver.
public enum VP8Payload {
    /// The descriptor's size with a 15-bit picture ID: `X` set, `I` set, `M` set.
    static let descriptorSize = 4

    /// Cuts `frame` into payloads of at most `maxPayload` bytes (descriptor included), each with the
    /// 15-bit `pictureID`; the first starts the partition (`S`), the key frame's packets are not
    /// marked non-reference. The RTP marker bit goes on the last one.
    public static func packetize(_ frame: [UInt8], pictureID: UInt16, maxPayload: Int) -> [[UInt8]] {
        let room = max(1, maxPayload - descriptorSize)
        var out: [[UInt8]] = []
        var offset = 0
        repeat {
            let end = min(frame.count, offset + room)
            var p: [UInt8] = [0x80 | (offset == 0 ? 0x10 : 0), 0x80]
            p.append(0x80 | UInt8((pictureID >> 8) & 0x7F))
            p.append(UInt8(pictureID & 0xFF))
            p += frame[offset..<end]
            out.append(p)
            offset = end
        } while offset < frame.count
        return out
    }

    /// The descriptor's length and its `S` bit (the packet starts a partition), nil when it is cut short.
    public static func descriptor(_ payload: ArraySlice<UInt8>) -> (length: Int, starts: Bool)? {
        guard let first = payload.first else { return nil }
        var n = 1
        if first & 0x80 != 0 {
            guard payload.count > n else { return nil }
            let x = payload[payload.startIndex + n]
            n += 1
            if x & 0x80 != 0 {
                guard payload.count > n else { return nil }
                n += payload[payload.startIndex + n] & 0x80 != 0 ? 2 : 1
            }
            if x & 0x40 != 0 { n += 1 }
            if x & 0x30 != 0 { n += 1 }
        }
        guard payload.count >= n else { return nil }
        return (n, first & 0x10 != 0)
    }

    /// Whether a frame (its first bytes) is a key frame: the frame tag's P bit is 0 (RFC 6386 9.1).
    public static func isKeyFrame(_ frame: [UInt8]) -> Bool { frame.first.map { $0 & 0x01 == 0 } ?? false }
}

/// A receiver's frame assembly (the jitter buffer's job for one stream): packets by sequence number,
/// in any order; a frame is complete once its first packet (`S`), its marker packet and every
/// sequence number between them are in, and frames are handed out in order. A complete frame after
/// a gap waits for the gap to fill (its packets are `missing`: the owner NACKs them) unless it is a
/// key frame; the owner gives the gap up (`giveUp`, on its own clock), after which the stream needs
/// a key frame (`needsKeyFrame`: the owner sends a PLI) and deltas are dropped until one comes.
public struct FrameAssembler: Sendable {
    public struct Frame: Equatable, Sendable {
        public var timestamp: UInt32
        public var firstSequence: UInt16
        public var bytes: [UInt8]
        public var isKeyFrame: Bool
    }

    struct Packet {
        var timestamp: UInt32
        var marker: Bool
        var starts: Bool
        var payload: [UInt8]
    }

    var packets: [UInt16: Packet] = [:]
    /// The sequence number after the last frame handed out.
    var next: UInt16?
    /// Packets kept at most (older ones are dropped as the stream moves on).
    public static let capacity = 512
    /// Frames given up since a decoder could last go on: the next frame out must be a key frame.
    public private(set) var needsKeyFrame = false
    public private(set) var framesDropped = 0

    public init() {}

    /// Adds a packet (its RTP header's fields and its payload, descriptor included); returns the
    /// frames it completes, in order.
    public mutating func add(sequence: UInt16, timestamp: UInt32, marker: Bool, payload: [UInt8]) -> [Frame] {
        guard let d = VP8Payload.descriptor(payload[...]) else { return [] }
        if let next, SequenceNumber.isNewer(next, than: sequence) { return [] }  // already handed out
        packets[sequence] = Packet(
            timestamp: timestamp, marker: marker, starts: d.starts, payload: Array(payload[d.length...]))
        if packets.count > Self.capacity, let oldest = packets.keys.min(by: { SequenceNumber.isNewer($1, than: $0) }) {
            packets[oldest] = nil
        }
        return drain()
    }

    /// The sequence numbers missing between the oldest packet kept and the newest.
    public var missing: [UInt16] {
        guard let newest = packets.keys.max(by: { SequenceNumber.isNewer($1, than: $0) }) else { return [] }
        let start = next ?? packets.keys.min(by: { SequenceNumber.isNewer($1, than: $0) }) ?? newest
        var out: [UInt16] = []
        var s = start
        while s != newest && out.count < 256 {
            if packets[s] == nil { out.append(s) }
            s &+= 1
        }
        return out
    }

    /// Gives up what a gap holds back: the packets before the oldest complete frame are dropped, and
    /// the frames out from now on start at a key frame. Returns what that releases.
    public mutating func giveUp() -> [Frame] {
        guard let f = completeFrame(), let next, f.firstSequence != next else { return [] }
        for k in packets.keys where SequenceNumber.isNewer(f.firstSequence, than: k) { packets[k] = nil }
        self.next = f.firstSequence
        framesDropped += 1
        needsKeyFrame = true
        return drain()
    }

    mutating func drain() -> [Frame] {
        var out: [Frame] = []
        while let f = completeFrame() {
            // After a gap only a key frame goes on (a decoder can start from it).
            if let next, f.firstSequence != next, !f.isKeyFrame { break }
            if needsKeyFrame && !f.isKeyFrame {
                forget(through: f)
                continue
            }
            needsKeyFrame = false
            forget(through: f)
            out.append(f)
        }
        return out
    }

    /// The oldest complete frame, if any.
    func completeFrame() -> Frame? {
        let starts = packets.filter { $0.value.starts }.keys.sorted { SequenceNumber.isNewer($1, than: $0) }
        for first in starts {
            guard let head = packets[first] else { continue }
            var bytes: [UInt8] = []
            var s = first
            var steps = 0
            while let p = packets[s], p.timestamp == head.timestamp, steps < Self.capacity {
                bytes += p.payload
                if p.marker {
                    return Frame(
                        timestamp: head.timestamp, firstSequence: first, bytes: bytes,
                        isKeyFrame: VP8Payload.isKeyFrame(bytes))
                }
                s &+= 1
                steps += 1
            }
        }
        return nil
    }

    /// Drops every packet up to the frame's last one; the next frame starts after it.
    mutating func forget(through f: Frame) {
        var last = f.firstSequence
        while let p = packets[last], !p.marker { last &+= 1 }
        for k in packets.keys where !SequenceNumber.isNewer(k, than: last) { packets[k] = nil }
        next = last &+ 1
    }
}
