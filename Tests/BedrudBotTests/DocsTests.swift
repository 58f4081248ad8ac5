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

    @Test func cliDocumentsEveryExitCode() async throws {
        let doc = try String(contentsOf: Repo.root.appendingPathComponent("docs/CLI.md"), encoding: .utf8)
        for code in ExitCode.allCases { #expect(doc.contains("| \(code.rawValue) |"), "docs/CLI.md misses exit code \(code.rawValue)") }
    }
}
