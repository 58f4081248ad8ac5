import Foundation
import Testing
import TestSupport

@testable import BedrudBot

/// ``SettingSpec/all`` is the one table of settings: docs/CONFIG.md's key tables and its
/// "Limits" table say exactly what it says, in both directions.
extension SettingSpecTests {
    struct DocRow: Hashable, CustomStringConvertible {
        var section: String
        var key: String
        /// The default cell when it is one literal (`` `60s` ``); nil for "—" or prose.
        var literalDefault: String?
        var description: String { section.isEmpty ? key : "\(section).\(key)" }
    }

    /// The rows of the key tables, by the section heading above them.
    static func documentedRows() throws -> [DocRow] {
        let doc = try String(contentsOf: Repo.root.appendingPathComponent("docs/CONFIG.md"), encoding: .utf8)
        let headings = ["## Top-level keys": "", "## `[network]`": "network", "## `[record]`": "record", "## `[serve]`": "serve", "## `[smoke]`": "smoke",
                        "## `[instance NAME]`": "instance"]
        var section: String?
        var rows: [DocRow] = []
        for line in doc.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("#") {
                section = headings[line]
                continue
            }
            guard let section, line.hasPrefix("| `") else { continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > 4 else { continue }
            let key = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            let d = cells[3]
            let literal = d.hasPrefix("`") && d.hasSuffix("`") && d.dropFirst().dropLast().allSatisfy { $0 != "`" } && d.count > 2
            rows.append(DocRow(section: section, key: key, literalDefault: literal ? String(d.dropFirst().dropLast()) : nil))
        }
        return rows
    }

    @Test func theDocsHaveARowForEveryKeyAndNoOther() throws {
        let rows = try Self.documentedRows()
        let documented = Set(rows.map { "\($0.section)|\($0.key)" })
        let table = Set(SettingSpec.all.map { "\($0.section)|\($0.key)" })
        #expect(rows.count == documented.count, "a key is documented twice")
        #expect(table.subtracting(documented).isEmpty, "docs/CONFIG.md misses \(table.subtracting(documented).sorted())")
        #expect(documented.subtracting(table).isEmpty, "docs/CONFIG.md documents keys the program does not read: \(documented.subtracting(table).sorted())")
    }

    /// A literal default in the docs is the table's; "—" or a description (computed
    /// folders) where the table has none.
    @Test func theDocumentedDefaultsAreTheTables() throws {
        for row in try Self.documentedRows() {
            guard let spec = SettingSpec.spec(section: row.section, key: row.key) else { continue }
            #expect(row.literalDefault == spec.defaultValue, "\(row): docs say \(row.literalDefault ?? "none"), the table \(spec.defaultValue ?? "none")")
        }
    }

    /// "Limits" has one row per duration and size setting, with the table's maximum, and no other.
    @Test func theLimitsAreTheTables() throws {
        let doc = try String(contentsOf: Repo.root.appendingPathComponent("docs/CONFIG.md"), encoding: .utf8)
        guard let start = doc.range(of: "### Limits"), let end = doc.range(of: "\n## ", range: start.upperBound..<doc.endIndex) else {
            Issue.record("docs/CONFIG.md has no Limits section")
            return
        }
        let limits = doc[start.upperBound..<end.lowerBound].split(separator: "\n").filter { $0.hasPrefix("| `") }.map(String.init)
        let expected = SettingSpec.all.filter { $0.kind == .duration || $0.kind == .size }.map {
            "| `\($0.qualifiedName)` | \($0.kind == .duration ? "duration" : "size") | `\($0.maximumText ?? "")` |"
        }
        #expect(limits == expected)
    }

    /// Every value the table names as a default passes the table's own check.
    @Test func everyDefaultPassesItsOwnCheck() {
        for spec in SettingSpec.all {
            if let d = spec.defaultValue { #expect(spec.problem(with: d) == nil, "\(spec.qualifiedName) = \(d)") }
            #expect(spec.problem(with: spec.example.trimmingCharacters(in: CharacterSet(charactersIn: "\""))) == nil || spec.kind == .fingerprints,
                    "\(spec.qualifiedName) example \(spec.example)")
        }
    }
}
