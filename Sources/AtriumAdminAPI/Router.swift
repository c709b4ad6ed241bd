import AtriumHTTP

/// The admin API's routes. A route is a pattern of literal segments and `{param}` segments; the pattern
/// (never the raw path) labels metrics, so that label cardinality stays bounded.
enum Route: String, CaseIterable {
    case healthz = "/healthz"
    case readyz = "/readyz"
    case metrics = "/metrics"
    case rooms = "/v1/rooms"
    case room = "/v1/rooms/{roomId}"
    case tokens = "/v1/tokens"
    case participants = "/v1/rooms/{roomId}/participants"
    case participant = "/v1/rooms/{roomId}/participants/{participantId}"
    case muteTrack = "/v1/rooms/{roomId}/participants/{participantId}/tracks/{trackId}/mute"
    case shares = "/v1/rooms/{roomId}/shares"
    case share = "/v1/rooms/{roomId}/shares/{shareId}"
    case shareLock = "/v1/rooms/{roomId}/share-lock"
    case nodes = "/v1/nodes"
    case recordings = "/v1/rooms/{roomId}/recordings"
    case recording = "/v1/rooms/{roomId}/recordings/{recordingId}"
    case streams = "/v1/rooms/{roomId}/streams"
    case stream = "/v1/rooms/{roomId}/streams/{streamId}"
    case streamRestart = "/v1/rooms/{roomId}/streams/{streamId}/restart"
    case streamHLS = "/v1/rooms/{roomId}/streams/{streamId}/hls/{file}"
    case chat = "/v1/rooms/{roomId}/chat"
    case data = "/v1/rooms/{roomId}/data"
    /// The WebSocket endpoint; the edge hands upgrades to the signaling endpoint, plain requests come here.
    case signal = "/v1/signal"

    /// Methods each route answers (HEAD comes with GET; OPTIONS is answered for CORS everywhere).
    var methods: [HTTPMethod] {
        switch self {
        case .healthz, .readyz, .metrics: [.GET]
        case .rooms: [.GET, .POST]
        case .room: [.GET, .PATCH, .DELETE]
        case .tokens: [.POST]
        case .participants, .shares, .nodes, .chat: [.GET]
        case .data: [.POST]
        case .participant: [.GET, .PATCH, .DELETE]
        case .muteTrack: [.POST]
        case .share: [.DELETE]
        case .shareLock: [.PUT]
        case .recordings: [.GET, .POST]
        case .recording: [.GET, .DELETE]
        case .streams: [.GET, .POST]
        case .stream: [.GET, .DELETE]
        case .streamRestart: [.POST]
        case .streamHLS: [.GET]
        case .signal: [.GET]
        }
    }

    var allowHeader: String {
        var m = methods.map(\.rawValue)
        if methods.contains(.GET) { m.append("HEAD") }
        m.append("OPTIONS")
        return m.joined(separator: ", ")
    }

    /// Matches a path; returns the route and its parameters.
    static func match(_ path: String) -> (Route, [String: String])? {
        let segs = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        for route in allCases {
            let pat = route.rawValue.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            guard pat.count == segs.count else { continue }
            var params: [String: String] = [:]
            var ok = true
            for (p, s) in zip(pat, segs) {
                if p.hasPrefix("{") {
                    if s.isEmpty {
                        ok = false
                        break
                    }
                    params[String(p.dropFirst().dropLast())] = String(s)
                } else if p != s {
                    ok = false
                    break
                }
            }
            if ok { return (route, params) }
        }
        return nil
    }
}
