import BedrudProtocol
import BedrudRuntime
import CNice

/// ICE connection state (the RTCIceConnectionState names).
public enum ICEConnectionState: String, Sendable, Equatable {
    case new, gathering, checking, connected, completed, failed, disconnected, closed
}

/// ICE settings of one peer connection.
public struct ICEConfiguration: Sendable, Equatable {
    /// STUN/TURN servers (from `JoinResponse.ice_servers`).
    public var servers: [ICEServer] = []
    /// Gather and use UDP candidates.
    public var udp = true
    /// Gather and use ICE-TCP candidates (RFC 6544); LiveKit's fallback on TCP 7881.
    public var tcp = true
    /// Use only relayed candidates (`client_configuration.force_relay`).
    public var relayOnly = false
    /// Restrict host candidates to these local IP addresses (e.g. `["127.0.0.1"]`); empty
    /// means every interface libnice finds (it skips loopback by itself).
    public var localAddresses: [String] = []
    /// RFC 7675 consent freshness: a path that stops answering fails the connection.
    public var consentFreshness = true
    /// Connectivity-check pacing (Ta) in milliseconds; libnice's default is 20.
    public var pacingMs: UInt32 = 20
    /// Local port range for host candidates, if restricted.
    public var portRange: ClosedRange<UInt16>?

    public init() {}
}

/// A STUN/TURN server with its address resolved to an IP literal (libnice needs numbers).
struct ResolvedICEServer: Sendable {
    let url: ICEServerURL
    let ip: String
    let username: String?
    let credential: String?
}

/// What an ``ICEAgent`` reports. Called on the loop thread.
protocol ICEAgentDelegate: AnyObject {
    func iceGathered(candidate: String)
    func iceGatheringDone()
    func iceStateChanged(_ state: ICEConnectionState)
    func iceSelectedPair(_ description: String)
}

/// One libnice agent with one stream of one component (BUNDLE + rtcp-mux), on a ``GLibLoop``.
///
/// Thread contract: create, use and close on the loop thread. libnice emits its signals
/// on the same thread (the agent is created on the loop's context).
final class ICEAgent {
    let loop: GLibLoop
    let agent: OpaquePointer
    let streamID: UInt32
    let componentID: UInt32 = 1
    weak var delegate: (any ICEAgentDelegate)?
    private var handlers: [gulong] = []
    private(set) var state: ICEConnectionState = .new
    private var closed = false
    private let log: Logger

    init(loop: GLibLoop, controlling: Bool, configuration: ICEConfiguration, servers: [ResolvedICEServer], logRoom: String? = nil) throws(ICEError) {
        log = Logger("rtc.ice", room: logRoom)
        var flags = NICE_AGENT_OPTION_ICE_TRICKLE.rawValue
        if configuration.consentFreshness { flags |= NICE_AGENT_OPTION_CONSENT_FRESHNESS.rawValue }
        guard let a = shim_nice_agent_new(loop.context, flags) else { throw ICEError(.agentCreation) }
        self.loop = loop
        self.agent = a
        let obj = UnsafeMutableRawPointer(a)
        shim_set_bool(obj, "upnp", 0)
        shim_set_bool(obj, "ice-udp", configuration.udp ? 1 : 0)
        shim_set_bool(obj, "ice-tcp", configuration.tcp ? 1 : 0)
        shim_set_bool(obj, "controlling-mode", controlling ? 1 : 0)
        shim_set_bool(obj, "force-relay", configuration.relayOnly ? 1 : 0)
        shim_set_uint(obj, "stun-pacing-timer", max(1, configuration.pacingMs))
        if let stun = servers.first(where: { $0.url.scheme == .stun && $0.url.transport == .udp }) {
            shim_set_string(obj, "stun-server", stun.ip)
            shim_set_uint(obj, "stun-server-port", UInt32(stun.url.port))
        }
        for ip in configuration.localAddresses {
            var addr = NiceAddress()
            nice_address_init(&addr)
            guard nice_address_set_from_string(&addr, ip) != 0 else {
                shim_g_object_unref(obj)
                throw ICEError(.badLocalAddress(ip))
            }
            _ = nice_agent_add_local_address(a, &addr)
        }
        let sid = nice_agent_add_stream(a, 1)
        guard sid != 0 else {
            shim_g_object_unref(obj)
            throw ICEError(.agentCreation)
        }
        streamID = sid
        if let r = configuration.portRange {
            nice_agent_set_port_range(a, sid, componentID, UInt32(r.lowerBound), UInt32(r.upperBound))
        }
        addRelays(servers)
        let me = Unmanaged.passUnretained(self).toOpaque()
        handlers.append(shim_on_new_candidate_full(a, { agent, cand, ud in
            guard let agent, let cand, let ud else { return }
            let me = Unmanaged<ICEAgent>.fromOpaque(ud).takeUnretainedValue()
            guard let sdp = nice_agent_generate_local_candidate_sdp(agent, cand) else { return }
            let line = String(cString: sdp)
            shim_g_free(sdp)
            me.delegate?.iceGathered(candidate: line.hasPrefix("a=") ? String(line.dropFirst(2)) : line)
        }, me))
        handlers.append(shim_on_candidate_gathering_done(a, { _, _, ud in
            guard let ud else { return }
            Unmanaged<ICEAgent>.fromOpaque(ud).takeUnretainedValue().delegate?.iceGatheringDone()
        }, me))
        handlers.append(shim_on_component_state_changed(a, { _, _, _, state, ud in
            guard let ud else { return }
            Unmanaged<ICEAgent>.fromOpaque(ud).takeUnretainedValue().componentStateChanged(state)
        }, me))
        handlers.append(shim_on_new_selected_pair_full(a, { agent, stream, component, _, _, ud in
            guard let agent, let ud else { return }
            var buf = [CChar](repeating: 0, count: 320)
            guard shim_selected_pair_describe(agent, stream, component, &buf, buf.count) != 0 else { return }
            let text = buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            Unmanaged<ICEAgent>.fromOpaque(ud).takeUnretainedValue().delegate?.iceSelectedPair(text)
        }, me))
    }

    deinit {
        if !closed { shim_g_object_unref(UnsafeMutableRawPointer(agent)) }
    }

    private func componentStateChanged(_ s: UInt32) {
        let mapped: ICEConnectionState
        switch s {
        case NICE_COMPONENT_STATE_GATHERING.rawValue: mapped = .gathering
        case NICE_COMPONENT_STATE_CONNECTING.rawValue: mapped = .checking
        case NICE_COMPONENT_STATE_CONNECTED.rawValue: mapped = .connected
        case NICE_COMPONENT_STATE_READY.rawValue: mapped = .completed
        case NICE_COMPONENT_STATE_FAILED.rawValue: mapped = .failed
        default: mapped = (state == .connected || state == .completed) ? .disconnected : .new
        }
        guard mapped != state else { return }
        state = mapped
        delegate?.iceStateChanged(mapped)
    }

    /// Sets the role (the offerer controls; an answerer facing `ice-lite` controls too).
    func setControlling(_ on: Bool) { shim_set_bool(UnsafeMutableRawPointer(agent), "controlling-mode", on ? 1 : 0) }

    /// Our current ufrag and password.
    var localCredentials: (ufrag: String, password: String) {
        var u: UnsafeMutablePointer<gchar>?
        var p: UnsafeMutablePointer<gchar>?
        guard nice_agent_get_local_credentials(agent, streamID, &u, &p) != 0, let u, let p else { return ("", "") }
        defer {
            shim_g_free(u)
            shim_g_free(p)
        }
        return (String(cString: u), String(cString: p))
    }

    /// Replaces our ufrag and password (before gathering, or right after ``restart()``), so
    /// that the descriptions can be written before libnice is asked.
    func setLocalCredentials(ufrag: String, password: String) -> Bool {
        nice_agent_set_local_credentials(agent, streamID, ufrag, password) != 0
    }

    /// Starts gathering; candidates arrive through the delegate (host ones at once).
    func gather() throws(ICEError) {
        guard nice_agent_gather_candidates(agent, streamID) != 0 else { throw ICEError(.gatheringFailed) }
    }

    /// Sets the peer's ufrag and password (from its SDP).
    func setRemoteCredentials(ufrag: String, password: String) {
        _ = nice_agent_set_remote_credentials(agent, streamID, ufrag, password)
    }

    /// Adds one remote candidate (`candidate:…`). The caller validated it with ``ICECandidate``.
    /// - Returns: false if libnice refused it.
    func addRemoteCandidate(_ candidate: String) -> Bool {
        let line = candidate.hasPrefix("a=") ? candidate : "a=" + candidate
        return shim_add_remote_candidate_sdp(agent, streamID, componentID, line) > 0
    }

    /// The peer signalled end-of-candidates: libnice may now declare failure.
    func remoteGatheringDone() { _ = nice_agent_peer_candidate_gathering_done(agent, streamID) }

    /// Gives libnice the TURN servers among `servers` (before gathering).
    private func addRelays(_ servers: [ResolvedICEServer]) {
        for s in servers where s.url.isTURN {
            let type: NiceRelayType
            switch (s.url.scheme, s.url.transport) {
            case (.turns, _): type = NICE_RELAY_TYPE_TURN_TLS
            case (_, .tcp): type = NICE_RELAY_TYPE_TURN_TCP
            default: type = NICE_RELAY_TYPE_TURN_UDP
            }
            if nice_agent_set_relay_info(agent, streamID, componentID, s.ip, UInt32(s.url.port), s.username ?? "", s.credential ?? "", type) == 0 {
                log.warning("TURN server \(s.url) was refused by libnice; it is skipped")
            }
        }
    }

    /// ICE restart (RFC 8445 §9): new local credentials, remote candidates forgotten.
    func restart() -> Bool {
        state = .new
        return nice_agent_restart_stream(agent, streamID) != 0
    }

    /// Sends one datagram on the selected pair. Returns bytes sent, or -1 (not connected / would block).
    @inline(__always)
    func send(_ base: UnsafeRawPointer, _ count: Int) -> Int32 {
        nice_agent_send(agent, streamID, componentID, UInt32(count), base.assumingMemoryBound(to: gchar.self))
    }

    /// Routes received datagrams to `callback` (a C function) with `userData`.
    func attachReceiver(_ callback: NiceAgentRecvFunc?, userData: UnsafeMutableRawPointer?) {
        _ = nice_agent_attach_recv(agent, streamID, componentID, loop.context, callback, userData)
    }

    /// Detaches everything and releases the agent. Idempotent.
    func close() {
        guard !closed else { return }
        closed = true
        let obj = UnsafeMutableRawPointer(agent)
        for h in handlers { shim_signal_disconnect(obj, h) }
        handlers.removeAll()
        attachReceiver(nil, userData: nil)
        nice_agent_remove_stream(agent, streamID)
        shim_g_object_unref(obj)
        state = .closed
    }
}

/// Why ICE could not be set up or failed.
public struct ICEError: Error, Sendable, Equatable, CustomStringConvertible {
    enum Code: Sendable, Equatable {
        case agentCreation, badLocalAddress(String), gatheringFailed, failed, timeout, badCandidate(String)
    }
    let code: Code
    init(_ code: Code) { self.code = code }

    public var description: String {
        switch code {
        case .agentCreation: "ICE agent could not be created (libnice)."
        case .badLocalAddress(let a): "ICE local address \(a) is not an IP address."
        case .gatheringFailed: "ICE candidate gathering could not start; check the local addresses and port range."
        case .failed: "ICE failed: no candidate pair worked (or consent was lost); check UDP/TCP reachability of the media server or configure TURN."
        case .timeout: "ICE did not connect in time; check UDP/TCP reachability of the media server or configure TURN."
        case .badCandidate(let why): "ICE remote candidate refused: \(why)"
        }
    }
}
