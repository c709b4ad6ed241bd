public import AtriumAuth
public import AtriumHTTP
import AtriumJSON
public import AtriumMetrics
public import AtriumModel
public import AtriumRecording
public import AtriumRooms
public import AtriumRouting

/// The admin HTTP API (v1), health and metrics, as an `HTTPHandler`. Pure request-in, response-out:
/// it runs on the edge's service thread and in memory in tests. Time and ids are injected.
public final class AdminAPI: HTTPHandler {
    public struct Environment {
        public var now: () -> Int64
        public var monotonic: () -> Double
        public var makeRoomID: () -> RoomID
        /// Unix milliseconds: the server time of the data messages it posts.
        public var nowMillis: () -> Int64

        public init(
            now: @escaping () -> Int64, monotonic: @escaping () -> Double, makeRoomID: @escaping () -> RoomID,
            nowMillis: (() -> Int64)? = nil
        ) {
            self.now = now
            self.monotonic = monotonic
            self.makeRoomID = makeRoomID
            self.nowMillis = nowMillis ?? { now() * 1000 }
        }
    }

    public static let defaultPageSize = 20
    public static let maxPageSize = 100
    public static let maxTokenTTL: Int64 = 7 * 24 * 3600

    let store: any RoomStore
    let verifier: TokenVerifier
    let metrics: MetricsRegistry
    let corsOrigins: [String]
    let env: Environment
    /// The live rooms, told of changes made here (room settings, deletions, host controls).
    public var hub: Hub?
    /// The nodes (one, or the cluster's) and the relay of live-room calls to the node running the room.
    public var nodes: (any NodeDirectory)?
    /// This node's recordings (ffmpeg processes); nil without a media plane.
    public var recordings: RecordingManager?
    public var streams: StreamManager?
    /// In a cluster whose rooms spread over nodes: a live room's media transports by node (this one
    /// and its edges), listed with its participants.
    public var mediaNodes: ((RoomID) -> [String: Int])?

    public init(
        store: any RoomStore, verifier: TokenVerifier, metrics: MetricsRegistry, corsOrigins: [String],
        environment: Environment
    ) {
        self.store = store
        self.verifier = verifier
        self.metrics = metrics
        self.corsOrigins = corsOrigins
        self.env = environment
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let started = env.monotonic()
        let matched = Route.match(request.path)
        var response: HTTPResponse
        do throws(APIError) {
            response = try route(request, matched)
        } catch {
            response = Self.errorResponse(error)
        }
        finish(&response, request, route: matched?.0.rawValue ?? "unmatched", started: started)
        return response
    }

    public func refuse(_ request: HTTPRequest, status: Int, code: String, message: String) -> HTTPResponse {
        var response = Self.errorResponse(APIError(status: status, code: code, message: message))
        finish(
            &response, request, route: Route.match(request.path)?.0.rawValue ?? "unmatched", started: env.monotonic())
        return response
    }

    private func finish(_ response: inout HTTPResponse, _ request: HTTPRequest, route: String, started: Double) {
        addCORS(&response, request)
        metrics.observeRequest(
            route: route, method: request.method.rawValue, status: response.status,
            seconds: env.monotonic() - started)
    }

    private func route(_ request: HTTPRequest, _ matched: (Route, [String: String])?) throws(APIError) -> HTTPResponse {
        guard let (route, params) = matched else {
            throw APIError(status: 404, code: "not_found", message: "no route for \(request.path)")
        }
        if request.method == .OPTIONS { return preflight(route) }
        if let response = forwarded(request, route, params) { return response }
        guard route.methods.contains(request.method) else {
            throw APIError(
                status: 405, code: "method_not_allowed",
                message: "\(request.method.rawValue) is not allowed on \(route.rawValue)",
                headers: [("allow", route.allowHeader)])
        }
        switch (route, request.method) {
        case (.healthz, _): return Self.json(200, ["status": .string("ok")])
        case (.readyz, _): return readiness()
        case (.metrics, _):
            return HTTPResponse(
                status: 200, headers: [("content-type", "text/plain; version=0.0.4; charset=utf-8")],
                body: Array(metrics.render().utf8))
        case (.rooms, .POST): return try createRoom(request)
        case (.rooms, _): return try listRooms(request)
        case (.room, .GET): return try getRoom(request, params["roomId"] ?? "")
        case (.room, .PATCH): return try updateRoom(request, params["roomId"] ?? "")
        case (.room, _): return try deleteRoom(request, params["roomId"] ?? "")
        case (.tokens, _): return try mintToken(request)
        case (.participants, _): return try listParticipants(request, params)
        case (.participant, .GET): return try getParticipant(request, params)
        case (.participant, .PATCH): return try updateParticipant(request, params)
        case (.participant, _): return try removeParticipant(request, params)
        case (.muteTrack, _): return try muteTrack(request, params)
        case (.shares, _): return try listShares(request, params)
        case (.share, _): return try stopShare(request, params)
        case (.shareLock, _): return try setShareLock(request, params)
        case (.nodes, _): return try listNodes(request)
        case (.recordings, .POST): return try startRecording(request, params)
        case (.recordings, _): return try listRecordings(request, params)
        case (.recording, .GET): return try getRecording(request, params)
        case (.recording, _): return try stopRecording(request, params)
        case (.streams, .POST): return try startStream(request, params)
        case (.streams, _): return try listStreams(request, params)
        case (.stream, .GET): return try getStream(request, params)
        case (.stream, _): return try stopStream(request, params)
        case (.streamRestart, _): return try restartStream(request, params)
        case (.streamHLS, _): return try serveHLS(request, params)
        case (.chat, _): return try listChat(request, params)
        case (.data, _): return try postData(request, params)
        case (.signal, _):
            throw APIError(
                status: 426, code: "upgrade_required", message: "/v1/signal speaks WebSocket: send an Upgrade request",
                headers: [("upgrade", "websocket"), ("connection", "Upgrade")])
        }
    }

    /// A call on a live room that another node runs goes there (cluster), answered as that node does:
    /// the calls that read the live room or answer with its state. Room settings, deletion, the share
    /// lock and stopping a share are answered here and reach the room as commands (`Hub.route`).
    private func forwarded(_ request: HTTPRequest, _ route: Route, _ params: [String: String]) -> HTTPResponse? {
        guard let nodes, route.methods.contains(request.method), let key = params["roomId"] else { return nil }
        switch route {
        case .participants, .participant, .muteTrack, .shares, .chat, .data, .streams, .stream, .streamRestart,
            .streamHLS:
            break
        default: return nil
        }
        guard let room = try? store.room(idOrName: key) else { return nil }
        return nodes.forward(request, room: room.id)
    }

    /// One code per deployment: a single node's store failing is `store_unavailable`; in a cluster the
    /// store is the cluster's Redis, so Redis not answering is `cluster_unavailable` from the first
    /// failed ping on, before the node's own connection has noticed, as while it has.
    private func readiness() -> HTTPResponse {
        if let nodes, let problem = nodes.unready() {
            return Self.errorResponse(APIError(status: 503, code: "cluster_unavailable", message: problem))
        }
        do throws(StoreError) {
            try store.ping()
            return Self.json(200, ["status": .string("ready")])
        } catch {
            if nodes != nil {
                return Self.errorResponse(
                    APIError(
                        status: 503, code: "cluster_unavailable",
                        message: "the cluster's Redis cannot be reached: \(error)"))
            }
            return Self.errorResponse(
                APIError(status: 503, code: "store_unavailable", message: "the room store does not answer: \(error)"))
        }
    }

    // MARK: - Authentication and bodies

    /// Verifies the bearer token of an admin call.
    func authenticate(_ request: HTTPRequest) throws(APIError) -> TokenClaims {
        let value = request.header("authorization")?.trimmingSpaces() ?? ""
        // The scheme word, then the token after spaces or tabs (RFC 6750 section 2.1). A header with no
        // token ("Bearer ", whose trailing space lws trims) carries no credentials: missing_token.
        guard !value.isEmpty else { throw .auth(.missingToken) }
        let scheme = value.prefix { $0 != " " && $0 != "\t" }
        guard scheme.lowercased() == "bearer" else {
            throw .auth(.malformedToken("expected an Authorization: Bearer <token> header"))
        }
        let token = String(value.dropFirst(scheme.count)).trimmingSpaces()
        guard !token.isEmpty else { throw .auth(.missingToken) }
        do throws(AuthError) {
            return try verifier.verify(token, now: env.now())
        } catch {
            throw .auth(error)
        }
    }

    /// Parses a JSON object body. An empty body is an empty object; a non-empty one needs a JSON content type.
    func jsonBody(_ request: HTTPRequest) throws(APIError) -> JSONObject {
        if request.body.isEmpty { return [:] }
        let type =
            (request.header("content-type") ?? "").split(separator: ";").first.map {
                String($0).trimmingSpaces().lowercased()
            } ?? ""
        guard type == "application/json" || type == "application/merge-patch+json" else {
            throw APIError(
                status: 415, code: "unsupported_media_type",
                message: "send the body as application/json (got \"\(type)\")")
        }
        let value: JSONValue
        do throws(JSONParseError) { value = try JSONParser.parse(request.body) } catch { throw .malformedJSON(error) }
        guard let obj = value.objectValue else {
            throw APIError(
                status: 400, code: "invalid_body", message: "the body must be a JSON object, got \(value.typeName)")
        }
        return obj
    }

    // MARK: - Responses

    static func json(_ status: Int, _ value: JSONValue, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("content-type", "application/json")] + headers, body: value.bytes())
    }

    static func json(_ status: Int, _ object: JSONObject) -> HTTPResponse { json(status, .object(object)) }

    static func errorResponse(_ e: APIError) -> HTTPResponse {
        var r = json(e.status, e.body, headers: e.headers)
        r.closeConnection = e.status == 411 || e.status == 413
        return r
    }

    // MARK: - CORS

    private func allowedOrigin(_ request: HTTPRequest) -> String? {
        guard let origin = request.header("origin"), !corsOrigins.isEmpty else { return nil }
        if corsOrigins.contains("*") { return "*" }
        return corsOrigins.contains(origin) ? origin : nil
    }

    private func addCORS(_ response: inout HTTPResponse, _ request: HTTPRequest) {
        // The answer depends on Origin whenever a list of origins is configured: say so to caches.
        if !corsOrigins.isEmpty && !corsOrigins.contains("*") { response.headers.append(("vary", "origin")) }
        guard let origin = allowedOrigin(request) else { return }
        response.headers.append(("access-control-allow-origin", origin))
        response.headers.append(("access-control-expose-headers", "www-authenticate, allow"))
        if request.method == .OPTIONS {
            response.headers.append(("access-control-allow-headers", "authorization, content-type"))
            response.headers.append(("access-control-max-age", "600"))
        }
    }

    private func preflight(_ route: Route) -> HTTPResponse {
        var r = HTTPResponse(status: 204, headers: [("allow", route.allowHeader)])
        r.headers.append(("access-control-allow-methods", route.allowHeader))
        return r
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}
