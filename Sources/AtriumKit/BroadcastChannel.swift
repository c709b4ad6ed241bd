import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The channel between a screen-broadcast extension and its app, as the seeds describe it
/// (PlanetKit's loopback TCP connection with a reception and a transmission token; Stream's and
/// Zoom's app-group socket): the app listens on 127.0.0.1, the extension connects and sends frames,
/// encoded or raw, each with its timestamp and orientation. Both sides prove themselves: the
/// extension sends the transmission token, the app answers with the reception token; a peer with
/// a wrong token is refused before any frame. Platform-neutral (POSIX sockets).
///
/// Wire: `ATRB` and a version byte; the token as a 16-bit length and bytes, each way; then frames:
/// a 24-byte header (kind, format, orientation, a reserved byte, width and height as 16-bit,
/// timestamp in microseconds as 64-bit, payload length as 32-bit, and 4 reserved bytes), the payload;
/// a `bye` header (kind 0xFF) ends the stream. Integers are big-endian.
public enum BroadcastChannel {
    public static let magic: [UInt8] = Array("ATRB".utf8)
    public static let version: UInt8 = 1
    /// The largest frame payload taken (a 4K raw frame is 12 MiB).
    public static let maxPayload = 32 << 20

    public struct Frame: Equatable, Sendable {
        public enum Kind: UInt8, Sendable {
            /// A compressed frame (`format`: 1 VP8, 2 H264).
            case encoded = 1
            /// Raw pixels (`format`: 1 I420, 2 NV12, 3 BGRA).
            case raw = 2
        }

        public var kind: Kind
        public var format: UInt8
        /// EXIF orientation (1 upright ... 8), as ReplayKit's `RPVideoSampleOrientationKey`.
        public var orientation: UInt8
        public var width: Int
        public var height: Int
        public var timestampMicros: UInt64
        public var payload: [UInt8]

        public init(
            kind: Kind, format: UInt8, orientation: UInt8 = 1, width: Int, height: Int, timestampMicros: UInt64,
            payload: [UInt8]
        ) {
            self.kind = kind
            self.format = format
            self.orientation = orientation
            self.width = width
            self.height = height
            self.timestampMicros = timestampMicros
            self.payload = payload
        }
    }

    /// What the app's side hears.
    public enum Event: Equatable, Sendable {
        case connected
        case frame(Frame)
        /// The extension said goodbye (the broadcast finished).
        case finished
        /// The extension went away without a goodbye (killed, crashed): the share's capture ended.
        case vanished
        /// A peer with a wrong token (or not speaking the channel) was refused.
        case refused(String)
    }

    static let byeKind: UInt8 = 0xFF
    static let headerSize = 24

    static func header(_ f: Frame) -> [UInt8] {
        var h = [f.kind.rawValue, f.format, f.orientation, 0]
        h += be(UInt16(clamping: f.width)) + be(UInt16(clamping: f.height))
        h += be(f.timestampMicros) + be(UInt32(f.payload.count)) + [0, 0, 0, 0]
        return h
    }

    static func be<T: FixedWidthInteger>(_ v: T) -> [UInt8] {
        withUnsafeBytes(of: v.bigEndian) { Array($0) }
    }

    static func read<T: FixedWidthInteger>(_ b: ArraySlice<UInt8>, as: T.Type) -> T {
        b.reduce(T(0)) { ($0 << 8) | T($1) }
    }

    /// Equal tokens, in time that does not depend on where they differ.
    static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var d: UInt8 = 0
        for i in a.indices { d |= a[i] ^ b[i] }
        return d == 0
    }
}

/// A new IPv4 TCP socket (close-on-exec), or -1.
func tcpSocket() -> Int32 {
    socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
}

/// A connected TCP socket with whole reads and writes.
final class ChannelSocket: @unchecked Sendable {
    let fd: Int32

    init(fd: Int32) { self.fd = fd }

    deinit { close(fd) }

    func write(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    /// Exactly `count` bytes, or nil at the end of the stream or an error.
    func read(_ count: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = out[got...].withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            got += n
        }
        return out
    }

    func token() -> [UInt8]? {
        guard let len = read(2) else { return nil }
        let n = Int(BroadcastChannel.read(len[...], as: UInt16.self))
        return n == 0 ? [] : read(n)
    }

    static func tokenBytes(_ t: [UInt8]) -> [UInt8] { BroadcastChannel.be(UInt16(clamping: t.count)) + t }
}

/// The app's side: listens on 127.0.0.1 (an ephemeral port unless one is given), takes one
/// extension at a time, and streams what it sends as `events`.
public final class BroadcastListener: @unchecked Sendable {
    public let port: UInt16
    public nonisolated let events: AsyncStream<BroadcastChannel.Event>
    let emit: AsyncStream<BroadcastChannel.Event>.Continuation
    let receptionToken: [UInt8]
    let transmissionToken: [UInt8]
    let listenFD: Int32
    let stopped = Mutex(false)

    /// `transmissionToken`: what the extension must send; `receptionToken`: what this side answers.
    public init(transmissionToken: String, receptionToken: String, port: UInt16 = 0) throws(AtriumError) {
        self.transmissionToken = Array(transmissionToken.utf8)
        self.receptionToken = Array(receptionToken.utf8)
        let fd = tcpSocket()
        guard fd >= 0 else { throw AtriumError(code: "socket_failed", message: "cannot open a TCP socket") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 4) == 0 else {
            close(fd)
            throw AtriumError(code: "socket_failed", message: "cannot listen on 127.0.0.1:\(port)")
        }
        var out = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &out) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        self.port = UInt16(bigEndian: out.sin_port)
        listenFD = fd
        (events, emit) = AsyncStream.makeStream(of: BroadcastChannel.Event.self)
        let me = Unmanaged.passRetained(self)
        var t = pthread_t()
        guard
            pthread_create(
                &t, nil,
                { raw in
                    if let raw { Unmanaged<BroadcastListener>.fromOpaque(raw).takeRetainedValue().acceptLoop() }
                    return nil
                }, me.toOpaque()) == 0
        else {
            me.release()
            close(fd)
            throw AtriumError(code: "socket_failed", message: "cannot start the listener's thread")
        }
        pthread_detach(t)
    }

    /// Stops listening; `events` ends.
    public func stop() {
        stopped.withLock { $0 = true }
        shutdown(listenFD, Int32(SHUT_RDWR))
    }

    func acceptLoop() {
        defer {
            close(listenFD)
            emit.finish()
        }
        while !stopped.withLock({ $0 }) {
            let fd = accept(listenFD, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            serve(ChannelSocket(fd: fd))
        }
    }

    /// One extension, from its handshake to its goodbye or its disappearance.
    func serve(_ s: ChannelSocket) {
        guard let hello = s.read(5), Array(hello[0..<4]) == BroadcastChannel.magic,
            hello[4] == BroadcastChannel.version
        else {
            emit.yield(.refused("not a broadcast channel peer"))
            return
        }
        guard let token = s.token(), BroadcastChannel.same(token, transmissionToken) else {
            _ = s.write(ChannelSocket.tokenBytes([]))
            emit.yield(.refused("wrong transmission token"))
            return
        }
        guard s.write(ChannelSocket.tokenBytes(receptionToken)) else { return }
        emit.yield(.connected)
        while true {
            guard let h = s.read(BroadcastChannel.headerSize) else {
                emit.yield(.vanished)
                return
            }
            if h[0] == BroadcastChannel.byeKind {
                emit.yield(.finished)
                return
            }
            let count = Int(BroadcastChannel.read(h[16..<20], as: UInt32.self))
            guard let kind = BroadcastChannel.Frame.Kind(rawValue: h[0]), count <= BroadcastChannel.maxPayload,
                let payload = count == 0 ? [] : s.read(count)
            else {
                emit.yield(.vanished)
                return
            }
            emit.yield(
                .frame(
                    BroadcastChannel.Frame(
                        kind: kind, format: h[1], orientation: h[2],
                        width: Int(BroadcastChannel.read(h[4..<6], as: UInt16.self)),
                        height: Int(BroadcastChannel.read(h[6..<8], as: UInt16.self)),
                        timestampMicros: BroadcastChannel.read(h[8..<16], as: UInt64.self), payload: payload)))
        }
    }
}

/// The extension's side: connects to the app, proves itself and checks the app, then sends frames.
public final class BroadcastSender: @unchecked Sendable {
    let socket: ChannelSocket

    /// Connects and shakes hands; refused with `wrong_token` when either side's token is wrong.
    public init(port: UInt16, transmissionToken: String, receptionToken: String) throws(AtriumError) {
        let fd = tcpSocket()
        guard fd >= 0 else { throw AtriumError(code: "socket_failed", message: "cannot open a TCP socket") }
        let s = ChannelSocket(fd: fd)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else { throw AtriumError(code: "socket_failed", message: "cannot connect to 127.0.0.1:\(port)") }
        guard
            s.write(
                BroadcastChannel.magic + [BroadcastChannel.version]
                    + ChannelSocket.tokenBytes(Array(transmissionToken.utf8)))
        else { throw AtriumError(code: "socket_failed", message: "the app closed the channel") }
        guard let answer = s.token(), BroadcastChannel.same(answer, Array(receptionToken.utf8)) else {
            throw AtriumError(code: "wrong_token", message: "the app refused the token, or answered with another")
        }
        socket = s
    }

    /// Sends one frame; false once the app is gone.
    @discardableResult
    public func send(_ frame: BroadcastChannel.Frame) -> Bool {
        socket.write(BroadcastChannel.header(frame) + frame.payload)
    }

    /// Ends the broadcast (the app hears `finished`).
    public func finish() {
        _ = socket.write([BroadcastChannel.byeKind] + [UInt8](repeating: 0, count: BroadcastChannel.headerSize - 1))
        shutdown(socket.fd, Int32(SHUT_RDWR))
    }
}
