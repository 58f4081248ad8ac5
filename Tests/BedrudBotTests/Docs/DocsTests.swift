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

/// The prose docs name files, types, folders, threads and figures; each check here reads
/// the tree and fails when a doc names what is no longer there, or the code starts what
/// the doc does not list.
@Suite struct DocsDriftTests {
    // MARK: - Reading the tree

    static func text(_ path: String) throws -> String {
        try String(contentsOf: Repo.root.appendingPathComponent(path), encoding: .utf8)
    }

    /// Repo-relative paths of the files under `folder` (recursively) ending in `suffix`.
    static func files(under folder: String, ending suffix: String = "") -> [String] {
        let base = Repo.root.appendingPathComponent(folder)
        guard let e = FileManager.default.enumerator(atPath: base.path) else { return [] }
        return e.compactMap { $0 as? String }.filter { $0.hasSuffix(suffix) }.map { folder + "/" + $0 }.sorted()
    }

    /// README.md and every Markdown file in docs/ (not docs/reference: fact sheets of other projects).
    static func prose() throws -> [(name: String, text: String)] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: Repo.root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        return try (["README.md"] + docs).map { ($0, try text($0)) }
    }

    /// The text between `heading` and the next heading of the same or a higher level.
    static func section(_ heading: String, of text: String) -> String? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == heading }) else { return nil }
        let level = heading.prefix { $0 == "#" }.count
        let end = lines[(start + 1)...].firstIndex { line in
            let hashes = line.prefix { $0 == "#" }.count
            return hashes > 0 && hashes <= level && line.dropFirst(hashes).hasPrefix(" ")
        } ?? lines.endIndex
        return lines[(start + 1)..<end].joined(separator: "\n")
    }

    /// Every `code span` of a Markdown text.
    static func codeSpans(_ text: String) -> [String] {
        text.matches(of: /`([^`\n]+)`/).map { String($0.output.1) }
    }

    /// Swift files under Sources/ and Tests/ with their text, read once.
    static let swiftFiles: [(path: String, text: String)] = (files(under: "Sources", ending: ".swift") + files(under: "Tests", ending: ".swift"))
        .compactMap { p in (try? text(p)).map { (p, $0) } }

    /// The targets Package.swift declares, with their dependencies.
    static func packageTargets() throws -> [(name: String, dependencies: [String])] {
        let package = try text("Package.swift")
        var out: [(String, [String])] = []
        for m in package.matches(of: /\.(?:target|executableTarget|testTarget)\(\s*name: "([^"]+)"(?:,\s*dependencies: \[([^\]]*)\])?/) {
            let deps = m.output.2.map { $0.matches(of: /"([^"]+)"/).map { String($0.output.1) } } ?? []
            out.append((String(m.output.1), deps))
        }
        for m in package.matches(of: /shim\("([A-Za-z]+)"/) { out.append((String(m.output.1), [])) }
        return out
    }

    // MARK: - Checks

    /// A path named in the docs (`Session/RoomRun.swift`, `Sources/…`, `Tests/…`, with or
    /// without a `:line`) names a file that exists.
    @Test func everyNamedSourceFileExists() throws {
        let all = Self.files(under: "Sources") + Self.files(under: "Tests") + Self.files(under: "scripts")
        for (doc, text) in try Self.prose() {
            var named = Self.codeSpans(text).compactMap { span -> String? in
                let path = span.split(separator: ":").first.map(String.init) ?? span
                return path.hasSuffix(".swift") && !path.contains(" ") ? path : nil
            }
            named += text.matches(of: /(?:^|[\s(`])((?:Sources|Tests)\/[A-Za-z0-9_+.\/*-]*[A-Za-z0-9_*])/.anchorsMatchLineEndings()).map { String($0.output.1) }
            for path in named where !path.contains("<") {   // `Tests/<Target>Tests/…` is a pattern
                let exists = all.contains { file in Self.matches(file, path) }
                #expect(exists, "\(doc) names \(path), which is not in the tree")
            }
        }
    }

    /// `file` (repo-relative) is `pattern` or ends in `/pattern`; `*` in the pattern matches within one name.
    static func matches(_ file: String, _ pattern: String) -> Bool {
        let parts = pattern.split(separator: "*", omittingEmptySubsequences: false)
        guard parts.count > 1 else { return file == pattern || file.hasSuffix("/" + pattern) || file.hasPrefix(pattern + "/") }
        let body = parts.map { $0.replacing(/[.+?()\[\]{}|^$\\]/) { "\\" + $0.output } }.joined(separator: "[^/]*")
        guard let regex = try? Regex("(^|/)" + body + "$") else { return false }
        return file.contains(regex)
    }

    /// Names in the docs that look like one of our types (two or more capitalised humps,
    /// `RoomState`, `MediaEngine.nextDueNanos`) are declared in Sources/ or Tests/ or are a
    /// target; names of other projects' code are listed here, each with where it is from.
    @Test func everyNamedTypeExists() throws {
        let foreign: Set<String> = [
            "UnsubscribeFromTrack", "UpdateSubscribedTrackSettings",   // LiveKit's Go (pkg/rtc)
            "AudioMixer", "AudioStream", "AudioSource",                // the LiveKit Python SDK
            "CanonicalizeEmail", "MaxRoomsPerUser",                    // Bedrud's Go
            "FoundationEssentials", "CommandLine",                     // the Swift toolchain
            "VmHWM", "VmRSS",                                          // /proc/PID/status fields
            "GetAudioLevel",                                           // LiveKit's Go (pkg/sfu)
        ]
        var declared = Set(try Self.packageTargets().map(\.name))
        for file in Self.swiftFiles {
            for m in file.text.matches(of: /\b(?:struct|class|enum|actor|protocol|typealias|extension)\s+([A-Z][A-Za-z0-9]*)/) {
                declared.insert(String(m.output.1))
            }
        }
        for (doc, text) in try Self.prose() {
            for span in Self.codeSpans(text) {
                guard !span.hasSuffix(".swift"), let m = span.wholeMatch(of: /([A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+)(?:\.[a-z][A-Za-z0-9]*)?/) else { continue }
                let name = String(m.output.1)
                #expect(declared.contains(name) || foreign.contains(name), "\(doc) names `\(span)`; no type \(name) is declared")
            }
        }
    }

    /// Every folder Package.swift names (a target's `path:`, a source target's folder, the
    /// BedrudCore folders its header lists) exists, and a library target's dependencies on
    /// our own targets are exactly the ones its files import.
    @Test func packageNamesOnlyWhatExistsAndImportsWhatItDependsOn() throws {
        let package = try Self.text("Package.swift")
        for m in package.matches(of: /path: "([^"\\]+)"/) {
            #expect(FileManager.default.fileExists(atPath: Repo.root.appendingPathComponent(String(m.output.1)).path), "Package.swift names path \(m.output.1)")
        }
        let targets = try Self.packageTargets()
        let names = Set(targets.map(\.name))
        if let line = package.firstMatch(of: /\/\/\s+BedrudCore\s+[^\n:]*:\s*([^\n]+)/) {
            for folder in line.output.1.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                var isDir: ObjCBool = false
                let exists = FileManager.default.fileExists(atPath: Repo.root.appendingPathComponent("Sources/BedrudCore/" + folder).path, isDirectory: &isDir)
                #expect(exists && isDir.boolValue, "Package.swift's header lists BedrudCore/\(folder), which is not a folder")
            }
        } else {
            Issue.record("Package.swift's header no longer lists BedrudCore's folders")
        }
        for target in targets where FileManager.default.fileExists(atPath: Repo.root.appendingPathComponent("Sources/" + target.name).path) {
            let sources = Self.swiftFiles.filter { $0.path.hasPrefix("Sources/\(target.name)/") }
            guard !sources.isEmpty else { continue }   // a C shim: module.modulemap only
            var imported = Set<String>()
            for file in sources {
                for m in file.text.matches(of: /^(?:@testable |@_exported )?import ([A-Za-z_]+)/.anchorsMatchLineEndings()) where names.contains(String(m.output.1)) {
                    imported.insert(String(m.output.1))
                }
            }
            let unused = Self.knownUnusedDependencies[target.name] ?? []
            #expect(imported == Set(target.dependencies).subtracting(unused), "\(target.name): Package.swift depends on \(target.dependencies.sorted()), its files import \(imported.sorted())")
        }
    }

    /// ARCHITECTURE.md's Layers table has a row for every target of Sources/ (a C shim,
    /// a layer, the benchmark, the executable), and names no target that is gone.
    @Test func layersTableListsEveryTarget() throws {
        let arch = try Self.text("docs/ARCHITECTURE.md")
        let table = try #require(Self.section("## Layers", of: arch), "ARCHITECTURE.md has no Layers section")
        var listed = Set<String>()
        for line in table.split(separator: "\n") where line.hasPrefix("| `") {
            let first = line.dropFirst(2).prefix { $0 != "|" }
            listed.formUnion(Self.codeSpans(String(first)))
        }
        let targets = try Self.packageTargets().map(\.name)
            .filter { FileManager.default.fileExists(atPath: Repo.root.appendingPathComponent("Sources/" + $0).path) }
        #expect(!targets.isEmpty)
        #expect(listed == Set(targets), "Layers table: \(listed.sorted()); Package.swift's targets in Sources/: \(targets.sorted())")
    }

    /// Dependencies Package.swift declares that no file imports, known and to be removed (in
    /// Package.swift, with the entry here). None today.
    static let knownUnusedDependencies: [String: Set<String>] = [:]

    /// The thread table in ARCHITECTURE.md lists exactly the names the code starts threads with.
    @Test func threadTableListsTheThreadsTheCodeStarts() throws {
        let arch = try Self.text("docs/ARCHITECTURE.md")
        let table = try #require(Self.section("### Every thread the process starts", of: arch), "ARCHITECTURE.md has no thread table")
        var listed = Set<String>()
        for line in table.split(separator: "\n") where line.hasPrefix("| `") {
            let first = line.split(separator: "|").first ?? ""
            for span in Self.codeSpans(String(first)) { listed.insert(span) }
        }
        var started = Set<String>()
        for file in Self.swiftFiles where file.path.hasPrefix("Sources/") {
            for m in file.text.matches(of: /(?:OSThread\.start|GLibLoop|MediaWorker|PageWriterThread|BlockingWork\.run)\(name: "([^"]+)"/) {
                started.insert(String(m.output.1).replacing(/\\\([^)]*\)/, with: "N"))
            }
        }
        #expect(!started.isEmpty)
        #expect(listed == started, "listed but not started: \(listed.subtracting(started).sorted()); started but not listed: \(started.subtracting(listed).sorted())")
        // The table says usrsctp starts no thread of its own.
        let threaded = Self.swiftFiles.filter { $0.path.hasPrefix("Sources/") && $0.text.contains("usrsctp_init(") }.map(\.path)
        #expect(threaded.isEmpty, "usrsctp started with its own threads in \(threaded)")
    }

    /// Below the bot layer the wall clock is read only in the files ARCHITECTURE.md's
    /// *Clocks* convention names.
    @Test func wallClockBelowTheBotLayerOnlyWhereTheDocSays() throws {
        let arch = try Self.text("docs/ARCHITECTURE.md")
        let start = try #require(arch.range(of: "- **Clocks.**"), "ARCHITECTURE.md has no Clocks convention")
        let rest = arch[start.upperBound...]
        let clocks = rest.range(of: "\n- **").map { rest[..<$0.lowerBound] } ?? rest
        let readers = Self.swiftFiles.filter { file in
            file.path.hasPrefix("Sources/") && !file.path.hasPrefix("Sources/BedrudBot/") && !file.path.hasPrefix("Sources/bedrud-bot/")
                && file.text.contains(/\bDate\(\)|Date\(timeIntervalSinceNow|CLOCK_REALTIME|gettimeofday\(|timeIntervalSince1970/)
        }
        #expect(!readers.isEmpty)
        for file in readers {
            let name = file.path.split(separator: "/").last.map(String.init) ?? file.path
            #expect(clocks.contains("`\(name)`"), "\(file.path) reads the wall clock; ARCHITECTURE.md's Clocks convention does not name it")
        }
    }

    /// The README's measured figures, each tied to the figure it names: the words that follow
    /// the number in the README, and words that stand beside the same number on one line of
    /// docs/BENCHMARKS.md. A number that moves in BENCHMARKS.md but not in the README (or is
    /// found there only as some other measurement) fails here.
    static let readmeFigures: [(number: String, readme: String, benchmarks: String)] = [
        ("2", "-vCPU KVM guest", "2-vCPU"),
        ("4,400", " passthrough tracks per core end to end", "real-time tracks per core end to end"),
        ("14", ")", "AES-CM"),
        ("191", " KB resident per decoded track", "resident memory per track: full"),
    ]

    @Test func readmeFiguresAreTheFiguresTheyName() throws {
        let readme = try Self.text("README.md")
        let bench = try Self.text("docs/BENCHMARKS.md")
        let start = try #require(readme.range(of: "Measured\nfigures") ?? readme.range(of: "Measured figures"), "README has no measured figures")
        let rest = readme[start.lowerBound...]
        let paragraph = String(rest.range(of: "\n\n").map { rest[..<$0.lowerBound] } ?? rest).replacingOccurrences(of: "\n", with: " ")
        /// Numbers as written (`4,400`, `161.2`), with a trailing `.0` dropped (`191.0` is `191`).
        func numbers<S: StringProtocol>(_ s: S) -> [String] {
            s.split(whereSeparator: { !($0.isASCII && ($0.isNumber || $0 == "," || $0 == ".")) }).compactMap { raw in
                var token = String(raw)
                while let last = token.last, last == "," || last == "." { token.removeLast() }
                if token.hasSuffix(".0") { token.removeLast(2) }
                return token.first?.isNumber == true ? token : nil
            }
        }
        #expect(Set(numbers(paragraph)) == Set(Self.readmeFigures.map(\.number)),
                "the README's figures changed: tie each to its figure in readmeFigures")
        for figure in Self.readmeFigures {
            #expect(paragraph.contains(figure.number + figure.readme), "README no longer says \(figure.number)\(figure.readme)")
            let tied = bench.split(separator: "\n").contains { line in
                line.contains(figure.benchmarks) && numbers(line).contains(figure.number)
            }
            #expect(tied, "docs/BENCHMARKS.md has no line with \(figure.number) beside \"\(figure.benchmarks)\"")
        }
    }

    /// ARCHITECTURE.md: every program a test starts goes through `TestSupport.ChildProcess`.
    @Test func testsStartProgramsOnlyThroughChildProcess() throws {
        let starters = Self.swiftFiles.filter { file in
            file.path.hasPrefix("Tests/") && file.path != "Tests/TestSupport/ChildProcess.swift" && !file.path.hasSuffix("/DocsTests.swift")
                && file.text.contains(/[^A-Za-z]Process\(\)|posix_spawn|[^A-Za-z_]fork\(\)|[^A-Za-z_]execv/)
        }.map(\.path)
        #expect(starters.isEmpty, "these start programs themselves: \(starters)")
    }

    /// The folders of a test target that mirror no folder of its sources, each with why.
    static let testFoldersOutsideSources: [String: String] = [
        "CLITests": "end-to-end suites: the built binary against the development server, grouped by the command they run",
        "Docs": "these suites: the docs checked against the tree",
        "Support": "a test target's own helpers (test signals, peer processes, logs)",
        "Fixtures": "test data (SDP texts, LiveKit bytes, event lines)",
        "Fuzz": "seeded random input across a target's parsers and live transports at once",
        "PionConformance": "our PeerConnection against pion, LiveKit's own WebRTC stack: the whole stack at once",
    ]

    /// ARCHITECTURE.md: tests mirror sources. A Swift file of `Tests/<Target>Tests/` lies in
    /// a folder of `Sources/<Target>/` that holds Swift files (the test target's root only
    /// when the source target has files at its root), or below a folder of
    /// `testFoldersOutsideSources`; `Tests/TestSupport` is the shared support target.
    @Test func testFoldersMirrorSourceFolders() throws {
        var misplaced: [String] = []
        var used = Set<String>()
        for file in Self.files(under: "Tests", ending: ".swift") {
            let parts = file.split(separator: "/").map(String.init)
            if parts.count > 2 && parts[1] == "TestSupport" { continue }
            guard parts.count > 2, parts[1].hasSuffix("Tests") else { misplaced.append(file); continue }
            let folders = Array(parts[2..<(parts.count - 1)])
            if let outside = folders.first(where: { Self.testFoldersOutsideSources[$0] != nil }) {
                used.insert(outside)
                continue
            }
            let source = (["Sources", String(parts[1].dropLast("Tests".count))] + folders).joined(separator: "/")
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: Repo.root.appendingPathComponent(source).path)) ?? []
            if !entries.contains(where: { $0.hasSuffix(".swift") }) { misplaced.append(file + " (no " + source + "/*.swift)") }
        }
        #expect(misplaced.isEmpty, "test files in a folder that mirrors no source folder; move each beside the source it tests (ARCHITECTURE.md, tests mirror sources):\n  \(misplaced.joined(separator: "\n  "))")
        let unused = Set(Self.testFoldersOutsideSources.keys).subtracting(used)
        #expect(unused.isEmpty, "testFoldersOutsideSources names folders no test file is in: \(unused.sorted())")
    }

    /// A test says what it checks, not which issue asked for it: no file under Tests/ cites
    /// an issue number.
    @Test func testsCiteNoIssueNumbers() throws {
        let citation = try Regex("[Ii]ssue [0-9]")
        var citing: [String] = []
        for path in Self.files(under: "Tests") {
            guard let data = FileManager.default.contents(atPath: Repo.root.appendingPathComponent(path).path) else { continue }
            let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            for (i, line) in lines.enumerated() where line.contains(citation) { citing.append("\(path):\(i + 1): \(line.trimmingCharacters(in: .whitespaces))") }
        }
        #expect(citing.isEmpty, "these lines cite an issue number; say what it means instead:\n  \(citing.joined(separator: "\n  "))")
    }
}
