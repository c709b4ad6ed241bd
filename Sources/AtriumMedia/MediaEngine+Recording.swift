import AtriumRTP
import AtriumUDP

/// Recording outputs: a producer's packets copied, decrypted and renumbered, as plain RTP to the
/// recording process the server runs on 127.0.0.1. Same batch, same socket, no encryption.
extension MediaEngine {
    func addRecorder(_ spec: RecorderSpec) {
        guard recorders[spec.id] == nil, let p = producers[spec.producer] else { return }
        let sink = RecordingSink(spec: spec, producer: p)
        recorders[spec.id] = sink
        p.sinks.append(sink)
        if let line = spec.line { attach(sink, toLine: line) }
        // The recording starts on a key frame: ask for one now (and every second until it comes).
        if p.isVideo { requestKeyFrameNow(p, stream: 0) }
    }

    func closeRecorder(id: String) {
        guard let sink = recorders.removeValue(forKey: id) else { return }
        detach(sink)
        sink.producer.sinks.removeAll { $0 === sink }
    }

    /// Offers `packet` (`rx[i]`'s, borrowed; stream `k` of `p`) to the producer's recorders.
    func record(
        _ packet: UnsafeRawBufferPointer, producer p: Producer, stream k: Int, keyFrame: Bool, sequence: UInt16,
        timestamp: UInt32
    ) {
        // One stream of a simulcast producer: the bottom one, always sent.
        guard k == 0 else { return }
        for sink in p.sinks {
            guard
                let (outSeq, outTS) = sink.admit(sequence: sequence, timestamp: timestamp, keyFrame: keyFrame, now: now)
            else { continue }
            if egress.isFull { flush() }
            let slot = egress.count
            egress.tx[slot].payload.removeAll(keepingCapacity: true)
            egress.tx[slot].payload.append(contentsOf: packet)
            guard
                (try? RTPPacketWriter.rewrite(
                    &egress.tx[slot].payload,
                    RTPPacketWriter.Rewrite(
                        ssrc: sink.spec.ssrc, sequenceNumber: outSeq, timestamp: outTS,
                        payloadType: sink.spec.payloadType))) != nil
            else { continue }
            egress.tx[slot].address = sink.spec.destination
            egress.count += 1
            sink.packetsOut += 1
            counters.recordingPackets += 1
        }
    }
}
