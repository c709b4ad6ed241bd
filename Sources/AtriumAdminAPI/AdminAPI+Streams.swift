import AtriumAuth
import AtriumHTTP
import AtriumJSON
import AtriumModel
import AtriumRecording
import AtriumRooms

#if canImport(Glibc)
    import Glibc
#endif

/// Live streams of a live room to RTMP(S) or HLS (admin API: start, list, read, stop, restart), and
/// an HLS stream's playlist and segments for players, under a token of the room.
extension AdminAPI {
    private func streamRoom(_ request: HTTPRequest, _ params: [String: String], write: Bool) throws(APIError)
        -> (Room, StreamManager)
    {
        let claims = try authenticate(request)
        let room = try find(params["roomId"] ?? "")
        do throws(AuthError) { try claims.authorize(write ? .administerRoom(room) : .readRoom(room)) } catch {
            throw .auth(error)
        }
        guard let streams else {
            throw APIError(
                status: 503, code: "stream_unavailable", message: "live streaming needs the media plane on this node")
        }
        return (room, streams)
    }

    func startStream(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (room, streams) = try streamRoom(request, params, write: true)
        let body = try jsonBody(request)
        guard !room.e2ee else { throw .e2eeRoom("a live stream") }
        do throws(StreamError) {
            let parsed = try StreamRequest(json: body)
            return Self.json(201, try streams.start(parsed, room: room).json)
        } catch {
            throw .stream(error)
        }
    }

    func listStreams(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (room, streams) = try streamRoom(request, params, write: false)
        return Self.json(200, ["streams": .array(streams.list(room: room.id).map(\.json))])
    }

    func getStream(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (room, streams) = try streamRoom(request, params, write: false)
        let id = params["streamId"] ?? ""
        guard let s = streams.stream(room: room.id, id: id) else { throw .stream(.streamNotFound(id)) }
        return Self.json(200, s.json)
    }

    func stopStream(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (room, streams) = try streamRoom(request, params, write: true)
        do throws(StreamError) {
            return Self.json(200, try streams.stop(room: room.id, id: params["streamId"] ?? "").json)
        } catch {
            throw .stream(error)
        }
    }

    func restartStream(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let (room, streams) = try streamRoom(request, params, write: true)
        guard !room.e2ee else { throw .e2eeRoom("a live stream") }
        do throws(StreamError) {
            return Self.json(200, try streams.restart(room: room.id, id: params["streamId"] ?? "").json)
        } catch {
            throw .stream(error)
        }
    }

    /// An HLS stream's playlist or segment. The token (Bearer, or `?token=` for players that cannot
    /// set headers) is a participant token of the room that may subscribe, or an admin token that may
    /// read it. A playlist asked for with `?token=` is served with the token on each segment's URI.
    func serveHLS(_ request: HTTPRequest, _ params: [String: String]) throws(APIError) -> HTTPResponse {
        let query = request.queryValue("token")
        let claims: TokenClaims
        if request.header("authorization") != nil || query == nil {
            claims = try authenticate(request)
        } else {
            do throws(AuthError) { claims = try verifier.verify(query ?? "", now: env.now()) } catch {
                throw .auth(error)
            }
        }
        let room = try find(params["roomId"] ?? "")
        let viewer =
            claims.grants.roomJoin && claims.grants.canSubscribe && claims.grants.room.map(room.matchesScope) == true
        if !viewer {
            do throws(AuthError) { try claims.authorize(.readRoom(room)) } catch { throw .auth(error) }
        }
        guard let streams else {
            throw APIError(
                status: 503, code: "stream_unavailable", message: "live streaming needs the media plane on this node")
        }
        let id = params["streamId"] ?? ""
        guard let s = streams.stream(room: room.id, id: id), s.output == .hls else {
            throw .stream(.streamNotFound(id))
        }
        let file = params["file"] ?? ""
        let playlist = file.hasSuffix(".m3u8")
        guard Self.isHLSFileName(file),
            let bytes = Self.readFile(streams.hlsDirectory(room: room.id, id: id) + "/" + file)
        else {
            throw APIError(status: 404, code: "not_found", message: "no HLS file \"\(file)\" (yet)")
        }
        var body = bytes
        if playlist, let token = query {
            // Players resolve segment URIs against the playlist's, without its query: the token goes on each.
            let text = String(decoding: bytes, as: UTF8.self)
            body = Array(
                text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                    line.isEmpty || line.hasPrefix("#") ? String(line) : "\(line)?token=\(token)"
                }.joined(separator: "\n").utf8)
        }
        return HTTPResponse(
            status: 200,
            headers: [
                ("content-type", playlist ? "application/vnd.apple.mpegurl" : "video/mp2t"),
                ("cache-control", playlist ? "no-cache" : "max-age=60"), ("access-control-allow-origin", "*"),
            ],
            body: body)
    }

    /// A playlist or segment name ffmpeg writes: letters, digits, `_`, `-` and one extension.
    static func isHLSFileName(_ name: String) -> Bool {
        guard name.utf8.count <= 64, name.hasSuffix(".m3u8") || name.hasSuffix(".ts") else { return false }
        return name.first != "." && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-.".contains($0)) }
            && !name.contains("..")
    }

    static func readFile(_ path: String) -> [UInt8]? {
        guard let f = fopen(path, "rb") else { return nil }
        defer { fclose(f) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&chunk, 1, chunk.count, f)
            if n > 0 { out.append(contentsOf: chunk[0..<n]) }
            if n < chunk.count { break }
            // Segments are a few MiB at most; a file past 64 MiB is not one.
            if out.count > 64 << 20 { return nil }
        }
        return out
    }
}

extension APIError {
    static func stream(_ e: StreamError) -> APIError {
        switch e {
        case .invalidField(let f, let m): .invalidField(f, m)
        case .roomNotLive:
            APIError(status: 409, code: "room_not_live", message: "nobody is in this room: there is nothing to stream")
        case .streamNotFound(let id):
            APIError(status: 404, code: "stream_not_found", message: "no stream \"\(id)\" in this room")
        case .streamEnded(let id):
            APIError(status: 409, code: "stream_ended", message: "stream \"\(id)\" ended: start a new one")
        case .unavailable(let why): APIError(status: 503, code: "stream_unavailable", message: why)
        }
    }
}
