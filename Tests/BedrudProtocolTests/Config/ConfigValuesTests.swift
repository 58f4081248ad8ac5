import BedrudProtocol
import Testing
import TestSupport

/// Numbers in config values: read strictly, with arithmetic that cannot overflow.
@Suite struct ConfigValuesTests {
    /// 18446744073709551616k trapped in `Int(n * 1000)` (SIGILL, exit 132).
    @Test func hugeBitRatesAreRefusedNotATrap() {
        #expect(ConfigValues.bitrate("18446744073709551616k") == nil)
        #expect(ConfigValues.bitrate("10000000000000000k") == nil)
        #expect(ConfigValues.bitrate("1" + String(repeating: "0", count: 400) + "m") == nil)
        #expect(ConfigValues.bitrate("1000000000") == 1_000_000_000)
        #expect(ConfigValues.bitrate("1000000001") == nil)
        #expect(ConfigValues.bitrate("64k") == 64000 && ConfigValues.bitrate("1.5m") == 1_500_000 && ConfigValues.bitrate("32000") == 32000)
        #expect(ConfigValues.bitrate("1e3k") == nil && ConfigValues.bitrate("0x40k") == nil && ConfigValues.bitrate("nan") == nil)
    }

    @Test func durationsHaveACeilingAndAStrictGrammar() {
        #expect(ConfigValues.parseDuration("99999999999999999999999h") == .failure(.tooLarge))
        #expect(ConfigValues.parseDuration("1e309s") == .failure(.malformed))
        #expect(ConfigValues.parseDuration("1e309") == .failure(.malformed))
        #expect(ConfigValues.parseDuration("inf") == .failure(.malformed))
        #expect(ConfigValues.parseDuration("nan") == .failure(.malformed))
        #expect(ConfigValues.parseDuration("0x10") == .failure(.malformed))
        #expect(ConfigValues.parseDuration("1h30") == .failure(.malformed))
        #expect(ConfigValues.parseDuration("1..5s") == .failure(.malformed))
        #expect(ConfigValues.parseDuration(String(repeating: "9", count: 65)) == .failure(.tooLarge))
        #expect(ConfigValues.parseDuration("3650d") == .success(ConfigValues.durationCeiling))
        #expect(ConfigValues.parseDuration("3651d") == .failure(.tooLarge))
        #expect(ConfigValues.duration("1.5s") == 1.5 && ConfigValues.duration(".5s") == 0.5 && ConfigValues.duration("1h 30m") == 5400)
        #expect(ConfigValues.duration("1d2h3m4s5ms") == 93784.005)
    }

    @Test func sizesHaveACeiling() {
        #expect(ConfigValues.parseSize("18446744073709551616k") == .failure(.tooLarge))
        #expect(ConfigValues.parseSize("99999999999999999999") == .failure(.tooLarge))
        #expect(ConfigValues.parseSize("1048576GiB") == .success(ConfigValues.sizeCeiling))
        #expect(ConfigValues.parseSize("1048577GiB") == .failure(.tooLarge))
        #expect(ConfigValues.parseSize("1e3k") == .failure(.malformed))
        #expect(ConfigValues.parseSize("-1") == .failure(.malformed))
        #expect(ConfigValues.size("1.5KiB") == 1536 && ConfigValues.size("0") == 0)
    }

    /// Every reading of every value is total: random text never traps. Seeded
    /// (``FuzzSeeds``: replay one with `BEDRUD_FUZZ_SEED`).
    @Test(arguments: FuzzSeeds.all) func randomNumbersNeverTrap(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        let alphabet = Array("0123456789.9999e+-kmgibpsdhKMG x/")
        for _ in 0..<20000 {
            let text = String((0..<Int.random(in: 0..<70, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            _ = ConfigValues.duration(text)
            _ = ConfigValues.size(text)
            _ = ConfigValues.bitrate(text)
        }
    }

    @Test func longWordsGetNoSuggestion() {
        #expect(Suggest.closest(to: String(repeating: "connect_timeout", count: 10_000), in: ["connect_timeout"]) == nil)
    }
}
