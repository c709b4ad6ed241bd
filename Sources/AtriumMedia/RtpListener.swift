import AtriumRTP

/// The producers of one transport by what names a packet's stream (mediasoup's RtpListener): SSRC and
/// RTX SSRC, else the mid header extension and, for simulcast, the rid or repaired-rid one (the SSRC
/// is learned then); and the mids and SSRCs refused by an answer or left by an ended track, so that
/// their packets are counted as such. Owned by the worker thread.
final class RtpListener {
    private(set) var producers: [Producer] = []
    private(set) var producersBySSRC: [UInt32: Producer] = [:] {
        didSet { producerRefs = producersBySSRC.mapValues(Borrowed.init) }
    }
    private(set) var producersByRTXSSRC: [UInt32: Producer] = [:] {
        didSet { rtxProducerRefs = producersByRTXSSRC.mapValues(Borrowed.init) }
    }
    /// The two maps above for the packet path (`Borrowed`), rebuilt when they change (a new SSRC).
    private(set) var producerRefs: [UInt32: Borrowed<Producer>] = [:]
    private(set) var rtxProducerRefs: [UInt32: Borrowed<Producer>] = [:]
    private(set) var producersByMid: [String: Producer] = [:]
    private(set) var rejectedMids: Set<String> = []
    private(set) var rejectedSSRCs: Set<UInt32> = []
    private(set) var endedMids: Set<String> = []
    private(set) var endedSSRCs: Set<UInt32> = []
    /// The streams (rid, SSRC, RTX SSRC) the last ended producer of each mid had learned, for its successor.
    private(set) var endedStreamsByMid: [String: [(rid: String?, ssrc: UInt32?, rtx: UInt32?)]] = [:]

    /// What a packet was found to belong to, or why it is dropped.
    enum Lookup {
        case found(Borrowed<Producer>, stream: Int, rtx: Bool)
        case dropped(DropReason)
    }

    func add(_ p: Producer) {
        // A transceiver given a new track (RTCRtpSender.replaceTrack) keeps its SSRCs, and Chromium no
        // longer sends the mid extension on them. When the offer does not list them (simulcast: rids
        // instead of a=ssrc), the new producer of the mid takes over the ended one's.
        // Streams match by rid (a single stream: the one of the ended producer).
        if p.streams.allSatisfy({ $0.ssrc == nil && $0.rtxSSRC == nil }),
            let old = endedStreamsByMid.removeValue(forKey: p.spec.mid)
        {
            for k in p.streams.indices {
                guard
                    let o = p.streams.count == 1 && old.count == 1
                        ? old.first : old.first(where: { $0.rid == p.streams[k].rid })
                else { continue }
                p.streams[k].ssrc = o.ssrc
                p.streams[k].rtxSSRC = o.rtx
                for s in [o.ssrc, o.rtx].compactMap({ $0 }) { endedSSRCs.remove(s) }
            }
        }
        producers.append(p)
        producersByMid[p.spec.mid] = p
        for stream in p.streams {
            if let s = stream.ssrc { producersBySSRC[s] = p }
            if let s = stream.rtxSSRC { producersByRTXSSRC[s] = p }
        }
        rejectedMids.remove(p.spec.mid)
        endedMids.remove(p.spec.mid)
    }

    func remove(_ p: Producer) {
        producers.removeAll { $0 === p }
        if producersByMid[p.spec.mid] === p { producersByMid[p.spec.mid] = nil }
        producersBySSRC = producersBySSRC.filter { $0.value !== p }
        producersByRTXSSRC = producersByRTXSSRC.filter { $0.value !== p }
        endedMids.insert(p.spec.mid)
        for stream in p.streams {
            if let s = stream.ssrc { endedSSRCs.insert(s) }
            if let s = stream.rtxSSRC { endedSSRCs.insert(s) }
        }
        let learned = p.streams.filter { $0.ssrc != nil || $0.rtxSSRC != nil }
        if !learned.isEmpty { endedStreamsByMid[p.spec.mid] = learned.map { ($0.rid, $0.ssrc, $0.rtxSSRC) } }
    }

    /// The mids and SSRCs an answer refused: their packets are dropped as `rejected`.
    func reject(mids: Set<String>, ssrcs: Set<UInt32>) {
        rejectedMids.formUnion(mids)
        rejectedSSRCs.formUnion(ssrcs)
    }

    /// The producer by one of its SSRCs (an RTCP report names it).
    func producer(ssrc: UInt32) -> Producer? { producersBySSRC[ssrc] }

    /// The producer and stream a packet belongs to by its SSRC, and whether it is RTX; or the drop
    /// of an SSRC ended or refused; nil for an SSRC not known yet (`bind`). Borrowed: a returned
    /// class reference would be retained.
    func find(_ header: RTPHeader) -> Lookup? {
        if let ref = producerRefs[header.ssrc] ?? rtxProducerRefs[header.ssrc],
            let (k, rtx) = ref.with({ $0.stream(ssrc: header.ssrc) })
        {
            return .found(ref, stream: k, rtx: rtx)
        }
        if endedSSRCs.contains(header.ssrc) { return .dropped(.ended) }
        if rejectedSSRCs.contains(header.ssrc) { return .dropped(.rejected) }
        return nil
    }

    /// A packet of an SSRC not known yet: its producer by the mid header extension (`midExtensionID`)
    /// and, for simulcast, the rid or repaired-rid one, learning the SSRC. A stream the answer did not
    /// accept (an unknown rid, a second stream on a single-stream section) is dropped. `packet` is
    /// the whole packet.
    func bind(_ header: RTPHeader, in packet: [UInt8], midExtensionID: UInt8?) -> Lookup {
        guard let id = midExtensionID, let range = header.extensionValueRange(id: id, in: packet) else {
            return .dropped(.unknownSSRC)
        }
        let mid = String(decoding: packet[range], as: UTF8.self)
        guard let p = producersByMid[mid] else {
            return .dropped(endedMids.contains(mid) ? .ended : rejectedMids.contains(mid) ? .rejected : .unknownSSRC)
        }
        let rtx = header.payloadType == p.spec.rtxPayloadType
        guard rtx || header.payloadType == p.spec.payloadType else { return .dropped(.unknownSSRC) }
        let ridRange =
            (rtx ? p.spec.repairedRidExtensionID : nil).flatMap { header.extensionValueRange(id: $0, in: packet) }
            ?? p.spec.ridExtensionID.flatMap { header.extensionValueRange(id: $0, in: packet) }
        let k: Int
        if p.isSimulcast {
            guard let ridRange, let found = p.stream(rid: packet[ridRange]) else {
                return .dropped(.unnegotiatedStream)
            }
            k = found
        } else {
            // One stream: a packet naming another rid than the one learned is a stream the answer
            // declined (an answer edited to accept rids); without rids the SSRC may change.
            let known = rtx ? p.streams[0].rtxSSRC : p.streams[0].ssrc
            if known != nil, let ridRange, !ridRange.isEmpty { return .dropped(.unnegotiatedStream) }
            k = 0
        }
        learn(header.ssrc, rtx: rtx, for: p, stream: k)
        return .found(Borrowed(p), stream: k, rtx: rtx)
    }

    /// Stream `k` of `p` is sent with this SSRC (or RTX SSRC) now.
    func learn(_ ssrc: UInt32, rtx: Bool, for p: Producer, stream k: Int) {
        if rtx {
            if let old = p.streams[k].rtxSSRC, producersByRTXSSRC[old] === p { producersByRTXSSRC[old] = nil }
            p.streams[k].rtxSSRC = ssrc
            producersByRTXSSRC[ssrc] = p
        } else {
            if let old = p.streams[k].ssrc, producersBySSRC[old] === p { producersBySSRC[old] = nil }
            p.streams[k].ssrc = ssrc
            producersBySSRC[ssrc] = p
        }
    }

    /// Lets go of every producer (they hold their transport strongly: `Transport.detach`).
    func detach() {
        producers.removeAll()
        producersBySSRC.removeAll()
        producersByRTXSSRC.removeAll()
        producersByMid.removeAll()
    }
}
