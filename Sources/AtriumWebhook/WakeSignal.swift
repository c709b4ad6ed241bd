import AtriumSync

/// What a delivery thread sleeps on until there is work or its next retry is due.
final class WakeSignal: Sendable {
    private let signalled = Monitor(false)

    func signal() {
        signalled.update { $0 = true }
    }

    /// Sleeps until signalled or `seconds` pass; a signal sent before the call is not lost.
    func wait(seconds: Double) {
        _ = signalled.wait(seconds: seconds) { s -> Void? in
            guard s else { return nil }
            s = false
            return ()
        }
    }
}
