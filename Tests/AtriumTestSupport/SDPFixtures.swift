public import Foundation

/// The captured SDPs in Fixtures/sdp (byte-exact captures, CRLF kept), found
/// relative to this source file so the tests run from a plain clone without bundle resources.
public enum SDPFixtures {
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/sdp")

    /// Every fixture file name, sorted.
    public static let names: [String] = {
        let all = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return all.filter { $0.hasSuffix(".sdp") }.sorted()
    }()

    public static func bytes(_ name: String) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else {
            return []
        }
        return [UInt8](data)
    }

    public static func text(_ name: String) -> String { String(decoding: bytes(name), as: UTF8.self) }
}
