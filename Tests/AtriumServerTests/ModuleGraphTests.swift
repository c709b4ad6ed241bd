import Foundation
import Testing

/// The module graph as Package.swift declares it: ARCHITECTURE.md's module table lists exactly these
/// modules and their dependencies, and every declared dependency is imported by its module's code.
@Suite struct ModuleGraphTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    struct Target {
        var name: String
        var dependencies: [String]
        var path: String
    }

    /// Every target but the test targets, with its dependencies and sources directory.
    static func declared() throws -> [Target] {
        let text = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let starts = try Regex(#"\.(systemLibrary|target|executableTarget|testTarget)\(\s*name:\s*"([^"]+)""#)
        let matches = text.matches(of: starts)
        var out: [Target] = []
        for (i, m) in matches.enumerated() {
            let kind = String(m.output[1].substring ?? "")
            let name = String(m.output[2].substring ?? "")
            guard kind != "testTarget" else { continue }
            let end = i + 1 < matches.count ? matches[i + 1].range.lowerBound : text.endIndex
            let body = text[m.range.upperBound..<end]
            var deps: [String] = []
            if let d = body.range(of: "dependencies:"), let close = body[d.upperBound...].firstIndex(of: "]") {
                for q in body[d.upperBound..<close].matches(of: try Regex(#""([^"]+)""#)) {
                    deps.append(String(q.output[1].substring ?? ""))
                }
            }
            var path = "Sources/\(name)"
            if let p = body.firstMatch(of: try Regex(#"path:\s*"([^"]+)""#)) {
                path = String(p.output[1].substring ?? "")
            }
            out.append(Target(name: name, dependencies: deps, path: path))
        }
        return out
    }

    /// ARCHITECTURE.md's `| Module | Job | Depends on |` table: module -> dependencies.
    static func documented() throws -> [String: [String]] {
        let text = try String(contentsOf: root.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        var rows: [String: [String]] = [:]
        var inTable = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("| Module | Job | Depends on |") {
                inTable = true
                continue
            }
            guard inTable else { continue }
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 4, cells[1].hasPrefix("`") else { continue }
            let name = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            let deps =
                cells[3] == "—"
                ? []
                : cells[3].components(separatedBy: ", ").map {
                    $0.trimmingCharacters(in: CharacterSet(charactersIn: "` "))
                }
            rows[name] = deps
        }
        return rows
    }

    @Test func architectureListsEveryModuleWithItsDependencies() throws {
        let declared = try Self.declared()
        let documented = try Self.documented()
        #expect(declared.count > 40)
        #expect(Set(documented.keys) == Set(declared.map(\.name)), "modules in ARCHITECTURE.md vs Package.swift")
        for t in declared {
            #expect(Set(documented[t.name] ?? ["(missing)"]) == Set(t.dependencies), "\(t.name)")
        }
    }

    @Test func everyDeclaredDependencyIsImported() throws {
        for t in try Self.declared() {
            let dir = Self.root.appendingPathComponent(t.path)
            guard let files = FileManager.default.enumerator(atPath: dir.path) else { continue }
            var imports = Set<String>()
            var swift = false
            for case let f as String in files where f.hasSuffix(".swift") {
                swift = true
                let text = try String(contentsOf: dir.appendingPathComponent(f), encoding: .utf8)
                for m in text.matches(of: try Regex(#"(?m)^\s*(?:@testable |public |package |internal )*import (\w+)"#))
                {
                    imports.insert(String(m.output[1].substring ?? ""))
                }
            }
            guard swift else { continue }
            let unused = t.dependencies.filter { !imports.contains($0) }
            #expect(unused.isEmpty, "\(t.name) declares \(unused) but imports none of them")
        }
    }
}
