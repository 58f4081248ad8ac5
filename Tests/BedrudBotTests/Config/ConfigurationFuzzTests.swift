import BedrudProtocol
import Foundation
import Testing
import TestSupport

@testable import BedrudBot

/// Seeded fuzz of the config reader, as `Configuration.load` runs it: UTF-8 decoding,
/// the syntax, the checks of every setting, then every typed reading and the instance.
/// Inputs: random bytes, random edits of samples/bedrud-bot.conf, and the sample with
/// CRLF, lone CRs, NULs, bytes that are not UTF-8 and huge numbers put in. Nothing may
/// trap, and no message may echo more than a bounded amount of its input. Each seed runs
/// for a bounded time; seeds are printed, replay one with BEDRUD_FUZZ_SEED=<seed>.
@Suite struct ConfigurationFuzzTests {
    static let seeds: [UInt64] = {
        if let text = ProcessInfo.processInfo.environment["BEDRUD_FUZZ_SEED"], let seed = UInt64(text) { return [seed] }
        let fresh = UInt64.random(in: 1...UInt64.max)
        print("[fuzz] Configuration seeds 26, \(fresh) (replay one with BEDRUD_FUZZ_SEED=<seed>)")
        return [26, fresh]
    }()

    static let sample: [UInt8] = {
        let url = Repo.root.appendingPathComponent("samples/bedrud-bot.conf")
        return (try? Array(Data(contentsOf: url))) ?? Array("[network]\nconnect_timeout = 10s\n[instance a]\nurl = https://a.example\n".utf8)
    }()

    static let hugeNumbers = ["18446744073709551616k", "99999999999999999999999h", "1e309s", "10000000000000000k",
                              String(repeating: "9", count: 63) + "d", "0.0000000000000000000001ms", "1.7976931348623157e308",
                              "-0", "nan", "inf", "0x7fffffffffffffff", "9223372036854775807", "9223372036854775808GiB"]

    /// One input, built from the generator.
    static func input(_ rng: inout SeededGenerator) -> [UInt8] {
        switch Int.random(in: 0..<7, using: &rng) {
        case 0: return rng.bytes(Int.random(in: 0..<300, using: &rng))
        case 1: return rng.mutate(sample, edits: 8)
        case 2: return Array(String(decoding: sample, as: UTF8.self).replacingScalars("\n", with: "\r\n").utf8)
        case 3:
            var b = sample
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let special: [UInt8] = [[0x0D], [0x00], [0xFF], [0xC3], [0xED, 0xA0, 0x80], [0x0D, 0x0A], [0x1B, 0x5B, 0x32, 0x4A]].randomElement(using: &rng)!
                b.insert(contentsOf: special, at: Int.random(in: 0...b.count, using: &rng))
            }
            return b
        default:
            // Every value of every known key replaced by a huge or odd number.
            var lines: [String] = []
            for spec in SettingSpec.all where Bool.random(using: &rng) {
                if spec.section == "instance" { continue }
                if !spec.section.isEmpty { lines.append("[\(spec.section)]") }
                lines.append("\(spec.key) = \(hugeNumbers.randomElement(using: &rng)!)")
            }
            lines.append("[instance i]\nurl = https://i.example\npassword_file = /nonexistent/\(hugeNumbers.randomElement(using: &rng)!)")
            return rng.mutate(Array(lines.joined(separator: Bool.random(using: &rng) ? "\n" : "\r\n").utf8), edits: 2)
        }
    }

    @Test(arguments: seeds)
    func noInputTrapsOrEchoesWhole(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        let deadline = Date().addingTimeInterval(2)
        var runs = 0
        while Date() < deadline && runs < 20_000 {
            runs += 1
            let bytes = Self.input(&rng)
            let context = "seed \(seed) run \(runs)"
            var c = Configuration(environment: ["HOME": "/nonexistent"], flags: ParsedArguments())
            do {
                let text = try ConfigSyntax.decode(bytes, file: "fuzz.conf")
                try c.parse(text, path: "fuzz.conf")
            } catch {
                #expect("\(error)".utf8.count < 600, "\(context): a \("\(error)".utf8.count)-byte message")
                continue
            }
            #expect(c.warningLines.count <= Configuration.warningLimit + 1, "\(context)")
            for w in c.warningLines { #expect(w.utf8.count < 600, "\(context): a \(w.utf8.count)-byte warning") }
            // Every value that passed the checks reads without a trap, as the commands read it.
            for spec in SettingSpec.all where spec.section != "instance" {
                switch spec.kind {
                case .duration:
                    let d = try c.value(Setting.seconds(spec.section, spec.key))
                    #expect(d >= 0 && d <= ConfigValues.durationCeiling, "\(context): \(spec.qualifiedName) = \(d)")
                    _ = Int64(d * 1000)
                case .size: _ = try c.value(Setting.bytes(spec.section, spec.key))
                case .bitrate: _ = c.string(spec.section, spec.key).flatMap(ConfigValues.bitrate)
                case .mode: _ = c.string(spec.section, spec.key).flatMap(SettingSpec.fileMode)
                default: _ = c.string(spec.section, spec.key)
                }
            }
            for i in c.instances { _ = try? c.instance(named: i.name) }
        }
        print("[fuzz] Configuration seed \(seed): \(runs) inputs")
    }
}
