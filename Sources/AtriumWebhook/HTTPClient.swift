internal import COpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// Why a delivery attempt failed before the endpoint answered.
public enum HTTPClientError: Error, Equatable, Sendable, CustomStringConvertible {
    case resolve(String)
    case connect(Int32)
    case timeout
    case tls(String)
    case io(Int32)
    case closed
    case badResponse

    public var description: String {
        switch self {
        case .resolve(let m): "cannot resolve: \(m)"
        case .connect(let e): "cannot connect (errno \(e))"
        case .timeout: "timed out"
        case .tls(let m): "TLS: \(m)"
        case .io(let e): "I/O error (errno \(e))"
        case .closed: "connection closed before a response"
        case .badResponse: "not an HTTP/1 response"
        }
    }
}

/// The smallest HTTP/1.1 client a webhook needs: one POST per connection (`Connection: close`), over a
/// non-blocking socket with one deadline for the whole exchange (connect, TLS handshake, request,
/// status line), and TLS through OpenSSL with the system's CA store, SNI and host name checks. Used by
/// one delivery thread; blocking there is the point, it never runs on the service or media threads.
public final class HTTPClient {
    private let tls: TLSClientContext?
    /// Polled while waiting: true cuts the attempt short (`timeout`), for a quick shutdown.
    public var isCancelled: @Sendable () -> Bool = { false }

    public init() {
        tls = TLSClientContext()
    }

    /// Sends a POST and returns the response's status code.
    public func post(url: WebhookURL, headers: [(String, String)], body: [UInt8], timeout: Double)
        throws(HTTPClientError) -> Int
    {
        let deadline = Deadline(at: Self.monotonic() + timeout, cancelled: isCancelled)
        let fd = try connect(host: url.host, port: url.port, deadline: deadline)
        defer { Glibc.close(fd) }
        var head = "POST \(url.target) HTTP/1.1\r\nHost: \(url.hostHeader)\r\nConnection: close\r\n"
        head += "Content-Length: \(body.count)\r\n"
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        head += "\r\n"
        let request = Array(head.utf8) + body
        let stream: any ByteStream
        if url.tls {
            guard let tls else { throw .tls("no TLS context") }
            stream = try TLSStream(context: tls, fd: fd, host: url.host, deadline: deadline)
        } else {
            stream = PlainStream(fd: fd)
        }
        var sent = 0
        while sent < request.count {
            let from = sent
            let r = request.withUnsafeBytes { raw in
                Result { () throws(HTTPClientError) in
                    try stream.write(UnsafeRawBufferPointer(rebasing: raw[from...]), deadline: deadline)
                }
            }
            sent += try r.get()
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while response.count < 16 << 10 {
            let r = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(HTTPClientError) in try stream.read(raw, deadline: deadline) }
            }
            let n = try r.get()
            if n == 0 { break }
            response += buffer[0..<n]
            let (code, malformed) = HTTPResponseHead.status(response)
            if malformed { throw .badResponse }
            if let code { return code }
        }
        throw response.isEmpty ? .closed : .badResponse
    }

    private func connect(host: String, port: Int, deadline: Deadline) throws(HTTPClientError) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else { throw .resolve(String(cString: gai_strerror(rc))) }
        defer { freeaddrinfo(list) }
        var lastError: HTTPClientError = .connect(0)
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let ai = cursor {
            cursor = ai.pointee.ai_next
            let fd = socket(
                ai.pointee.ai_family,
                Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                    | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else {
                lastError = .connect(errno)
                continue
            }
            if Glibc.connect(fd, ai.pointee.ai_addr, ai.pointee.ai_addrlen) == 0 { return fd }
            guard errno == EINPROGRESS else {
                lastError = .connect(errno)
                Glibc.close(fd)
                continue
            }
            do throws(HTTPClientError) {
                try Self.wait(fd, events: Int16(POLLOUT), deadline: deadline)
            } catch {
                Glibc.close(fd)
                throw error
            }
            var err: Int32 = 0
            var len = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
            if err == 0 { return fd }
            lastError = .connect(err)
            Glibc.close(fd)
        }
        throw lastError
    }

    /// Waits until `fd` is ready for `events` or the deadline passes.
    static func wait(_ fd: Int32, events: Int16, deadline: Deadline) throws(HTTPClientError) {
        while true {
            let left = deadline.at - monotonic()
            guard left > 0, !deadline.cancelled() else { throw .timeout }
            var p = pollfd(fd: fd, events: events, revents: 0)
            let n = poll(&p, 1, Int32(min(left * 1000, 200)) + 1)
            if n > 0 { return }
            if n < 0 && errno != EINTR { throw .io(errno) }
        }
    }

    static func monotonic() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// When an exchange must be over, and a check that ends it sooner.
struct Deadline {
    var at: Double
    var cancelled: @Sendable () -> Bool
}

/// A connected byte stream with deadlines: a plain socket or TLS over it.
protocol ByteStream {
    func write(_ bytes: UnsafeRawBufferPointer, deadline: Deadline) throws(HTTPClientError) -> Int
    /// Reads what is there (0: the peer closed).
    func read(_ into: UnsafeMutableRawBufferPointer, deadline: Deadline) throws(HTTPClientError) -> Int
}

struct PlainStream: ByteStream {
    let fd: Int32

    func write(_ bytes: UnsafeRawBufferPointer, deadline: Deadline) throws(HTTPClientError) -> Int {
        while true {
            let n = send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if n >= 0 { return n }
            guard errno == EAGAIN || errno == EINTR else { throw .io(errno) }
            try HTTPClient.wait(fd, events: Int16(POLLOUT), deadline: deadline)
        }
    }

    func read(_ into: UnsafeMutableRawBufferPointer, deadline: Deadline) throws(HTTPClientError) -> Int {
        while true {
            let n = recv(fd, into.baseAddress, into.count, 0)
            if n >= 0 { return n }
            guard errno == EAGAIN || errno == EINTR else { throw .io(errno) }
            try HTTPClient.wait(fd, events: Int16(POLLIN), deadline: deadline)
        }
    }
}
