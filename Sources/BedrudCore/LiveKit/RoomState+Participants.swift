import BedrudProtocol

// The room model: participants keyed by identity, tracks diffed from each full
// ParticipantInfo, speakers (deltas), connection quality, stream state and room info.
// livekit-protocol.md §6 step 11–12, §7 items 4–6.

extension RoomState {
    /// Retired SIDs remembered to recognise late updates of ended sessions.
    static let maxRetiredSids = 1024

    // MARK: - Participants

    /// Applies one full ParticipantInfo (from `join`, `update` or `room_moved`).
    mutating func applyParticipantInfo(_ full: LiveKit.ParticipantInfo) {
        let info = bounded(full)
        guard !info.identity.isEmpty else {
            stats.staleParticipantUpdates += 1
            return
        }
        if let local = localParticipant, info.identity == local.identity {
            applyLocalInfo(info, local)
            return
        }
        if retiredSids.contains(info.sid) {
            stats.staleParticipantUpdates += 1
            return
        }
        guard let existing = remoteParticipants[info.identity] else {
            if info.state != .disconnected { addParticipant(info) }
            return
        }
        if existing.sid == info.sid {
            guard info.version >= existing.version else {
                stats.staleParticipantUpdates += 1
                return
            }
            if info.state == .disconnected {
                removeParticipant(info.identity, reason: .disconnected(info.disconnectReason))
            } else {
                updateParticipant(existing, with: info)
            }
            return
        }
        // Same identity, another SID: a new session of that person, or a late word
        // about an older one (which never gets a DISCONNECTED with protocol >= 12).
        let joinedAt = info.joinedAtMs != 0 ? info.joinedAtMs : info.joinedAt &* 1000
        if info.state == .disconnected || (joinedAt != 0 && existing.joinedAtMs != 0 && joinedAt < existing.joinedAtMs) {
            stats.staleParticipantUpdates += 1
            return
        }
        rejoinParticipant(existing, as: info)
    }

    private mutating func applyLocalInfo(_ info: LiveKit.ParticipantInfo, _ local: MeetingParticipant) {
        // An update about an older session of our own identity is not about us.
        guard info.sid == local.sid, info.version >= local.version else {
            stats.staleParticipantUpdates += 1
            return
        }
        var next = MeetingParticipant(info, isLocal: true)
        next.isSpeaking = local.isSpeaking
        next.audioLevel = local.audioLevel
        next.connectionQuality = local.connectionQuality
        localParticipant = next
        let changes = Self.changes(from: local, to: next)
        if !changes.isEmpty { emit(.participantUpdated(next, changes: changes)) }
    }

    /// The part of a ParticipantInfo the room holds: at most `maxTracksPerParticipant`
    /// tracks, and `metadata` / `attributes` only up to `maxMetadataBytes` each (a larger
    /// one is left out whole: a cut JSON document would mean something else). What is
    /// left out is counted in `stats`, once per message that carried it.
    mutating func bounded(_ info: LiveKit.ParticipantInfo) -> LiveKit.ParticipantInfo {
        let limits = configuration
        let attributeBytes = info.attributes.reduce(0) { $0 &+ $1.key.utf8.count &+ $1.value.utf8.count }
        guard info.tracks.count > limits.maxTracksPerParticipant || info.metadata.utf8.count > limits.maxMetadataBytes
                || attributeBytes > limits.maxMetadataBytes else { return info }
        var out = info
        if out.tracks.count > limits.maxTracksPerParticipant {
            stats.droppedTracks += out.tracks.count - max(0, limits.maxTracksPerParticipant)
            out.tracks = Array(out.tracks.prefix(max(0, limits.maxTracksPerParticipant)))
        }
        if out.metadata.utf8.count > limits.maxMetadataBytes {
            stats.droppedMetadata += 1
            out.metadata = ""
        }
        if attributeBytes > limits.maxMetadataBytes {
            stats.droppedMetadata += 1
            out.attributes = [:]
        }
        return out
    }

    private mutating func addParticipant(_ info: LiveKit.ParticipantInfo) {
        guard remoteParticipants.count < configuration.maxParticipants else {
            // A room this large is beyond what one recorder follows; those already here
            // stay, newcomers are left out until someone leaves.
            stats.droppedParticipants += 1
            return
        }
        let participant = MeetingParticipant(info, isLocal: false)
        remoteParticipants[info.identity] = participant
        participantOrder.append(info.identity)
        sidToIdentity[info.sid] = info.identity
        emit(.participantJoined(participant))
        for track in participant.tracks { emit(.trackPublished(track, participant: participant.identity)) }
    }

    private mutating func updateParticipant(_ existing: MeetingParticipant, with info: LiveKit.ParticipantInfo) {
        var next = MeetingParticipant(info, isLocal: false)
        next.isSpeaking = existing.isSpeaking
        next.audioLevel = existing.audioLevel
        next.connectionQuality = existing.connectionQuality
        next.tracks = next.tracks.map { track in
            var track = track
            if let old = existing.track(track.sid) {
                track.isPaused = old.isPaused
                track.subscriptionAllowed = old.subscriptionAllowed
            }
            return track
        }
        remoteParticipants[info.identity] = next
        let changes = Self.changes(from: existing, to: next)
        if !changes.isEmpty { emit(.participantUpdated(next, changes: changes)) }
        diffTracks(from: existing.tracks, to: next.tracks, participant: info.identity)
    }

    private mutating func rejoinParticipant(_ existing: MeetingParticipant, as info: LiveKit.ParticipantInfo) {
        for track in existing.tracks { emit(.trackUnpublished(track, participant: existing.identity)) }
        if existing.isSpeaking { stopSpeaking(existing.identity) }
        retire(existing.sid)
        lastDataSequence[existing.sid] = nil
        let participant = MeetingParticipant(info, isLocal: false)
        remoteParticipants[info.identity] = participant
        sidToIdentity[info.sid] = info.identity
        emit(.participantRejoined(participant, previousSid: existing.sid))
        for track in participant.tracks { emit(.trackPublished(track, participant: participant.identity)) }
    }

    mutating func removeParticipant(_ identity: String, reason: ParticipantLeaveReason) {
        guard let participant = remoteParticipants[identity] else { return }
        for track in participant.tracks { emit(.trackUnpublished(track, participant: identity)) }
        if participant.isSpeaking { stopSpeaking(identity) }
        remoteParticipants[identity] = nil
        participantOrder.removeAll { $0 == identity }
        retire(participant.sid)
        lastDataSequence[participant.sid] = nil
        emit(.participantLeft(participant, reason: reason))
    }

    /// Replaces the remote roster with a complete list (join after a full rejoin, room
    /// move): participants missing from it left while we were away.
    mutating func replaceRoster(_ infos: [LiveKit.ParticipantInfo]) {
        let present = Set(infos.filter { $0.state != .disconnected }.map(\.identity))
        for identity in participantOrder where !present.contains(identity) {
            removeParticipant(identity, reason: .absentAfterRejoin)
        }
        for info in infos { applyParticipantInfo(info) }
    }

    mutating func retire(_ sid: String) {
        guard !sid.isEmpty else { return }
        sidToIdentity[sid] = nil
        if retiredSids.insert(sid).inserted {
            retiredOrder.append(sid)
            if retiredOrder.count > Self.maxRetiredSids {
                retiredSids.remove(retiredOrder.removeFirst())
            }
        }
    }

    private mutating func diffTracks(from old: [MeetingTrack], to new: [MeetingTrack], participant: String) {
        for track in old where !new.contains(where: { $0.sid == track.sid }) {
            emit(.trackUnpublished(track, participant: participant))
        }
        for track in new {
            guard let before = old.first(where: { $0.sid == track.sid }) else {
                emit(.trackPublished(track, participant: participant))
                continue
            }
            if before.muted != track.muted {
                emit(track.muted ? .trackMuted(track, participant: participant) : .trackUnmuted(track, participant: participant))
            }
            if before.mimeType != track.mimeType || before.isStereo != track.isStereo || before.name != track.name
                || before.dtxDisabled != track.dtxDisabled || before.source != track.source || before.kind != track.kind {
                emit(.trackUpdated(track, participant: participant))
            }
        }
    }

    static func changes(from old: MeetingParticipant, to new: MeetingParticipant) -> ParticipantChanges {
        var changes: ParticipantChanges = []
        if old.name != new.name { changes.insert(.name) }
        if old.metadata != new.metadata { changes.insert(.metadata) }
        if old.attributes != new.attributes { changes.insert(.attributes) }
        if old.state != new.state { changes.insert(.state) }
        if old.canPublish != new.canPublish { changes.insert(.permission) }
        return changes
    }

    // MARK: - Audio only at the SFU

    /// Turns remote video off at the SFU: every video track published in this input (or,
    /// after a join, every one known) gets one `UpdateTrackSettings{disabled: true}`.
    ///
    /// Why this request and not `UpdateSubscription{subscribe: false}` (LiveKit v1.10.1 and
    /// v1.13.5 alike): the setting is stored even before the server has subscribed us
    /// (pkg/rtc/subscriptionmanager.go:346-358 creates the subscription record) and is
    /// applied the moment the down track exists (subscriptionmanager.go:1378-1390 →
    /// subscribedtrack.go:364-366 `dt.Mute(true)`; room.go:686-691 does the same for
    /// `sync_state.track_sids_disabled` "before adding subscriptions"), so video that is
    /// already in the room when we join is never forwarded. An unsubscribe that arrives
    /// before the auto-subscription is a no-op (subscriptionmanager.go:194-200: no record,
    /// nothing to change) and the track is subscribed anyway; once it works it also costs a
    /// renegotiation per track. With `adaptive_stream=0` (SignalURL) `Bound` keeps
    /// `disabled` (subscribedtrack.go:205-222).
    mutating func turnOffRemoteVideo() {
        var sids: [String] = []
        func want(_ track: MeetingTrack) {
            if track.kind == .video, !disabledTrackSids.contains(track.sid), !sids.contains(track.sid) { sids.append(track.sid) }
        }
        for case .emit(let event) in output {
            switch event {
            case .trackPublished(let track, _), .trackUpdated(let track, _): want(track)
            case .trackUnpublished(let track, _): disabledTrackSids.remove(track.sid)
            default: break
            }
        }
        if videoSweepPending {
            videoSweepPending = false
            for identity in participantOrder {
                for track in remoteParticipants[identity]?.tracks ?? [] { want(track) }
            }
        }
        sids.removeAll { sid in !participantOrder.contains { remoteParticipants[$0]?.track(sid) != nil } }
        guard !sids.isEmpty else { return }
        var setting = LiveKit.UpdateTrackSettings()
        setting.trackSids = sids
        setting.disabled = true
        sendRequest(LiveKit.SignalRequest(.trackSetting(setting)))
    }

    // MARK: - Lookups

    func identity(forSid sid: String) -> String? {
        guard !sid.isEmpty else { return nil }
        if let local = localParticipant, local.sid == sid { return local.identity }
        return sidToIdentity[sid]
    }

    /// Mutates ourselves or a remote participant by identity; false if unknown.
    @discardableResult
    mutating func withParticipant(_ identity: String, _ body: (inout MeetingParticipant) -> Void) -> Bool {
        if var local = localParticipant, local.identity == identity {
            body(&local)
            localParticipant = local
            return true
        }
        guard var participant = remoteParticipants[identity] else { return false }
        body(&participant)
        remoteParticipants[identity] = participant
        return true
    }

    func participant(_ identity: String) -> MeetingParticipant? {
        if let local = localParticipant, local.identity == identity { return local }
        return remoteParticipants[identity]
    }

    // MARK: - Speakers

    /// `speakers_changed` deltas (protocol >= 3), or the legacy full list from a
    /// DataPacket `speaker` (everyone not listed stopped).
    mutating func applySpeakers(_ speakers: [LiveKit.SpeakerInfo], fullList: Bool) {
        var started: [String] = []
        var stopped: [String] = []
        var levelsChanged = false
        var listed: Set<String> = []
        for speaker in speakers {
            guard let identity = identity(forSid: speaker.sid) else {
                stats.unknownSpeakers += 1
                continue
            }
            listed.insert(identity)
            let active = fullList || speaker.active
            let level = speaker.level.isFinite ? min(max(speaker.level, 0), 1) : 0
            withParticipant(identity) { p in
                if active {
                    if !p.isSpeaking { started.append(identity) }
                    if p.audioLevel != level { levelsChanged = true }
                    p.isSpeaking = true
                    p.audioLevel = level
                } else {
                    if p.isSpeaking { stopped.append(identity) }
                    p.isSpeaking = false
                    p.audioLevel = 0
                }
            }
        }
        if fullList {
            for identity in activeSpeakers.map(\.identity) where !listed.contains(identity) {
                withParticipant(identity) { $0.isSpeaking = false; $0.audioLevel = 0 }
                stopped.append(identity)
            }
        }
        if !started.isEmpty || !stopped.isEmpty || levelsChanged {
            emit(.speakersChanged(active: activeSpeakers, started: started, stopped: stopped))
        }
    }

    /// Everyone speaking now, loudest first (ties by identity).
    public var activeSpeakers: [MeetingSpeaker] {
        var all = participants
        if let local = localParticipant { all.append(local) }
        return all.filter(\.isSpeaking)
            .map { MeetingSpeaker(identity: $0.identity, sid: $0.sid, level: $0.audioLevel) }
            .sorted { $0.level != $1.level ? $0.level > $1.level : $0.identity < $1.identity }
    }

    mutating func stopSpeaking(_ identity: String) {
        withParticipant(identity) { $0.isSpeaking = false; $0.audioLevel = 0 }
        emit(.speakersChanged(active: activeSpeakers, started: [], stopped: [identity]))
    }

    /// After a rejoin or move nobody is known to speak until the server says so.
    mutating func clearSpeakers() {
        let speaking = activeSpeakers.map(\.identity)
        guard !speaking.isEmpty else { return }
        for identity in speaking { withParticipant(identity) { $0.isSpeaking = false; $0.audioLevel = 0 } }
        emit(.speakersChanged(active: [], started: [], stopped: speaking))
    }

    // MARK: - Quality, stream state, permissions, room

    mutating func applyConnectionQuality(_ updates: [LiveKit.ConnectionQualityInfo]) {
        for update in updates {
            guard let identity = identity(forSid: update.participantSid) else {
                stats.unknownSpeakers += 1
                continue
            }
            var changed = false
            withParticipant(identity) { p in
                if p.connectionQuality != update.quality {
                    p.connectionQuality = update.quality
                    changed = true
                }
            }
            if changed {
                let score = update.score.isFinite ? update.score : 0
                emit(.connectionQualityChanged(participant: identity, quality: update.quality, score: score))
            }
        }
    }

    mutating func applyStreamStates(_ states: [LiveKit.StreamStateInfo]) {
        for state in states {
            updateTrack(participantSid: state.participantSid, trackSid: state.trackSid) { track in
                let paused = state.state == .paused
                guard track.isPaused != paused else { return false }
                track.isPaused = paused
                return true
            } onChange: { track, identity in
                .trackStreamStateChanged(track, participant: identity)
            }
        }
    }

    mutating func applySubscriptionPermission(_ update: LiveKit.SubscriptionPermissionUpdate) {
        updateTrack(participantSid: update.participantSid, trackSid: update.trackSid) { track in
            guard track.subscriptionAllowed != update.allowed else { return false }
            track.subscriptionAllowed = update.allowed
            return true
        } onChange: { track, identity in
            .trackSubscriptionPermissionChanged(track, participant: identity)
        }
    }

    /// Finds a remote track (by publisher SID, else by track SID alone), lets `change`
    /// edit it, and emits `onChange` when it reports a change.
    private mutating func updateTrack(
        participantSid: String, trackSid: String, change: (inout MeetingTrack) -> Bool,
        onChange: (MeetingTrack, String) -> RoomEvent
    ) {
        let owner = identity(forSid: participantSid)
            ?? participantOrder.first { remoteParticipants[$0]?.track(trackSid) != nil }
        guard let identity = owner, var participant = remoteParticipants[identity],
              let index = participant.tracks.firstIndex(where: { $0.sid == trackSid })
        else { return }
        guard change(&participant.tracks[index]) else { return }
        remoteParticipants[identity] = participant
        emit(onChange(participant.tracks[index], identity))
    }

    mutating func applyRoom(_ update: LiveKit.Room) {
        var next = MeetingRoom(update)
        if next.sid.isEmpty { next.sid = room.sid }
        guard next != room else { return }
        room = next
        emit(.roomUpdated(next))
    }
}
