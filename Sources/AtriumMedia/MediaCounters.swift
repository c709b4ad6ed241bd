/// Why the worker dropped a packet; each reason is a label of `atrium_media_dropped_packets_total`.
public enum DropReason: Int, Sendable, CaseIterable {
    /// For a transceiver rejected in the answer.
    case rejected
    /// For a track that ended (unpublished, its share stopped, permission revoked).
    case ended
    /// Of an SSRC and mid no producer is bound to.
    case unknownSSRC
    /// From an address with no valid ICE pair, or before DTLS completed.
    case unknownSource
    /// SRTP or SRTCP authentication or replay check failed.
    case srtp
    /// Not parseable as RTP, RTCP, STUN or DTLS.
    case malformed
    /// A paused share: not forwarded.
    case paused
    /// A consumer waiting for a key frame, or a packet older than its start.
    case waitingKeyFrame
    /// The testing loss setting.
    case injectedLoss
    /// The socket's send buffer was full.
    case sendBufferFull

    public var label: String {
        switch self {
        case .rejected: "rejected"
        case .ended: "ended"
        case .unknownSSRC: "unknown_ssrc"
        case .unknownSource: "unknown_source"
        case .srtp: "srtp"
        case .malformed: "malformed"
        case .paused: "paused"
        case .waitingKeyFrame: "waiting_key_frame"
        case .injectedLoss: "injected_loss"
        case .sendBufferFull: "send_buffer_full"
        }
    }
}

/// Worker-wide counters. Plain integers owned by the worker thread; copied into a `MediaStats` snapshot
/// about once a second.
public struct MediaCounters: Sendable, Equatable {
    public var packetsIn = 0
    public var packetsOut = 0
    public var bytesIn = 0
    public var bytesOut = 0
    public var rtcpIn = 0
    public var rtcpOut = 0
    public var nacksReceived = 0
    public var nacksSent = 0
    public var retransmissions = 0
    public var retransmissionMisses = 0
    public var plisReceived = 0
    public var plisSent = 0
    public var firsReceived = 0
    public var stunRequests = 0
    public var dtlsHandshakes = 0
    public var dtlsFailures = 0
    public var dropped = [Int](repeating: 0, count: DropReason.allCases.count)

    public init() {}

    @inline(__always) mutating func drop(_ reason: DropReason) { dropped[reason.rawValue] += 1 }
}

/// A track's counters as the snapshot carries them.
public struct TrackStats: Sendable, Equatable {
    public var track: String
    public var source: String
    /// `in` for the producer, `out` for the sum of its consumers.
    public var packetsIn: Int
    public var bytesIn: Int
    public var packetsOut: Int
    public var bytesOut: Int
    public var nacksSent: Int
    public var plisSent: Int
    public var consumers: Int
    /// Packets lost from the publisher as this server counts them (RFC 3550 cumulative lost).
    public var lost: Int
}

/// A transport's state for metrics.
public struct TransportStats: Sendable, Equatable {
    public var id: String
    public var label: String
    public var connected: Bool
    /// Round-trip time from the peer's receiver reports, seconds; nil until measured.
    public var rtt: Double?
    public var packetsIn = 0
    public var bytesIn = 0
    public var packetsOut = 0
    public var bytesOut = 0
}

/// What `/metrics` shows of the media plane: copied out of the worker about once a second.
public struct MediaStats: Sendable, Equatable {
    public var counters = MediaCounters()
    public var tracks: [TrackStats] = []
    public var transports: [TransportStats] = []

    public init() {}

    /// Prometheus text exposition lines.
    public func prometheus() -> String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        let c = counters
        family(
            "atrium_media_packets_total", "counter",
            "RTP packets received from publishers (in) and sent to subscribers (out).")
        out += "atrium_media_packets_total{direction=\"in\"} \(c.packetsIn)\n"
        out += "atrium_media_packets_total{direction=\"out\"} \(c.packetsOut)\n"
        family("atrium_media_bytes_total", "counter", "RTP bytes received (after decryption) and sent (encrypted).")
        out += "atrium_media_bytes_total{direction=\"in\"} \(c.bytesIn)\n"
        out += "atrium_media_bytes_total{direction=\"out\"} \(c.bytesOut)\n"
        family("atrium_media_rtcp_packets_total", "counter", "RTCP compound packets received and sent.")
        out += "atrium_media_rtcp_packets_total{direction=\"in\"} \(c.rtcpIn)\n"
        out += "atrium_media_rtcp_packets_total{direction=\"out\"} \(c.rtcpOut)\n"
        family("atrium_media_dropped_packets_total", "counter", "Packets dropped by the media worker, by reason.")
        for r in DropReason.allCases {
            out += "atrium_media_dropped_packets_total{reason=\"\(r.label)\"} \(c.dropped[r.rawValue])\n"
        }
        family(
            "atrium_media_nacks_total", "counter",
            "Generic NACK packets received from subscribers and sent to publishers.")
        out += "atrium_media_nacks_total{direction=\"received\"} \(c.nacksReceived)\n"
        out += "atrium_media_nacks_total{direction=\"sent\"} \(c.nacksSent)\n"
        family(
            "atrium_media_retransmissions_total", "counter",
            "Packets resent to subscribers from the retransmission buffer.")
        out += "atrium_media_retransmissions_total \(c.retransmissions)\n"
        family("atrium_media_retransmission_misses_total", "counter", "NACKed packets no longer in the buffer.")
        out += "atrium_media_retransmission_misses_total \(c.retransmissionMisses)\n"
        family(
            "atrium_media_plis_total", "counter",
            "Picture loss indications received from subscribers and sent to publishers.")
        out += "atrium_media_plis_total{direction=\"received\"} \(c.plisReceived)\n"
        out += "atrium_media_plis_total{direction=\"sent\"} \(c.plisSent)\n"
        family("atrium_media_firs_total", "counter", "Full intra requests received from subscribers.")
        out += "atrium_media_firs_total{direction=\"received\"} \(c.firsReceived)\n"
        family(
            "atrium_media_stun_requests_total", "counter", "STUN messages received (connectivity checks and consent).")
        out += "atrium_media_stun_requests_total \(c.stunRequests)\n"
        family("atrium_media_dtls_handshakes_total", "counter", "DTLS handshakes by outcome.")
        out += "atrium_media_dtls_handshakes_total{result=\"ok\"} \(c.dtlsHandshakes)\n"
        out += "atrium_media_dtls_handshakes_total{result=\"failed\"} \(c.dtlsFailures)\n"
        family("atrium_media_transports", "gauge", "Open WebRTC transports, by state.")
        let connected = transports.filter(\.connected).count
        out += "atrium_media_transports{state=\"connected\"} \(connected)\n"
        out += "atrium_media_transports{state=\"connecting\"} \(transports.count - connected)\n"
        family("atrium_media_rtt_seconds", "gauge", "Round-trip time per transport from RTCP receiver reports.")
        for t in transports {
            if let rtt = t.rtt { out += "atrium_media_rtt_seconds{transport=\"\(t.label)\"} \(rtt)\n" }
        }
        family(
            "atrium_media_transport_packets_total", "counter", "RTP packets per transport (participant/pub or /sub).")
        for t in transports {
            out += "atrium_media_transport_packets_total{transport=\"\(t.label)\",direction=\"in\"} \(t.packetsIn)\n"
            out += "atrium_media_transport_packets_total{transport=\"\(t.label)\",direction=\"out\"} \(t.packetsOut)\n"
        }
        family("atrium_media_transport_bytes_total", "counter", "RTP bytes per transport.")
        for t in transports {
            out += "atrium_media_transport_bytes_total{transport=\"\(t.label)\",direction=\"in\"} \(t.bytesIn)\n"
            out += "atrium_media_transport_bytes_total{transport=\"\(t.label)\",direction=\"out\"} \(t.bytesOut)\n"
        }
        family(
            "atrium_media_track_packets_total", "counter",
            "RTP packets per track: received (in) and sent to all its subscribers (out).")
        for t in tracks {
            out +=
                "atrium_media_track_packets_total{track=\"\(t.track)\",source=\"\(t.source)\",direction=\"in\"} \(t.packetsIn)\n"
            out +=
                "atrium_media_track_packets_total{track=\"\(t.track)\",source=\"\(t.source)\",direction=\"out\"} \(t.packetsOut)\n"
        }
        family("atrium_media_track_bytes_total", "counter", "RTP bytes per track.")
        for t in tracks {
            out +=
                "atrium_media_track_bytes_total{track=\"\(t.track)\",source=\"\(t.source)\",direction=\"in\"} \(t.bytesIn)\n"
            out +=
                "atrium_media_track_bytes_total{track=\"\(t.track)\",source=\"\(t.source)\",direction=\"out\"} \(t.bytesOut)\n"
        }
        family("atrium_media_track_lost_packets_total", "counter", "Packets lost from the publisher, per track.")
        for t in tracks {
            out += "atrium_media_track_lost_packets_total{track=\"\(t.track)\",source=\"\(t.source)\"} \(t.lost)\n"
        }
        family("atrium_media_track_nacks_sent_total", "counter", "NACKs sent to the publisher, per track.")
        for t in tracks {
            out += "atrium_media_track_nacks_sent_total{track=\"\(t.track)\",source=\"\(t.source)\"} \(t.nacksSent)\n"
        }
        family("atrium_media_track_plis_sent_total", "counter", "PLIs sent to the publisher, per track.")
        for t in tracks {
            out += "atrium_media_track_plis_sent_total{track=\"\(t.track)\",source=\"\(t.source)\"} \(t.plisSent)\n"
        }
        family("atrium_media_track_consumers", "gauge", "Subscribers receiving each track.")
        for t in tracks {
            out += "atrium_media_track_consumers{track=\"\(t.track)\",source=\"\(t.source)\"} \(t.consumers)\n"
        }
        return out
    }
}
