import AtriumLog
import AtriumSTUN
import AtriumUDP

/// ICE-TCP (RFC 6544), the passive side: the worker's listening socket sits on the same poller as its
/// UDP socket, and each accepted connection carries RFC 4571 frames that go down the same path as UDP
/// datagrams (`receive(_:)`: the RFC 7983 demultiplexer, STUN, DTLS, SRTP). A connection is known by its
/// peer's address, which becomes the ICE pair's remote address like a UDP source: a transport whose
/// selected peer is that address has its outbound datagrams framed onto the connection in `flush()`
/// (`divertToTCP`) instead of sent as UDP.
///
/// Each connection costs at most its two bounded buffers. One that sends something other than a STUN
/// check before a valid check, or a frame longer than a datagram slot, is closed at once (`garbage`);
/// one with no valid check after `checkTimeout` or silent for `idleTimeout` (`idle`), or that leaves
/// output unread for `stallTimeout` (`stalled`), on the next sweep. What counts as unread is checked
/// twice: the connection's own queue waiting that long, and, through TCP_USER_TIMEOUT, the kernel's
/// sent bytes unacknowledged that long (the kernel aborts the connection and the next read or write
/// fails with ETIMEDOUT). The second catches a peer that stopped acknowledging while what is sent to it
/// is too little to fill the kernel's buffer soon (the first waits for that). Frames that do not fit a
/// slow peer's queue are dropped (`tcp_queue_full`) while the others' media goes on.
///
/// TCP and UDP have separate port spaces, so a UDP source could in principle share a TCP peer's
/// address and port; its datagrams are then handled as that transport's, and replies go over TCP.
/// Browsers' UDP sockets and the ephemeral ports of their outgoing TCP connections do not meet in
/// practice.
extension MediaEngine {
    static let udpToken: UInt64 = 1
    static let tcpListenerToken: UInt64 = 2
    /// The receive slot TCP frames are copied into (after the socket's 32 and the replays' one).
    static let tcpSlot = 33

    /// A ready token other than the UDP socket's: the listener or a connection.
    func serviceTCP(_ token: UInt64) {
        if token == Self.tcpListenerToken {
            acceptTCP()
            return
        }
        guard let c = tcpConnections[token] else { return }
        readTCP(c)
        if !c.output.isEmpty { writeTCP(c) }
    }

    func acceptTCP() {
        guard let listener = tcpListener else { return }
        for _ in 0..<64 {
            let accepted: TCPStream?
            do {
                accepted = try listener.accept(
                    sendBuffer: config.tcpLimits.kernelSendBuffer,
                    unacknowledgedTimeout: config.tcpLimits.stallTimeout)
            } catch {
                // Out of descriptors (EMFILE) the connection stays queued and the listener readable:
                // stop watching it for a second rather than spin on it.
                counters.tcpAcceptFailures += 1
                poller.deregister(listener)
                tcpAcceptPausedAt = now
                return
            }
            guard let stream = accepted else { return }
            counters.tcpAccepted += 1
            // Over the limit the stream goes out of scope here, which closes it.
            guard tcpConnections.count < config.tcpLimits.maxConnections else {
                counters.tcpClosed[TCPCloseReason.limit.rawValue] += 1
                continue
            }
            let token = nextTCPToken
            nextTCPToken &+= 1
            do {
                try poller.register(stream, token: token)
            } catch {
                counters.tcpClosed[TCPCloseReason.limit.rawValue] += 1
                continue
            }
            let c = TCPConnection(
                stream: stream, token: token, maxFrame: Self.slotCapacity, limits: config.tcpLimits, now: now)
            tcpConnections[token] = c
            tcpByAddress[c.remote] = c
        }
    }

    /// Reads what the connection has (a bounded number of rounds, so one busy peer cannot hold the
    /// thread) and handles every complete frame.
    func readTCP(_ c: TCPConnection) {
        for _ in 0..<8 {
            guard c.closing == nil else { return }
            var result = TCPStream.ReadResult.wouldBlock
            var failure: TCPCloseReason?
            let stream = c.stream
            c.input.fill { buffer in
                do throws(UDPError) {
                    result = try stream.read(into: buffer)
                } catch {
                    failure = TCPCloseReason(failure: error)
                }
                if case .bytes(let n) = result { return n }
                return 0
            }
            if let failure {
                doom(c, failure)
                return
            }
            switch result {
            case .wouldBlock: return
            case .end:
                doom(c, .closed)
                return
            case .bytes(let n):
                guard n > 0 else { return }
                c.lastInput = now
                counters.tcpBytesIn += n
                receiveFrames(c)
            }
        }
    }

    func receiveFrames(_ c: TCPConnection) {
        while c.closing == nil {
            switch c.input.next() {
            case .needMore: return
            case .tooLarge:
                doom(c, .garbage)
                return
            case .frame(let range):
                counters.tcpFramesIn += 1
                let slot = Self.tcpSlot
                rx[slot].payload.removeAll(keepingCapacity: true)
                rx[slot].payload.append(contentsOf: c.input.buffer[range])
                rx[slot].address = c.remote
                if c.checked {
                    receive(slot)
                } else {
                    // Before a valid check only STUN is taken (RFC 6544 section 10: nothing else may
                    // flow on a connection ICE has not checked).
                    guard PacketDemultiplexer.classify(rx[slot].payload) == .stun else {
                        doom(c, .garbage)
                        return
                    }
                    receive(slot)
                    if byAddress[c.remote] != nil { c.checked = true }
                }
            }
        }
    }

    /// Moves the batch's datagrams for ICE-TCP peers onto their connections' queues (keeping the rest
    /// in order for the UDP socket) and writes each connection touched once.
    func divertToTCP() {
        var kept = 0
        let t = now
        for k in 0..<egress.count {
            if let c = tcpByAddress[egress.tx[k].address] {
                // A connection being closed takes nothing more (and its peer gets nothing by UDP).
                guard c.closing == nil else { continue }
                if c.output.isEmpty { c.lastDrain = t }
                if c.output.push(egress.tx[k].payload) {
                    counters.tcpFramesOut += 1
                } else {
                    counters.drop(.tcpQueueFull)
                }
                if !c.dirty {
                    c.dirty = true
                    tcpDirty.append(c)
                }
            } else {
                if kept != k { egress.tx.swapAt(kept, k) }
                kept += 1
            }
        }
        egress.count = kept
        for c in tcpDirty {
            c.dirty = false
            writeTCP(c)
        }
        tcpDirty.removeAll(keepingCapacity: true)
    }

    /// Writes what the kernel takes of the connection's queue; watches for writability while some is
    /// left.
    func writeTCP(_ c: TCPConnection) {
        guard c.closing == nil else { return }
        let before = c.output.pendingCount
        var failure: TCPCloseReason?
        let stream = c.stream
        c.output.drain { bytes in
            do throws(UDPError) {
                return try stream.write(bytes)
            } catch {
                failure = TCPCloseReason(failure: error)
                return 0
            }
        }
        if let failure {
            doom(c, failure)
            return
        }
        let written = before - c.output.pendingCount
        if written > 0 {
            c.lastDrain = now
            counters.tcpBytesOut += written
        }
        let waiting = !c.output.isEmpty
        if waiting != c.watchingWritable, (try? poller.watchWritable(c.stream, token: c.token, waiting)) != nil {
            c.watchingWritable = waiting
        }
    }

    /// Marks a connection to be closed after the round in hand (it may be in the middle of a batch).
    func doom(_ c: TCPConnection, _ reason: TCPCloseReason) {
        guard c.closing == nil else { return }
        c.closing = reason
        tcpDoomed.append(c)
    }

    /// Closes what was doomed, and, at most every half second, what has expired.
    func sweepTCP(now t: Double) {
        if t - lastTCPSweep >= 0.5 {
            lastTCPSweep = t
            if let paused = tcpAcceptPausedAt, t - paused >= 1, let listener = tcpListener,
                (try? poller.register(listener, token: Self.tcpListenerToken)) != nil
            {
                tcpAcceptPausedAt = nil
            }
            for c in tcpConnections.values {
                if let reason = c.expired(now: t, limits: config.tcpLimits) { doom(c, reason) }
            }
        }
        guard !tcpDoomed.isEmpty else { return }
        for c in tcpDoomed { closeTCP(c, c.closing ?? .closed) }
        tcpDoomed.removeAll(keepingCapacity: true)
    }

    /// Forgets a connection (its descriptor closes with the stream) and the ICE pair it carried: the
    /// transport falls back to another valid address, or waits for the peer's next check.
    func closeTCP(_ c: TCPConnection, _ reason: TCPCloseReason) {
        guard tcpConnections.removeValue(forKey: c.token) != nil else { return }
        poller.deregister(c.stream)
        if tcpByAddress[c.remote] === c { tcpByAddress[c.remote] = nil }
        counters.tcpClosed[reason.rawValue] += 1
        if let t = byAddress[c.remote] {
            byAddress[c.remote] = nil
            t.session.addresses.remove(c.remote)
            if t.session.peer == c.remote { t.session.peer = t.session.addresses.first }
        }
        logger.debug("ice-tcp connection closed", ("peer", c.remote.description), ("reason", reason.label))
    }
}
