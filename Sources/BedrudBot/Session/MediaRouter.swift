import BedrudCore
import BedrudMedia
import BedrudProtocol
import BedrudRTC
import BedrudRuntime
import Synchronization

/// Connects the WebRTC layer to the media pipeline: every subscribed audio track gets a
/// ``PacketRing`` (attached before the answer, so no first packet is lost) that the
/// pipeline drains on its media thread. Whose a track is and whether it is recorded is
/// ``RoomMediaBridge/route(_:owner:filter:)``'s decision, from the owner the room knows
/// (``RoomManager/trackOwner(participantSid:trackSid:)``: a mutex, no hop to the actor).
/// Runs on the peer connection's loop thread (``TrackRouter``): nothing here waits.
final class MediaRouter: TrackRouter, @unchecked Sendable {
    // @unchecked: `room` is set once before the session connects; `tracks` is behind a mutex.
    private let pipeline: MediaPipeline
    private let ringSlots: Int
    nonisolated(unsafe) var room: RoomManager?
    private let tracks = Mutex<[String: String]>([:])  // track sid → identity
    private let logger: Logger

    /// `--include` / `--exclude`: a participant it rejects gets no ring, so no file, no
    /// place in the mix and no speech detection (the transport counts and drops its packets).
    private let filter: ParticipantFilter

    init(pipeline: MediaPipeline, ringSlots: Int = 32, filter: ParticipantFilter = ParticipantFilter(), logRoom: String? = nil) {
        logger = Logger("session", room: logRoom)
        self.pipeline = pipeline
        self.ringSlots = ringSlots
        self.filter = filter
    }

    /// Identities with at least one recorded track.
    var identities: Set<String> { Set(tracks.withLock { $0.values }) }
    /// Track sid → identity of every track routed so far (removed ones included).
    var identitiesBySid: [String: String] { known.withLock { $0 } }
    private let known = Mutex<[String: String]>([:])

    func route(added: [RemoteTrack], removed: [RemoteTrack]) -> [UInt32: PacketRing] {
        var rings: [UInt32: PacketRing] = [:]
        for t in added where t.kind == "audio" {
            let owner = room?.trackOwner(participantSid: t.participantSID, trackSid: t.trackSID)
            let (spec, recorded) = RoomMediaBridge.route(t, owner: owner, filter: filter)
            let sid = spec.trackSid, identity = spec.participantIdentity
            known.withLock { $0[sid] = identity }
            guard recorded else {
                logger.info("not recording \(sid) of \(identity): left out by --include/--exclude")
                continue
            }
            let ring = PacketRing(capacity: ringSlots, maxPayload: 1500)
            pipeline.send(.addTrack(spec, ring))
            tracks.withLock { $0[sid] = identity }
            rings[t.ssrc] = ring
            logger.debug("receiving \(sid) of \(identity) on SSRC \(t.ssrc)")
        }
        for t in removed where t.kind == "audio" {
            let sid = t.trackSID ?? "ssrc-\(t.ssrc)"
            pipeline.send(.removeTrack(trackSid: sid))
            tracks.withLock { _ = $0.removeValue(forKey: sid) }
        }
        return rings
    }
}

/// A sink factory that writes nothing: `join` without `--record` keeps no files (it still
/// decodes for the live view's levels and `--json`'s speech events, ``RoomRun/decodes``).
final class DiscardingSinkFactory: RecordingSinkFactory, Sendable {
    func makeSink(for output: RecordingOutput) throws -> PageSink { DiscardingSink() }
    func makeSink(for output: RecordingOutput, segment: Int) throws -> PageSink { DiscardingSink() }
}

final class DiscardingSink: PageSink {
    func write(_ bytes: UnsafeRawBufferPointer) throws {}
    func sync() throws {}
    func close(clean: Bool) throws {}
}
