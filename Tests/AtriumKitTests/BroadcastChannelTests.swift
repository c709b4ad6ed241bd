import AtriumKit
import Testing

/// The broadcast-extension channel over loopback TCP: frames arrive in order with their metadata; a
/// wrong token is refused on either side; a sender that vanishes is reported, one that finishes too.
@Suite struct BroadcastChannelTests {
    func frame(_ n: Int) -> BroadcastChannel.Frame {
        BroadcastChannel.Frame(
            kind: n % 2 == 0 ? .encoded : .raw, format: 1, orientation: UInt8(1 + n % 8), width: 1280 + n,
            height: 720, timestampMicros: UInt64(n) * 66_666,
            payload: [UInt8](repeating: UInt8(n & 0xFF), count: n * 100))
    }

    func collect(_ l: BroadcastListener, until done: @escaping @Sendable (BroadcastChannel.Event) -> Bool) async
        -> [BroadcastChannel.Event]
    {
        var out: [BroadcastChannel.Event] = []
        for await e in l.events {
            out.append(e)
            if done(e) { break }
        }
        return out
    }

    @Test func framesArriveInOrderWithTheirMetadata() async throws {
        let l = try BroadcastListener(transmissionToken: "tx-secret", receptionToken: "rx-secret")
        let port = l.port
        let sent = (0..<20).map(frame)
        let sender = Task.detached {
            let s = try BroadcastSender(port: port, transmissionToken: "tx-secret", receptionToken: "rx-secret")
            for f in sent { #expect(s.send(f)) }
            s.finish()
        }
        let events = await collect(l) { $0 == .finished }
        try await sender.value
        #expect(events.first == .connected)
        #expect(events.last == .finished)
        let frames = events.compactMap { if case .frame(let f) = $0 { f } else { nil } }
        #expect(frames == sent)
        l.stop()
    }

    @Test func aWrongTokenIsRefusedOnEitherSide() async throws {
        let l = try BroadcastListener(transmissionToken: "tx-secret", receptionToken: "rx-secret")
        let port = l.port
        let wrong = await Task.detached { () -> String? in
            do {
                _ = try BroadcastSender(port: port, transmissionToken: "guess", receptionToken: "rx-secret")
                return nil
            } catch let e as AtriumError {
                return e.code
            } catch {
                return "\(error)"
            }
        }.value
        #expect(wrong == "wrong_token")
        let events = await collect(l) { if case .refused = $0 { true } else { false } }
        #expect(events == [.refused("wrong transmission token")])
        // The app answering with another reception token is refused by the extension.
        let impostor = await Task.detached { () -> String? in
            do {
                _ = try BroadcastSender(port: port, transmissionToken: "tx-secret", receptionToken: "other")
                return nil
            } catch let e as AtriumError {
                return e.code
            } catch {
                return "\(error)"
            }
        }.value
        #expect(impostor == "wrong_token")
        l.stop()
    }

    @Test func aSenderThatVanishesIsReported() async throws {
        let l = try BroadcastListener(transmissionToken: "t", receptionToken: "r")
        let port = l.port
        Task.detached {
            var s: BroadcastSender? = try BroadcastSender(port: port, transmissionToken: "t", receptionToken: "r")
            s?.send(frame(1))
            s = nil  // gone without a goodbye: its socket closes
        }
        let events = await collect(l) { $0 == .vanished }
        #expect(events.first == .connected)
        #expect(events.last == .vanished)
        l.stop()
    }
}
