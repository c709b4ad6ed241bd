internal import CAtriumUDP

/// A non-blocking UDP socket bound to one local address, moving datagrams in batches with recvmmsg(2)
/// and sendmmsg(2), and on the way out with UDP generic segmentation offload (GSO, `UDP_SEGMENT`):
/// a run of same-size datagrams to one destination (a video frame's packets to one viewer) is one
/// message the kernel cuts up, which costs one pass through the stack instead of one per datagram.
///
/// The socket owns its descriptor (closed in `deinit`) and preallocated slots for one batch in each
/// direction: receiving copies each datagram from its slot into the caller's `Datagram` (whose capacity is
/// kept), sending copies payloads into the slots. In steady state neither allocates. A socket belongs to
/// one thread, the worker that polls it; it is not `Sendable`.
public final class UDPSocket {
    /// The bound address; with port 0 at creation, this holds the ephemeral port the kernel chose.
    public let localAddress: SocketAddress
    /// The most datagrams one receiving system call moves.
    public let batchSize: Int
    /// The most datagrams one sending system call carries (in fewer messages when segmented).
    public let sendBatchSize: Int
    /// The size of each slot; a longer incoming datagram is cut and counted in `truncatedCount`.
    public let maxDatagramSize: Int
    /// Datagrams received longer than `maxDatagramSize` (delivered cut; the owner should drop them).
    public private(set) var truncatedCount = 0

    let fileDescriptor: Int32
    private let receiveSlots: UnsafeMutablePointer<UInt8>
    private let receiveLengths: UnsafeMutablePointer<Int>
    private let receiveSources: UnsafeMutablePointer<sockaddr_storage>
    private let receiveTruncated: UnsafeMutablePointer<UInt8>
    private let sendSlots: UnsafeMutablePointer<UInt8>
    private let sendLengths: UnsafeMutablePointer<Int>
    private let sendDestinations: UnsafeMutablePointer<sockaddr_storage>
    private let sendErrors: UnsafeMutablePointer<Int32>
    /// The datagrams of the last `send` the kernel refused for their destination alone (a firewall's
    /// EPERM, EHOSTUNREACH, ENETUNREACH, ...): their index in that call's collection and the errno.
    /// The rest of the batch was still sent. Its capacity is kept between calls.
    public private(set) var refusals: [(index: Int, errno: Int32)] = []

    /// The largest batch the C layer receives in one call (`ATRIUM_UDP_MAX_BATCH`).
    public static let maxBatchSize = 64
    /// The largest batch it sends in one call (`ATRIUM_UDP_MAX_SEND_BATCH`).
    public static let maxSendBatchSize = 256
    /// The order a segmenting send hands datagrams over in: grouped by destination.
    private let sendOrder = DestinationOrder()

    /// Whether `send` groups each batch by destination and hands runs of same-size datagrams to the
    /// kernel as one segmented message. On by default; turned off for good when the kernel refuses a
    /// segmented send (EIO or EINVAL: no GSO on this kernel or device), counted in
    /// `segmentationFallbacks`, and the batch goes on as plain sendmmsg.
    public var segmentationOffload: Bool
    /// Times the kernel refused segmentation (at most once per socket, since it then stays off).
    public private(set) var segmentationFallbacks = 0
    /// Messages handed to the kernel, and datagrams that went out inside segmented ones.
    public private(set) var messagesSent = 0
    public private(set) var segmentedDatagrams = 0
    private let sendStatus: UnsafeMutablePointer<Int32>
    /// Each datagram's kernel receive time in the last `receiveInPlace` batch, once
    /// `enableReceiveTimestamps` made room for them.
    private var receiveStamps: UnsafeMutablePointer<UInt64>?

    /// Opens a socket bound to `address` (port 0: an ephemeral port). IPv6 sockets are IPv6-only.
    /// `sendBatchSize` (nil: `batchSize`) is capped at `maxSendBatchSize`.
    public init(
        bindingTo address: SocketAddress, batchSize: Int = 32, sendBatchSize: Int? = nil,
        maxDatagramSize: Int = 1500, segmentationOffload: Bool = true
    ) throws(UDPError) {
        var requested = sockaddr_storage()
        var bound = sockaddr_storage()
        address.write(to: &requested)
        let fd = atrium_udp_open(&requested, &bound)
        guard fd >= 0 else { throw .open(errno: -fd) }
        let local: SocketAddress
        do {
            local = try SocketAddress(storage: &bound)
        } catch {
            _ = atrium_close(fd)
            throw error
        }
        fileDescriptor = fd
        localAddress = local
        self.segmentationOffload = segmentationOffload
        self.batchSize = min(max(batchSize, 1), Self.maxBatchSize)
        self.sendBatchSize = min(max(sendBatchSize ?? batchSize, 1), Self.maxSendBatchSize)
        self.maxDatagramSize = max(maxDatagramSize, 1)
        receiveSlots = .allocate(capacity: self.batchSize * self.maxDatagramSize)
        receiveLengths = .allocate(capacity: self.batchSize)
        receiveSources = .allocate(capacity: self.batchSize)
        receiveTruncated = .allocate(capacity: self.batchSize)
        let sends = self.sendBatchSize
        sendSlots = .allocate(capacity: sends * self.maxDatagramSize)
        sendLengths = .allocate(capacity: sends)
        sendDestinations = .allocate(capacity: sends)
        sendErrors = .allocate(capacity: sends)
        sendErrors.initialize(repeating: 0, count: sends)
        sendStatus = .allocate(capacity: sends)
        sendStatus.initialize(repeating: 0, count: sends)
        refusals.reserveCapacity(Self.maxSendBatchSize)
        receiveSources.initialize(repeating: sockaddr_storage(), count: self.batchSize)
        sendDestinations.initialize(repeating: sockaddr_storage(), count: sends)
    }

    deinit {
        _ = atrium_close(fileDescriptor)
        receiveSlots.deallocate()
        receiveLengths.deallocate()
        receiveSources.deallocate()
        receiveTruncated.deallocate()
        sendSlots.deallocate()
        sendLengths.deallocate()
        sendDestinations.deallocate()
        sendErrors.deallocate()
        sendStatus.deallocate()
        receiveStamps?.deallocate()
    }

    /// Asks the kernel to stamp each received datagram with the time it reached the socket
    /// (SO_TIMESTAMPNS), read with `receivedTimestamp(_:)` after `receiveInPlace`: a receiver that
    /// lets datagrams gather to read them in larger batches still knows when each arrived.
    public func enableReceiveTimestamps() throws(UDPError) {
        let rc = atrium_udp_enable_timestamps(fileDescriptor)
        guard rc == 0 else { throw .socketOption(errno: -rc) }
        if receiveStamps == nil {
            let stamps = UnsafeMutablePointer<UInt64>.allocate(capacity: batchSize)
            stamps.initialize(repeating: 0, count: batchSize)
            receiveStamps = stamps
        }
    }

    /// Makes the kernel refuse segmented sends on this socket (SO_NO_CHECK), as a kernel without GSO
    /// would: for tests of the fallback.
    func refuseSegmentation() throws(UDPError) {
        let rc = atrium_udp_refuse_segmentation(fileDescriptor)
        guard rc == 0 else { throw .socketOption(errno: -rc) }
    }

    /// Sets SO_RCVBUF and/or SO_SNDBUF. The kernel doubles the value for its bookkeeping and caps it at
    /// `net.core.rmem_max` / `wmem_max`; read back the effect with `bufferSizes()`.
    public func setBufferSizes(receive: Int? = nil, send: Int? = nil) throws(UDPError) {
        let r = Int32(clamping: receive ?? 0)
        let s = Int32(clamping: send ?? 0)
        let rc = atrium_udp_set_buffers(fileDescriptor, r, s)
        guard rc == 0 else { throw .socketOption(errno: -rc) }
    }

    /// The effective SO_RCVBUF and SO_SNDBUF in bytes.
    public func bufferSizes() throws(UDPError) -> (receive: Int, send: Int) {
        var r: Int32 = 0
        var s: Int32 = 0
        let rc = atrium_udp_get_buffers(fileDescriptor, &r, &s)
        guard rc == 0 else { throw .socketOption(errno: -rc) }
        return (Int(r), Int(s))
    }

    /// Receives up to `min(datagrams.count, batchSize)` waiting datagrams into `datagrams[0..<n]` without
    /// blocking, and returns `n` (0 when nothing is waiting). Each payload is replaced in place, keeping
    /// its capacity; entries from `n` on are left as they were.
    public func receive(into datagrams: inout [Datagram]) throws(UDPError) -> Int {
        let n = try readBatch(min(datagrams.count, batchSize))
        for i in 0..<n {
            datagrams[i].payload.removeAll(keepingCapacity: true)
            datagrams[i].payload.append(contentsOf: UnsafeRawBufferPointer(receivedSlot(i)))
            // An address of another family cannot come from an IPv4 or IPv6 socket; keep the old one then.
            if let source = try? SocketAddress(storage: receiveSources + i) { datagrams[i].address = source }
        }
        return n
    }

    /// Receives up to `batchSize` waiting datagrams without blocking and hands each to `body` where
    /// the kernel put it, in the socket's own slot: its index in this batch and its bytes, writable
    /// (an in-place decryption) and valid only during the call; `receivedSource(_:)` reads that
    /// datagram's source during the call. Returns how many arrived (0 when nothing is waiting). No
    /// copy and no allocation: the load clients' receive path, where `receive(into:)` would copy every
    /// datagram once more. A datagram longer than `maxDatagramSize` is handed cut, counted in
    /// `truncatedCount`.
    public func receiveInPlace(_ body: (Int, UnsafeMutableRawBufferPointer) -> Void) throws(UDPError) -> Int {
        let n = try readBatch(batchSize)
        for i in 0..<n { body(i, receivedSlot(i)) }
        return n
    }

    /// One recvmmsg of up to `want` datagrams into the receive slots (with their kernel times once
    /// `enableReceiveTimestamps` ran), the cut ones counted; how many arrived.
    private func readBatch(_ want: Int) throws(UDPError) -> Int {
        guard want > 0 else { return 0 }
        let n = atrium_udp_recvmmsg_stamped(
            fileDescriptor, receiveSlots, maxDatagramSize, UInt32(want), receiveLengths, receiveSources,
            receiveTruncated, receiveStamps)
        guard n >= 0 else { throw .receive(errno: -n) }
        for i in 0..<Int(n) where receiveTruncated[i] != 0 { truncatedCount += 1 }
        return Int(n)
    }

    /// Datagram `i` of the last batch, where the kernel put it (cut to `maxDatagramSize`).
    private func receivedSlot(_ i: Int) -> UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(
            start: receiveSlots + i * maxDatagramSize, count: min(receiveLengths[i], maxDatagramSize))
    }

    /// When datagram `index` of the last `receiveInPlace` batch reached the socket, CLOCK_REALTIME
    /// nanoseconds; nil without `enableReceiveTimestamps`, for an index outside the batch, or when the
    /// kernel attached no time.
    public func receivedTimestamp(_ index: Int) -> UInt64? {
        guard let receiveStamps, index >= 0 && index < batchSize, receiveStamps[index] != 0 else { return nil }
        return receiveStamps[index]
    }

    /// The source of datagram `index` of the last `receiveInPlace` batch; nil for an index outside it or
    /// an address of another family.
    public func receivedSource(_ index: Int) -> SocketAddress? {
        guard index >= 0 && index < batchSize else { return nil }
        return try? SocketAddress(storage: receiveSources + index)
    }

    /// Sends the datagrams, `sendBatchSize` per system call, and returns how many were handled: sent,
    /// or refused for their destination alone (listed in `refusals`). Fewer than `datagrams.count`
    /// means the socket buffer filled up and that many were not sent: the owner drops them. Each
    /// destination's datagrams go out in their order; with `segmentationOffload` they are grouped by
    /// destination over the whole call (`DestinationOrder`), so the order between destinations changes. Every payload is checked against `maxDatagramSize` before anything is
    /// sent.
    public func send(_ datagrams: [Datagram]) throws(UDPError) -> Int { try send(datagrams[...]) }

    /// `send` for a slice of a batch array (the media worker's case): no allocation, and no reference
    /// counting per datagram (each is read in place through the buffer: one taken out of the slice
    /// is a copy, its payload retained and released).
    public func send(_ datagrams: ArraySlice<Datagram>) throws(UDPError) -> Int {
        // Not a typed-throwing closure: through the stdlib's generic `withUnsafe...` one takes a heap
        // context in a debug build.
        var failure: UDPError?
        let sent = datagrams.withUnsafeBufferPointer { batch -> Int in
            do throws(UDPError) {
                return try sendBatch(batch)
            } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
        return sent
    }

    func sendBatch(_ datagrams: UnsafeBufferPointer<Datagram>) throws(UDPError) -> Int {
        var check = 0
        while check < datagrams.count {
            let size = datagrams[check].payload.count
            guard size <= maxDatagramSize else { throw .datagramTooLarge(size: size, limit: maxDatagramSize) }
            check += 1
        }
        refusals.removeAll(keepingCapacity: true)
        // Grouped by destination over the whole call, not only within each system call's share: a
        // viewer's packets of a round become one run however many viewers sit between them.
        let grouped = segmentationOffload && datagrams.count > 1
        if grouped { sendOrder.group(datagrams) }
        let order = sendOrder.order
        var sent = 0
        var index = 0
        while index < datagrams.count {
            let start = index
            var count = 0
            while count < sendBatchSize && index < datagrams.count {
                let source = grouped ? Int(order[index]) : index
                let slot = sendSlots + count * maxDatagramSize
                // `withUnsafeBytes`: through `withUnsafeBufferPointer` the array is retained and released.
                sendLengths[count] = datagrams[source].payload.withUnsafeBytes { p in
                    if let base = p.baseAddress {
                        UnsafeMutableRawPointer(slot).copyMemory(from: base, byteCount: p.count)
                    }
                    return p.count
                }
                datagrams[source].address.write(to: sendDestinations + count)
                count += 1
                index += 1
            }
            if segmentationOffload {
                var gso: Int32 = 1
                var messages: Int32 = 0
                var segmented: Int32 = 0
                let n = atrium_udp_send_batch(
                    fileDescriptor, sendSlots, maxDatagramSize, UInt32(count), sendLengths, sendDestinations,
                    sendStatus, &gso, &messages, &segmented)
                guard n >= 0 else { throw .send(errno: -n) }
                if gso == 0 {
                    segmentationOffload = false
                    segmentationFallbacks += 1
                }
                messagesSent += Int(messages)
                segmentedDatagrams += Int(segmented)
                for i in 0..<count where sendStatus[i] < 0 {
                    refusals.append((grouped ? Int(order[start + i]) : start + i, -sendStatus[i]))
                }
                // Datagrams the full buffer kept are dropped, not retried; later batches may still fit.
                sent += Int(n)
                if Int(n) < count { break }
                continue
            }
            let n = atrium_udp_sendmmsg(
                fileDescriptor, sendSlots, maxDatagramSize, UInt32(count), sendLengths, sendDestinations, sendErrors)
            guard n >= 0 else { throw .send(errno: -n) }
            messagesSent += Int(n)
            for i in 0..<Int(n) where sendErrors[i] != 0 {
                refusals.append((grouped ? Int(order[start + i]) : start + i, -sendErrors[i]))
            }
            sent += Int(n)
            if Int(n) < count { break }
        }
        return sent
    }
}
