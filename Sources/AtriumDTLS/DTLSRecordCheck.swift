/// The record-layer check a datagram passes before OpenSSL sees it (RFC 6347 section 4.1):
///
/// ```
///  0               1               2               3
///  +-------------+---------------+---------------+--------------+
///  | type (1)    | version (2)                   | epoch (2) ...
///  +-------------+-------------------------------+--------------+
///  ... epoch     | sequence_number (6)                          |
///  +-------------+----------------------------------------------+
///  | length (2)  | fragment (length bytes) ...
///  +-------------+---------------------------------------------
/// ```
///
/// OpenSSL treats some malformed records as fatal (a length above 2^14 + 2048 raises a
/// record_overflow alert and ends the association), while RFC 6347 section 4.1.2.7 says invalid
/// records are discarded silently: anyone who can spoof a transport's 5-tuple could otherwise end
/// its media. A datagram whose records are not all well formed is therefore discarded whole.
public enum DTLSRecordCheck {
    /// The record header: type, version, epoch, sequence number, length.
    public static let headerLength = 13
    /// The largest fragment of a protected record (RFC 6347 section 4.1, TLSCiphertext).
    public static let maximumFragmentLength = (1 << 14) + 2048

    /// Why a datagram was discarded before reaching OpenSSL; nil when every record is well formed.
    public enum Problem: Sendable, Equatable {
        case truncatedHeader
        case unknownContentType(UInt8)
        case notDTLS(UInt16)
        case fragmentTooLong(Int)
        case truncatedFragment
        /// After the handshake: a protected record of an epoch that is not the current one, or a
        /// change_cipher_spec that is not part of a retransmitted first flight (epoch 0).
        case wrongEpoch(UInt16)
        /// After the handshake: a protected record too short for its cipher's nonce and tag.
        case tooShortForCipher(Int)
        /// After the handshake: a record of another version than DTLS 1.2 (a late ClientHello's 1.0).
        case wrongVersion(UInt16)
    }

    /// What an established association accepts: the epoch its peer protects records with (no
    /// renegotiation, so 1) and the least expansion of the negotiated AEAD cipher.
    public struct Established: Sendable, Equatable {
        public var epoch: UInt16
        public var minimumProtectedLength: Int

        public init(epoch: UInt16 = 1, minimumProtectedLength: Int) {
            self.epoch = epoch
            self.minimumProtectedLength = minimumProtectedLength
        }
    }

    /// Checks every record of a datagram; pure. With `established`, also each record's epoch and
    /// length against the association: OpenSSL 3.0.19 stops reading after some records it should
    /// only discard (an application_data record shorter than the AEAD tag, a change_cipher_spec in
    /// the current epoch), or skips a record of another version (a late ClientHello's 1.0) but keeps
    /// its fragment buffered, so those never reach it.
    public static func problem(in datagram: [UInt8], established: Established? = nil) -> Problem? {
        var offset = 0
        while offset < datagram.count {
            guard datagram.count - offset >= headerLength else { return .truncatedHeader }
            let type = datagram[offset]
            // change_cipher_spec (20), alert (21), handshake (22), application_data (23).
            guard (20...23).contains(type) else { return .unknownContentType(type) }
            let version = UInt16(datagram[offset + 1]) << 8 | UInt16(datagram[offset + 2])
            // DTLS 1.0 (0xFEFF) and 1.2 (0xFEFD); a ClientHello may carry 1.0 in its record.
            guard version == 0xFEFF || version == 0xFEFD else { return .notDTLS(version) }
            let length = Int(datagram[offset + 11]) << 8 | Int(datagram[offset + 12])
            guard length <= maximumFragmentLength else { return .fragmentTooLong(length) }
            if let established {
                let epoch = UInt16(datagram[offset + 3]) << 8 | UInt16(datagram[offset + 4])
                // Only the first flights (a ClientHello, a HelloVerifyRequest) may carry 1.0, and an
                // established association takes neither.
                guard version == 0xFEFD else { return .wrongVersion(version) }
                switch (type, epoch) {
                case (20, 0), (21, 0), (22, 0): break
                case (21, established.epoch), (22, established.epoch), (23, established.epoch):
                    guard length >= established.minimumProtectedLength else { return .tooShortForCipher(length) }
                default: return .wrongEpoch(epoch)
                }
            }
            offset += headerLength
            guard datagram.count - offset >= length else { return .truncatedFragment }
            offset += length
        }
        return nil
    }
}
