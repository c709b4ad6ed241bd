/// RFC 4571 section 2 framing of a byte stream, as ICE-TCP uses it (RFC 6544 section 3):
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// -----------------------------------------------------------------
/// |             LENGTH            |  STUN, DTLS, RTP or RTCP ...  |
/// -----------------------------------------------------------------
/// ```
///
/// The inbound side: bytes from the socket go straight into a fixed buffer, complete frames come out as
/// ranges of it. Nothing here allocates after `init`, and the buffer never grows: a partial frame is
/// at most `maxFrame` bytes plus its header, so a peer cannot make the server hold more. A frame longer
/// than `maxFrame` is an error (the peer is not speaking ICE-TCP). Pure: no socket, no clock.
public struct FrameReassembler {
    public static let headerSize = 2

    public enum Next: Equatable, Sendable {
        /// A complete frame: its bytes are `buffer[range]` until the next call.
        case frame(Range<Int>)
        /// The rest of the frame has not arrived yet.
        case needMore
        /// The header announces a frame longer than `maxFrame`.
        case tooLarge(Int)
    }

    /// The largest frame taken (a datagram slot's size).
    public let maxFrame: Int
    /// The bytes held; frames are reported as ranges of it.
    public private(set) var buffer: [UInt8]
    private var start = 0
    private var end = 0

    /// `capacity` (at least a whole largest frame) is the most bytes read from the socket at once.
    public init(maxFrame: Int, capacity: Int) {
        self.maxFrame = max(maxFrame, 1)
        buffer = [UInt8](repeating: 0, count: max(capacity, self.maxFrame + Self.headerSize))
    }

    /// Bytes received and not yet returned as frames (a partial frame).
    public var heldCount: Int { end - start }

    /// Hands `body` the free space after the held bytes (moving a partial frame to the front first);
    /// `body` returns how many bytes it wrote there.
    public mutating func fill(_ body: (UnsafeMutableRawBufferPointer) -> Int) {
        if start > 0 {
            if start < end {
                buffer.withUnsafeMutableBytes { raw in
                    guard let base = raw.baseAddress else { return }
                    base.copyMemory(from: base + start, byteCount: end - start)
                }
            }
            end -= start
            start = 0
        }
        let written = buffer.withUnsafeMutableBytes { raw in
            body(UnsafeMutableRawBufferPointer(rebasing: raw[end...]))
        }
        end += min(max(written, 0), buffer.count - end)
    }

    /// The next complete frame, if one is held.
    public mutating func next() -> Next {
        guard end - start >= Self.headerSize else { return .needMore }
        let length = Int(buffer[start]) << 8 | Int(buffer[start + 1])
        guard length <= maxFrame else { return .tooLarge(length) }
        guard end - start - Self.headerSize >= length else { return .needMore }
        let from = start + Self.headerSize
        start = from + length
        if start == end {
            start = 0
            end = 0
        }
        return .frame(from..<from + length)
    }
}

/// The outbound side of RFC 4571 framing: frames wait here, header and all, until the socket takes
/// them. Bounded by `capacity` bytes: a frame that does not fit is refused, so a peer that does not
/// read costs at most that much. Its storage starts at 16 KiB and doubles up to the capacity as a
/// slow peer's backlog needs it (a few allocations per connection, none per frame after that). Pure: the owner writes the pending
/// bytes to its socket and says how many went.
public struct FrameQueue {
    public let capacity: Int
    private var bytes: [UInt8]
    private var head = 0

    public init(capacity: Int) {
        self.capacity = max(capacity, FrameReassembler.headerSize + 1)
        bytes = []
        bytes.reserveCapacity(min(self.capacity, 16 * 1024))
    }

    /// Bytes waiting to be written.
    public var pendingCount: Int { bytes.count - head }
    public var isEmpty: Bool { head == bytes.count }

    /// Appends one frame with its length header; false when it does not fit (or is over 65,535 bytes).
    public mutating func push(_ frame: [UInt8]) -> Bool {
        guard frame.count <= Int(UInt16.max) else { return false }
        let needed = FrameReassembler.headerSize + frame.count
        if bytes.count + needed > capacity, head > 0 { compact() }
        guard bytes.count + needed <= capacity else { return false }
        bytes.append(UInt8(frame.count >> 8))
        bytes.append(UInt8(frame.count & 0xFF))
        bytes.append(contentsOf: frame)
        return true
    }

    /// Hands `body` the pending bytes; it returns how many the socket took, which leave the queue.
    public mutating func drain(_ body: (UnsafeRawBufferPointer) -> Int) {
        guard head < bytes.count else { return }
        let taken = bytes.withUnsafeBytes { raw in body(UnsafeRawBufferPointer(rebasing: raw[head...])) }
        head += min(max(taken, 0), bytes.count - head)
        if head == bytes.count {
            bytes.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= capacity / 2 {
            compact()
        }
    }

    private mutating func compact() {
        bytes.removeFirst(head)
        head = 0
    }
}
