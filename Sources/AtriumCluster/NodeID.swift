/// A node's id in the cluster: 1 to 64 characters of `A-Z a-z 0-9 _ - .` (safe in Redis keys, URLs and
/// logs). Given with `--node-id` or made at start (`node-` and random base32).
public struct NodeID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    public static func < (a: NodeID, b: NodeID) -> Bool { a.rawValue < b.rawValue }

    public static func isValid(_ s: String) -> Bool {
        let u = s.utf8
        guard !u.isEmpty, u.count <= 64 else { return false }
        return u.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                || c == 0x5F || c == 0x2D || c == 0x2E
        }
    }
}
