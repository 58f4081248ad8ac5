import Testing

@testable import BedrudBot

/// `record.file_jitter_wait` (issue 13 §5): 400 ms by default, up to a second.
@Suite struct FileJitterWaitSettingTests {
    @Test func defaultIs400msAndValuesAreCheckedAndRounded() throws {
        #expect(SettingSpec.spec(section: "record", key: "file_jitter_wait")?.defaultValue == "400ms")
        #expect(try JoinCommand.fileJitterWaitMillis(0.4) == 400)
        #expect(try JoinCommand.fileJitterWaitMillis(1) == 1000)
        #expect(try JoinCommand.fileJitterWaitMillis(0.06) == 60)
        #expect(throws: CommandFailure.self) { try JoinCommand.fileJitterWaitMillis(1.5) }
    }
}
