import AtriumForwarding
import AtriumRTP
import AtriumUDP

/// Recorder lines (`RecorderLineSpec`): a live stream's continuous video and audio toward its ffmpeg.
/// Recorders attach and leave as the followed share changes hands; the line's sequence numbers and
/// timeline run on across them, and while no recorder feeds it (or its producer is paused) the
/// line fills in from the housekeeping tick: the last picture once a second, Opus silence every
/// 20 ms. Nothing here is on the packet path: a recorder attached to a line forwards as any.
extension MediaEngine {
    func openLine(_ spec: RecorderLineSpec) {
        guard recorderLines[spec.id] == nil else { return }
        recorderLines[spec.id] = RecorderLine(spec: spec)
    }

    func closeLine(id: String) {
        guard let line = recorderLines.removeValue(forKey: id) else { return }
        line.sink?.line = nil
        line.sink = nil
    }

    /// A recorder joins its line: it continues the line's output, which starts at once from the
    /// producer's key-frame cache (the recorder itself from the next key frame it asked for).
    func attach(_ sink: RecordingSink, toLine id: String) {
        guard let line = recorderLines[id] else { return }
        if let old = line.sink { detach(old) }
        let p = sink.producer
        if line.spec.kind == .video, let k = p.streams.indices.first, p.streams[k].cache.isServable(now: now) {
            capturePicture(line, of: p)
            fillPicture(line)
            line.lastFill = now
        }
        line.giveOutput(to: sink)
        sink.line = line
        line.sink = sink
    }

    /// A recorder leaves its line (closed, or its producer ended): the line keeps where the output
    /// stands and the producer's current picture.
    func detach(_ sink: RecordingSink) {
        guard let line = sink.line else { return }
        sink.line = nil
        guard line.sink === sink else { return }
        line.takeOutput(from: sink)
        line.sink = nil
        capturePicture(line, of: sink.producer)
    }

    /// The line keeps its producer's current picture (before a pause empties the cache, or as the
    /// recorder leaves).
    func capturePicture(_ line: RecorderLine, of p: Producer) {
        guard line.spec.kind == .video, let k = p.streams.indices.first else { return }
        let cache = p.streams[k].cache
        guard cache.count > 0 else { return }
        line.picture = (0..<cache.count).compactMap { i in cache.withPacket(i) { Array($0) } }
    }

    /// From the tick: every line that fills in now sends its filler when due.
    func fillLines() {
        guard !recorderLines.isEmpty else { return }
        for line in recorderLines.values where line.filling {
            let interval = line.spec.kind == .audio ? RecorderLine.silenceInterval : RecorderLine.pictureInterval
            guard now - line.lastFill >= interval - 1e-6 else { continue }
            if line.spec.kind == .video && line.picture.isEmpty { continue }
            line.lastFill = now
            if let s = line.sink { line.takeOutput(from: s) }
            if line.spec.kind == .audio {
                fillSilence(line)
            } else {
                fillPicture(line)
            }
            if let s = line.sink { line.giveOutput(to: s) }
        }
    }

    private func fillSilence(_ line: RecorderLine) {
        line.timestamps.sync(0, now: now)
        let ts = line.timestamps.map(0, now: now)
        var packet: [UInt8] = [0x80, line.spec.payloadType & 0x7F, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        packet += RecorderLine.opusSilence
        emit(&packet, line, timestamp: ts)
    }

    func fillPicture(_ line: RecorderLine) {
        let packets = line.picture
        // Each frame of the picture one tick after the last, from where the timeline stands now.
        line.timestamps.sync(0, now: now)
        var rank: UInt32 = 0
        var lastInput: UInt32?
        for var packet in packets where packet.count >= 12 {
            let input = UInt32(packet[4]) << 24 | UInt32(packet[5]) << 16 | UInt32(packet[6]) << 8 | UInt32(packet[7])
            if let l = lastInput, l != input { rank &+= 1 }
            lastInput = input
            emit(&packet, line, timestamp: line.timestamps.map(rank, now: now))
        }
    }

    private func emit(_ packet: inout [UInt8], _ line: RecorderLine, timestamp: UInt32) {
        guard
            (try? RTPPacketWriter.rewrite(
                &packet,
                RTPPacketWriter.Rewrite(
                    ssrc: line.spec.ssrc, sequenceNumber: line.nextSequence, timestamp: timestamp,
                    payloadType: line.spec.payloadType))) != nil
        else { return }
        line.nextSequence &+= 1
        line.packetsFilled += 1
        if egress.isFull { flush() }
        let slot = egress.count
        egress.tx[slot].payload.removeAll(keepingCapacity: true)
        egress.tx[slot].payload.append(contentsOf: packet)
        egress.tx[slot].address = line.spec.destination
        egress.count += 1
        counters.recordingPackets += 1
    }
}
