import Foundation
import Testing
import BedrudBench

@Suite("Receive path benchmark")
struct ReceivePathBenchmarkTests {
    /// Always runs (small, not timed): a variant that lost a packet would be missing.
    @Test("Every benchmark variant delivers all its packets to the ring")
    func smoke() {
        let r = RTCBenchmark.receivePath(packets: 3000, warmup: 500)
        #expect(r.variants.map(\.sent) == [3500, 3500, 3500, 3500])
        for v in r.variants {
            #expect(v.delivered == v.sent, "\(v.name): \(v.delivered) of \(v.sent) packets reached the ring's consumer")
            #expect(v.damaged == 0, "\(v.name): \(v.damaged) packets out of order or changed")
            #expect(v.nanosPerPacket > 0)
        }
        let s = RTCBenchmark.sendPath(packets: 3000, warmup: 500)
        #expect(s.variants.count == 2, "a send variant lost or failed a packet")
        for v in s.variants { #expect(v.nanosPerPacket > 0) }
    }

    /// The measurement itself, for scripts/rtc_bench_allocs and BENCHMARKS.md: runs only with
    /// BEDRUD_RTC_BENCH_PACKETS set (and optionally BEDRUD_RTC_BENCH_VARIANT=evpgcm|gcm|cm|none).
    @Test("Receive path figures", .enabled(if: ProcessInfo.processInfo.environment["BEDRUD_RTC_BENCH_PACKETS"] != nil))
    func figures() {
        let env = ProcessInfo.processInfo.environment
        let n = Int(env["BEDRUD_RTC_BENCH_PACKETS"] ?? "") ?? 200_000
        let variants = env["BEDRUD_RTC_BENCH_VARIANT"].flatMap { RTCBenchmark.Protection(rawValue: $0) }.map { [$0] } ?? RTCBenchmark.Protection.allCases
        let senderOnly = env["BEDRUD_RTC_BENCH_SENDER_ONLY"] == "1"
        if env["BEDRUD_RTC_BENCH_DIRECTION"] == "send" {
            // The send path builds its own packets: nothing to subtract.
            let sendVariants = variants.filter { $0 == .evpgcm || $0 == .none }
            let r = RTCBenchmark.sendPath(packets: n, variants: sendVariants)
            print("RTCBENCH \(r)")
            #expect(r.variants.count == sendVariants.count)
            return
        }
        let r = RTCBenchmark.receivePath(packets: n, variants: variants, senderOnly: senderOnly)
        print("RTCBENCH \(r)")
        #expect(r.variants.count == variants.count)
    }
}
