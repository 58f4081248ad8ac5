// Command pion-peer is the SFU side of a LiveKit subscriber connection, built on pion
// (LiveKit's own WebRTC stack), for the BedrudRTC conformance tests.
//
// Like LiveKit's subscriber PeerConnection it is ICE-lite (so the bot is the controlling
// agent), offers with a=setup:actpass, and creates the _reliable and _lossy data
// channels. Audio tracks are Opus PT 111 (minptime=10;useinbandfec=1, NACK), with RED 63
// (111/111) listed first when asked; video tracks are VP8 96 or H264 102, each with RTX.
// Every track is a sendonly transceiver whose msid is LiveKit's "PA_x|TR_x TR_x". The
// bot's answer goes through pion's own SetRemoteDescription; if pion refuses it, pion's
// error text is reported. Audio is sent as Opus frames the test supplies, packetized by
// pion's Opus payloader, with pion's RTCP sender reports.
//
// It binds 127.0.0.1 only (loopback candidates, no mDNS, no STUN), so nothing leaves the
// machine. Driven over stdin/stdout with one JSON object per line:
//
//	{"cmd":"offer","tracks":[{"kind":"audio","participant":"PA_a","track":"TR_a"},
//	  {"kind":"video","codec":"VP8","participant":"PA_a","track":"TR_v"}],
//	 "data":true,"red":false,"tcp":false,"video_rtp":false}   → {"event":"offer","sdp":…}
//	{"cmd":"add_track","tracks":[…]}                           → {"event":"offer","sdp":…}
//	{"cmd":"remove_track","track":"TR_a"}                      → {"event":"offer","sdp":…}
//	{"cmd":"ice_restart"}                                      → {"event":"offer","sdp":…}  (new ufrag/pwd)
//	{"cmd":"answer","sdp":…}                → {"event":"answer_applied"} or {"event":"answer_rejected","error":…}
//	{"cmd":"candidate","candidate":"candidate:…","sdpMid":"0"} → nothing (an error event on failure)
//	{"cmd":"media","frames":["<hex Opus frame>",…]}            → {"event":"media_started"}; frames loop every 20 ms on each audio track
//	{"cmd":"stop_media"}  → {"event":"stats","sent":{"<ssrc>":n},"retransmitted":{…},"sr_packets":…,"rr_packets":…,"nack_packets":…}
//	                        once sending has stopped
//	{"cmd":"stats"}                                            → {"event":"stats",…}
//	{"cmd":"close"}                                            → {"event":"closed"}, exit
//
// Unsolicited: {"event":"ready"}, {"event":"state","ice":…,"connection":…},
// {"event":"channel_open","label":…}, {"event":"error","message":…}.
package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/pion/ice/v2"
	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/rtp/codecs"
	"github.com/pion/webrtc/v3"
)

// LiveKit's payload types.
const (
	ptOpus    = 111
	ptRED     = 63
	ptVP8     = 96
	ptVP8RTX  = 97
	ptH264    = 102
	ptH264RTX = 103
)

var (
	opusCodec = webrtc.RTPCodecParameters{
		RTPCodecCapability: webrtc.RTPCodecCapability{
			MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2,
			SDPFmtpLine:  "minptime=10;useinbandfec=1",
			RTCPFeedback: []webrtc.RTCPFeedback{{Type: "nack"}},
		},
		PayloadType: ptOpus,
	}
	redCodec = webrtc.RTPCodecParameters{
		RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: "audio/red", ClockRate: 48000, Channels: 2, SDPFmtpLine: "111/111"},
		PayloadType:        ptRED,
	}
	videoFeedback = []webrtc.RTCPFeedback{{Type: "goog-remb"}, {Type: "ccm", Parameter: "fir"}, {Type: "nack"}, {Type: "nack", Parameter: "pli"}}
	vp8Codec      = webrtc.RTPCodecParameters{
		RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000, RTCPFeedback: videoFeedback},
		PayloadType:        ptVP8,
	}
	h264Codec = webrtc.RTPCodecParameters{
		RTPCodecCapability: webrtc.RTPCodecCapability{
			MimeType: webrtc.MimeTypeH264, ClockRate: 90000, RTCPFeedback: videoFeedback,
			SDPFmtpLine: "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f",
		},
		PayloadType: ptH264,
	}
)

func rtxCodec(pt, apt webrtc.PayloadType) webrtc.RTPCodecParameters {
	return webrtc.RTPCodecParameters{
		RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: "video/rtx", ClockRate: 90000, SDPFmtpLine: "apt=" + strconv.Itoa(int(apt))},
		PayloadType:        pt,
	}
}

// --- output ---------------------------------------------------------------------------

var outMu sync.Mutex

func emit(event string, fields map[string]interface{}) {
	if fields == nil {
		fields = map[string]interface{}{}
	}
	fields["event"] = event
	b, err := json.Marshal(fields)
	if err != nil {
		b = []byte(fmt.Sprintf(`{"event":"error","message":%q}`, err.Error()))
	}
	outMu.Lock()
	os.Stdout.Write(append(b, '\n'))
	outMu.Unlock()
}

func fail(format string, args ...interface{}) {
	emit("error", map[string]interface{}{"message": fmt.Sprintf(format, args...)})
}

// --- commands -------------------------------------------------------------------------

type trackSpec struct {
	Kind        string `json:"kind"`
	Codec       string `json:"codec"`
	Participant string `json:"participant"`
	Track       string `json:"track"`
	// RED lists RED 63 ahead of Opus for this audio track (default: the offer's "red").
	RED *bool `json:"red"`
}

type command struct {
	Cmd       string      `json:"cmd"`
	Tracks    []trackSpec `json:"tracks"`
	Data      *bool       `json:"data"`
	RED       bool        `json:"red"`
	TCP       bool        `json:"tcp"`
	VideoRTP  bool        `json:"video_rtp"`
	SDP       string      `json:"sdp"`
	Candidate string      `json:"candidate"`
	SDPMid    *string     `json:"sdpMid"`
	Track     string      `json:"track"`
	Frames    []string    `json:"frames"`
}

// --- the peer -------------------------------------------------------------------------

type sentTrack struct {
	spec   trackSpec
	local  *webrtc.TrackLocalStaticRTP
	sender *webrtc.RTPSender
}

type peer struct {
	pc       *webrtc.PeerConnection
	tcp      net.Listener
	red      bool
	videoRTP bool
	tracks   []*sentTrack

	mu            sync.Mutex
	sent          map[uint32]int            // RTP packets the tracks handed to pion (each sequence number once), per SSRC
	retransmitted map[uint32]int            // packets written again for a NACK, per SSRC
	onWire        map[uint32]*[1 << 16]bool // sequence numbers already written, per SSRC
	srPackets     int                       // RTCP sender reports written
	rrPackets     int
	nackPackets   int
	stop          chan struct{}
	senders       sync.WaitGroup
}

func newPeer() *peer {
	return &peer{sent: map[uint32]int{}, retransmitted: map[uint32]int{}, onWire: map[uint32]*[1 << 16]bool{}}
}

func (p *peer) start(c command) error {
	m := &webrtc.MediaEngine{}
	for _, codec := range []webrtc.RTPCodecParameters{opusCodec, redCodec} {
		if err := m.RegisterCodec(codec, webrtc.RTPCodecTypeAudio); err != nil {
			return err
		}
	}
	for _, codec := range []webrtc.RTPCodecParameters{vp8Codec, rtxCodec(ptVP8RTX, ptVP8), h264Codec, rtxCodec(ptH264RTX, ptH264)} {
		if err := m.RegisterCodec(codec, webrtc.RTPCodecTypeVideo); err != nil {
			return err
		}
	}
	for _, uri := range []string{"urn:ietf:params:rtp-hdrext:sdes:mid", "urn:ietf:params:rtp-hdrext:ssrc-audio-level"} {
		if err := m.RegisterHeaderExtension(webrtc.RTPHeaderExtensionCapability{URI: uri}, webrtc.RTPCodecTypeAudio); err != nil {
			return err
		}
	}
	// Counting interceptors around pion's own (NACK responder, RTCP reports, TWCC). The
	// innermost sees everything written to the transport: sender reports, and RTP
	// including the NACK responder's retransmissions. The outermost sees RTP as the
	// tracks write it: each sequence number once.
	registry := &interceptor.Registry{}
	registry.Add(counterFactory{p: p, inner: true})
	if err := webrtc.RegisterDefaultInterceptors(m, registry); err != nil {
		return err
	}
	registry.Add(counterFactory{p: p, inner: false})

	s := webrtc.SettingEngine{}
	s.SetLite(true)
	s.SetIncludeLoopbackCandidate(true)
	s.SetIPFilter(func(ip net.IP) bool { return ip.IsLoopback() && ip.To4() != nil })
	s.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	if c.TCP {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return err
		}
		p.tcp = l
		s.SetICETCPMux(ice.NewTCPMuxDefault(ice.TCPMuxParams{Listener: l, ReadBufferSize: 64}))
		s.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeTCP4})
	} else {
		s.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	}

	api := webrtc.NewAPI(webrtc.WithMediaEngine(m), webrtc.WithSettingEngine(s), webrtc.WithInterceptorRegistry(registry))
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return err
	}
	p.pc = pc
	p.red = c.RED
	p.videoRTP = c.VideoRTP
	pc.OnICEConnectionStateChange(func(st webrtc.ICEConnectionState) {
		emit("state", map[string]interface{}{"ice": st.String(), "connection": pc.ConnectionState().String()})
	})
	pc.OnConnectionStateChange(func(st webrtc.PeerConnectionState) {
		emit("state", map[string]interface{}{"ice": pc.ICEConnectionState().String(), "connection": st.String()})
	})
	if c.Data == nil || *c.Data {
		// LiveKit's server-created channels on the subscriber connection.
		zero := uint16(0)
		unordered := false
		for label, init := range map[string]*webrtc.DataChannelInit{"_reliable": nil, "_lossy": {Ordered: &unordered, MaxRetransmits: &zero}} {
			dc, err := pc.CreateDataChannel(label, init)
			if err != nil {
				return err
			}
			l := label
			dc.OnOpen(func() { emit("channel_open", map[string]interface{}{"label": l}) })
		}
	}
	return nil
}

func (p *peer) addTracks(specs []trackSpec) error {
	for _, spec := range specs {
		var capability webrtc.RTPCodecCapability
		var prefs []webrtc.RTPCodecParameters
		switch {
		case spec.Kind == "audio":
			capability = opusCodec.RTPCodecCapability
			if (spec.RED == nil && p.red) || (spec.RED != nil && *spec.RED) {
				prefs = []webrtc.RTPCodecParameters{redCodec, opusCodec}
			}
		case spec.Kind == "video" && (spec.Codec == "" || spec.Codec == "VP8"):
			capability = vp8Codec.RTPCodecCapability
			prefs = []webrtc.RTPCodecParameters{vp8Codec, rtxCodec(ptVP8RTX, ptVP8), h264Codec, rtxCodec(ptH264RTX, ptH264)}
		case spec.Kind == "video" && spec.Codec == "H264":
			capability = h264Codec.RTPCodecCapability
			prefs = []webrtc.RTPCodecParameters{h264Codec, rtxCodec(ptH264RTX, ptH264), vp8Codec, rtxCodec(ptVP8RTX, ptVP8)}
		default:
			return fmt.Errorf("unknown track kind %q / codec %q", spec.Kind, spec.Codec)
		}
		local, err := webrtc.NewTrackLocalStaticRTP(capability, spec.Track, spec.Participant+"|"+spec.Track)
		if err != nil {
			return err
		}
		// A transceiver whose track was removed and whose inactive answer has been applied
		// is reused with its mid, as LiveKit recycles subscriber transceivers.
		var transceiver *webrtc.RTPTransceiver
		for _, t := range p.pc.GetTransceivers() {
			if t.Kind() == local.Kind() && t.Sender() == nil && t.Direction() != webrtc.RTPTransceiverDirectionSendonly {
				transceiver = t
				break
			}
		}
		var sender *webrtc.RTPSender
		if transceiver != nil {
			if sender, err = p.pc.AddTrack(local); err != nil {
				return err
			}
		} else {
			transceiver, err = p.pc.AddTransceiverFromTrack(local, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendonly})
			if err != nil {
				return err
			}
			sender = transceiver.Sender()
		}
		if prefs != nil {
			for _, t := range p.pc.GetTransceivers() {
				// Once an answer has fixed pion's codecs, preferences naming others are
				// refused; the transceiver then offers what was negotiated, and a track
				// whose codec is not among it fails to bind when the answer is applied, as
				// a LiveKit DownTrack would.
				if t.Sender() == sender {
					_ = t.SetCodecPreferences(prefs)
				}
			}
		}
		go p.readRTCP(sender)
		p.tracks = append(p.tracks, &sentTrack{spec: spec, local: local, sender: sender})
	}
	return nil
}

// readRTCP drains what the bot sends back about one track (pion's interceptors need
// RTCP to be read) and counts receiver reports and NACKs.
func (p *peer) readRTCP(sender *webrtc.RTPSender) {
	for {
		packets, _, err := sender.ReadRTCP()
		if err != nil {
			return
		}
		p.mu.Lock()
		for _, pkt := range packets {
			switch pkt.(type) {
			case *rtcp.ReceiverReport:
				p.rrPackets++
			case *rtcp.TransportLayerNack:
				p.nackPackets++
			}
		}
		p.mu.Unlock()
	}
}

func (p *peer) removeTrack(id string) error {
	for i, t := range p.tracks {
		if t.spec.Track == id {
			if err := p.pc.RemoveTrack(t.sender); err != nil {
				return err
			}
			p.tracks = append(p.tracks[:i], p.tracks[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("no track %q", id)
}

// offer writes an offer once gathering is complete, so it carries pion's candidates.
func (p *peer) offer(restart bool) error {
	offer, err := p.pc.CreateOffer(&webrtc.OfferOptions{ICERestart: restart})
	if err != nil {
		return err
	}
	gathered := webrtc.GatheringCompletePromise(p.pc)
	if err := p.pc.SetLocalDescription(offer); err != nil {
		return err
	}
	select {
	case <-gathered:
	case <-time.After(10 * time.Second):
		return fmt.Errorf("ICE gathering did not complete in 10 s")
	}
	emit("offer", map[string]interface{}{"sdp": p.pc.LocalDescription().SDP})
	return nil
}

func (p *peer) ssrc(t *sentTrack) uint32 {
	enc := t.sender.GetParameters().Encodings
	if len(enc) == 0 {
		return 0
	}
	return uint32(enc[0].SSRC)
}

// startMedia loops `frames` (Opus, 20 ms each) on every audio track and, when asked,
// sends a small VP8 packet every 100 ms on every video track.
func (p *peer) startMedia(frames [][]byte) {
	p.stop = make(chan struct{})
	for _, t := range p.tracks {
		t := t
		ssrc := p.ssrc(t)
		switch {
		case t.spec.Kind == "audio" && len(frames) > 0:
			p.senders.Add(1)
			go func() {
				defer p.senders.Done()
				packetizer := rtp.NewPacketizer(1200, ptOpus, ssrc, &codecs.OpusPayloader{}, rtp.NewRandomSequencer(), 48000)
				p.pace(20*time.Millisecond, func(i int) {
					for _, pkt := range packetizer.Packetize(frames[i%len(frames)], 960) {
						p.write(t, ssrc, pkt)
					}
				})
			}()
		case t.spec.Kind == "video" && p.videoRTP:
			p.senders.Add(1)
			go func() {
				defer p.senders.Done()
				packetizer := rtp.NewPacketizer(1200, ptVP8, ssrc, &codecs.VP8Payloader{}, rtp.NewRandomSequencer(), 90000)
				frame := make([]byte, 300)
				p.pace(100*time.Millisecond, func(int) {
					for _, pkt := range packetizer.Packetize(frame, 9000) {
						p.write(t, ssrc, pkt)
					}
				})
			}()
		}
	}
}

// pace calls send(i) every interval, on a schedule that does not drift, until stopped.
func (p *peer) pace(interval time.Duration, send func(int)) {
	start := time.Now()
	for i := 0; ; i++ {
		select {
		case <-p.stop:
			return
		case <-time.After(time.Until(start.Add(time.Duration(i) * interval))):
		}
		send(i)
	}
}

func (p *peer) write(t *sentTrack, ssrc uint32, pkt *rtp.Packet) {
	// Not bound (not negotiated yet, or removed): nothing reaches the interceptors, so
	// nothing is counted.
	_ = t.local.WriteRTP(pkt)
}

// counterFactory makes the counting interceptors (see start).
type counterFactory struct {
	p     *peer
	inner bool
}

func (f counterFactory) NewInterceptor(string) (interceptor.Interceptor, error) {
	return &counter{p: f.p, inner: f.inner}, nil
}

type counter struct {
	interceptor.NoOp
	p     *peer
	inner bool
}

func (c *counter) BindLocalStream(info *interceptor.StreamInfo, w interceptor.RTPWriter) interceptor.RTPWriter {
	return interceptor.RTPWriterFunc(func(h *rtp.Header, payload []byte, a interceptor.Attributes) (int, error) {
		n, err := w.Write(h, payload, a)
		c.p.mu.Lock()
		defer c.p.mu.Unlock()
		if !c.inner {
			if err == nil {
				c.p.sent[h.SSRC]++
			}
			return n, err
		}
		seen := c.p.onWire[h.SSRC]
		if seen == nil {
			seen = &[1 << 16]bool{}
			c.p.onWire[h.SSRC] = seen
		}
		if seen[h.SequenceNumber] {
			c.p.retransmitted[h.SSRC]++
		}
		seen[h.SequenceNumber] = true
		return n, err
	})
}

func (c *counter) BindRTCPWriter(w interceptor.RTCPWriter) interceptor.RTCPWriter {
	if !c.inner {
		return w
	}
	return interceptor.RTCPWriterFunc(func(pkts []rtcp.Packet, a interceptor.Attributes) (int, error) {
		n, err := w.Write(pkts, a)
		if err == nil {
			c.p.mu.Lock()
			for _, pkt := range pkts {
				if _, ok := pkt.(*rtcp.SenderReport); ok {
					c.p.srPackets++
				}
			}
			c.p.mu.Unlock()
		}
		return n, err
	})
}

func (p *peer) stopMedia() {
	if p.stop != nil {
		close(p.stop)
		p.senders.Wait()
		p.stop = nil
	}
}

func (p *peer) stats() map[string]interface{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	keyed := func(counts map[uint32]int) map[string]int {
		out := map[string]int{}
		for ssrc, n := range counts {
			out[strconv.FormatUint(uint64(ssrc), 10)] = n
		}
		return out
	}
	return map[string]interface{}{
		"sent": keyed(p.sent), "retransmitted": keyed(p.retransmitted),
		"sr_packets": p.srPackets, "rr_packets": p.rrPackets, "nack_packets": p.nackPackets,
	}
}

func (p *peer) handle(c command) (bool, error) {
	if p.pc == nil && c.Cmd != "offer" && c.Cmd != "close" && c.Cmd != "stats" {
		return true, fmt.Errorf("no peer connection yet: send an offer command first")
	}
	switch c.Cmd {
	case "offer":
		if p.pc == nil {
			if err := p.start(c); err != nil {
				return true, err
			}
		}
		if err := p.addTracks(c.Tracks); err != nil {
			return true, err
		}
		return true, p.offer(false)
	case "add_track":
		if err := p.addTracks(c.Tracks); err != nil {
			return true, err
		}
		return true, p.offer(false)
	case "remove_track":
		if err := p.removeTrack(c.Track); err != nil {
			return true, err
		}
		return true, p.offer(false)
	case "ice_restart":
		return true, p.offer(true)
	case "answer":
		err := p.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: c.SDP})
		if err != nil {
			emit("answer_rejected", map[string]interface{}{"error": err.Error()})
			return true, nil
		}
		emit("answer_applied", nil)
	case "candidate":
		init := webrtc.ICECandidateInit{Candidate: c.Candidate, SDPMid: c.SDPMid}
		if err := p.pc.AddICECandidate(init); err != nil {
			return true, fmt.Errorf("candidate %q: %w", c.Candidate, err)
		}
	case "media":
		frames := make([][]byte, 0, len(c.Frames))
		for _, h := range c.Frames {
			b, err := hex.DecodeString(h)
			if err != nil {
				return true, err
			}
			frames = append(frames, b)
		}
		p.stopMedia()
		p.startMedia(frames)
		emit("media_started", nil)
	case "stop_media":
		p.stopMedia()
		emit("stats", p.stats())
	case "stats":
		emit("stats", p.stats())
	case "close":
		p.close()
		emit("closed", nil)
		return false, nil
	default:
		return true, fmt.Errorf("unknown command %q", c.Cmd)
	}
	return true, nil
}

func (p *peer) close() {
	p.stopMedia()
	if p.pc != nil {
		p.pc.Close()
	}
	if p.tcp != nil {
		p.tcp.Close()
	}
}

func main() {
	p := newPeer()
	emit("ready", nil)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<16), 1<<22)
	for in.Scan() {
		var c command
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			fail("bad command: %v", err)
			continue
		}
		more, err := p.handle(c)
		if err != nil {
			fail("%s: %v", c.Cmd, err)
		}
		if !more {
			return
		}
	}
	// stdin closed: the test is gone.
	p.close()
}
