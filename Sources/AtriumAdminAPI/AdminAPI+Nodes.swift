import AtriumAuth
import AtriumHTTP
import AtriumJSON
import AtriumModel
import AtriumRouting

/// `GET /v1/nodes`.
extension AdminAPI {
    func listNodes(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let claims = try authenticate(request)
        do throws(AuthError) { try claims.authorize(.listNodes) } catch { throw .auth(error) }
        guard let nodes else { return Self.json(200, ["nodes": .array([]), "cluster": .bool(false)]) }
        switch nodes.listNodes() {
        case .success(let list): return Self.json(200, ["nodes": .array(list), "cluster": .bool(true)])
        case .failure(let e):
            throw APIError(status: 503, code: "cluster_unavailable", message: e.message)
        }
    }
}
