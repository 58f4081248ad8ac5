import BedrudBot
import Foundation
import Testing
import TestSupport

/// The documentation lists exactly what the program does.
@Suite struct DocsTests {
    @Test func configDocumentsEveryKey() async throws {
        let doc = try String(contentsOf: Repo.root.appendingPathComponent("docs/CONFIG.md"), encoding: .utf8)
        for spec in SettingSpec.all {
            #expect(doc.contains("| `\(spec.key)` |"), "docs/CONFIG.md misses \(spec.qualifiedName)")
        }
        for (name, _) in SettingSpec.extraEnvironment { #expect(doc.contains(name)) }
    }

    /// docs/SMOKE.md has a row per stage with its exit code, and CLI.md lists no code the
    /// program does not have (11 is kept as retired).
    @Test func smokeDocumentsEveryStageAndCode() async throws {
        let smoke = try String(contentsOf: Repo.root.appendingPathComponent("docs/SMOKE.md"), encoding: .utf8)
        for stage in SmokeStage.allCases {
            #expect(smoke.contains("| `\(stage.rawValue)` |"), "docs/SMOKE.md misses stage \(stage.rawValue)")
            #expect(smoke.contains("| \(stage.exitCode.rawValue) |"), "docs/SMOKE.md misses exit code \(stage.exitCode.rawValue)")
        }
        let cli = try String(contentsOf: Repo.root.appendingPathComponent("docs/CLI.md"), encoding: .utf8)
        let rows = cli.split(separator: "\n").compactMap { line -> Int32? in
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            return line.hasPrefix("| ") ? cells.first.flatMap { Int32($0) } : nil
        }
        #expect(Set(rows) == Set(ExitCode.allCases.map(\.rawValue) + [11]), "docs/CLI.md exit-code rows: \(rows)")
    }

    @Test func cliDocumentsEveryExitCode() async throws {
        let doc = try String(contentsOf: Repo.root.appendingPathComponent("docs/CLI.md"), encoding: .utf8)
        for code in ExitCode.allCases { #expect(doc.contains("| \(code.rawValue) |"), "docs/CLI.md misses exit code \(code.rawValue)") }
    }
}
