internal import COpenSSL

/// Collects what OpenSSL writes, one array per `BIO_write`. DTLS writes each datagram with one
/// call (RFC 6347 section 4.1.1: records never span datagrams), whereas a `BIO_s_mem` would merge
/// consecutive writes into one stream and lose the boundaries. It also carries the retransmission
/// timer's first interval, which OpenSSL's timer callback reads through the write BIO.
final class DatagramSink {
    var datagrams: [[UInt8]] = []
    let initialTimeoutMicroseconds: UInt32

    init(initialTimeoutMicroseconds: UInt32) {
        self.initialTimeoutMicroseconds = initialTimeoutMicroseconds
    }

    func take() -> [[UInt8]] {
        defer { datagrams = [] }
        return datagrams
    }
}

/// The process-wide `BIO_METHOD` of the datagram write BIO. `BIO_get_new_index` hands out a small,
/// finite range of type numbers, so the method is made once and never freed; OpenSSL only reads it.
final class DatagramBIOMethod: @unchecked Sendable {
    let pointer: OpaquePointer

    private init(_ pointer: OpaquePointer) { self.pointer = pointer }

    static let shared: DatagramBIOMethod? = make()

    private static func make() -> DatagramBIOMethod? {
        let type = BIO_get_new_index() | BIO_TYPE_SOURCE_SINK
        guard let method = BIO_meth_new(type, "atrium datagram sink") else { return nil }
        BIO_meth_set_create(method) { bio in
            BIO_set_init(bio, 1)
            return 1
        }
        BIO_meth_set_write(method) { bio, data, length in
            guard let bio, let data, length > 0, let user = BIO_get_data(bio) else { return 0 }
            let sink = Unmanaged<DatagramSink>.fromOpaque(user).takeUnretainedValue()
            let bytes = UnsafeRawBufferPointer(start: data, count: Int(length))
            sink.datagrams.append(Array(bytes))
            return length
        }
        BIO_meth_set_ctrl(method) { _, command, _, _ in
            // Flushing is a no-op: every write is already a finished datagram. Everything else
            // (MTU queries, peer addresses, pending counts) has no meaning here and answers 0.
            command == BIO_CTRL_FLUSH ? 1 : 0
        }
        return DatagramBIOMethod(method)
    }

    /// A new write BIO that appends to `sink`. The BIO does not retain the sink: `SSLHandle` does.
    func makeBIO(sink: DatagramSink) -> OpaquePointer? {
        guard let bio = BIO_new(pointer) else { return nil }
        BIO_set_data(bio, Unmanaged.passUnretained(sink).toOpaque())
        return bio
    }
}

/// The retransmission timer (RFC 6347 section 4.2.4.1): the configured first interval, doubled on
/// each expiry up to 60 seconds. OpenSSL's default starts at one second.
func dtlsTimerCallback(_ ssl: OpaquePointer?, _ previous: UInt32) -> UInt32 {
    let maximum: UInt32 = 60_000_000
    guard previous == 0 else { return min(previous &* 2, maximum) }
    guard let bio = SSL_get_wbio(ssl), let user = BIO_get_data(bio) else { return 1_000_000 }
    return Unmanaged<DatagramSink>.fromOpaque(user).takeUnretainedValue().initialTimeoutMicroseconds
}
