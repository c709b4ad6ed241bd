public import AtriumHTTP
import AtriumJSON
import AtriumModel

#if canImport(Glibc)
    import Glibc
#endif

/// The browser side of the server: the meeting page at `/`, its assets under `/app/`, the JavaScript
/// client library at `/sdk/atrium.js` (its end-to-end encryption worker at `/sdk/e2ee-worker.js`), and in development mode `/dev/token`, which mints a participant
/// token without credentials. Everything else goes to the next handler (the admin API).
public final class WebHandler: HTTPHandler {
    /// Mints a participant token for the dev page: room, identity, display name, role.
    public typealias DevTokenMinter = (_ room: String, _ identity: String, _ name: String, _ role: String) -> String?

    let root: String
    let next: any HTTPHandler
    let devToken: DevTokenMinter?

    /// - Parameters:
    ///   - root: the directory holding `web/` (the page and its assets) and `js/atrium.js`.
    ///   - devToken: set only in development mode.
    public init(root: String, next: any HTTPHandler, devToken: DevTokenMinter?) {
        self.root = root
        self.next = next
        self.devToken = devToken
    }

    static let types: [String: String] = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
        "svg": "image/svg+xml", "png": "image/png", "ico": "image/x-icon", "json": "application/json",
    ]

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let path = request.path
        let file: String?
        switch path {
        case "/", "/index.html": file = "web/index.html"
        case "/sdk/atrium.js": file = "js/atrium.js"
        case "/sdk/e2ee-worker.js": file = "js/e2ee-worker.js"
        case "/dev/token": return token(request)
        default:
            if path.hasPrefix("/app/"), Self.isPlainName(path.dropFirst(5)) {
                file = "web/" + path.dropFirst(5)
            } else {
                file = nil
            }
        }
        guard let file else { return next.handle(request) }
        guard request.method == .GET || request.method == .HEAD else {
            return error(
                405, "method_not_allowed", "\(request.method.rawValue) is not allowed on \(path)",
                [("allow", "GET, HEAD")])
        }
        guard let bytes = Self.read(root + "/" + file) else {
            return error(404, "not_found", "\(path) is not installed (web root \(root))")
        }
        let ext = String(file.split(separator: ".").last ?? "")
        return HTTPResponse(
            status: 200,
            headers: [
                ("content-type", Self.types[ext] ?? "application/octet-stream"), ("cache-control", "no-cache"),
                ("x-content-type-options", "nosniff"),
            ],
            body: request.method == .HEAD ? [] : bytes)
    }

    public func refuse(_ request: HTTPRequest, status: Int, code: String, message: String) -> HTTPResponse {
        next.refuse(request, status: status, code: code, message: message)
    }

    /// `GET /dev/token?room=R&name=N[&identity=I][&role=host]`: development mode only.
    func token(_ request: HTTPRequest) -> HTTPResponse {
        guard let devToken else {
            return error(404, "not_found", "/dev/token exists only in development mode (--dev)")
        }
        guard request.method == .GET else {
            return error(405, "method_not_allowed", "use GET", [("allow", "GET")])
        }
        let q = Dictionary(request.query.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })
        guard let room = q["room"], !room.isEmpty, room.utf8.count <= 128 else {
            return invalidQuery("room", "room: is required (1 to 128 bytes)")
        }
        guard Room.isValidName(room) || RoomID.isWellFormed(room) else {
            return HTTPResponse(
                status: 422, headers: [("content-type", "application/json")],
                body: JSONValue.object([
                    "error": .object([
                        "code": .string("invalid_room_name"), "field": .string("room"),
                        "message": .string(Room.invalidNameMessage(room)),
                    ])
                ]).bytes())
        }
        let name = q["name"].flatMap { $0.isEmpty ? nil : $0 } ?? "guest"
        guard name.utf8.count <= 256 else { return invalidQuery("name", "name: longer than 256 bytes") }
        let role = q["role"] ?? "host"
        guard ["host", "cohost", "participant", "viewer"].contains(role) else {
            return invalidQuery("role", "role: expected host, cohost, participant or viewer")
        }
        let identity = q["identity"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.randomIdentity(name)
        guard let token = devToken(room, identity, name, role) else {
            return invalidQuery("identity", "identity: 1 to 256 characters, no control characters or '/'")
        }
        return HTTPResponse(
            status: 200, headers: [("content-type", "application/json"), ("cache-control", "no-store")],
            body: JSONValue.object([
                "token": .string(token), "room": .string(room), "identity": .string(identity), "role": .string(role),
            ]).bytes())
    }

    func invalidQuery(_ field: String, _ message: String) -> HTTPResponse {
        HTTPResponse(
            status: 422, headers: [("content-type", "application/json")],
            body: JSONValue.object([
                "error": .object([
                    "code": .string("invalid_query"), "message": .string(message), "field": .string(field),
                ])
            ]).bytes())
    }

    func error(_ status: Int, _ code: String, _ message: String, _ headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: [("content-type", "application/json")] + headers.map { (name: $0.0, value: $0.1) },
            body: JSONValue.object(["error": .object(["code": .string(code), "message": .string(message)])]).bytes())
    }

    static func isPlainName(_ name: Substring) -> Bool {
        !name.isEmpty && name.count <= 64 && !name.hasPrefix(".")
            && name.utf8.allSatisfy { c in
                (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x2E || c == 0x2D || c == 0x5F
            }
    }

    static func randomIdentity(_ name: String) -> String {
        var g = SystemRandomNumberGenerator()
        let suffix = String(UInt32.random(in: 0...UInt32.max, using: &g), radix: 36)
        let base = String(
            name.unicodeScalars.filter { $0.properties.isAlphabetic || ("0"..."9").contains($0) }.prefix(24))
        return (base.isEmpty ? "guest" : base.lowercased()) + "-" + suffix
    }

    static func read(_ path: String) -> [UInt8]? {
        guard let f = fopen(path, "rb") else { return nil }
        defer { fclose(f) }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buffer, 1, buffer.count, f)
            if n > 0 { out += buffer[0..<n] }
            if n < buffer.count { break }
        }
        return ferror(f) == 0 ? out : nil
    }
}
