"""What LiveKit's pion demands of a subscriber answer before it applies it, checked on
every answer the devserver receives (the Swift twin is Tests/BedrudRTCTests/SDP/
PionAnswerRule.swift; scripts/pion-peer proves it against pion itself).

Pion reads the codecs of each audio/video answer section through its rtpmaps, port 0
or not: every format must be a payload type, each non-zero one needs an `a=rtpmap` in
that section ("payload type not found"), and a video section needs a codec other than 0
("unable to start track, codec is not supported by remote"). LiveKit answers a failed
SetRemoteDescription with a full reconnect; the devserver does the same.
"""
from __future__ import annotations


def violations(sdp: str) -> list[str]:
    out: list[str] = []
    sections: list[list[str]] = []
    for line in sdp.replace("\r\n", "\n").split("\n"):
        if line.startswith("m="):
            sections.append([line])
        elif sections and line:
            sections[-1].append(line)
    for i, section in enumerate(sections):
        fields = section[0][2:].split(" ")
        kind = fields[0]
        if kind not in ("audio", "video") or len(fields) < 4:
            continue
        mapped = set()
        for line in section:
            if line.startswith("a=rtpmap:"):
                mapped.add(line[len("a=rtpmap:"):].split(" ", 1)[0])
        named = 0
        for fmt in fields[3:]:
            if not fmt.isdigit() or int(fmt) > 127:
                out.append(f"section {i} ({kind}): format {fmt} is not a payload type")
            elif int(fmt) == 0:
                continue
            elif str(int(fmt)) in mapped:
                named += 1
            else:
                out.append(f"section {i} ({kind}): payload type {fmt} has no a=rtpmap (pion: payload type not found)")
        if kind == "video" and named == 0:
            out.append(f"section {i} (video): no codec but 0 (pion: codec is not supported by remote)")
    return out
