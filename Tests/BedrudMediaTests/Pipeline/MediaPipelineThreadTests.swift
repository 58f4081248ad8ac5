import BedrudProtocol
import BedrudRuntime
import Foundation
import Synchronization
import Testing

@testable import BedrudMedia

@Suite(.serialized) struct MediaPipelineThreadTests {
    /// Real threads, real files: two participants stream for ~2 s in real time; stop()
    /// finishes, renames and reports every file.
    @Test func recordsToDiskAndRenamesOnStop() async throws {
        let dir = try temporaryDirectory()
        let factory = DirectorySinkFactory(directory: dir)
        var config = MediaPipelineConfig()
        config.room = "thread test"
        config.startHoldMillis = 200
        let pipeline = MediaPipeline(config: config, sinks: factory, syncIntervalSeconds: 1)
        let opus = TestEncoder.encode(TestSignal.speech(seconds: 2, seed: 60))
        let rings = [PacketRing(capacity: 64), PacketRing(capacity: 64)]
        pipeline.send(.addTrack(MediaTrackSpec(trackSid: "TR_a", participantIdentity: "a", participantName: "Ann Example"), rings[0]))
        pipeline.send(.addTrack(MediaTrackSpec(trackSid: "TR_b", participantIdentity: "b", participantName: "Ann Example"), rings[1]))
        let collector = Task {
            var all: [MediaEvent] = []
            for await e in pipeline.events { all.append(e) }
            return all
        }
        // The "network thread": one packet per 20 ms on each ring.
        let done = DoneFlag()
        let producer = Thread {
            for (i, p) in opus.enumerated() {
                for (k, ring) in rings.enumerated() {
                    let h = MediaPacketHeader(
                        ssrc: UInt32(k + 1), sequenceNumber: UInt16(i), rtpTimestamp: UInt32(i * 960), arrivalNanos: MonotonicClock.nanos())
                    p.withUnsafeBytes { _ = ring.push(h, payload: $0) }
                }
                usleep(20_000)
            }
            done.value.store(true, ordering: .releasing)
        }
        producer.start()
        let deadline = MonotonicClock.nanos() + 30_000_000_000
        while !done.value.load(ordering: .acquiring) && MonotonicClock.nanos() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        let finishedProducing = done.value.load(ordering: .acquiring)
        #expect(finishedProducing)
        await pipeline.stop()
        let events = await collector.value
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(files == ["Ann Example-2.opus", "Ann Example.opus", "room.opus"])
        for f in files {
            let r = try OggOpusVerifier.verify(path: dir + "/" + f)
            #expect(r.isValid, "\(f): \(r.problems)")
            #expect(r.durationMillis > 1500, "\(f): \(r.durationMillis) ms")
        }
        let finished = events.filter { if case .fileFinished = $0 { return true } else { return false } }
        #expect(finished.count == 3)
        #expect(pipeline.stats.participants.count == 2)
        #expect(pipeline.stats.participants.allSatisfy { $0.packets > 90 })
    }
}

extension MediaPipelineThreadTests {
    /// Two rooms on one pool: one media thread and one writer thread for both; both record,
    /// both stop, both threads empty, and both rooms' files are complete and valid.
    @Test func twoRoomsShareAPoolThread() async throws {
        let pool = MediaThreadPool(threads: 1, batchMillis: 2)
        defer { pool.shutdown() }
        let opus = TestEncoder.encode(TestSignal.speech(seconds: 1, seed: 61))
        var pipelines: [(MediaPipeline, PacketRing, String)] = []
        for room in ["r1", "r2"] {
            let dir = try temporaryDirectory()
            var config = MediaPipelineConfig()
            config.room = room
            config.startHoldMillis = 100
            let p = MediaPipeline(config: config, sinks: DirectorySinkFactory(directory: dir), pool: pool)
            let ring = PacketRing(capacity: 64)
            p.send(.addTrack(MediaTrackSpec(trackSid: "TR", participantIdentity: "x", participantName: "x"), ring))
            pipelines.append((p, ring, dir))
        }
        #expect(pool.load == [2])
        #expect(pool.writerLoad == [2])
        let t0 = MonotonicClock.nanos()
        for (i, pkt) in opus.enumerated() {
            let due = t0 + UInt64(i) * 20_000_000
            while MonotonicClock.nanos() < due { try await Task.sleep(nanoseconds: 1_000_000) }
            for (_, ring, _) in pipelines {
                let h = MediaPacketHeader(ssrc: 9, sequenceNumber: UInt16(i), rtpTimestamp: UInt32(i * 960), arrivalNanos: MonotonicClock.nanos())
                pkt.withUnsafeBytes { _ = ring.push(h, payload: $0) }
            }
        }
        for (p, _, _) in pipelines { await p.stop() }
        for (_, _, dir) in pipelines {
            let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
            #expect(files == ["room.opus", "x.opus"])
            for f in files {
                let r = try OggOpusVerifier.verify(path: dir + "/" + f)
                #expect(r.isValid && r.durationMillis > 800, "\(f): \(r.problems) \(r.durationMillis) ms")
            }
        }
        let deadline = MonotonicClock.nanos() + 10_000_000_000
        while (pool.load != [0] || pool.writerLoad != [0]) && MonotonicClock.nanos() < deadline { try await Task.sleep(nanoseconds: 5_000_000) }
        #expect(pool.load == [0])
        #expect(pool.writerLoad == [0], "each pipeline's writer left the shared thread when it stopped")
    }
}

final class DoneFlag: Sendable {
    let value = Atomic<Bool>(false)
}
