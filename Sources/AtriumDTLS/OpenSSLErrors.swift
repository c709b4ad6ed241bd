internal import COpenSSL

/// Drains OpenSSL's thread-local error queue into one line, so a failure names its reason and a
/// stale entry never leaks into the next call's diagnosis.
@discardableResult
func drainOpenSSLErrors() -> String {
    var reasons: [String] = []
    while true {
        let code = ERR_get_error()
        guard code != 0 else { break }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        reasons.append(String(decoding: bytes, as: UTF8.self))
    }
    return reasons.isEmpty ? "no OpenSSL error reported" : reasons.joined(separator: "; ")
}

extension DTLSError {
    /// A `.library` error for `call`, with the reasons OpenSSL queued.
    static func openSSL(_ call: String) -> DTLSError {
        .library(call: call, reason: drainOpenSSLErrors())
    }
}
