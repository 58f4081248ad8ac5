import BedrudProtocol
import Foundation
import Testing
import TestSupport

@testable import BedrudBot

/// The loader: which files must exist, how much of one is read, and how much of a bad
/// one is echoed.
@Suite struct ConfigurationLoadTests {
    final class Folder: @unchecked Sendable {
        let path: String
        init() throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("bedrud-config-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
        func write(_ name: String, _ bytes: [UInt8]) throws -> String {
            let p = path + "/" + name
            try Data(bytes).write(to: URL(fileURLWithPath: p))
            return p
        }
        func write(_ name: String, _ text: String) throws -> String { try write(name, Array(text.utf8)) }
    }

    func load(config: String?, environment: [String: String] = [:], mayCreate: Bool = false, home: String) throws -> Configuration {
        var args = ParsedArguments()
        if let config { args.values["config"] = [config] }
        return try Configuration.load(flags: args, environment: ["HOME": home].merging(environment) { _, b in b }, mayCreate: mayCreate)
    }

    func message(_ body: () throws -> Configuration) -> String {
        do {
            _ = try body()
            return "(no error)"
        } catch {
            return "\(error)"
        }
    }

    /// `-c FILE` that cannot be read was ignored by `join` ("no Bedrud server configured").
    @Test func anExplicitFileThatCannotBeReadIsAnErrorNamingIt() throws {
        let f = try Folder()
        let missing = f.path + "/nope.conf"
        #expect(message { try load(config: missing, home: f.path) } == "\(missing): cannot read the config file: it does not exist")
        #expect(message { try load(config: nil, environment: ["BEDRUD_BOT_CONFIG": missing, "BEDRUD_BOT_URL": "http://127.0.0.1:9"], home: f.path) }
                == "\(missing): cannot read the config file: it does not exist")
        let dangling = f.path + "/dangling.conf"
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: f.path + "/gone.conf")
        #expect(message { try load(config: dangling, home: f.path) }
                == "\(dangling): cannot read the config file: it is a symbolic link to '\(f.path)/gone.conf', which does not exist")
        let loop = f.path + "/loop.conf"
        try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: loop)
        #expect(message { try load(config: loop, home: f.path) } == "\(loop): cannot read the config file: its symbolic links go round in a loop")
        #expect(message { try load(config: f.path, home: f.path) } == "\(f.path): cannot read the config file: it is a folder")
        // `instance add` creates the file it names; the default locations may be absent.
        #expect(try load(config: missing, mayCreate: true, home: f.path).path == missing)
        #expect(try load(config: nil, home: f.path).path == nil)
    }

    @Test func aFileBeyondTheLimitIsRefusedUnread() throws {
        let f = try Folder()
        let line = "log_level = info\n"
        let big = try f.write("big.conf", String(repeating: line, count: ConfigSyntax.maxFileBytes / line.utf8.count + 1))
        let size = (try FileManager.default.attributesOfItem(atPath: big)[.size] as? Int) ?? 0
        #expect(message { try load(config: big, home: f.path) }
                == "\(big): the file is \(size) bytes; a config file may be at most 1MiB (a real one is a few kilobytes)")
    }

    @Test func invalidUTF8IsReportedAtItsLineAndColumn() throws {
        let f = try Folder()
        let p = try f.write("latin1.conf", Array("[network]\n# caf".utf8) + [0xE9] + Array("\n".utf8))
        #expect(message { try load(config: p, home: f.path) } == "\(p):2: column 6: byte 0xE9 is not UTF-8 text; save the file as UTF-8")
    }

    /// A CRLF file was `OK (0 instances)`: every setting silently ignored.
    @Test func crlfFilesAreReadAndCheckedLineByLine() throws {
        let f = try Folder()
        let p = try f.write("crlf.conf", "# my bot\r\nlog_level = bogus\r\n[instance p]\r\nurl = http://127.0.0.1:9\r\n")
        #expect(message { try load(config: p, home: f.path) }
                == "\(p):2: log_level: expected one of trace, debug, info, warning, error, off, got 'bogus'")
        let ok = try f.write("ok.conf", "# my bot\r\nlog_level = debug\r\n[instance p]\r\nurl = http://127.0.0.1:9\r\n")
        let c = try load(config: ok, home: f.path)
        #expect(c.instances.map(\.name) == ["p"] && c.string("", "log_level") == "debug" && c.warningCount == 0)
        let cr = try f.write("cr.conf", "log_level = info\nurl = x\ry = 1\n")
        #expect(message { try load(config: cr, home: f.path) }
                == "\(cr):2: a carriage return (CR) inside the line; lines must end with LF or CRLF (an old Mac file? convert it)")
    }

    /// 50 MB of duplicate keys wrote 460 MB of warnings, one per line.
    @Test func repeatedWarningsAreCappedAndCounted() throws {
        let f = try Folder()
        let p = try f.write("dup.conf", String(repeating: "log_level = info\n", count: 3001))
        let c = try load(config: p, home: f.path)
        #expect(c.warnings.count == Configuration.warningLimit && c.warningCount == 3000)
        #expect(c.warningLines.count == Configuration.warningLimit + 1)
        #expect(c.warningLines.last == "… and 2,980 more warnings")
        #expect(Configuration.grouped(2_999_999) == "2,999,999" && Configuration.grouped(999) == "999" && Configuration.grouped(1000) == "1,000")
    }

    /// A 100 kB key was printed whole in its warning.
    @Test func echoedKeysAndSectionsAreCut() throws {
        let f = try Folder()
        let key = String(repeating: "k", count: 100_000)
        let p = try f.write("long.conf", "\(key) = 1\n[\(key)]\n")
        let c = try load(config: p, home: f.path)
        #expect(c.warningLines.count == 2)
        for w in c.warningLines { #expect(w.utf8.count < p.utf8.count + 200, "\(w.utf8.count) bytes") }
        let cut = String(repeating: "k", count: 40) + "… (100000 bytes in all)"
        #expect(c.warningLines == ["\(p):2: unknown section [\(cut)] (its keys are ignored)", "\(p):1: unknown key '\(cut)'"])
    }
}

/// Each setting's checks: the one table's kinds, ranges and maxima.
@Suite struct SettingSpecTests {
    func problem(_ section: String, _ key: String, _ value: String) -> String? {
        SettingSpec.spec(section: section, key: key)?.problem(with: value)
    }

    /// `connect_timeout = 99999999999999999999999h` passed `config check`.
    @Test func everyDurationHasItsOwnMaximum() throws {
        #expect(problem("network", "connect_timeout", "99999999999999999999999h") == "expected a duration of at most 5m, got '99999999999999999999999h'")
        #expect(problem("network", "connect_timeout", "1e309s") == "expected a duration like 90s, 30m or 2h, got '1e309s'")
        #expect(problem("network", "connect_timeout", "5m") == nil && problem("network", "connect_timeout", "301s") != nil)
        #expect(problem("record", "max_duration", "30d") == nil && problem("record", "max_duration", "31d") == "expected a duration of at most 30d, got '31d'")
        #expect(problem("record", "file_jitter_wait", "1001ms") == "expected a duration of at most 1s, got '1001ms'")
        for spec in SettingSpec.all where spec.kind == .duration || spec.kind == .size {
            let max = try #require(spec.maximumValue, "\(spec.qualifiedName)")
            // Every maximum is itself accepted, and fits every conversion made later.
            #expect(spec.problem(with: spec.maximumText ?? "") == nil, "\(spec.qualifiedName)")
            #expect(max * 1e9 < 9.2e18 || spec.kind == .size, "\(spec.qualifiedName)")
            if let d = spec.defaultValue { #expect(spec.problem(with: d) == nil, "\(spec.qualifiedName) default") }
        }
    }

    @Test func hugeBitRatesAndSizesAreRangeErrors() {
        #expect(problem("record", "mix_bitrate", "18446744073709551616k") == "expected a bit rate between 6k and 510k, like 64k, got '18446744073709551616k'")
        #expect(problem("network", "max_response_size", "18446744073709551616k") == "expected a size of at most 1GiB, got '18446744073709551616k'")
        #expect(problem("record", "min_free", "99999999999999999999GiB") == "expected a size of at most 1048576GiB, got '99999999999999999999GiB'")
    }

    /// docs/CONFIG.md, "Limits", says each maximum, as the table has it.
    @Test func docsListEveryMaximum() throws {
        let doc = try String(contentsOf: Repo.root.appendingPathComponent("docs/CONFIG.md"), encoding: .utf8)
        for spec in SettingSpec.all where spec.kind == .duration || spec.kind == .size {
            #expect(doc.contains("| `\(spec.qualifiedName)` | \(spec.kind == .duration ? "duration" : "size") | `\(spec.maximumText ?? "")` |"),
                    "docs/CONFIG.md, Limits, misses \(spec.qualifiedName) (at most \(spec.maximumText ?? ""))")
        }
    }
}
