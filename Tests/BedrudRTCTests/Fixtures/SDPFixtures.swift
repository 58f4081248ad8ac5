// SDPs for the SDP tests. `aiortc*` were captured from aiortc 1.16.0 on this machine
// (an offer with audio + data and the answer aiortc wrote for it); `liveKitSubscriberOffer`
// follows the shape the LiveKit fact sheet (§3.6) describes for the server's subscriber offer.
enum SDPFixtures {
    /// Turns the LF-separated literal into CRLF SDP ending in CRLF.
    static func crlf(_ s: String) -> String { s.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n") + "\r\n" }

    static let aiortcOffer = crlf("""
v=0
o=- 4004946731 4004946731 IN IP4 0.0.0.0
s=-
t=0 0
a=group:BUNDLE 0 1
a=msid-semantic:WMS *
m=audio 50459 UDP/TLS/RTP/SAVPF 96 9 0 8
c=IN IP4 127.0.0.1
a=sendonly
a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:mid
a=extmap:2 urn:ietf:params:rtp-hdrext:ssrc-audio-level
a=mid:0
a=msid:efdc8b1e-dca8-41c0-8057-482d8ae50767 071a1045-a886-438b-8529-ab0aee9ff46f
a=rtcp:9 IN IP4 0.0.0.0
a=rtcp-mux
a=ssrc:2140079447 cname:7fc93145-6a34-4ff8-8fe7-d62e15d58bf1
a=rtpmap:96 opus/48000/2
a=rtpmap:9 G722/8000
a=rtpmap:0 PCMU/8000
a=rtpmap:8 PCMA/8000
a=candidate:16572de626da4e5384a0ce2d0d93678a 1 udp 2130706431 127.0.0.1 50459 typ host
a=end-of-candidates
a=ice-ufrag:MCDb
a=ice-pwd:HpKTwVWxSoEXc5us2XWfiQ
a=fingerprint:sha-256 AF:35:E0:65:BA:E3:43:B7:2C:8C:7C:5A:C2:B8:E8:7A:EA:E4:C9:AF:5B:B6:73:EC:2D:63:8E:F2:B5:AF:D9:1A
a=fingerprint:sha-384 65:06:64:DA:28:87:20:4A:6C:AF:E1:EE:E5:1E:08:F3:32:10:D4:65:A9:0B:56:D7:C7:A0:51:B1:6A:0F:83:0F:8A:B1:97:0F:6B:C8:99:B1:A0:2C:24:93:36:AE:9B:76
a=fingerprint:sha-512 DE:90:8D:D2:CA:D1:1E:B4:59:53:5A:1D:9B:E8:48:7F:E3:E8:5E:73:BD:89:1F:89:8E:24:12:D9:8D:C3:6D:DB:40:CB:E0:81:3E:F0:BD:0E:AC:09:30:7B:0B:46:D0:D2:0D:7D:0E:79:39:7F:03:6B:9E:C1:38:82:2B:31:77:96
a=setup:actpass
m=application 56500 UDP/DTLS/SCTP webrtc-datachannel
c=IN IP4 127.0.0.1
a=mid:1
a=sctp-port:5000
a=max-message-size:262144
a=candidate:16572de626da4e5384a0ce2d0d93678a 1 udp 2130706431 127.0.0.1 56500 typ host
a=end-of-candidates
a=ice-ufrag:MCDb
a=ice-pwd:HpKTwVWxSoEXc5us2XWfiQ
a=fingerprint:sha-256 AF:35:E0:65:BA:E3:43:B7:2C:8C:7C:5A:C2:B8:E8:7A:EA:E4:C9:AF:5B:B6:73:EC:2D:63:8E:F2:B5:AF:D9:1A
a=fingerprint:sha-384 65:06:64:DA:28:87:20:4A:6C:AF:E1:EE:E5:1E:08:F3:32:10:D4:65:A9:0B:56:D7:C7:A0:51:B1:6A:0F:83:0F:8A:B1:97:0F:6B:C8:99:B1:A0:2C:24:93:36:AE:9B:76
a=fingerprint:sha-512 DE:90:8D:D2:CA:D1:1E:B4:59:53:5A:1D:9B:E8:48:7F:E3:E8:5E:73:BD:89:1F:89:8E:24:12:D9:8D:C3:6D:DB:40:CB:E0:81:3E:F0:BD:0E:AC:09:30:7B:0B:46:D0:D2:0D:7D:0E:79:39:7F:03:6B:9E:C1:38:82:2B:31:77:96
a=setup:actpass
""")

    static let aiortcAnswer = crlf("""
v=0
o=- 4004946731 4004946731 IN IP4 0.0.0.0
s=-
t=0 0
a=group:BUNDLE 0 1
a=msid-semantic:WMS *
m=audio 54792 UDP/TLS/RTP/SAVPF 96 9 0 8
c=IN IP4 127.0.0.1
a=recvonly
a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:mid
a=extmap:2 urn:ietf:params:rtp-hdrext:ssrc-audio-level
a=mid:0
a=msid:0c7fedc2-11e1-47a3-8415-33a5e8b7d292 a8036f4b-74ff-47b7-82ad-e4dca9b0cd4d
a=rtcp:9 IN IP4 0.0.0.0
a=rtcp-mux
a=ssrc:1472935645 cname:3479f85b-0f6b-4b18-8eef-703322b5d97b
a=rtpmap:96 opus/48000/2
a=rtpmap:9 G722/8000
a=rtpmap:0 PCMU/8000
a=rtpmap:8 PCMA/8000
a=candidate:16572de626da4e5384a0ce2d0d93678a 1 udp 2130706431 127.0.0.1 54792 typ host
a=end-of-candidates
a=ice-ufrag:v5D0
a=ice-pwd:UoRDQ38ESi5CN3t3HpSeo2
a=fingerprint:sha-256 90:64:89:4C:69:6D:54:89:EF:A7:E0:F9:60:B4:A5:D0:07:32:92:30:54:69:16:15:83:BD:B0:8A:DD:60:43:D3
a=fingerprint:sha-384 F1:76:23:E6:1B:98:35:46:F0:C4:24:AF:18:FC:30:4E:9C:CF:33:E5:CE:5D:2D:FE:21:A5:29:E9:37:17:62:AF:C8:99:13:1C:C2:26:D2:13:12:A5:CC:40:A2:85:2F:4A
a=fingerprint:sha-512 B2:FD:D5:BE:78:88:2C:F2:DB:C3:A9:FA:8F:FE:42:51:54:DF:9E:C2:31:18:27:FC:0E:FA:12:4C:9F:03:EB:FE:FA:DC:DB:C5:C6:56:FB:DD:4F:9F:73:9A:F8:52:DE:74:1D:4B:A0:03:62:1B:79:BA:54:33:C6:51:21:BF:04:8B
a=setup:active
m=application 54792 UDP/DTLS/SCTP webrtc-datachannel
c=IN IP4 127.0.0.1
a=mid:1
a=sctp-port:5000
a=max-message-size:262144
a=candidate:16572de626da4e5384a0ce2d0d93678a 1 udp 2130706431 127.0.0.1 54792 typ host
a=end-of-candidates
a=ice-ufrag:v5D0
a=ice-pwd:UoRDQ38ESi5CN3t3HpSeo2
a=fingerprint:sha-256 90:64:89:4C:69:6D:54:89:EF:A7:E0:F9:60:B4:A5:D0:07:32:92:30:54:69:16:15:83:BD:B0:8A:DD:60:43:D3
a=fingerprint:sha-384 F1:76:23:E6:1B:98:35:46:F0:C4:24:AF:18:FC:30:4E:9C:CF:33:E5:CE:5D:2D:FE:21:A5:29:E9:37:17:62:AF:C8:99:13:1C:C2:26:D2:13:12:A5:CC:40:A2:85:2F:4A
a=fingerprint:sha-512 B2:FD:D5:BE:78:88:2C:F2:DB:C3:A9:FA:8F:FE:42:51:54:DF:9E:C2:31:18:27:FC:0E:FA:12:4C:9F:03:EB:FE:FA:DC:DB:C5:C6:56:FB:DD:4F:9F:73:9A:F8:52:DE:74:1D:4B:A0:03:62:1B:79:BA:54:33:C6:51:21:BF:04:8B
a=setup:active
""")

    /// LiveKit subscriber offer shape: data first (mid 0), two Opus tracks (one stereo) with RED, one VP8 track with RTX; session-level fingerprint; no candidates.
    static let liveKitSubscriberOffer = crlf("""
v=0
o=- 7468916287016362829 2 IN IP4 0.0.0.0
s=-
t=0 0
a=fingerprint:sha-256 3B:2E:CD:7E:AC:C9:3D:53:0E:2F:07:47:27:E4:10:1A:D4:5D:4E:9A:9C:84:44:6D:65:05:26:A4:2C:10:43:89
a=extmap-allow-mixed
a=group:BUNDLE 0 1 2 3
m=application 9 UDP/DTLS/SCTP webrtc-datachannel
c=IN IP4 0.0.0.0
a=setup:actpass
a=mid:0
a=sendrecv
a=sctp-port:5000
a=max-message-size:65535
a=ice-ufrag:yxBfQGNGfTLmWnRJ
a=ice-pwd:lgNXUhFhWKacoLApkzuNbYuRryEmEYyf
m=audio 9 UDP/TLS/RTP/SAVPF 111 63 0 8
c=IN IP4 0.0.0.0
a=setup:actpass
a=mid:1
a=ice-ufrag:yxBfQGNGfTLmWnRJ
a=ice-pwd:lgNXUhFhWKacoLApkzuNbYuRryEmEYyf
a=rtcp-mux
a=rtcp-rsize
a=rtpmap:111 opus/48000/2
a=fmtp:111 minptime=10;useinbandfec=1
a=rtcp-fb:111 nack
a=rtpmap:63 red/48000/2
a=fmtp:63 111/111
a=rtpmap:0 PCMU/8000
a=rtpmap:8 PCMA/8000
a=extmap:5 http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time
a=ssrc:3735928559 cname:PA_f3Xq9KcR2LmN|TR_AMkT7nWzQ4pVbY
a=ssrc:3735928559 msid:PA_f3Xq9KcR2LmN|TR_AMkT7nWzQ4pVbY TR_AMkT7nWzQ4pVbY
a=msid:PA_f3Xq9KcR2LmN|TR_AMkT7nWzQ4pVbY TR_AMkT7nWzQ4pVbY
a=sendonly
m=audio 9 UDP/TLS/RTP/SAVPF 111 63
c=IN IP4 0.0.0.0
a=setup:actpass
a=mid:2
a=ice-ufrag:yxBfQGNGfTLmWnRJ
a=ice-pwd:lgNXUhFhWKacoLApkzuNbYuRryEmEYyf
a=rtcp-mux
a=rtcp-rsize
a=rtpmap:111 opus/48000/2
a=fmtp:111 minptime=10;useinbandfec=1;sprop-stereo=1
a=rtpmap:63 red/48000/2
a=fmtp:63 111/111
a=ssrc:16909060 cname:PA_Hb6sYt2Uw8Ez|TR_AMq1Lp9Rx3Zc
a=ssrc:16909060 msid:PA_Hb6sYt2Uw8Ez|TR_AMq1Lp9Rx3Zc TR_AMq1Lp9Rx3Zc
a=msid:PA_Hb6sYt2Uw8Ez|TR_AMq1Lp9Rx3Zc TR_AMq1Lp9Rx3Zc
a=sendonly
m=video 9 UDP/TLS/RTP/SAVPF 96 97
c=IN IP4 0.0.0.0
a=setup:actpass
a=mid:3
a=ice-ufrag:yxBfQGNGfTLmWnRJ
a=ice-pwd:lgNXUhFhWKacoLApkzuNbYuRryEmEYyf
a=rtcp-mux
a=rtcp-rsize
a=rtpmap:96 VP8/90000
a=rtcp-fb:96 nack
a=rtcp-fb:96 nack pli
a=rtcp-fb:96 goog-remb
a=rtpmap:97 rtx/90000
a=fmtp:97 apt=96
a=ssrc-group:FID 2864434397 4008636142
a=ssrc:2864434397 cname:PA_f3Xq9KcR2LmN|TR_VCkT7nWzQ4pVbY
a=ssrc:2864434397 msid:PA_f3Xq9KcR2LmN|TR_VCkT7nWzQ4pVbY TR_VCkT7nWzQ4pVbY
a=ssrc:4008636142 cname:PA_f3Xq9KcR2LmN|TR_VCkT7nWzQ4pVbY
a=ssrc:4008636142 msid:PA_f3Xq9KcR2LmN|TR_VCkT7nWzQ4pVbY TR_VCkT7nWzQ4pVbY
a=msid:PA_f3Xq9KcR2LmN|TR_VCkT7nWzQ4pVbY TR_VCkT7nWzQ4pVbY
a=sendonly
""")
}
