internal import COpenSSL

/// Owns one `EVP_PKEY` and frees it with the last reference.
final class PrivateKeyHandle {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    deinit { EVP_PKEY_free(pointer) }
}

/// Owns one `X509` and frees it with the last reference.
final class X509Handle {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    deinit { X509_free(pointer) }
}

/// Owns one `SSL_CTX`. Each `SSL` made from it holds its own reference, so the context may go first.
final class SSLContextHandle {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    deinit { SSL_CTX_free(pointer) }
}

/// Owns one `SSL` and, through `SSL_set_bio`, its two BIOs. It keeps the datagram sink alive for as
/// long as the write BIO points at it.
final class SSLHandle {
    let pointer: OpaquePointer
    let sink: DatagramSink

    init(_ pointer: OpaquePointer, sink: DatagramSink) {
        self.pointer = pointer
        self.sink = sink
    }

    deinit { SSL_free(pointer) }
}
