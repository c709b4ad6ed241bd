public import AtriumForwarding
public import AtriumUDP

/// What the signaling thread asks of the media worker. Commands are applied in order on the worker
/// thread, between two batches of packets.
public enum MediaCommand: Sendable {
    case openTransport(TransportSpec)
    /// The peer's description again (a later offer or answer). When the peer's ICE credentials changed
    /// this is an ICE restart: `localUfrag`/`localPassword` are the new ones written in our answer.
    case updateTransport(id: String, remote: RemoteSpec, localUfrag: String, localPassword: String)
    case closeTransport(id: String)
    /// Ends a room's media: every transport of the router, and so its producers and consumers.
    case closeRouter(id: String)
    /// Transceivers of a publisher transport that were rejected, by mid and by the SSRCs the offer
    /// declared for them: their packets are dropped and counted as `rejected`.
    case reject(transport: String, mids: Set<String>, ssrcs: Set<UInt32>)
    case addProducer(ProducerSpec)
    case pauseProducer(id: String, paused: Bool)
    case closeProducer(id: String)
    case addConsumer(ConsumerSpec)
    /// The viewer's wish for a consumer of a layered track changed (quality, viewport).
    case setPreference(consumer: String, LayerPreference)
    case closeConsumer(id: String)
    /// What the coordinator's allocator gave a subscriber transport's consumers from its
    /// estimate: each consumer's layer ceiling, or a pause; what it adds up to and what the viewer
    /// would take unconstrained (the engine probes for more while the second is higher).
    case allocate(transport: String, TransportAllocation)
    /// Copies a producer's packets, decrypted, as plain RTP to a recording process on this machine.
    case addRecorder(RecorderSpec)
    case closeRecorder(id: String)
    /// A recorder line opened or closed (`RecorderLineSpec`).
    case openRecorderLine(RecorderLineSpec)
    case closeRecorderLine(id: String)
    /// Home worker of a room spread over several: hands producer `id`'s packets, decrypted,
    /// to the far worker of `link` as pipe producer `tag`, and takes that worker's requests for it.
    case pipeProducer(id: String, link: PipeLink, tag: UInt32)
    /// Far worker: a pipe producer of router `router` with the producer's spec, fed from `link`
    /// (mediasoup's pipe producer: no publisher transport, no NACK or reports to a publisher).
    case addPipeProducer(ProducerSpec, router: String, link: PipeLink, tag: UInt32)
    /// A pipe that ends (the relay link behind it was lost): no producer hands it packets any more,
    /// and its rings are dropped.
    case unpipe(link: PipeLink)
    /// Reports a transport's state and its open data channels again: a connection another owner
    /// took over, whose new owner knows nothing of it yet.
    case restate(transport: String)
    /// Sends a text message on the transport's data channel of that kind (the lossy one: unordered,
    /// never retransmitted; else the reliable one). Lossy messages wait in a small queue when the peer
    /// does not keep up, the oldest dropped first.
    case sendData(transport: String, lossy: Bool, payload: [UInt8])
}

/// Whose transport a transport is: the worker placement keeps publishers on a room's home worker and
/// may place a big room's viewers on others.
public enum TransportRole: Sendable, Equatable {
    case publisher, subscriber
}

/// A recording output of one producer (a consumer-like sink): its packets go unencrypted to
/// `destination` (an ffmpeg listening on 127.0.0.1), with one SSRC, gap-free sequence numbers and a
/// continuous timeline across the sharer's pauses, starting on a key frame. Of a simulcast producer
/// it records the bottom stream; of an SVC one every layer.
public struct RecorderSpec: Sendable, Equatable {
    public var id: String
    public var producer: String
    public var destination: SocketAddress
    public var ssrc: UInt32
    public var payloadType: UInt8
    /// The line (`RecorderLineSpec`) it writes into: its output continues the line's sequence numbers
    /// and timeline, and the line's filler stops while it is attached.
    public var line: String?

    public init(
        id: String, producer: String, destination: SocketAddress, ssrc: UInt32, payloadType: UInt8,
        line: String? = nil
    ) {
        self.line = line
        self.id = id
        self.producer = producer
        self.destination = destination
        self.ssrc = ssrc
        self.payloadType = payloadType
    }
}

/// A continuous RTP output to a process on this machine (a live stream's video or audio, read by
/// ffmpeg): the recorders attached to it one after the other (the share changes hands) continue one
/// stream, and while none is attached the line fills in: audio with Opus silence every 20 ms, video
/// with the last picture its last recorder's producer had (the key-frame cache), once a second, so
/// that the process's output runs on through a paused or stopped share.
public struct RecorderLineSpec: Sendable, Equatable {
    public var id: String
    /// The room whose worker runs it (the worker of the room's producers).
    public var router: String
    public var destination: SocketAddress
    public var ssrc: UInt32
    public var payloadType: UInt8
    public var kind: MediaTrackKind
    public var clockRate: UInt32

    public init(
        id: String, router: String, destination: SocketAddress, ssrc: UInt32, payloadType: UInt8,
        kind: MediaTrackKind, clockRate: UInt32
    ) {
        self.id = id
        self.router = router
        self.destination = destination
        self.ssrc = ssrc
        self.payloadType = payloadType
        self.kind = kind
        self.clockRate = clockRate
    }
}

/// One subscriber transport's share of its estimate (`MediaCommand.allocate`).
public struct TransportAllocation: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var consumer: String
        /// The highest layer it may forward (nil: no ceiling, audio or a single stream).
        public var ceiling: VideoLayer?
        /// Not forwarded to this viewer until a later allocation resumes it.
        public var paused: Bool

        public init(consumer: String, ceiling: VideoLayer?, paused: Bool) {
            self.consumer = consumer
            self.ceiling = ceiling
            self.paused = paused
        }
    }

    public var allocated: Double
    public var wanted: Double
    /// The estimate at which every track could step up to its top layer, key frames included (what
    /// probing aims for); 0: `wanted` with the allocator's margin.
    public var needed: Double
    public var entries: [Entry]

    public init(allocated: Double, wanted: Double, needed: Double = 0, entries: [Entry]) {
        self.allocated = allocated
        self.wanted = wanted
        self.needed = needed
        self.entries = entries
    }
}

/// One layer of a video producer as measured on arrival (`MediaEvent.layers`): a simulcast stream,
/// or the whole stream of a single-stream track.
public struct LayerStats: Sendable, Equatable {
    /// Bits per second over the last second (0: nothing arrived; the last rate it had is kept in
    /// `lastBitrate`).
    public var bitrate: Double
    public var lastBitrate: Double
    public var width: Int
    public var height: Int
    public var framesPerSecond: Int
    public var arriving: Bool
    /// The size of the last key frame in bytes (all its packets); 0 when none was measured.
    public var keyFrameBytes: Int
    /// The stream's temporal layers (VP8's TID) as measured over the last second, base first: what
    /// the stream costs and shows up to each of them. Empty when it has one temporal layer (or its
    /// payload says none).
    public var temporal: [TemporalLayerStats]

    public init(
        bitrate: Double, lastBitrate: Double, width: Int, height: Int, framesPerSecond: Int, arriving: Bool,
        keyFrameBytes: Int = 0, temporal: [TemporalLayerStats] = []
    ) {
        self.temporal = temporal
        self.keyFrameBytes = keyFrameBytes
        self.bitrate = bitrate
        self.lastBitrate = lastBitrate
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
        self.arriving = arriving
    }
}

/// One temporal layer of a stream, with every layer below it: its bits per second and frames per
/// second over the last second (a viewer given temporal layer `t` gets TID 0 through `t`).
public struct TemporalLayerStats: Sendable, Equatable {
    public var bitrate: Double
    public var framesPerSecond: Int

    public init(bitrate: Double, framesPerSecond: Int) {
        self.bitrate = bitrate
        self.framesPerSecond = framesPerSecond
    }
}

/// What a viewer asked for a track: its quality, and the size of the tile it shows a camera in
/// (0 by 0: none). The consumer maps it onto the producer's layers with `LayerChoice`.
public struct LayerPreference: Sendable, Equatable {
    public var quality: LayerChoice.Quality
    public var viewport: LayerChoice.Size?

    public init(quality: LayerChoice.Quality = .high, viewport: LayerChoice.Size? = nil) {
        self.quality = quality
        self.viewport = viewport
    }
}

/// One simulcast encoding a publisher declared and the answer accepted, bottom layer first.
public struct EncodingSpec: Sendable, Equatable {
    public var rid: String
    /// The size the publisher declared for it (`publish` `layers`); 0 when unknown.
    public var width: Int
    public var height: Int

    public init(rid: String, width: Int = 0, height: Int = 0) {
        self.rid = rid
        self.width = width
        self.height = height
    }
}

/// The peer's side of a transport, from its SDP.
public struct RemoteSpec: Sendable, Equatable {
    public var ufrag: String
    public var password: String
    /// `sha-256` digest of the peer's certificate.
    public var fingerprint: [UInt8]
    /// True when the server is the DTLS client (the peer answered `a=setup:passive`).
    public var dtlsClient: Bool
    /// For publishers: the ids of the mid and transport-wide sequence number header extensions in the
    /// peer's latest offer (the latter only when it negotiated transport-cc).
    public var midExtensionID: UInt8?
    public var transportWideCCExtensionID: UInt8?
    /// The peer's SCTP port when the description negotiated data channels (`a=sctp-port`); nil: none.
    public var sctpPort: UInt16?

    public init(
        ufrag: String, password: String, fingerprint: [UInt8], dtlsClient: Bool, midExtensionID: UInt8? = nil,
        transportWideCCExtensionID: UInt8? = nil, sctpPort: UInt16? = nil
    ) {
        self.sctpPort = sctpPort
        self.ufrag = ufrag
        self.password = password
        self.fingerprint = fingerprint
        self.dtlsClient = dtlsClient
        self.midExtensionID = midExtensionID
        self.transportWideCCExtensionID = transportWideCCExtensionID
    }
}

/// One WebRTC transport: a BUNDLE group's ICE-lite agent, DTLS association and SRTP contexts.
public struct TransportSpec: Sendable, Equatable {
    public var id: String
    /// The router (the room) it belongs to: its consumers are fed by producers of the same router only.
    public var router: String
    /// A label for metrics and logs, e.g. the participant id and `pub`/`sub`.
    public var label: String
    public var localUfrag: String
    public var localPassword: String
    public var remote: RemoteSpec?
    public var role: TransportRole

    public init(
        id: String, router: String, label: String, localUfrag: String, localPassword: String, remote: RemoteSpec?,
        role: TransportRole = .publisher
    ) {
        self.role = role
        self.id = id
        self.router = router
        self.label = label
        self.localUfrag = localUfrag
        self.localPassword = localPassword
        self.remote = remote
    }
}

public enum MediaTrackKind: Sendable, Equatable {
    case audio, video
}

/// A published track received on a publisher transport.
public struct ProducerSpec: Sendable, Equatable {
    public var id: String
    public var transport: String
    public var mid: String
    /// The track's source, for metrics (`camera`, `screen_share`, ...).
    public var source: String
    public var kind: MediaTrackKind
    /// The video encoding name (`VP8`, `VP9`, `H264`, `AV1`) for key-frame detection; nil for audio.
    public var videoCodec: String?
    public var clockRate: UInt32
    public var payloadType: UInt8
    public var rtxPayloadType: UInt8?
    public var ssrc: UInt32?
    public var rtxSSRC: UInt32?
    /// Header extension ids the publisher uses (both are forwarded, renumbered for each subscriber).
    public var audioLevelID: UInt8?
    public var absSendTimeID: UInt8?
    public var paused: Bool
    /// Simulcast: the accepted encodings, bottom first, told apart by the rid header extensions
    /// (`ssrc`/`rtxSSRC` are then unused). Empty or one: a single stream.
    public var encodings: [EncodingSpec]
    public var ridExtensionID: UInt8?
    public var repairedRidExtensionID: UInt8?
    /// AV1: the dependency descriptor's id; its frames' layers are then selected per viewer (SVC) and
    /// the extension is forwarded.
    public var dependencyDescriptorID: UInt8?

    public init(
        id: String, transport: String, mid: String, source: String, kind: MediaTrackKind, videoCodec: String?,
        clockRate: UInt32, payloadType: UInt8, rtxPayloadType: UInt8?, ssrc: UInt32?, rtxSSRC: UInt32?,
        audioLevelID: UInt8?, absSendTimeID: UInt8?, paused: Bool, encodings: [EncodingSpec] = [],
        ridExtensionID: UInt8? = nil, repairedRidExtensionID: UInt8? = nil, dependencyDescriptorID: UInt8? = nil
    ) {
        self.dependencyDescriptorID = dependencyDescriptorID
        self.encodings = encodings
        self.ridExtensionID = ridExtensionID
        self.repairedRidExtensionID = repairedRidExtensionID
        self.id = id
        self.transport = transport
        self.mid = mid
        self.source = source
        self.kind = kind
        self.videoCodec = videoCodec
        self.clockRate = clockRate
        self.payloadType = payloadType
        self.rtxPayloadType = rtxPayloadType
        self.ssrc = ssrc
        self.rtxSSRC = rtxSSRC
        self.audioLevelID = audioLevelID
        self.absSendTimeID = absSendTimeID
        self.paused = paused
    }
}

/// One subscriber's copy of a producer, sent on its subscriber transport.
public struct ConsumerSpec: Sendable, Equatable {
    public var id: String
    public var producer: String
    public var transport: String
    public var ssrc: UInt32
    public var rtxSSRC: UInt32?
    public var payloadType: UInt8
    /// The RTX payload type, when the subscriber accepted RTX; retransmissions are plain otherwise.
    public var rtxPayloadType: UInt8?
    /// Whether the subscriber sends NACKs we answer.
    public var nack: Bool
    public var audioLevelID: UInt8?
    public var absSendTimeID: UInt8?
    /// For a simulcast producer: the layer the viewer wants.
    public var preference: LayerPreference
    /// The id the subscriber's offer gave the AV1 dependency descriptor, forwarded renumbered.
    public var dependencyDescriptorID: UInt8?
    /// The SSRC outlives the consumer: it ends without an RTCP BYE, and the next consumer of the same
    /// SSRC on the transport continues its sequence numbers and timeline (a player's section that
    /// follows the room's share from one publisher to the next).
    public var continuous: Bool

    public init(
        id: String, producer: String, transport: String, ssrc: UInt32, rtxSSRC: UInt32?, payloadType: UInt8,
        rtxPayloadType: UInt8?, nack: Bool, audioLevelID: UInt8?, absSendTimeID: UInt8?,
        preference: LayerPreference = LayerPreference(), dependencyDescriptorID: UInt8? = nil, continuous: Bool = false
    ) {
        self.continuous = continuous
        self.preference = preference
        self.dependencyDescriptorID = dependencyDescriptorID
        self.id = id
        self.producer = producer
        self.transport = transport
        self.ssrc = ssrc
        self.rtxSSRC = rtxSSRC
        self.payloadType = payloadType
        self.rtxPayloadType = rtxPayloadType
        self.nack = nack
        self.audioLevelID = audioLevelID
        self.absSendTimeID = absSendTimeID
    }
}

/// What the worker reports back to the signaling thread.
public enum MediaEvent: Sendable, Equatable {
    public enum TransportState: String, Sendable {
        case connected, disconnected, failed, closed
    }

    case transportState(id: String, state: TransportState)
    /// Mean audio level (RFC 6464: dBov, 0 loudest, 127 silence) over the last half second of each
    /// audio producer whose packets carry the audio level extension, as one worker measured them
    /// (`MediaWorkers` sets `worker`: each worker reports only the producers it receives, so a
    /// report speaks for that worker's producers alone).
    case audioLevels([AudioLevel], worker: Int = 0)
    /// A publisher's track stopped without a word: its RTCP BYE, or neither RTP nor a sender report
    /// for `MediaConfiguration.captureTimeout` (checked for screen shares, which a crashed or
    /// abandoned capture leaves running).
    case producerEnded(id: String, reason: ProducerEndReason)
    /// The rids of a simulcast producer that some consumer wants now (the bottom one always), bottom
    /// first: the publisher may turn the others off. Reported when it changes.
    case layersWanted(producer: String, rids: [String])
    /// A subscriber transport's bandwidth estimate (transport-wide feedback or REMB) as the allocator
    /// may fill it, bits per second: a transport-wide estimate's `Allocator.transportWideShare`, a
    /// REMB viewer's as `REMBEstimate.forAllocation` reads it. Reported first, then when it moved by
    /// more than 10 %.
    case estimate(transport: String, bitrate: Double)
    /// Whether a subscriber connection's path is known to be narrow now (a delay overuse within the
    /// rate controller's `bottleneckMemory`): a congestion signal, without which the allocator keeps
    /// each track's layer. Reported when it changes.
    case bottleneck(transport: String, suspected: Bool)
    /// The layers of a video producer as they arrive, bottom first (each second, when a rate moved by
    /// more than 20 %, a frame rate or size changed, or a stream started or stopped).
    case layers(producer: String, [LayerStats])
    /// A data channel of a transport opened or closed (RFC 8832): the coordinator sends data on it.
    case dataChannel(transport: String, label: String, lossy: Bool, open: Bool)
    /// A text message a peer sent on one of its data channels.
    case dataMessage(transport: String, lossy: Bool, payload: [UInt8])
    /// Audio producers' rates are not reported: the allocator counts each at a fixed rate.
}

public enum ProducerEndReason: String, Sendable {
    /// Its sender said so (RTCP BYE); it fell silent; the node that received it (an edge of a room
    /// spread over nodes) left the cluster.
    case bye, inactive, nodeLost
}

public struct AudioLevel: Sendable, Equatable {
    public var producer: String
    public var dBov: Int

    public init(producer: String, dBov: Int) {
        self.producer = producer
        self.dBov = dBov
    }
}

/// The worker's settings.
public struct MediaConfiguration: Sendable {
    /// The UDP address to bind (port 0: ephemeral).
    public var bind: SocketAddress
    /// Addresses written into candidates; the bound address when empty. Never auto-detected.
    public var announced: [SocketAddress]
    /// The TCP address of the passive ICE-TCP candidate (RFC 6544; port 0: ephemeral); nil: no ICE-TCP.
    public var tcpBind: SocketAddress?
    /// ICE-TCP limits: connections at once, bytes queued toward one peer, and the seconds a connection
    /// may stay without a valid check, without any input, or with output the peer does not take.
    public var tcpLimits = TCPLimits()
    /// Testing only: drop this percentage of received and sent RTP/RTCP datagrams at random.
    public var lossPercent: Int
    /// The highest bitrate announced to publishers (REMB), per transport, bits per second.
    public var maxPublishBitrate: UInt64
    /// How long a screen share's SSRC may send neither RTP nor sender reports before the share is
    /// taken as ended (`capture_ended`). A live sender of a static screen still sends reports about
    /// every second.
    public var captureTimeout: Double
    /// The key-frame cache of each video stream (bytes, packets, seconds since its key frame); a
    /// bound of 0 turns it off.
    public var keyFrameCacheBytes: Int
    public var keyFrameCachePackets: Int
    public var keyFrameCacheSeconds: Double
    /// The rate a viewer started from a cache is sent it at, bits per second.
    public var replayBitrate: Int
    /// Seeds the engine's randomness (SSRCs, first sequence numbers) so a run repeats; nil: the system's.
    public var randomSeed: UInt64?

    public init(
        bind: SocketAddress, announced: [SocketAddress] = [], lossPercent: Int = 0,
        maxPublishBitrate: UInt64 = 10_000_000, captureTimeout: Double = 5, randomSeed: UInt64? = nil,
        keyFrameCacheBytes: Int = 4 << 20, keyFrameCachePackets: Int = 4096, keyFrameCacheSeconds: Double = 300,
        replayBitrate: Int = 8_000_000
    ) {
        self.keyFrameCacheBytes = keyFrameCacheBytes
        self.keyFrameCachePackets = keyFrameCachePackets
        self.keyFrameCacheSeconds = keyFrameCacheSeconds
        self.replayBitrate = replayBitrate
        self.randomSeed = randomSeed
        self.captureTimeout = captureTimeout
        self.bind = bind
        self.announced = announced
        self.lossPercent = lossPercent
        self.maxPublishBitrate = maxPublishBitrate
    }
}

/// The bounds that keep one ICE-TCP peer from costing the others (`MediaEngine+TCP`).
public struct TCPLimits: Sendable, Equatable {
    /// Connections open at once; one more is closed at accept (`limit`).
    public var maxConnections = 1024
    /// Bytes of frames waiting for one peer to read; what does not fit is dropped (`tcp_queue_full`).
    public var outputQueueBytes = 256 * 1024
    /// The kernel's send buffer per connection (SO_SNDBUF).
    public var kernelSendBuffer = 256 * 1024
    /// Seconds from accept to the first valid ICE check on the connection (`idle`).
    public var checkTimeout: Double = 10
    /// Seconds without a byte from the peer (a browser sends consent checks every 5 s or so: `idle`).
    public var idleTimeout: Double = 30
    /// Seconds output may wait without the peer taking a byte, and the kernel's sent bytes without an
    /// acknowledgement (TCP_USER_TIMEOUT), before the connection is closed (`stalled`).
    public var stallTimeout: Double = 5

    public init() {}
}
