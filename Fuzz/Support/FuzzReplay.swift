#if canImport(Glibc)
    import Glibc
#endif

/// Replays corpus files through a fuzz target without libFuzzer, so `make test` checks every kept input
/// still parses without a trap. Arguments: files or directories.
public enum FuzzReplay {
    public static func run(_ target: ([UInt8]) -> Void) {
        var count = 0
        for arg in CommandLine.arguments.dropFirst() {
            for path in files(arg) {
                guard let f = fopen(path, "rb") else { continue }
                var bytes: [UInt8] = []
                var buf = [UInt8](repeating: 0, count: 65536)
                while true {
                    let n = fread(&buf, 1, buf.count, f)
                    if n <= 0 { break }
                    bytes += buf[0..<n]
                }
                fclose(f)
                target(bytes)
                count += 1
            }
        }
        print("replayed \(count) inputs")
    }

    static func files(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [path] }
        defer { closedir(dir) }
        var out: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { out.append(path + "/" + name) }
        }
        return out.sorted()
    }
}
