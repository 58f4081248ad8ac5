import BedrudMedia
import Testing

@testable import BedrudBot

/// `record.mix_complexity` (issue 12, the mix): the documented default, and only 0…10.
@Suite struct MixComplexitySettingTests {
    @Test func defaultMatchesThePipelineAndValuesAreChecked() throws {
        #expect(SettingSpec.spec(section: "record", key: "mix_complexity")?.defaultValue == String(RoomRunOptions().mixComplexity))
        #expect(try JoinCommand.mixComplexity(nil) == RoomRunOptions().mixComplexity)
        #expect(try JoinCommand.mixComplexity("0") == 0)
        #expect(try JoinCommand.mixComplexity("10") == 10)
        #expect(throws: CommandFailure.self) { try JoinCommand.mixComplexity("11") }
        #expect(throws: CommandFailure.self) { try JoinCommand.mixComplexity("fast") }
    }

    /// `record.mix_coder` and `record.mix_bitrate`: documented defaults are the pipeline's.
    @Test func mixCoderDefaultsToCELTAt64kAndTakesOnlyItsTwoNames() throws {
        #expect(SettingSpec.spec(section: "record", key: "mix_coder")?.defaultValue == RoomRunOptions().mixCoder.rawValue)
        #expect(RoomRunOptions().mixCoder == .celt && RoomRunOptions().mixBitrate == 64000)
        #expect(SettingSpec.spec(section: "record", key: "mix_bitrate")?.defaultValue == "64k")
        #expect(try JoinCommand.mixCoder(nil) == .celt)
        #expect(try JoinCommand.mixCoder("voice") == .voice)
        #expect(try JoinCommand.mixCoder("CELT") == .celt, "config check accepts any case, so join does too")
        #expect(throws: CommandFailure.self) { try JoinCommand.mixCoder("silk") }
        #expect(JoinCommand.mixBitrateNote(coder: .celt, bitrate: 32000)?.hasPrefix("record.mix_bitrate 32k is low for the CELT mix") == true)
        #expect(JoinCommand.mixBitrateNote(coder: .celt, bitrate: 48000) == nil)
        #expect(JoinCommand.mixBitrateNote(coder: .voice, bitrate: 32000) == nil)
    }
}
