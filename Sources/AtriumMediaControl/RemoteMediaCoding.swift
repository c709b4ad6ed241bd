import AtriumForwarding
public import AtriumJSON
public import AtriumMedia

/// The media commands and events that cross between a room's owner node and an edge node, as JSON
/// (docs/cluster.md): what an edge's media plane runs for viewers placed there (their transports,
/// consumers, allocations, data; the pipe producers fed by the relay link) and what it reports back
/// of them. A pipe producer's pipe is the relay link's: the edge finds its own by the tag and room.
/// Decoding checks every field and its range: a message from another node is outside input too.
public enum RemoteMediaCoding {
    public struct DecodeError: Error, Equatable, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
        init(_ message: String) { self.message = message }
    }

    // MARK: - Commands

    /// The command as it crosses, or nil for one that never does (recorders and pipes between the
    /// owner's own workers stay on the owner; a publisher's tracks on an edge are piped up to it).
    /// `relayed`: whether a pipe is one into a relay link.
    public static func encode(_ c: MediaCommand, relayed: (PipeLink) -> Bool) -> JSONValue? {
        switch c {
        case .openTransport(let t): return op("openTransport", ["transport": transport(t)])
        case .updateTransport(let id, let remote, let ufrag, let password):
            return op(
                "updateTransport",
                [
                    "id": .string(id), "remote": self.remote(remote), "ufrag": .string(ufrag),
                    "password": .string(password),
                ])
        case .closeTransport(let id): return op("closeTransport", ["id": .string(id)])
        case .closeRouter(let id): return op("closeRouter", ["id": .string(id)])
        case .allocate(let t, let a): return op("allocate", ["transport": .string(t), "allocation": allocation(a)])
        case .addConsumer(let s): return op("addConsumer", ["consumer": consumer(s)])
        case .setPreference(let id, let p):
            return op("setPreference", ["consumer": .string(id), "preference": preference(p)])
        case .closeConsumer(let id): return op("closeConsumer", ["id": .string(id)])
        case .sendData(let t, let lossy, let payload):
            return op(
                "sendData",
                [
                    "transport": .string(t), "lossy": .bool(lossy),
                    "payload": .string(String(decoding: payload, as: UTF8.self)),
                ])
        case .addPipeProducer(let spec, let router, let link, let tag):
            guard relayed(link) else { return nil }
            return op(
                "addPipeProducer", ["producer": producer(spec), "router": .string(router), "tag": .int(Int64(tag))])
        case .pauseProducer(let id, let paused):
            return op("pauseProducer", ["id": .string(id), "paused": .bool(paused)])
        case .closeProducer(let id): return op("closeProducer", ["id": .string(id)])
        case .addProducer(let spec): return op("addProducer", ["producer": producer(spec)])
        case .reject(let t, let mids, let ssrcs):
            return op(
                "reject",
                [
                    "transport": .string(t), "mids": .array(mids.sorted().map { .string($0) }),
                    "ssrcs": .array(ssrcs.sorted().map { .int(Int64($0)) }),
                ])
        case .addRecorder, .closeRecorder, .openRecorderLine, .closeRecorderLine, .pipeProducer,
            .unpipe, .restate:
            return nil
        }
    }

    /// A command from the owner; `link` gives the edge's pipe for a pipe producer's tag and room (nil:
    /// none can be made, refused).
    public static func decode(_ v: JSONValue, link: (UInt32, String) -> PipeLink?) throws(DecodeError)
        -> MediaCommand
    {
        let r = Fields(v, "command")
        switch try r.string("op") {
        case "openTransport": return .openTransport(try transport(r.object("transport")))
        case "updateTransport":
            return .updateTransport(
                id: try r.string("id"), remote: try remote(r.object("remote")), localUfrag: try r.string("ufrag"),
                localPassword: try r.string("password"))
        case "closeTransport": return .closeTransport(id: try r.string("id"))
        case "closeRouter": return .closeRouter(id: try r.string("id"))
        case "allocate": return .allocate(transport: try r.string("transport"), try allocation(r.object("allocation")))
        case "addConsumer": return .addConsumer(try consumer(r.object("consumer")))
        case "setPreference":
            return .setPreference(consumer: try r.string("consumer"), try preference(r.object("preference")))
        case "closeConsumer": return .closeConsumer(id: try r.string("id"))
        case "sendData":
            return .sendData(
                transport: try r.string("transport"), lossy: try r.bool("lossy"),
                payload: Array(try r.string("payload").utf8))
        case "addPipeProducer":
            let (tag, router) = (try r.int("tag", UInt32.self), try r.string("router"))
            guard let l = link(tag, router) else { throw DecodeError("command: no pipe for \(tag) in \(router)") }
            return .addPipeProducer(try producer(r.object("producer")), router: router, link: l, tag: tag)
        case "pauseProducer": return .pauseProducer(id: try r.string("id"), paused: try r.bool("paused"))
        case "closeProducer": return .closeProducer(id: try r.string("id"))
        case "addProducer": return .addProducer(try producer(r.object("producer")))
        case "reject":
            var mids: Set<String> = []
            for m in try r.array("mids") {
                guard let mid = m.stringValue else { throw DecodeError("reject: a mid that is not a string") }
                mids.insert(mid)
            }
            var ssrcs: Set<UInt32> = []
            for v in try r.array("ssrcs") {
                guard let n = v.int64Value, let ssrc = UInt32(exactly: n) else {
                    throw DecodeError("reject: an SSRC out of range")
                }
                ssrcs.insert(ssrc)
            }
            return .reject(transport: try r.string("transport"), mids: mids, ssrcs: ssrcs)
        case let other: throw DecodeError("command: unknown op \(other)")
        }
    }

    // MARK: - Events

    /// An edge's event about what it runs for the owner: its viewers' transports, and the tracks of
    /// a publisher placed there (their layers, levels and end are measured there, at home).
    public static func encode(_ e: MediaEvent) -> JSONValue? {
        switch e {
        case .transportState(let id, let state):
            return op("transportState", ["id": .string(id), "state": .string(state.rawValue)])
        case .estimate(let t, let bitrate):
            guard bitrate.isFinite else { return nil }
            return op("estimate", ["transport": .string(t), "bitrate": .double(bitrate)])
        case .bottleneck(let t, let suspected):
            return op("bottleneck", ["transport": .string(t), "suspected": .bool(suspected)])
        case .dataChannel(let t, let label, let lossy, let open):
            return op(
                "dataChannel",
                ["transport": .string(t), "label": .string(label), "lossy": .bool(lossy), "open": .bool(open)])
        case .dataMessage(let t, let lossy, let payload):
            return op(
                "dataMessage",
                [
                    "transport": .string(t), "lossy": .bool(lossy),
                    "payload": .string(String(decoding: payload, as: UTF8.self)),
                ])
        case .audioLevels(let levels, let worker):
            return op(
                "audioLevels",
                [
                    "worker": .int(Int64(worker)),
                    "levels": .array(
                        levels.map { .object(["producer": .string($0.producer), "dBov": .int(Int64($0.dBov))]) }),
                ])
        case .producerEnded(let id, let reason):
            return op("producerEnded", ["id": .string(id), "reason": .string(reason.rawValue)])
        case .layersWanted(let id, let rids):
            return op("layersWanted", ["producer": .string(id), "rids": .array(rids.map { .string($0) })])
        case .layers(let id, let layers):
            guard
                layers.allSatisfy({ l in
                    l.bitrate.isFinite && l.lastBitrate.isFinite && l.temporal.allSatisfy(\.bitrate.isFinite)
                })
            else { return nil }
            return op("layers", ["producer": .string(id), "layers": .array(layers.map(layer))])
        }
    }

    static func layer(_ l: LayerStats) -> JSONValue {
        .object([
            "bitrate": .double(l.bitrate), "lastBitrate": .double(l.lastBitrate), "width": .int(Int64(l.width)),
            "height": .int(Int64(l.height)), "framesPerSecond": .int(Int64(l.framesPerSecond)),
            "arriving": .bool(l.arriving), "keyFrameBytes": .int(Int64(l.keyFrameBytes)),
            "temporal": .array(
                l.temporal.map {
                    .object(["bitrate": .double($0.bitrate), "framesPerSecond": .int(Int64($0.framesPerSecond))])
                }),
        ])
    }

    static func layer(_ r: Fields) throws(DecodeError) -> LayerStats {
        let rates = (try r.double("bitrate"), try r.double("lastBitrate"))
        guard rates.0 >= 0, rates.0 <= maxRate, rates.1 >= 0, rates.1 <= maxRate else {
            throw DecodeError("layers: a rate out of range")
        }
        var temporal: [TemporalLayerStats] = []
        for t in try r.array("temporal") {
            let f = Fields(t, "temporal layer")
            let b = try f.double("bitrate")
            guard b >= 0, b <= maxRate else { throw DecodeError("layers: a rate out of range") }
            temporal.append(
                TemporalLayerStats(bitrate: b, framesPerSecond: try f.int("framesPerSecond", UInt16.self, as: Int.self))
            )
        }
        guard temporal.count <= 8 else { throw DecodeError("layers: more than 8 temporal layers") }
        return LayerStats(
            bitrate: rates.0, lastBitrate: rates.1, width: try r.int("width", UInt16.self, as: Int.self),
            height: try r.int("height", UInt16.self, as: Int.self),
            framesPerSecond: try r.int("framesPerSecond", UInt16.self, as: Int.self), arriving: try r.bool("arriving"),
            keyFrameBytes: try r.int("keyFrameBytes", UInt32.self, as: Int.self), temporal: temporal)
    }

    public static func decodeEvent(_ v: JSONValue) throws(DecodeError) -> MediaEvent {
        let r = Fields(v, "event")
        switch try r.string("op") {
        case "transportState":
            let s = try r.string("state")
            guard let state = MediaEvent.TransportState(rawValue: s) else { throw DecodeError("event: state \(s)") }
            return .transportState(id: try r.string("id"), state: state)
        case "estimate":
            let b = try r.double("bitrate")
            guard b >= 0, b <= maxRate else { throw DecodeError("event: an estimate out of range") }
            return .estimate(transport: try r.string("transport"), bitrate: b)
        case "bottleneck": return .bottleneck(transport: try r.string("transport"), suspected: try r.bool("suspected"))
        case "dataChannel":
            return .dataChannel(
                transport: try r.string("transport"), label: try r.string("label"), lossy: try r.bool("lossy"),
                open: try r.bool("open"))
        case "dataMessage":
            return .dataMessage(
                transport: try r.string("transport"), lossy: try r.bool("lossy"),
                payload: Array(try r.string("payload").utf8))
        case "audioLevels":
            var levels: [AudioLevel] = []
            for l in try r.array("levels") {
                let f = Fields(l, "level")
                levels.append(
                    AudioLevel(producer: try f.string("producer"), dBov: try f.int("dBov", UInt8.self, as: Int.self)))
            }
            return .audioLevels(levels, worker: try r.int("worker", UInt16.self, as: Int.self))
        case "producerEnded":
            let s = try r.string("reason")
            guard let reason = ProducerEndReason(rawValue: s) else { throw DecodeError("event: reason \(s)") }
            return .producerEnded(id: try r.string("id"), reason: reason)
        case "layersWanted":
            var rids: [String] = []
            for v in try r.array("rids") {
                guard let rid = v.stringValue else { throw DecodeError("event: a rid that is not a string") }
                rids.append(rid)
            }
            return .layersWanted(producer: try r.string("producer"), rids: rids)
        case "layers":
            var layers: [LayerStats] = []
            for l in try r.array("layers") { layers.append(try layer(Fields(l, "layer"))) }
            guard layers.count <= 8 else { throw DecodeError("event: more than 8 layers") }
            return .layers(producer: try r.string("producer"), layers)
        case let other: throw DecodeError("event: unknown op \(other)")
        }
    }

    /// The highest rate a message may carry (bits per second): what the engine may turn into an
    /// integer later stays far from overflowing.
    static let maxRate = 1e12

    // MARK: - Specs

    static func op(_ name: String, _ fields: JSONObject) -> JSONValue {
        var o: JSONObject = ["op": .string(name)]
        for (k, v) in fields { o[k] = v }
        return .object(o)
    }

    static func optional(_ v: (some FixedWidthInteger)?) -> JSONValue { v.map { .int(Int64($0)) } ?? .null }

    static func transport(_ t: TransportSpec) -> JSONValue {
        .object([
            "id": .string(t.id), "router": .string(t.router), "label": .string(t.label), "ufrag": .string(t.localUfrag),
            "password": .string(t.localPassword), "remote": t.remote.map(remote) ?? .null,
            "role": .string(t.role == .publisher ? "publisher" : "subscriber"),
        ])
    }

    static func transport(_ r: Fields) throws(DecodeError) -> TransportSpec {
        let role = try r.string("role")
        guard role == "publisher" || role == "subscriber" else { throw DecodeError("transport: role \(role)") }
        return TransportSpec(
            id: try r.string("id"), router: try r.string("router"), label: try r.string("label"),
            localUfrag: try r.string("ufrag"), localPassword: try r.string("password"),
            remote: try r.isNull("remote") ? nil : remote(r.object("remote")),
            role: role == "publisher" ? .publisher : .subscriber)
    }

    static func remote(_ s: RemoteSpec) -> JSONValue {
        .object([
            "ufrag": .string(s.ufrag), "password": .string(s.password),
            "fingerprint": .string(ClusterMediaPlane.hex(s.fingerprint)),
            "dtlsClient": .bool(s.dtlsClient), "midExtensionID": optional(s.midExtensionID),
            "transportWideCCExtensionID": optional(s.transportWideCCExtensionID), "sctpPort": optional(s.sctpPort),
        ])
    }

    static func remote(_ r: Fields) throws(DecodeError) -> RemoteSpec {
        guard let bytes = ClusterMediaPlane.bytes(hex: try r.string("fingerprint")), bytes.count == 32 else {
            throw DecodeError("remote: a fingerprint of 32 bytes in hex")
        }
        return RemoteSpec(
            ufrag: try r.string("ufrag"), password: try r.string("password"), fingerprint: bytes,
            dtlsClient: try r.bool("dtlsClient"), midExtensionID: try r.optionalInt("midExtensionID", UInt8.self),
            transportWideCCExtensionID: try r.optionalInt("transportWideCCExtensionID", UInt8.self),
            sctpPort: try r.optionalInt("sctpPort", UInt16.self))
    }

    static func preference(_ p: LayerPreference) -> JSONValue {
        .object([
            "quality": .string(p.quality.rawValue),
            "viewport": p.viewport.map { .object(["width": .int(Int64($0.width)), "height": .int(Int64($0.height))]) }
                ?? .null,
        ])
    }

    static func preference(_ r: Fields) throws(DecodeError) -> LayerPreference {
        let q = try r.string("quality")
        guard let quality = LayerChoice.Quality(rawValue: q) else { throw DecodeError("preference: quality \(q)") }
        var viewport: LayerChoice.Size?
        if !(try r.isNull("viewport")) {
            let v = try r.object("viewport")
            viewport = LayerChoice.Size(
                width: try v.int("width", UInt16.self, as: Int.self),
                height: try v.int("height", UInt16.self, as: Int.self))
        }
        return LayerPreference(quality: quality, viewport: viewport)
    }

    static func consumer(_ s: ConsumerSpec) -> JSONValue {
        .object([
            "id": .string(s.id), "producer": .string(s.producer), "transport": .string(s.transport),
            "ssrc": .int(Int64(s.ssrc)), "rtxSSRC": optional(s.rtxSSRC), "payloadType": .int(Int64(s.payloadType)),
            "rtxPayloadType": optional(s.rtxPayloadType), "nack": .bool(s.nack),
            "audioLevelID": optional(s.audioLevelID),
            "absSendTimeID": optional(s.absSendTimeID), "preference": preference(s.preference),
            "dependencyDescriptorID": optional(s.dependencyDescriptorID), "continuous": .bool(s.continuous),
        ])
    }

    static func consumer(_ r: Fields) throws(DecodeError) -> ConsumerSpec {
        ConsumerSpec(
            id: try r.string("id"), producer: try r.string("producer"), transport: try r.string("transport"),
            ssrc: try r.int("ssrc", UInt32.self), rtxSSRC: try r.optionalInt("rtxSSRC", UInt32.self),
            payloadType: try r.int("payloadType", UInt8.self),
            rtxPayloadType: try r.optionalInt("rtxPayloadType", UInt8.self),
            nack: try r.bool("nack"), audioLevelID: try r.optionalInt("audioLevelID", UInt8.self),
            absSendTimeID: try r.optionalInt("absSendTimeID", UInt8.self),
            preference: try preference(r.object("preference")),
            dependencyDescriptorID: try r.optionalInt("dependencyDescriptorID", UInt8.self),
            continuous: try r.bool("continuous"))
    }

    static func producer(_ s: ProducerSpec) -> JSONValue {
        .object([
            "id": .string(s.id), "transport": .string(s.transport), "mid": .string(s.mid), "source": .string(s.source),
            "kind": .string(s.kind == .audio ? "audio" : "video"),
            "videoCodec": s.videoCodec.map { .string($0) } ?? .null,
            "clockRate": .int(Int64(s.clockRate)), "payloadType": .int(Int64(s.payloadType)),
            "rtxPayloadType": optional(s.rtxPayloadType), "ssrc": optional(s.ssrc), "rtxSSRC": optional(s.rtxSSRC),
            "audioLevelID": optional(s.audioLevelID), "absSendTimeID": optional(s.absSendTimeID),
            "paused": .bool(s.paused),
            "encodings": .array(
                s.encodings.map {
                    .object(["rid": .string($0.rid), "width": .int(Int64($0.width)), "height": .int(Int64($0.height))])
                }),
            "ridExtensionID": optional(s.ridExtensionID), "repairedRidExtensionID": optional(s.repairedRidExtensionID),
            "dependencyDescriptorID": optional(s.dependencyDescriptorID),
        ])
    }

    static func producer(_ r: Fields) throws(DecodeError) -> ProducerSpec {
        let kind = try r.string("kind")
        guard kind == "audio" || kind == "video" else { throw DecodeError("producer: kind \(kind)") }
        var encodings: [EncodingSpec] = []
        for e in try r.array("encodings") {
            let f = Fields(e, "encoding")
            encodings.append(
                EncodingSpec(
                    rid: try f.string("rid"), width: try f.int("width", UInt16.self, as: Int.self),
                    height: try f.int("height", UInt16.self, as: Int.self)))
        }
        guard encodings.count <= 8 else { throw DecodeError("producer: more than 8 encodings") }
        return ProducerSpec(
            id: try r.string("id"), transport: try r.string("transport"), mid: try r.string("mid"),
            source: try r.string("source"), kind: kind == "audio" ? .audio : .video,
            videoCodec: try r.isNull("videoCodec") ? nil : try r.string("videoCodec"),
            clockRate: try r.int("clockRate", UInt32.self), payloadType: try r.int("payloadType", UInt8.self),
            rtxPayloadType: try r.optionalInt("rtxPayloadType", UInt8.self),
            ssrc: try r.optionalInt("ssrc", UInt32.self),
            rtxSSRC: try r.optionalInt("rtxSSRC", UInt32.self),
            audioLevelID: try r.optionalInt("audioLevelID", UInt8.self),
            absSendTimeID: try r.optionalInt("absSendTimeID", UInt8.self), paused: try r.bool("paused"),
            encodings: encodings, ridExtensionID: try r.optionalInt("ridExtensionID", UInt8.self),
            repairedRidExtensionID: try r.optionalInt("repairedRidExtensionID", UInt8.self),
            dependencyDescriptorID: try r.optionalInt("dependencyDescriptorID", UInt8.self))
    }

    static func allocation(_ a: TransportAllocation) -> JSONValue {
        .object([
            "allocated": .double(a.allocated.isFinite ? a.allocated : 0),
            "wanted": .double(a.wanted.isFinite ? a.wanted : 0),
            "needed": .double(a.needed.isFinite ? a.needed : 0),
            "entries": .array(
                a.entries.map { e in
                    .object([
                        "consumer": .string(e.consumer), "paused": .bool(e.paused),
                        "ceiling": e.ceiling.map {
                            .object(["spatial": .int(Int64($0.spatial)), "temporal": .int(Int64($0.temporal))])
                        } ?? .null,
                    ])
                }),
        ])
    }

    static func allocation(_ r: Fields) throws(DecodeError) -> TransportAllocation {
        var entries: [TransportAllocation.Entry] = []
        for e in try r.array("entries") {
            let f = Fields(e, "entry")
            var ceiling: VideoLayer?
            if !(try f.isNull("ceiling")) {
                let c = try f.object("ceiling")
                ceiling = VideoLayer(
                    spatial: try c.int("spatial", UInt8.self, as: Int.self),
                    temporal: try c.int("temporal", UInt8.self, as: Int.self))
            }
            entries.append(
                TransportAllocation.Entry(
                    consumer: try f.string("consumer"), ceiling: ceiling, paused: try f.bool("paused")))
        }
        let figures = (try r.double("allocated"), try r.double("wanted"), try r.double("needed"))
        guard [figures.0, figures.1, figures.2].allSatisfy({ $0 >= 0 && $0 <= maxRate }) else {
            throw DecodeError("allocation: a rate out of range")
        }
        return TransportAllocation(allocated: figures.0, wanted: figures.1, needed: figures.2, entries: entries)
    }
}

/// An object's fields, read with their type and range checked; errors name the field.
struct Fields {
    let value: JSONValue
    let what: String

    init(_ value: JSONValue, _ what: String) {
        self.value = value
        self.what = what
    }

    func field(_ key: String) throws(RemoteMediaCoding.DecodeError) -> JSONValue {
        guard value.objectValue != nil else { throw .init("\(what): not an object") }
        guard let v = value[key] else { throw .init("\(what): no \(key)") }
        return v
    }

    func string(_ key: String) throws(RemoteMediaCoding.DecodeError) -> String {
        guard let s = try field(key).stringValue else { throw .init("\(what): \(key) is not a string") }
        return s
    }

    func bool(_ key: String) throws(RemoteMediaCoding.DecodeError) -> Bool {
        guard let b = try field(key).boolValue else { throw .init("\(what): \(key) is not a boolean") }
        return b
    }

    func double(_ key: String) throws(RemoteMediaCoding.DecodeError) -> Double {
        let v = try field(key)
        if case .double(let d) = v, d.isFinite { return d }
        if case .int(let i) = v { return Double(i) }
        throw .init("\(what): \(key) is not a number")
    }

    func int<T: FixedWidthInteger>(_ key: String, _: T.Type) throws(RemoteMediaCoding.DecodeError) -> T {
        guard let i = try field(key).int64Value, let t = T(exactly: i) else {
            throw .init("\(what): \(key) is not an integer in range for \(T.self)")
        }
        return t
    }

    /// A value in `T`'s range, handed out as `U` (an `Int` field with a narrower range).
    func int<T: FixedWidthInteger, U: FixedWidthInteger>(_ key: String, _ range: T.Type, as: U.Type)
        throws(RemoteMediaCoding.DecodeError) -> U
    {
        U(try int(key, range))
    }

    func optionalInt<T: FixedWidthInteger>(_ key: String, _ t: T.Type) throws(RemoteMediaCoding.DecodeError) -> T? {
        try isNull(key) ? nil : try int(key, t)
    }

    func isNull(_ key: String) throws(RemoteMediaCoding.DecodeError) -> Bool {
        guard value.objectValue != nil else { throw .init("\(what): not an object") }
        return value[key] == nil || value[key] == .null
    }

    func object(_ key: String) throws(RemoteMediaCoding.DecodeError) -> Fields {
        let v = try field(key)
        guard v.objectValue != nil else { throw .init("\(what): \(key) is not an object") }
        return Fields(v, key)
    }

    func array(_ key: String) throws(RemoteMediaCoding.DecodeError) -> [JSONValue] {
        guard let a = try field(key).arrayValue else { throw .init("\(what): \(key) is not an array") }
        return a
    }
}
