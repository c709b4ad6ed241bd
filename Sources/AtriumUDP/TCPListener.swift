internal import CAtriumUDP

#if canImport(Glibc)
    import Glibc
#endif

/// A non-blocking listening TCP socket: the passive side of ICE-TCP (RFC 6544 section 4.1), beside the
/// UDP socket on the media worker's poller. It owns its descriptor (closed in `deinit`) and belongs to
/// the one thread that polls it.
public final class TCPListener {
    /// The bound address; with port 0 at creation, the port the kernel chose.
    public let localAddress: SocketAddress
    let fileDescriptor: Int32

    /// Binds and listens on `address` (SO_REUSEADDR, so a restarted server gets its port back at once).
    public init(bindingTo address: SocketAddress, backlog: Int32 = 128) throws(UDPError) {
        var requested = sockaddr_storage()
        var bound = sockaddr_storage()
        address.write(to: &requested)
        let fd = atrium_tcp_listen(&requested, &bound, backlog)
        guard fd >= 0 else { throw .open(errno: -fd) }
        do {
            localAddress = try SocketAddress(storage: &bound)
        } catch {
            _ = atrium_close(fd)
            throw error
        }
        fileDescriptor = fd
    }

    deinit { _ = atrium_close(fileDescriptor) }

    /// One waiting connection, or nil when none is (EAGAIN). `sendBuffer` (bytes, 0: the kernel's
    /// default) bounds how much the kernel holds for a peer that does not read. `unacknowledgedTimeout`
    /// (seconds, 0: none) is TCP_USER_TIMEOUT (RFC 5482): a peer that acknowledges nothing of what was
    /// sent that long is given up by the kernel, and the next read or write fails with ETIMEDOUT
    /// (`UDPError.timedOut`), however slowly what waits for it fills the buffers.
    public func accept(sendBuffer: Int = 0, unacknowledgedTimeout: Double = 0) throws(UDPError) -> TCPStream? {
        var peer = sockaddr_storage()
        let milliseconds = (unacknowledgedTimeout * 1000).rounded()
        let timeout = milliseconds > 0 && milliseconds < Double(UInt32.max) ? UInt32(milliseconds) : 0
        let fd = atrium_tcp_accept(fileDescriptor, &peer, Int32(clamping: sendBuffer), timeout)
        if fd == -EAGAIN { return nil }
        guard fd >= 0 else { throw .accept(errno: -fd) }
        guard let remote = try? SocketAddress(storage: &peer) else {
            _ = atrium_close(fd)
            return nil
        }
        return TCPStream(fileDescriptor: fd, remoteAddress: remote)
    }
}

/// One accepted TCP connection (non-blocking), owning its descriptor.
public final class TCPStream {
    public let remoteAddress: SocketAddress
    let fileDescriptor: Int32

    init(fileDescriptor: Int32, remoteAddress: SocketAddress) {
        self.fileDescriptor = fileDescriptor
        self.remoteAddress = remoteAddress
    }

    deinit { _ = atrium_close(fileDescriptor) }

    /// What one read gave.
    public enum ReadResult: Equatable, Sendable {
        case bytes(Int)
        /// Nothing waiting now.
        case wouldBlock
        /// The peer closed its side.
        case end
    }

    /// Reads into `buffer` without blocking.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(UDPError) -> ReadResult {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return .bytes(0) }
        let n = atrium_tcp_recv(fileDescriptor, base.assumingMemoryBound(to: UInt8.self), buffer.count)
        if n == -Int(EAGAIN) { return .wouldBlock }
        guard n >= 0 else { throw .receive(errno: Int32(truncatingIfNeeded: -n)) }
        return n == 0 ? .end : .bytes(n)
    }

    /// Writes what the kernel takes now without blocking; returns the count (0 when its buffer is full).
    public func write(_ bytes: UnsafeRawBufferPointer) throws(UDPError) -> Int {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return 0 }
        let n = atrium_tcp_send(fileDescriptor, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        if n == -Int(EAGAIN) { return 0 }
        guard n >= 0 else { throw .send(errno: Int32(truncatingIfNeeded: -n)) }
        return n
    }
}
