import AtriumCrypto
import AtriumJSON

#if canImport(Glibc)
    import Glibc
#endif

/// The development API key `--dev` creates on first start and keeps in the data directory
/// (mode 0600), so that restarts reuse it and tokens minted earlier stay valid.
public struct DevCredentials: Equatable, Sendable {
    public static let fileName = "dev-key.json"
    public var key: String
    public var secret: String

    /// Reads the dev key from `dir`, creating it when absent.
    public static func loadOrCreate(in dir: String) throws(ServerError) -> (DevCredentials, created: Bool) {
        let path = dir + "/" + fileName
        if let bytes = readFile(path) {
            guard let v = try? JSONParser.parse(bytes), let key = v["key"]?.stringValue,
                let secret = v["secret"]?.stringValue, !key.isEmpty, !secret.isEmpty
            else { throw .startup("\(path) is not a dev key file; delete it to create a new key") }
            return (DevCredentials(key: key, secret: secret), false)
        }
        let creds = DevCredentials(
            key: "dev" + Base64URL.encode(SecureRandom.bytes(6)).lowercased(),
            secret: Base64URL.encode(SecureRandom.bytes(32)))
        let text = JSONValue.object(["key": .string(creds.key), "secret": .string(creds.secret)]).serialized() + "\n"
        guard writeFile(path, Array(text.utf8), mode: 0o600) else { throw .startup("cannot write \(path)") }
        return (creds, true)
    }
}

func readFile(_ path: String) -> [UInt8]? {
    guard let f = fopen(path, "rb") else { return nil }
    defer { fclose(f) }
    var out: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buf, 1, buf.count, f)
        if n <= 0 { break }
        out += buf[0..<n]
    }
    return out
}

func writeFile(_ path: String, _ bytes: [UInt8], mode: mode_t) -> Bool {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count
}

/// Creates a directory and its parents (mkdir -p).
func makeDirectories(_ path: String) -> Bool {
    var current = path.hasPrefix("/") ? "/" : ""
    for part in path.split(separator: "/") {
        current += (current.isEmpty || current.hasSuffix("/") ? "" : "/") + part
        if mkdir(current, 0o750) != 0 && errno != EEXIST { return false }
    }
    return true
}

/// Reads a whole file (public for the command line's `config check`).
public func readWholeFile(_ path: String) -> [UInt8]? { readFile(path) }
