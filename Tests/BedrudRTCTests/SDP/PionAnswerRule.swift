@testable import BedrudRTC

/// What LiveKit's WebRTC stack (pion) demands of our answers before it applies them, as a
/// pure check the SDP tests run on every answer they make. The pion peer
/// (`scripts/pion-peer`, `PionConformanceTests`) proves the same answers against pion itself.
///
/// Pion's `SetRemoteDescription` reads the codecs of answer sections through
/// `codecsFromMediaDescription` (webrtc v3 `sdp.go`: the first audio and the first video
/// section; v4 with multi-codec negotiation, as LiveKit runs it: every one). Port 0 does
/// not exempt a section. Each format must be a payload type, and each non-zero one must
/// have an `a=rtpmap` (pion also takes an `fmtp` or `rtcp-fb` line for it; we hold our
/// answers to the rtpmap), else the whole answer fails with "payload type not found". A
/// video section that names no codec but 0 leaves pion's video sender without a codec:
/// "unable to start track, codec is not supported by remote".
enum PionAnswerRule {
    static func violations(_ sdp: SessionDescription) -> [String] {
        var out: [String] = []
        for (i, m) in sdp.media.enumerated() where m.kind == "audio" || m.kind == "video" {
            let mapped = Set(m.rtpMaps.map(\.payloadType))
            var named = 0
            for f in m.formats {
                guard let pt = UInt8(f), pt < 128 else {
                    out.append("section \(i) (\(m.kind)): format \(f) is not a payload type")
                    continue
                }
                if pt == 0 { continue }
                if mapped.contains(pt) {
                    named += 1
                } else {
                    out.append("section \(i) (\(m.kind)): payload type \(pt) has no a=rtpmap (pion: payload type not found)")
                }
            }
            if m.kind == "video" && named == 0 {
                out.append("section \(i) (video): no codec but 0 (pion: codec is not supported by remote)")
            }
        }
        return out
    }

    static func violations(text: String) -> [String] {
        do {
            return violations(try SessionDescription(parsing: text))
        } catch {
            return ["does not parse: \(error)"]
        }
    }
}
