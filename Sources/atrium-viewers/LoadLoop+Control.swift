internal import AtriumDTLS
internal import AtriumJSON
internal import AtriumLoadPeer
internal import AtriumUDP

/// The control requests, one JSON object per stdin line, each answered by one line, `{"ok": ...}` or
/// `{"error": "..."}`:
///
/// - `{"op":"open","id":"v1"}`: a new peer with its own UDP socket on 127.0.0.1; returns `port`,
///   `ufrag`, `pwd`, `fingerprint` for the local SDP (made by the caller).
/// - `{"op":"connect","id":"v1","ufrag":..,"pwd":..,"fingerprint":"sha-256 ..","setup":"active",
///   "controlling":true,"candidates":[{"ip":"127.0.0.1","port":N}]}`: the remote SDP's transport;
///   `setup` is this peer's own role (`active`: DTLS client).
/// - `{"op":"publish","id":"p","publisher":7,"streams":[{"source":0,"kind":"video","ssrc":..,"pt":96,
///   "fps":30,"packets":4,"size":1100,"mid":"0","midExt":1}]}`: send these streams once connected.
///   A simulcast layer adds `"rid":"q","ridExt":2` (the `rtp-stream-id` extension on every packet);
///   the layers of one camera are streams of their own (SSRC, source in the stamp) with one mid.
/// - `{"op":"scale","value":2.0}`: multiplies every video stream's packets per frame.
/// - `{"op":"stats"}`: every peer's state and counters, the publisher's sent counts, this process's
///   CPU seconds and the latency percentiles since the last `stats` (then reset); per peer its
///   streams by publisher and source, and `firstMedia`, when its first RTP packet arrived
///   (CLOCK_MONOTONIC nanoseconds, null before).
/// - `{"op":"close","id":"v1"}`, `{"op":"quit"}`.
extension LoadLoop {
    enum ControlError: Error, CustomStringConvertible {
        case bad(String)
        var description: String {
            switch self {
            case .bad(let s): s
            }
        }
    }

    func handle(_ line: String) -> (JSONValue, Bool) {
        do {
            let request = try JSONParser.parse(line)
            guard let op = request["op"]?.stringValue else { throw ControlError.bad("no op") }
            if op == "quit" { return (.object(["ok": .object([:])]), true) }
            return (.object(["ok": try perform(op, request)]), false)
        } catch {
            return (.object(["error": .string("\(error)")]), false)
        }
    }

    func perform(_ op: String, _ r: JSONValue) throws -> JSONValue {
        switch op {
        case "open": return try open(r)
        case "connect":
            let peer = try lookup(r)
            guard let fingerprint = r["fingerprint"]?.stringValue, let ufrag = r["ufrag"]?.stringValue,
                let pwd = r["pwd"]?.stringValue, let setup = r["setup"]?.stringValue,
                let role = DTLSRole(setup: setup)
            else { throw ControlError.bad("connect needs fingerprint, ufrag, pwd, setup") }
            var candidates: [SocketAddress] = []
            for c in r["candidates"]?.arrayValue ?? [] {
                guard let ip = c["ip"]?.stringValue, let port = c["port"]?.int64Value, let p = UInt16(exactly: port)
                else { continue }
                candidates.append(try SocketAddress(parsing: "\(ip):\(p)"))
            }
            try peer.connect(
                LoadPeer.Remote(
                    ufrag: ufrag, password: pwd, fingerprint: try DTLSFingerprint(sdp: fingerprint), dtlsRole: role,
                    controlling: r["controlling"]?.boolValue ?? true, candidates: candidates),
                now: MonotonicClock.nanoseconds())
            return .object([:])
        case "publish":
            let token = try token(r)
            var list: [PublisherStream] = []
            for s in r["streams"]?.arrayValue ?? [] {
                guard let source = s["source"]?.int64Value.flatMap(UInt8.init(exactly:)),
                    let kind = s["kind"]?.stringValue.flatMap(PublisherStream.Kind.init(rawValue:)),
                    let ssrc = s["ssrc"]?.int64Value.flatMap(UInt32.init(exactly:)),
                    let pt = s["pt"]?.int64Value.flatMap(UInt8.init(exactly:))
                else { throw ControlError.bad("a stream needs source, kind, ssrc, pt") }
                let ext = s["midExt"]?.int64Value.flatMap(UInt8.init(exactly:)).flatMap { id in
                    s["mid"]?.stringValue.map { (id: id, mid: $0) }
                }
                let ridExt = s["ridExt"]?.int64Value.flatMap(UInt8.init(exactly:)).flatMap { id in
                    s["rid"]?.stringValue.map { (id: id, rid: $0) }
                }
                list.append(
                    PublisherStream(
                        source: source, kind: kind, ssrc: ssrc, payloadType: pt,
                        framesPerSecond: bounded(s["fps"], 1...1000) ?? 30,
                        packetsPerFrame: Int(bounded(s["packets"], 1...1000) ?? 1),
                        packetSize: Int(bounded(s["size"], 80...1200) ?? 1000), midExtension: ext,
                        ridExtension: ridExt))
            }
            streams[token] = list
            if !publishing.contains(token) { publishing.append(token) }
            publisherIDs[token] = r["publisher"]?.int64Value.flatMap(UInt32.init(exactly:)) ?? 0
            return .object([:])
        case "scale":
            packetScale = bounded(r["value"], 0.01...1000) ?? 1
            return .object([:])
        case "stats": return stats()
        case "close":
            let token = try token(r)
            if let peer = peers[token] { try? poller.deregister(peer.socket) }
            peers[token] = nil
            streams[token] = nil
            publishing.removeAll { $0 == token }
            return .object([:])
        default: throw ControlError.bad("unknown op \(op)")
        }
    }

    func open(_ r: JSONValue) throws -> JSONValue {
        guard let id = r["id"]?.stringValue, names[id] == nil else { throw ControlError.bad("open needs a new id") }
        seed &+= 1
        let ufrag = "lp\(seed)x\(MonotonicClock.nanoseconds() % 100_000)"
        let pwd = "loadpeerpassword\(seed)q\(MonotonicClock.nanoseconds() % 1_000_000_000)"
        let peer = try LoadPeer(certificate: certificate, ufrag: ufrag, password: pwd, seed: seed)
        let token = peers.count
        try poller.register(peer.socket, token: UInt64(token))
        peers.append(peer)
        names[id] = token
        return .object([
            "port": .int(Int64(peer.socket.localAddress.port)), "ufrag": .string(ufrag), "pwd": .string(pwd),
            "fingerprint": .string(certificate.fingerprint.description),
        ])
    }

    func token(_ r: JSONValue) throws -> Int {
        guard let id = r["id"]?.stringValue, let token = names[id], peers[token] != nil else {
            throw ControlError.bad("unknown peer id")
        }
        return token
    }

    func lookup(_ r: JSONValue) throws -> LoadPeer {
        guard let peer = peers[try token(r)] else { throw ControlError.bad("unknown peer id") }
        return peer
    }

    /// A number clamped into `range` (so that no conversion to an integer can trap); nil when absent
    /// or not a number.
    func bounded(_ v: JSONValue?, _ range: ClosedRange<Double>) -> Double? {
        let d: Double
        switch v {
        case .int(let i)?: d = Double(i)
        case .double(let x)? where x.isFinite: d = x
        default: return nil
        }
        return min(max(d, range.lowerBound), range.upperBound)
    }

    func stats() -> JSONValue {
        var out = JSONObject()
        for (id, token) in names.sorted(by: { $0.key < $1.key }) {
            guard let peer = peers[token] else { continue }
            let c = peer.counters
            var sources: [JSONValue] = []
            for s in c.sources {
                sources.append(
                    .object([
                        "source": .int(Int64(s.source)), "publisher": .int(Int64(s.publisher)),
                        "packets": .int(Int64(s.packets)),
                        "bytes": .int(Int64(s.bytes)), "lost": .int(Int64(s.lost)),
                        "repeated": .int(Int64(s.repeated)),
                        "first": .int(Int64(s.firstSequence)), "highest": .int(Int64(s.highestSequence)),
                    ]))
            }
            let sent: [JSONValue] = (streams[token] ?? []).map {
                .object([
                    "source": .int(Int64($0.source)), "ssrc": .int(Int64($0.ssrc)),
                    "packets": .int(Int64($0.sentPackets)), "keyFrames": .int(Int64($0.keyFrames)),
                ])
            }
            out[id] = .object([
                "state": .string(peer.state.rawValue), "failure": peer.failure.map(JSONValue.string) ?? .null,
                "packets": .int(Int64(c.packets)), "bytes": .int(Int64(c.bytes)),
                "undecryptable": .int(Int64(c.undecryptable)), "unstamped": .int(Int64(c.unstamped)),
                "rtcp": .int(Int64(c.rtcp)), "sources": .array(sources), "sent": .array(sent),
                "firstMedia": peer.firstMediaNanoseconds.map { .int(Int64(clamping: $0)) } ?? .null,
            ])
        }
        let p50 = latency.quantile(0.5)
        let p99 = latency.quantile(0.99)
        let count = latency.count
        latency.reset()
        return .object([
            "cpu": .double(processCPUSeconds()), "now": .int(Int64(MonotonicClock.nanoseconds())),
            "latency": .object([
                "count": .int(Int64(count)), "p50": p50.map(JSONValue.double) ?? .null,
                "p99": p99.map(JSONValue.double) ?? .null,
            ]),
            "peers": .object(out),
        ])
    }
}
