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
    /// The kernel refused a datagram for its destination alone (a firewall's EPERM, an unreachable
    /// route); the rest of its batch went out.
    case sendRefused
    /// A DTLS datagram discarded without harm to its association (RFC 6347 section 4.1.2.7):
    /// malformed records, a failed tag, a replay, an epoch that is not current.
    case dtlsInvalid
    /// A STUN request answered with an error (400, 401, 420: bad or missing USERNAME or
    /// MESSAGE-INTEGRITY, unknown attributes) or dropped without FINGERPRINT.
    case stunRejected
    /// For a consumer whose transport has no DTLS yet: it keeps waiting for a key frame it can send.
    case notConnected
    /// A NACKed packet already resent to that subscriber less than one round trip ago.
    case retransmissionRepeat
    /// A retransmission over the transport's budget (a share of its media rate).
    case retransmissionBudget
    /// A packet of a simulcast stream or temporal layer the consumer does not forward now.
    case otherLayer
    /// Of a stream the answer did not accept: a rid that is not one of the track's, or a second
    /// stream on a single-stream section.
    case unnegotiatedStream
    /// A publisher's RTX copy of a packet that already arrived (its padding, a late repair).
    case duplicate
    /// A datagram for an ICE-TCP peer whose output queue is full (a peer that reads too slowly).
    case tcpQueueFull
    /// Of a track the allocator paused for this viewer: its link has no room for it.
    case bandwidth
    /// A packet for a viewer whose pacer queue was full (its link cannot keep up even with the
    /// lowest layers): the receiver asks for it again (NACK) if it still needs it.
    case pacerOverflow
    /// A packet or key-frame request for another media worker whose pipe ring was full (that worker
    /// is behind): its viewers NACK or ask again.
    case pipeFull
    /// A piped packet for a pipe producer the far worker closed meanwhile.
    case pipeUnknown

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
        case .sendRefused: "send_refused"
        case .dtlsInvalid: "dtls_invalid"
        case .stunRejected: "stun_rejected"
        case .notConnected: "not_connected"
        case .retransmissionRepeat: "retransmission_repeat"
        case .retransmissionBudget: "retransmission_budget"
        case .otherLayer: "other_layer"
        case .unnegotiatedStream: "unnegotiated_stream"
        case .duplicate: "duplicate"
        case .tcpQueueFull: "tcp_queue_full"
        case .bandwidth: "bandwidth"
        case .pacerOverflow: "pacer_overflow"
        case .pipeFull: "pipe_full"
        case .pipeUnknown: "pipe_unknown"
        }
    }
}

/// Worker-wide counters. Plain integers owned by the worker thread; copied into a `MediaStats` snapshot
/// about once a second.
public struct MediaCounters: Sendable, Equatable {
    /// Data channel messages received and sent, and those dropped (a lossy queue's oldest, a message
    /// for a channel that is not open, a binary or oversized message); SCTP packets or data channel
    /// messages that were not valid.
    public var dataMessagesIn = 0
    public var dataMessagesOut = 0
    public var dataMessagesDropped = 0
    public var dataInvalid = 0
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
    /// `addConsumer` commands naming a producer of another router.
    public var consumersRefused = 0
    /// Plain RTP packets sent to recorders (an ffmpeg on 127.0.0.1).
    public var recordingPackets = 0
    /// Video consumers started from a key-frame cache, and those that found none to start from.
    public var cacheStarts = 0
    public var cacheMisses = 0
    /// Viewers started on a fresh key frame asked of a publisher that answers, instead of replaying a
    /// long cached chain; and those of them replayed from the cache after all (no key frame in time).
    public var freshStarts = 0
    public var fallbackStarts = 0
    /// Time from a video consumer's creation to its first packet sent.
    public var firstFrame = FirstFrameHistogram()
    /// sendmmsg calls that failed for the socket as a whole (logged at most every 10 s).
    public var sendFailures = 0
    /// Messages handed to the kernel (a segmented one carries several datagrams), datagrams sent inside
    /// segmented (UDP GSO) messages, and times the kernel refused segmentation (it then stays off).
    /// Copied from the socket after each send.
    public var udpMessages = 0
    public var udpSegmentedDatagrams = 0
    public var udpSegmentationFallbacks = 0
    public var dropped = [Int](repeating: 0, count: DropReason.allCases.count)
    /// ICE-TCP: connections accepted, accept(2) failures, connections closed by reason, RFC 4571 frames
    /// and bytes in and out.
    public var tcpAccepted = 0
    public var tcpAcceptFailures = 0
    public var tcpClosed = [Int](repeating: 0, count: TCPCloseReason.allCases.count)
    public var tcpFramesIn = 0
    public var tcpFramesOut = 0
    public var tcpBytesIn = 0
    public var tcpBytesOut = 0
    /// A room spread over several workers: packets this worker handed to other workers'
    /// pipes (out) and took from theirs (in).
    public var pipePacketsOut = 0
    public var pipePacketsIn = 0

    public init() {}

    @inline(__always) mutating func drop(_ reason: DropReason) { dropped[reason.rawValue] += 1 }
}

/// Seconds from a video consumer's creation (the subscriber's answer) to its first forwarded packet
/// (the start of a key frame), split by where that key frame came from: the cache, or the publisher
/// after a request.
public struct FirstFrameHistogram: Sendable, Equatable {
    public static let bounds: [Double] = [0.05, 0.1, 0.2, 0.3, 0.5, 1, 2, 5, 10]
    /// Per source (0: cache, 1: request): counts per bucket (cumulative when rendered), total, sum.
    public var buckets = [[Int]](repeating: [Int](repeating: 0, count: bounds.count), count: 2)
    public var counts = [0, 0]
    public var sums = [0.0, 0.0]

    mutating func observe(_ seconds: Double, fromCache: Bool) {
        let s = fromCache ? 0 : 1
        counts[s] += 1
        sums[s] += seconds
        if let b = Self.bounds.firstIndex(where: { seconds <= $0 }) { buckets[s][b] += 1 }
    }
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
    /// Video: the top arriving stream's picture size (from its last key frame; 0 when unknown), and
    /// its frames in the last second.
    public var width = 0
    public var height = 0
    public var framesPerSecond = 0
    /// Bytes held in the track's key-frame caches.
    public var cachedBytes = 0
}

/// A video viewer's layer for metrics: the spatial layer (stream) forwarded to it now, -1 while it
/// gets none (paused for bandwidth, or not started), and its switches up and down so far.
public struct ConsumerStats: Sendable, Equatable {
    public var transport: String
    public var track: String
    public var layer: Int
    public var switchesUp: Int
    public var switchesDown: Int

    public init(transport: String, track: String, layer: Int, switchesUp: Int, switchesDown: Int) {
        self.transport = transport
        self.track = track
        self.layer = layer
        self.switchesUp = switchesUp
        self.switchesDown = switchesDown
    }
}

/// A transport's state for metrics.
public struct TransportStats: Sendable, Equatable {
    public var id: String
    public var label: String
    public var connected: Bool
    /// Round-trip time from the peer's receiver reports, seconds; nil until measured.
    public var rtt: Double?
    /// The latest fraction of media lost (0 to 1), from receiver reports; nil until reported.
    public var loss: Double?
    public var packetsIn = 0
    public var bytesIn = 0
    public var packetsOut = 0
    public var bytesOut = 0
    /// Datagrams to this transport's peer the kernel refused (`send_refused`).
    public var sendErrors = 0
    /// Retransmissions refused toward this transport (repeats within a round trip, over budget).
    public var retransmissionsRefused = 0
    /// Toward a subscriber with transport-wide feedback: the estimated bandwidth, bits per second.
    public var estimate: Double?
    /// The allocator's last word for this viewer: bits per second given, bits per second its tracks
    /// would take, tracks paused for bandwidth; nil before the first allocation.
    public var allocated: Double?
    public var wanted: Double?
    public var pausedTracks = 0
    /// Probe clusters sent and their padding bytes.
    public var probes = 0
    public var probeBytes = 0
    /// The pacer: packets held back at least once, dropped on a full queue, waiting now.
    public var pacerDelayed = 0
    public var pacerDropped = 0
    public var pacerQueued = 0
}

/// What `/metrics` shows of the media plane: copied out of the worker about once a second.
public struct MediaStats: Sendable, Equatable {
    public var counters = MediaCounters()
    public var tracks: [TrackStats] = []
    public var transports: [TransportStats] = []
    public var consumers: [ConsumerStats] = []
    /// Peer addresses the worker maps to transports (valid ICE pairs).
    public var peerAddresses = 0
    /// Rooms with media in the worker.
    public var routers = 0
    /// Open ICE-TCP connections.
    public var tcpConnections = 0

    public init() {}

    /// Prometheus text exposition lines; with `worker`, every sample also carries `worker="N"` (several
    /// media workers, merged by `prometheus(workers:)`).
    public func prometheus(worker: Int? = nil) -> String {
        var out = ""
        let workerLabel = worker.map { "worker=\"\($0)\"" }
        /// The sample's labels with the worker's first.
        func labelled(_ labels: String) -> String {
            guard let workerLabel else { return labels }
            return labels.isEmpty ? workerLabel : workerLabel + "," + labels
        }
        /// One family: its HELP and TYPE lines, then a sample per (labels, value).
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(String, String)]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for (l, value) in samples {
                let labels = labelled(l)
                out += name + (labels.isEmpty ? "" : "{\(labels)}") + " \(value)\n"
            }
        }
        func counter(_ name: String, _ help: String, _ samples: [(String, String)]) {
            family(name, "counter", help, samples)
        }
        func inOut(_ inValue: Int, _ outValue: Int, _ prefix: String = "") -> [(String, String)] {
            [(prefix + "direction=\"in\"", "\(inValue)"), (prefix + "direction=\"out\"", "\(outValue)")]
        }
        func receivedSent(_ received: Int, _ sent: Int) -> [(String, String)] {
            [("direction=\"received\"", "\(received)"), ("direction=\"sent\"", "\(sent)")]
        }
        func track(_ t: TrackStats) -> String { "track=\"\(t.track)\",source=\"\(t.source)\"" }
        func perTrack(_ name: String, _ type: String, _ help: String, _ value: (TrackStats) -> Int) {
            family(name, type, help, tracks.map { (track($0), "\(value($0))") })
        }
        let c = counters
        counter(
            "atrium_media_packets_total", "RTP packets received from publishers (in) and sent to subscribers (out).",
            inOut(c.packetsIn, c.packetsOut))
        counter(
            "atrium_media_bytes_total", "RTP bytes received (after decryption) and sent (encrypted).",
            inOut(c.bytesIn, c.bytesOut))
        counter(
            "atrium_media_pipe_packets_total",
            "RTP packets of a room spread over several media workers taken from (in) and handed to (out) other workers.",
            inOut(c.pipePacketsIn, c.pipePacketsOut))
        counter(
            "atrium_media_rtcp_packets_total", "RTCP compound packets received and sent.", inOut(c.rtcpIn, c.rtcpOut))
        counter(
            "atrium_media_dropped_packets_total", "Packets dropped by the media worker, by reason.",
            DropReason.allCases.map { ("reason=\"\($0.label)\"", "\(c.dropped[$0.rawValue])") })
        counter(
            "atrium_media_nacks_total", "Generic NACK packets received from subscribers and sent to publishers.",
            receivedSent(c.nacksReceived, c.nacksSent))
        counter(
            "atrium_media_retransmissions_total", "Packets resent to subscribers from the retransmission buffer.",
            [("", "\(c.retransmissions)")])
        counter(
            "atrium_media_retransmission_misses_total", "NACKed packets no longer in the buffer.",
            [("", "\(c.retransmissionMisses)")])
        counter(
            "atrium_media_plis_total", "Picture loss indications received from subscribers and sent to publishers.",
            receivedSent(c.plisReceived, c.plisSent))
        counter(
            "atrium_media_firs_total", "Full intra requests received from subscribers.",
            [("direction=\"received\"", "\(c.firsReceived)")])
        counter(
            "atrium_media_stun_requests_total", "STUN messages received (connectivity checks and consent).",
            [("", "\(c.stunRequests)")])
        counter(
            "atrium_media_data_messages_total", "Data channel messages received from and sent to peers.",
            inOut(c.dataMessagesIn, c.dataMessagesOut))
        counter(
            "atrium_media_data_dropped_total",
            "Data channel messages dropped: a lossy queue's oldest, no open channel of the kind, binary or too large.",
            [("", "\(c.dataMessagesDropped)")])
        counter(
            "atrium_media_data_invalid_total",
            "SCTP packets or data channel messages that were not valid (dropped; the association stays).",
            [("", "\(c.dataInvalid)")])
        counter(
            "atrium_media_dtls_handshakes_total", "DTLS handshakes by outcome.",
            [("result=\"ok\"", "\(c.dtlsHandshakes)"), ("result=\"failed\"", "\(c.dtlsFailures)")])
        counter(
            "atrium_media_udp_messages_total",
            "Messages the media worker handed to the kernel; a segmented (GSO) one carries several datagrams.",
            [("", "\(c.udpMessages)")])
        counter(
            "atrium_media_udp_segmented_datagrams_total", "Datagrams sent inside segmented (UDP GSO) messages.",
            [("", "\(c.udpSegmentedDatagrams)")])
        counter(
            "atrium_media_udp_segmentation_fallbacks_total",
            "Times the kernel refused UDP GSO; the worker then sends without it.",
            [("", "\(c.udpSegmentationFallbacks)")])
        counter(
            "atrium_media_consumers_refused_total",
            "Consumers the worker refused: their producer belongs to another room's router.",
            [("", "\(c.consumersRefused)")])
        counter(
            "atrium_media_recording_packets_total", "Plain RTP packets sent to recording processes.",
            [("", "\(c.recordingPackets)")])
        family(
            "atrium_media_peer_addresses", "gauge", "Peer addresses mapped to transports (valid ICE pairs).",
            [("", "\(peerAddresses)")])
        family(
            "atrium_media_tcp_connections", "gauge", "Open ICE-TCP connections.", [("", "\(tcpConnections)")])
        counter(
            "atrium_media_tcp_accepted_total", "ICE-TCP connections accepted (and accept(2) failures).",
            [("result=\"ok\"", "\(c.tcpAccepted)"), ("result=\"failed\"", "\(c.tcpAcceptFailures)")])
        counter(
            "atrium_media_tcp_closed_total", "ICE-TCP connections closed by the worker or the peer, by reason.",
            TCPCloseReason.allCases.map { ("reason=\"\($0.label)\"", "\(c.tcpClosed[$0.rawValue])") })
        counter(
            "atrium_media_tcp_frames_total", "RFC 4571 frames received from and queued to ICE-TCP peers.",
            inOut(c.tcpFramesIn, c.tcpFramesOut))
        counter(
            "atrium_media_tcp_bytes_total", "Bytes read from and written to ICE-TCP connections, framing included.",
            inOut(c.tcpBytesIn, c.tcpBytesOut))
        family(
            "atrium_media_routers", "gauge", "Rooms with media in the worker (one router each).",
            [("", "\(routers)")])
        let connected = transports.filter(\.connected).count
        family(
            "atrium_media_transports", "gauge", "Open WebRTC transports, by state.",
            [("state=\"connected\"", "\(connected)"), ("state=\"connecting\"", "\(transports.count - connected)")])
        family(
            "atrium_media_rtt_seconds", "gauge", "Round-trip time per transport from RTCP receiver reports.",
            transports.compactMap { t in t.rtt.map { ("transport=\"\(t.label)\"", "\($0)") } })
        counter(
            "atrium_media_transport_packets_total", "RTP packets per transport (participant/pub or /sub).",
            transports.flatMap { inOut($0.packetsIn, $0.packetsOut, "transport=\"\($0.label)\",") })
        counter(
            "atrium_media_transport_bytes_total", "RTP bytes per transport.",
            transports.flatMap { inOut($0.bytesIn, $0.bytesOut, "transport=\"\($0.label)\",") })
        counter(
            "atrium_media_transport_send_errors_total", "Datagrams to a transport's peer the kernel refused.",
            transports.map { ("transport=\"\($0.label)\"", "\($0.sendErrors)") })
        counter(
            "atrium_media_transport_retransmissions_refused_total",
            "Retransmissions refused per transport: repeats within a round trip and over the budget.",
            transports.map { ("transport=\"\($0.label)\"", "\($0.retransmissionsRefused)") })
        family(
            "atrium_media_transport_estimate_bits", "gauge",
            "Estimated bandwidth toward each subscriber connection (transport-wide feedback, or its REMB), bits per second.",
            transports.compactMap { t in t.estimate.map { ("transport=\"\(t.label)\"", "\(Int($0))") } })
        family(
            "atrium_media_transport_allocated_bits", "gauge",
            "What the allocator gave each subscriber connection's tracks from its estimate, bits per second.",
            transports.compactMap { t in t.allocated.map { ("transport=\"\(t.label)\"", "\(Int($0))") } })
        family(
            "atrium_media_transport_wanted_bits", "gauge",
            "What each subscriber connection's tracks would take at the layers its viewer asked for, bits per second.",
            transports.compactMap { t in t.wanted.map { ("transport=\"\(t.label)\"", "\(Int($0))") } })
        family(
            "atrium_media_transport_paused_tracks", "gauge",
            "Video tracks the allocator paused for a subscriber connection (its link has no room for them).",
            transports.compactMap { t in t.allocated.map { _ in ("transport=\"\(t.label)\"", "\(t.pausedTracks)") } })
        counter(
            "atrium_media_transport_probes_total", "Probe clusters sent to a subscriber connection.",
            transports.compactMap { t in t.estimate.map { _ in ("transport=\"\(t.label)\"", "\(t.probes)") } })
        counter(
            "atrium_media_transport_probe_bytes_total", "Padding bytes sent in probe clusters.",
            transports.compactMap { t in t.estimate.map { _ in ("transport=\"\(t.label)\"", "\(t.probeBytes)") } })
        counter(
            "atrium_media_transport_paced_total",
            "Packets to a subscriber connection by what its pacer did: held back for its rate, dropped on a full queue.",
            transports.filter { $0.estimate != nil }.flatMap { t in
                [
                    ("transport=\"\(t.label)\",outcome=\"delayed\"", "\(t.pacerDelayed)"),
                    ("transport=\"\(t.label)\",outcome=\"dropped\"", "\(t.pacerDropped)"),
                ]
            })
        family(
            "atrium_media_transport_pacer_queued_packets", "gauge",
            "Packets waiting in each subscriber connection's pacer.",
            transports.filter { $0.estimate != nil }.map { ("transport=\"\($0.label)\"", "\($0.pacerQueued)") })
        counter(
            "atrium_media_track_packets_total",
            "RTP packets per track: received (in) and sent to all its subscribers (out).",
            tracks.flatMap { inOut($0.packetsIn, $0.packetsOut, track($0) + ",") })
        counter(
            "atrium_media_track_bytes_total", "RTP bytes per track.",
            tracks.flatMap { inOut($0.bytesIn, $0.bytesOut, track($0) + ",") })
        perTrack("atrium_media_track_lost_packets_total", "counter", "Packets lost from the publisher, per track.") {
            $0.lost
        }
        perTrack("atrium_media_track_nacks_sent_total", "counter", "NACKs sent to the publisher, per track.") {
            $0.nacksSent
        }
        perTrack("atrium_media_track_plis_sent_total", "counter", "PLIs sent to the publisher, per track.") {
            $0.plisSent
        }
        perTrack("atrium_media_track_consumers", "gauge", "Subscribers receiving each track.") { $0.consumers }
        let video = tracks.filter { $0.source == "camera" || $0.source == "screen_share" }
        family(
            "atrium_media_track_frame_width", "gauge", "Picture width of each video track's top arriving layer.",
            video.map { (track($0), "\($0.width)") })
        family(
            "atrium_media_track_frame_height", "gauge", "Picture height of each video track's top arriving layer.",
            video.map { (track($0), "\($0.height)") })
        family(
            "atrium_media_track_frames_per_second", "gauge", "Frames received in the last second, top layer.",
            video.map { (track($0), "\($0.framesPerSecond)") })
        family(
            "atrium_media_consumer_layer", "gauge",
            "The spatial layer forwarded to each video viewer (0 the bottom), -1 while it gets none (paused for bandwidth, not started).",
            consumers.map { ("transport=\"\($0.transport)\",track=\"\($0.track)\"", "\($0.layer)") })
        counter(
            "atrium_media_consumer_layer_switches_total", "Switches between a video viewer's layers, up and down.",
            consumers.flatMap { c in
                let labels = "transport=\"\(c.transport)\",track=\"\(c.track)\","
                return [
                    (labels + "direction=\"up\"", "\(c.switchesUp)"),
                    (labels + "direction=\"down\"", "\(c.switchesDown)"),
                ]
            })
        family(
            "atrium_media_track_key_frame_cache_bytes", "gauge", "Bytes of the current picture kept for new viewers.",
            video.map { (track($0), "\($0.cachedBytes)") })
        counter(
            "atrium_media_key_frame_cache_starts_total",
            "Video viewers started from the cached picture (served) or that found none and asked for a key frame.",
            [
                ("result=\"served\"", "\(c.cacheStarts)"), ("result=\"missed\"", "\(c.cacheMisses)"),
                ("result=\"fresh\"", "\(c.freshStarts)"), ("result=\"fallback\"", "\(c.fallbackStarts)"),
            ])
        out +=
            "# HELP atrium_media_first_frame_seconds Time from a video viewer's answer to its first forwarded key frame, by its source.\n"
        out += "# TYPE atrium_media_first_frame_seconds histogram\n"
        for (s, source) in ["cache", "request"].enumerated() {
            let src = labelled("source=\"\(source)\"")
            var cumulative = 0
            for (b, bound) in FirstFrameHistogram.bounds.enumerated() {
                cumulative += c.firstFrame.buckets[s][b]
                out += "atrium_media_first_frame_seconds_bucket{\(src),le=\"\(bound)\"} \(cumulative)\n"
            }
            out += "atrium_media_first_frame_seconds_bucket{\(src),le=\"+Inf\"} \(c.firstFrame.counts[s])\n"
            out += "atrium_media_first_frame_seconds_sum{\(src)} \(c.firstFrame.sums[s])\n"
            out += "atrium_media_first_frame_seconds_count{\(src)} \(c.firstFrame.counts[s])\n"
        }
        return out
    }
}

extension TransportStats {
    /// A transport's figures as a test's fake plane reports them.
    public init(id: String, label: String, connected: Bool, rtt: Double?) {
        self.id = id
        self.label = label
        self.connected = connected
        self.rtt = rtt
    }
}
