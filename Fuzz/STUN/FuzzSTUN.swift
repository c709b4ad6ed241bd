import AtriumSTUN
import FuzzSupport

/// The fuzz target: parses a datagram as STUN and runs both integrity checks on what parses.
@main struct FuzzSTUN: FuzzTarget {
    static func fuzz(_ bytes: [UInt8]) {
        if let m = try? STUNMessage(parsing: bytes) {
            try? m.verifyFingerprint()
            try? m.verifyMessageIntegrity(key: Array("VOkJxbRl1RmTxUk/WvJxBt".utf8))
        }
    }
}
