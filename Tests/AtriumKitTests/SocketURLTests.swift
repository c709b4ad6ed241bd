import Testing

@testable import AtriumKit

/// The WebSocket URLs the client takes apart.
@Suite struct SocketURLTests {
    @Test func parses() {
        #expect(
            WebSocketURL("ws://127.0.0.1:8800/v1/signal?access_token=x")
                == WebSocketURL(secure: false, host: "127.0.0.1", port: 8800, path: "/v1/signal?access_token=x"))
        #expect(
            WebSocketURL("wss://atrium.example.com")
                == WebSocketURL(secure: true, host: "atrium.example.com", port: 443, path: "/"))
        #expect(WebSocketURL("ws://[::1]:9/x") == WebSocketURL(secure: false, host: "::1", port: 9, path: "/x"))
        for bad in ["http://x", "ws://", "ws://h:0/", "ws://h:70000/", "ws://[::1/x", "ws://h:x/"] {
            #expect(WebSocketURL(bad) == nil, "\(bad)")
        }
    }
}

/// The intervals an app gives `AtriumRoom` (keep-alive, request timeout, backoff) end in 10 ms .. a day,
/// so that none reaches a conversion to milliseconds that traps.
@Suite struct IntervalTests {
    @Test(arguments: [
        (10.0, 10.0), (0, 0.01), (-5, 0.01), (1e300, 86_400), (.infinity, 7), (-.infinity, 7), (.nan, 7),
    ])
    func intervalsAreClamped(_ given: Double, _ kept: Double) {
        #expect(AtriumRoom.seconds(given, else: 7) == kept)
    }

    @Test func theRoomKeepsItsIntervalsClamped() async {
        let room = AtriumRoom(
            url: "ws://127.0.0.1:9", token: "t", backoff: [.infinity, 0.5, -1], pingInterval: .nan, requestTimeout: 1e9)
        #expect(await room.backoff == [1, 0.5, 0.01])
        #expect(await room.pingInterval == 10)
        #expect(await room.requestTimeout == 86_400)
    }
}
