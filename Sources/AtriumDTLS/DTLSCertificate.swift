internal import COpenSSL

/// The endpoint's identity for DTLS-SRTP: an ECDSA P-256 key and a self-signed X.509 certificate
/// (CN "atrium", random serial, 30 days). WebRTC does not use certificate chains; the peer trusts
/// the certificate only because its fingerprint travels in the signaled SDP (RFC 8827 section 6.5).
/// One certificate may serve many endpoints; it is immutable once made, so the media workers of one
/// process share it across their threads (OpenSSL only reads the key and certificate, taking
/// references with atomic counts, when a context is made from them).
public final class DTLSCertificate: @unchecked Sendable {
    /// The SHA-256 fingerprint, for `a=fingerprint:` in SDP (`sha-256 AB:CD:...`).
    public let fingerprint: DTLSFingerprint
    let key: PrivateKeyHandle
    let certificate: X509Handle

    /// How long a generated certificate is valid. Browsers ignore validity for DTLS-SRTP, but a
    /// short life keeps a leaked key from being useful for long.
    public static let validitySeconds = 30 * 24 * 3600

    /// Generates a fresh key pair and certificate.
    public init() throws(DTLSError) {
        guard let rawKey = atrium_evp_ec_gen("P-256") else { throw .openSSL("EVP_EC_gen") }
        let key = PrivateKeyHandle(rawKey)
        guard let rawCertificate = X509_new() else { throw .openSSL("X509_new") }
        let certificate = X509Handle(rawCertificate)
        try Self.fill(certificate.pointer, key: key.pointer)
        self.key = key
        self.certificate = certificate
        self.fingerprint = try DTLSFingerprint.of(certificate.pointer, hashFunction: "sha-256")
    }

    /// Sets version 3, a random positive 128-bit serial, the validity window, CN=atrium as subject
    /// and issuer, the public key, and signs with ECDSA-SHA256.
    private static func fill(_ x509: OpaquePointer, key: OpaquePointer) throws(DTLSError) {
        guard X509_set_version(x509, 2) == 1 else { throw .openSSL("X509_set_version") }
        var serial = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&serial, Int32(serial.count)) == 1 else { throw .openSSL("RAND_bytes") }
        serial[0] &= 0x7F
        guard let number = BN_bin2bn(serial, Int32(serial.count), nil) else { throw .openSSL("BN_bin2bn") }
        defer { BN_free(number) }
        guard BN_to_ASN1_INTEGER(number, X509_get_serialNumber(x509)) != nil else {
            throw .openSSL("BN_to_ASN1_INTEGER")
        }
        guard X509_gmtime_adj(X509_getm_notBefore(x509), 0) != nil,
            X509_gmtime_adj(X509_getm_notAfter(x509), validitySeconds) != nil
        else { throw .openSSL("X509_gmtime_adj") }
        guard let name = X509_get_subject_name(x509),
            X509_NAME_add_entry_by_txt(name, "CN", atrium_mbstring_asc(), "atrium", -1, -1, 0) == 1
        else { throw .openSSL("X509_NAME_add_entry_by_txt") }
        guard X509_set_issuer_name(x509, name) == 1 else { throw .openSSL("X509_set_issuer_name") }
        guard X509_set_pubkey(x509, key) == 1 else { throw .openSSL("X509_set_pubkey") }
        guard X509_sign(x509, key, EVP_sha256()) > 0 else { throw .openSSL("X509_sign") }
    }
}
