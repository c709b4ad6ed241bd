import AtriumDTLS
import AtriumICE
import AtriumLog
import AtriumSCTP
import AtriumUDP

/// Data channels (RFC 8831): SCTP runs over each transport's DTLS association once both sides
/// negotiated it. Messages the peer sends are reported to the coordinator, which relays them through
/// the room; messages for the peer arrive as `sendData`. Nothing here touches the RTP path.
extension MediaEngine {
    /// Starts SCTP on a transport whose DTLS is up and whose peer negotiated data channels.
    func startData(_ t: Transport) {
        guard t.data == nil, t.session.connected, let port = t.session.remote?.sctpPort else { return }
        let wakeup = poller.wakeup
        guard let association = SCTPAssociation(port: port, sendBuffer: DataSession.sendBuffer, wake: { wakeup.wake() })
        else {
            logger.warn("sctp association refused", ("transport", t.label))
            return
        }
        t.data = DataSession(association: association)
        dataTransports.append(t)
        serviceData(t)
    }

    /// The transport's state as the coordinator would have been told it (connected once DTLS is up,
    /// disconnected or failed as ICE consent says), then its open data channels, by stream.
    func restate(_ id: String) {
        guard let t = transports[id], t.pipe == nil else { return }
        switch t.session.ice.state {
        case .failed: report(t, .failed)
        case .disconnected: report(t, .disconnected)
        case .new, .connected: if t.session.connected { report(t, .connected) }
        }
        guard let d = t.data else { return }
        for (_, c) in d.channels.channels.sorted(by: { $0.key < $1.key }) {
            events.append(.dataChannel(transport: t.id, label: c.label, lossy: c.isLossy, open: true))
        }
    }

    func stopData(_ t: Transport) {
        guard let d = t.data else { return }
        for c in d.channels.channels.values {
            events.append(.dataChannel(transport: t.id, label: c.label, lossy: c.isLossy, open: false))
        }
        d.association.close()
        t.data = nil
        dataTransports.removeAll { $0 === t }
    }

    /// The plaintext of a DTLS record: an SCTP packet. One that cannot be SCTP is dropped and counted
    /// here; usrsctp refuses (and counts) what fails its checksum or belongs to no association.
    func receiveData(_ bytes: [UInt8], on t: Transport) {
        guard let d = t.data, Self.looksLikeSCTP(bytes) else {
            counters.dataInvalid += 1
            return
        }
        d.association.receive(bytes)
        serviceData(t)
    }

    /// An SCTP common header (12 bytes: ports, tag, checksum) and chunks whose lengths add up.
    static func looksLikeSCTP(_ b: [UInt8]) -> Bool {
        guard b.count >= 16, b.count % 4 == 0 else { return false }
        var i = 12
        while i + 4 <= b.count {
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            guard length >= 4 else { return false }
            i += (length + 3) & ~3
        }
        return i == b.count || (i > b.count && i - b.count < 4)
    }

    /// Each round: what usrsctp produced for the transports with data channels (its timer thread
    /// may have sent retransmissions meanwhile).
    func serviceDataTransports() {
        var i = 0
        while i < dataTransports.count {
            let t = dataTransports[i]
            i += 1
            if t.data?.association.hasPending == true { serviceData(t) }
        }
    }

    func serviceData(_ t: Transport) {
        guard let d = t.data else { return }
        for _ in 0..<8 {
            let packets = d.association.takeOutbound()
            let happened = d.association.takeEvents()
            if packets.isEmpty && happened.isEmpty { return }
            if let dtls = t.session.dtls, let peer = t.session.peer {
                for p in packets {
                    do {
                        for datagram in try dtls.send(p) { enqueue(datagram, to: peer) }
                    } catch {
                        counters.dataMessagesDropped += 1
                    }
                }
            }
            for e in happened {
                switch e {
                case .up: d.up = true
                case .down: d.up = false
                case .writable: flushQueues(d)
                default: break
                }
                for action in d.channels.handle(e) { apply(action, on: t, d) }
            }
        }
    }

    func apply(_ action: DataChannels.Action, on t: Transport, _ d: DataSession) {
        switch action {
        case .send(let stream, let ppid, let unordered, let retransmits, let data):
            _ = d.association.send(
                stream: stream, ppid: ppid, unordered: unordered, maxRetransmits: retransmits, data: data)
        case .opened(let c):
            events.append(.dataChannel(transport: t.id, label: c.label, lossy: c.isLossy, open: true))
        case .closed(let c):
            events.append(.dataChannel(transport: t.id, label: c.label, lossy: c.isLossy, open: false))
        case .resetStream(let stream):
            d.association.resetStream(stream)
        case .message(let c, let text, let data):
            guard text, data.count <= DataSession.maxMessageBytes else {
                counters.dataMessagesDropped += 1
                return
            }
            counters.dataMessagesIn += 1
            events.append(.dataMessage(transport: t.id, lossy: c.isLossy, payload: data))
        case .invalid(let why):
            counters.dataInvalid += 1
            logger.debug("data channel message refused", ("transport", t.label), ("why", why))
        }
    }

    /// `sendData`: on the channel of that kind, or queued while the association's buffer is full.
    func sendData(_ payload: [UInt8], lossy: Bool, on t: Transport) {
        guard let d = t.data, d.channel(lossy: lossy) != nil else {
            counters.dataMessagesDropped += 1
            return
        }
        if lossy {
            d.lossyQueue.append(payload)
            if d.lossyQueue.count > DataSession.lossyQueueLimit {
                d.lossyQueue.removeFirst()
                counters.dataMessagesDropped += 1
            }
        } else {
            guard d.reliableQueue.count < DataSession.reliableQueueLimit else {
                counters.dataMessagesDropped += 1
                return
            }
            d.reliableQueue.append(payload)
        }
        flushQueues(d)
        serviceData(t)
    }

    /// Sends what waits, reliable first, until the association's buffer is full.
    func flushQueues(_ d: DataSession) {
        for lossy in [false, true] {
            guard let c = d.channel(lossy: lossy) else {
                if lossy { d.lossyQueue.removeAll() } else { d.reliableQueue.removeAll() }
                continue
            }
            while let next = lossy ? d.lossyQueue.first : d.reliableQueue.first {
                guard
                    case .send(let stream, let ppid, let unordered, let retransmits, let data) =
                        DataChannels.send(next, text: true, on: c)
                else { break }
                let result = d.association.send(
                    stream: stream, ppid: ppid, unordered: unordered, maxRetransmits: retransmits, data: data)
                if result == .full { break }
                if lossy { d.lossyQueue.removeFirst() } else { d.reliableQueue.removeFirst() }
                if result == .queued { counters.dataMessagesOut += 1 } else { counters.dataMessagesDropped += 1 }
            }
        }
    }
}
