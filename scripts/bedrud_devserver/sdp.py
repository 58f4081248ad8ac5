"""SDP text edits that make aiortc's descriptions look like LiveKit's (pion's).

aiortc cannot be told these things, and none of them changes what aiortc itself
does, because aiortc sends according to the *answer*, which follows our edited
offer:
- no `urn:ietf:params:rtp-hdrext:sdes:mid` and no audio-level extension downstream
  (LiveKit's subscriber PC has neither; clients demultiplex by SSRC);
- `a=ssrc:<ssrc> cname:PA_x|TR_x` plus `a=ssrc:<ssrc> msid:PA_x|TR_x TR_x`;
- candidates are not inlined: port 9, `c=IN IP4 0.0.0.0`, candidates by trickle.
"""
from __future__ import annotations

from dataclasses import dataclass, field

DOWNSTREAM_DROPPED_EXTENSIONS = (
    "urn:ietf:params:rtp-hdrext:sdes:mid",
    "urn:ietf:params:rtp-hdrext:ssrc-audio-level",
)


@dataclass
class Edited:
    sdp: str
    candidates: list[str] = field(default_factory=list)  # "candidate:..." lines (no "a=")
    first_mid: str = "0"


def _split(sdp: str) -> tuple[list[str], list[list[str]]]:
    lines = [l for l in sdp.replace("\r\n", "\n").split("\n") if l]
    session: list[str] = []
    media: list[list[str]] = []
    for line in lines:
        if line.startswith("m="):
            media.append([line])
        elif media:
            media[-1].append(line)
        else:
            session.append(line)
    return session, media


def wrong_fingerprint(line: str) -> str:
    """`a=fingerprint:sha-256 AB:CD:…` with every hex digit changed: well-formed, never ours."""
    head, _, value = line.partition(" ")
    flipped = "".join(format(15 - int(c, 16), "X") if c in "0123456789abcdefABCDEF" else c for c in value)
    return f"{head} {flipped}"


def edit_description(sdp: str, msids: dict[int, tuple[str, str]], *, strip_candidates: bool = True,
                     downstream: bool = True, bad_fingerprint: bool = False) -> Edited:
    """`msids` maps a sending SSRC to (stream id, track id). `bad_fingerprint` (the
    `badFingerprint` fault) announces a DTLS fingerprint that is not the certificate's."""
    session, media = _split(sdp)
    out: list[str] = list(session)
    candidates: list[str] = []
    first_mid = None
    for section in media:
        is_audio = section[0].startswith("m=audio")
        for line in section:
            if line.startswith("a=mid:") and first_mid is None:
                first_mid = line[len("a=mid:"):]
            if strip_candidates and (line.startswith("a=candidate:") or line == "a=end-of-candidates"):
                if line.startswith("a=candidate:") and not candidates_seen(candidates, line):
                    candidates.append(line[2:])
                continue
            if strip_candidates and line.startswith("m="):
                parts = line.split(" ")
                if len(parts) > 1:
                    parts[1] = "9"
                line = " ".join(parts)
            elif strip_candidates and line.startswith("c="):
                line = "c=IN IP4 0.0.0.0"
            elif line.startswith("a=fingerprint:") and not line.startswith("a=fingerprint:sha-256 "):
                continue  # pion offers one SHA-256 fingerprint
            elif bad_fingerprint and line.startswith("a=fingerprint:"):
                line = wrong_fingerprint(line)
            elif downstream and is_audio and line.startswith("a=extmap:") and \
                    line.split(" ", 1)[-1].split(" ")[0] in DOWNSTREAM_DROPPED_EXTENSIONS:
                continue
            elif line.startswith("a=ssrc:") and " cname:" in line:
                ssrc_text = line[len("a=ssrc:"):].split(" ", 1)[0]
                try:
                    ssrc = int(ssrc_text)
                except ValueError:
                    ssrc = -1
                if ssrc in msids:
                    stream, track = msids[ssrc]
                    out.append(f"a=ssrc:{ssrc} cname:{stream}")
                    out.append(f"a=ssrc:{ssrc} msid:{stream} {track}")
                    continue
            out.append(line)
    return Edited(sdp="\r\n".join(out) + "\r\n", candidates=candidates, first_mid=first_mid or "0")


def candidates_seen(seen: list[str], line: str) -> bool:
    return line[2:] in seen


@dataclass
class AudioPublishPrefs:
    """What a publisher asked for in `add_track` (LiveKit's disable_dtx/disable_red/stereo)."""
    dtx: bool = True
    red: bool = True
    stereo: bool = False


def publisher_red_mids(offer: str, prefs_by_track: dict[str, AudioPublishPrefs]) -> set[str]:
    """The mids of an offer's audio sections that configure_publisher_answer answers RED-first."""
    _, red_mids = _configure(offer, offer, prefs_by_track)
    return red_mids


def configure_publisher_answer(answer: str, offer: str, prefs_by_track: dict[str, AudioPublishPrefs]) -> str:
    """Edits the publisher answer the way LiveKit configures it: per audio section whose
    offered track (`a=msid:<stream> <track>`) asked for it, RED moved first when it was
    offered (a WebRTC sender uses the answer's first codec), `usedtx=1` added to Opus'
    fmtp (the answer's parameters turn the sender's DTX on), `stereo=1` for stereo."""
    return _configure(answer, offer, prefs_by_track)[0]


def _configure(answer: str, offer: str, prefs_by_track: dict[str, AudioPublishPrefs]) -> tuple[str, set[str]]:
    # Returns the edited answer and the mids that will carry RED.
    _, offer_media = _split(offer)
    track_of_mid: dict[str, str] = {}
    for section in offer_media:
        mid = next((l[6:] for l in section if l.startswith("a=mid:")), None)
        msid = next((l[7:].split(" ") for l in section if l.startswith("a=msid:")), None)
        if mid is not None and msid and len(msid) > 1:
            track_of_mid[mid] = msid[1]
    session, media = _split(answer)
    out = list(session)
    red_mids: set[str] = set()
    for section in media:
        mid = next((l[6:] for l in section if l.startswith("a=mid:")), None)
        prefs = prefs_by_track.get(track_of_mid.get(mid or "", ""))
        if prefs is None and len(prefs_by_track) == 1:
            prefs = next(iter(prefs_by_track.values()))
        if not section[0].startswith("m=audio") or prefs is None or section[0].split(" ")[1] == "0":
            out.extend(section)
            continue
        pts = {}
        for line in section:
            if line.startswith("a=rtpmap:"):
                pt, _, enc = line[9:].partition(" ")
                pts[enc.split("/")[0].lower()] = pt
        head = section[0].split(" ")
        formats = head[3:]
        if prefs.red and "red" in pts and "opus" in pts:
            formats = [pts["red"]] + [f for f in formats if f != pts["red"]]
            red_mids.add(mid or "")
        section = [" ".join(head[:3] + formats)] + section[1:]
        for i, line in enumerate(section):
            if "opus" in pts and line.startswith(f"a=fmtp:{pts['opus']} "):
                params = [p for p in line.split(" ", 1)[1].split(";") if p]
                keys = {p.split("=")[0] for p in params}
                if prefs.dtx and "usedtx" not in keys:
                    params.append("usedtx=1")
                if prefs.stereo and "stereo" not in keys:
                    params.append("stereo=1")
                section[i] = f"a=fmtp:{pts['opus']} " + ";".join(params)
        out.extend(section)
    return "\r\n".join(out) + "\r\n", red_mids
