import BedrudNet
import Testing

@testable import BedrudBot

/// The shared option groups: what the TLS flags of a link or of `instance add` ask for.
@Suite struct OptionGroupsTests {
    func invocation(values: [String: [String]] = [:], flags: Set<String> = []) -> Invocation {
        Invocation(arguments: ParsedArguments(path: ["join"], values: values, flags: flags, positionals: []), environment: [:], console: Console(quiet: true))
    }

    @Test func noFlagsMeanTheSystemsTrust() throws {
        let tls = try OptionGroups.tls(from: invocation())
        #expect(tls.caFile == nil && tls.pinnedSHA256.isEmpty && !tls.insecure)
    }

    @Test func eachFlagSetsItsTrust() throws {
        let hex = String(repeating: "ab", count: 32)
        let tls = try OptionGroups.tls(from: invocation(values: ["ca-file": ["/etc/ca.pem"], "pin-sha256": [hex]], flags: ["tls-insecure"]))
        #expect(tls.caFile == "/etc/ca.pem")
        #expect(tls.pinnedSHA256 == [try #require(CertificateFingerprint.parse(hex))])
        #expect(tls.insecure)
    }

    /// A bad fingerprint is a usage error that quotes it sanitised, not raw.
    @Test func aBadPinIsAUsageErrorThatQuotesItSafely() {
        do {
            _ = try OptionGroups.tls(from: invocation(values: ["pin-sha256": ["12:34\u{1b}[2J"]]))
            Issue.record("accepted a bad fingerprint")
        } catch let e as CommandFailure {
            #expect(e.code == .usage)
            #expect(e.description.hasPrefix("--pin-sha256 expects a SHA-256 fingerprint (64 hex digits, colons optional), got "))
            #expect(!e.description.contains("\u{1b}"), "\(e.description)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
