internal import CHiredis

#if canImport(Glibc)
    import Glibc
#endif

/// One connection to Redis: the hiredis `redisContext`, freed in `deinit`. Blocking, with a connect
/// timeout and a command timeout, used by one thread at a time. After an I/O error or a timeout the
/// connection is broken (`isBroken`) and the owner makes a new one (`RedisClient` does).
public final class RedisConnection {
    private let pointer: UnsafeMutablePointer<redisContext>
    public private(set) var isBroken = false

    /// Connects, authenticates and selects the database of `url`.
    public init(url: RedisURL, connectTimeoutMillis: Int, commandTimeoutMillis: Int) throws(RedisError) {
        let context =
            if let path = url.socketPath {
                atrium_redis_connect_unix(path, connectTimeoutMillis)
            } else {
                atrium_redis_connect(url.host, Int32(clamping: url.port), connectTimeoutMillis)
            }
        guard let raw = context else {
            throw .connect("out of memory")
        }
        if atrium_redis_err(raw) != 0 {
            let message = String(cString: atrium_redis_errstr(raw))
            redisFree(raw)
            throw .connect(message)
        }
        pointer = raw
        _ = atrium_redis_set_timeout(raw, commandTimeoutMillis)
        if let password = url.password {
            let reply = try command(["AUTH", password])
            if case .error(let e) = reply { throw .server(e) }
        }
        if url.database != 0 {
            let reply = try command(["SELECT", String(url.database)])
            if case .error(let e) = reply { throw .server(e) }
        }
    }

    deinit { redisFree(pointer) }

    /// Sends one command and waits for its reply. An error reply is a value (`.error`); only failures of
    /// the connection throw.
    public func command(_ args: [String]) throws(RedisError) -> RedisReply {
        try command(bytes: args.map { Array($0.utf8) })
    }

    /// `command` with binary-safe arguments.
    public func command(bytes args: [[UInt8]]) throws(RedisError) -> RedisReply {
        guard !isBroken else { throw .io("the connection is closed") }
        let reply: UnsafeMutablePointer<redisReply>? = withArgv(args) { argc, argv, lens in
            atrium_redis_command(pointer, argc, argv, lens)
        }
        return try take(reply)
    }

    /// Waits for the next reply without sending anything (a subscribed connection's messages).
    public func nextReply() throws(RedisError) -> RedisReply {
        guard !isBroken else { throw .io("the connection is closed") }
        return try take(atrium_redis_next_reply(pointer))
    }

    /// Sends a command without waiting for its reply (SUBSCRIBE, whose confirmations come as messages).
    public func append(_ args: [String]) throws(RedisError) {
        let bytes = args.map { Array($0.utf8) }
        let rc: Int32 = withArgv(bytes) { argc, argv, lens in
            redisAppendCommandArgv(pointer, argc, argv, lens)
        }
        guard rc == REDIS_OK else { throw failure() }
    }

    /// Makes a thread blocked in `nextReply` on this connection return at once with an error.
    public func interrupt() { atrium_redis_shutdown(pointer) }

    private func take(_ reply: UnsafeMutablePointer<redisReply>?) throws(RedisError) -> RedisReply {
        guard let reply else { throw failure() }
        defer { atrium_redis_free_reply(reply) }
        return Self.decode(reply.pointee, depth: 0)
    }

    private func failure() -> RedisError {
        isBroken = true
        let code = atrium_redis_err(pointer)
        let message = String(cString: atrium_redis_errstr(pointer))
        // hiredis reports a read that hit the socket timeout as an I/O error with EAGAIN's text.
        if code == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK || message.contains("temporarily")) {
            return .timeout
        }
        return .io(message.isEmpty ? "error \(code)" : message)
    }

    /// Copies a hiredis reply into a value. Nesting deeper than a few levels never comes from the
    /// commands Atrium sends; it is cut off rather than recursed without bound.
    static func decode(_ r: redisReply, depth: Int) -> RedisReply {
        switch r.type {
        case REDIS_REPLY_STATUS: return .status(text(r))
        case REDIS_REPLY_ERROR: return .error(text(r))
        case REDIS_REPLY_INTEGER: return .integer(r.integer)
        case REDIS_REPLY_NIL: return .null
        case REDIS_REPLY_STRING:
            guard let str = r.str, r.len > 0 else { return .bulk([]) }
            return .bulk(Array(UnsafeRawBufferPointer(start: str, count: r.len)))
        case REDIS_REPLY_ARRAY:
            guard depth < 8, let element = r.element else { return .array([]) }
            var out: [RedisReply] = []
            out.reserveCapacity(r.elements)
            for i in 0..<r.elements {
                if let e = element[i] { out.append(decode(e.pointee, depth: depth + 1)) } else { out.append(.null) }
            }
            return .array(out)
        default:
            return .error("unknown reply type \(r.type)")
        }
    }

    static func text(_ r: redisReply) -> String {
        guard let str = r.str, r.len > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: str, count: r.len), as: UTF8.self)
    }
}

/// Lends hiredis argument vectors (pointers and lengths) over Swift byte arrays for one call.
private func withArgv<R>(
    _ args: [[UInt8]], _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int>?) -> R
) -> R {
    let buffers = args.map { bytes -> UnsafeMutablePointer<CChar> in
        let p = UnsafeMutablePointer<CChar>.allocate(capacity: max(bytes.count, 1))
        bytes.withUnsafeBufferPointer { src in
            src.withMemoryRebound(to: CChar.self) { s in
                if let base = s.baseAddress { p.initialize(from: base, count: bytes.count) }
            }
        }
        return p
    }
    defer { buffers.forEach { $0.deallocate() } }
    var argv: [UnsafePointer<CChar>?] = buffers.map { UnsafePointer($0) }
    let lens = args.map(\.count)
    return argv.withUnsafeMutableBufferPointer { a in
        lens.withUnsafeBufferPointer { l in body(Int32(clamping: args.count), a.baseAddress, l.baseAddress) }
    }
}
