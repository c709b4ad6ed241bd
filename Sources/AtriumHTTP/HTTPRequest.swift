/// HTTP methods the edge recognises. Anything else is answered 405 by the router.
public enum HTTPMethod: String, Sendable, CaseIterable {
    case GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS
}

/// A complete HTTP request as the edge delivers it: body fully read, header names lower-cased.
/// The edge copies only the headers the application reads (authorization, content-type, content-length,
/// origin, transfer-encoding and the CORS preflight headers; see `EdgeServer`).
public struct HTTPRequest: Sendable {
    public var method: HTTPMethod
    /// The path without the query, percent-decoded by the edge.
    public var path: String
    /// Query parameters in order, decoded.
    public var query: [(name: String, value: String)]
    public var headers: [String: String]
    public var body: [UInt8]

    public init(
        method: HTTPMethod, path: String, query: [(name: String, value: String)] = [],
        headers: [String: String] = [:], body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? { headers[name] }
    public func queryValue(_ name: String) -> String? { query.first { $0.name == name }?.value }
}

/// An HTTP response. `closeConnection` asks the edge to close after sending (used when the request
/// body could not be read safely, e.g. a chunked or oversized body).
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    public var closeConnection = false

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// Answers requests. Implemented by the admin API; the edge calls it on its service thread.
public protocol HTTPHandler: AnyObject {
    func handle(_ request: HTTPRequest) -> HTTPResponse
    /// Builds the response for a request the edge refused before reading its body
    /// (411 chunked, 413 too large), in the application's error shape.
    func refuse(_ request: HTTPRequest, status: Int, code: String, message: String) -> HTTPResponse
}
