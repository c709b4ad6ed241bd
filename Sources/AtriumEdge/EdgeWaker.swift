internal import CWebSockets

/// Wakes the service thread from another thread: `lws_cancel_service` is the one libwebsockets call
/// that is safe there. The thread then runs `EdgeServer.onWake`. Valid while the server's context
/// lives: whoever holds a waker must drop it before the server is destroyed.
public struct EdgeWaker: Sendable {
    let context: UInt

    public func wake() {
        guard let ctx = OpaquePointer(bitPattern: context) else { return }
        lws_cancel_service(ctx)
    }
}
