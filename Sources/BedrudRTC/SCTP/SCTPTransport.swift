import BedrudProtocol
import BedrudRuntime
import CUsrsctp
import FoundationEssentials
import Glibc
import Synchronization

/// A data channel on an SCTP association.
public struct DataChannelInfo: Sendable, Equatable {
    /// SCTP stream id.
    public var id: UInt16
    public var label: String
    public var `protocol`: String
    public var reliability: DataChannelReliability
    /// True if the peer opened it (DCEP OPEN received), false if we did.
    public var remotelyOpened: Bool
}

/// What an ``SCTPTransport`` reports. Called on the loop thread.
protocol SCTPTransportDelegate: AnyObject {
    /// One SCTP packet to send through DTLS.
    func sctpSend(_ packet: UnsafeRawBufferPointer)
    func sctpConnected()
    func sctpClosed(failed: Bool)
    func sctpChannelOpened(_ channel: DataChannelInfo)
    func sctpChannelClosed(_ channel: DataChannelInfo)
    func sctpMessage(_ channel: DataChannelInfo, data: [UInt8], binary: Bool)
    /// The association has no user data left to send or to be acknowledged
    /// (SCTP_SENDER_DRY_EVENT, RFC 6458 §6.1.9): a SACK emptied its queues.
    func sctpSenderDry()
}

/// SCTP over DTLS with usrsctp in AF_CONN mode (RFC 8261), data channels with DCEP
/// (RFC 8831, RFC 8832).
///
/// usrsctp has no threads of its own here (``SCTPTimerDriver``): it calls back from the
/// loop threads, and a timer that fires on one loop may concern another loop's
/// association, so both of its callbacks only copy and hand over: received messages and
/// notifications are queued and processed on the loop; outgoing packets go straight to
/// DTLS when produced on the owning loop's thread and are queued otherwise. Data channels
/// are not the media path; the copies here are fine.
///
/// Thread contract: every method is called on the loop thread.
final class SCTPTransport {
    let loop: GLibLoop
    weak var delegate: (any SCTPTransportDelegate)?
    let localPort: UInt16
    let remotePort: UInt16
    /// DTLS client uses even stream ids for channels it opens, the server odd (RFC 8832 §6).
    let isDTLSClient: Bool
    /// Largest message we accept.
    let maxMessageSize: Int
    /// Largest message the peer accepts (`a=max-message-size`; 65 536 assumed when absent).
    var remoteMaxMessageSize: Int
    private(set) var isConnected = false
    private var socket: OpaquePointer?
    private let token: UnsafeMutableRawPointer
    private var channels: [UInt16: DataChannelInfo] = [:]
    private var reassembly: [UInt16: [UInt8]] = [:]
    /// Messages that arrived on a stream before its DCEP OPEN (unordered ones may overtake it).
    private var early: [UInt16: [(ppid: UInt32, data: [UInt8])]] = [:]
    private var earlyBytes = 0
    private var nextStream: UInt16
    private let mailbox: SCTPMailbox
    /// Runs usrsctp's timers on this loop (shared with the loop's other associations).
    private let timers: SCTPTimerDriver
    private var closed = false
    private let log: Logger
    private var badInput: RateLimitedLog

    /// Counters (loop thread).
    private(set) var droppedPackets = 0
    private(set) var droppedMessages = 0
    /// SCTP_SENDER_DRY_EVENT notifications received (for tests).
    private(set) var senderDryEvents = 0

    init(loop: GLibLoop, localPort: UInt16, remotePort: UInt16, isDTLSClient: Bool, maxMessageSize: Int, remoteMaxMessageSize: Int?,
         logRoom: String? = nil) {
        log = Logger("rtc.sctp", room: logRoom)
        badInput = RateLimitedLog(log)
        self.loop = loop
        self.localPort = localPort
        self.remotePort = remotePort
        self.isDTLSClient = isDTLSClient
        self.maxMessageSize = maxMessageSize
        self.remoteMaxMessageSize = remoteMaxMessageSize ?? 65_536
        self.nextStream = isDTLSClient ? 0 : 1
        mailbox = SCTPMailbox(loop: loop)
        token = USRSCTP.register(mailbox)
        timers = USRSCTP.timerDriver(for: loop)
        mailbox.transport = self
    }

    deinit {
        closeSocket()
        USRSCTP.deregister(token: token)
    }

    /// Creates the socket and starts the association (both ends connect; RFC 8841 §9.3).
    func start() throws(SCTPError) {
        guard socket == nil, !closed else { return }
        guard let s = usrsctp_socket(AF_CONN, Int32(SOCK_STREAM.rawValue), Int32(IPPROTO_SCTP), sctpReceiveCallback, nil, 0, token) else {
            throw SCTPError(.socket(errno))
        }
        socket = s
        _ = usrsctp_set_non_blocking(s, 1)
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = usrsctp_setsockopt(s, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        var buf: Int32 = 1 << 20
        _ = usrsctp_setsockopt(s, SOL_SOCKET, SO_RCVBUF, &buf, socklen_t(MemoryLayout<Int32>.size))
        _ = usrsctp_setsockopt(s, SOL_SOCKET, SO_SNDBUF, &buf, socklen_t(MemoryLayout<Int32>.size))
        var on: Int32 = 1
        _ = usrsctp_setsockopt(s, Int32(IPPROTO_SCTP), SCTP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        _ = usrsctp_setsockopt(s, Int32(IPPROTO_SCTP), SCTP_RECVRCVINFO, &on, socklen_t(MemoryLayout<Int32>.size))
        var reset = sctp_assoc_value(assoc_id: sctp_assoc_t(SCTP_ALL_ASSOC), assoc_value: UInt32(SCTP_ENABLE_RESET_STREAM_REQ))
        _ = usrsctp_setsockopt(s, Int32(IPPROTO_SCTP), SCTP_ENABLE_STREAM_RESET, &reset, socklen_t(MemoryLayout<sctp_assoc_value>.size))
        for type in [SCTP_ASSOC_CHANGE, SCTP_STREAM_RESET_EVENT, SCTP_REMOTE_ERROR, SCTP_SHUTDOWN_EVENT, SCTP_SEND_FAILED_EVENT, SCTP_SENDER_DRY_EVENT] {
            var ev = sctp_event(se_assoc_id: sctp_assoc_t(SCTP_ALL_ASSOC), se_type: UInt16(type), se_on: 1)
            _ = usrsctp_setsockopt(s, Int32(IPPROTO_SCTP), SCTP_EVENT, &ev, socklen_t(MemoryLayout<sctp_event>.size))
        }
        var initmsg = sctp_initmsg()
        initmsg.sinit_num_ostreams = 1024
        initmsg.sinit_max_instreams = 1024
        _ = usrsctp_setsockopt(s, Int32(IPPROTO_SCTP), SCTP_INITMSG, &initmsg, socklen_t(MemoryLayout<sctp_initmsg>.size))

        var local = makeAddress(port: localPort)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { usrsctp_bind(s, UnsafeMutablePointer(mutating: $0), socklen_t(MemoryLayout<sockaddr_conn>.size)) }
        }
        guard bound == 0 else { throw SCTPError(.bind(errno)) }
        var remote = makeAddress(port: remotePort)
        let rc = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { usrsctp_connect(s, UnsafeMutablePointer(mutating: $0), socklen_t(MemoryLayout<sockaddr_conn>.size)) }
        }
        guard rc == 0 || errno == EINPROGRESS else { throw SCTPError(.connect(errno)) }
        // Path MTU: DTLS and the ICE path add their own headers; stay well below 1280.
        var params = sctp_paddrparams()
        withUnsafeMutableBytes(of: &params.spp_address) { raw in
            withUnsafeBytes(of: &remote) { raw.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<min($0.count, raw.count)])) }
        }
        params.spp_assoc_id = sctp_assoc_t(SCTP_ALL_ASSOC)
        params.spp_flags = UInt32(SPP_PMTUD_DISABLE)
        params.spp_pathmtu = 1200
        _ = usrsctp_setsockopt(s, Int32(IPPROTO_SCTP), SCTP_PEER_ADDR_PARAMS, &params, socklen_t(MemoryLayout<sctp_paddrparams>.size))
    }

    private func makeAddress(port: UInt16) -> sockaddr_conn {
        var a = sockaddr_conn()
        a.sconn_family = UInt16(AF_CONN)
        a.sconn_port = port.bigEndian
        a.sconn_addr = token
        return a
    }

    /// One SCTP packet from DTLS application data.
    func handleIncoming(_ packet: UnsafeRawBufferPointer) {
        guard !closed, let base = packet.baseAddress else { return }
        do {
            _ = try SCTPPacketValidator.validate(packet)
        } catch {
            droppedPackets += 1
            badInput.log(.warning, now: MonotonicClock.nanos(), "SCTP packet dropped: \(error)")
            return
        }
        timers.activity()
        usrsctp_conninput(token, base, packet.count, 0)
        drain()
    }

    // MARK: - Channels

    /// Opens a channel (DCEP OPEN). Returns its info, or nil if no stream id is free.
    func openChannel(label: String, protocol proto: String = "", reliability: DataChannelReliability) -> DataChannelInfo? {
        guard socket != nil else { return nil }
        var id = nextStream
        while channels[id] != nil {
            guard id <= 1021 else { return nil }
            id += 2
        }
        nextStream = id + 2
        let info = DataChannelInfo(id: id, label: label, protocol: proto, reliability: reliability, remotelyOpened: false)
        channels[id] = info
        let open = DCEPMessage.open(label: label, protocol: proto, reliability: reliability, priority: 256).bytes
        guard send(open, stream: id, ppid: DataChannelPPID.dcep, reliability: .reliable) else {
            channels[id] = nil
            return nil
        }
        return info
    }

    /// Sends one message on channel `id`. Returns false if the channel is unknown, the
    /// message is larger than the peer accepts, or the send buffer is full.
    @discardableResult
    func sendMessage(_ data: [UInt8], binary: Bool, channel id: UInt16) -> Bool {
        guard let ch = channels[id] else { return false }
        guard data.count <= remoteMaxMessageSize else { return false }
        // Empty messages travel as one zero byte with the "empty" PPID (RFC 8831 §6.6).
        if data.isEmpty {
            return send([0], stream: id, ppid: binary ? DataChannelPPID.binaryEmpty : DataChannelPPID.stringEmpty, reliability: ch.reliability)
        }
        return send(data, stream: id, ppid: binary ? DataChannelPPID.binary : DataChannelPPID.string, reliability: ch.reliability)
    }

    /// Closes channel `id` by resetting its outgoing stream (RFC 8831 §6.7).
    func closeChannel(_ id: UInt16) {
        guard let s = socket, channels[id] != nil else { return }
        _ = shim_sctp_reset_stream(s, id)
    }

    /// The period at which usrsctp's timers are driven on this loop now.
    var timerIntervalMs: UInt32 { timers.intervalMs }

    var openChannels: [DataChannelInfo] { channels.values.sorted { $0.id < $1.id } }

    /// DATA chunks queued or sent but not yet acknowledged by the peer (SCTP_STATUS), so a
    /// sender can wait before closing: close aborts the association (linger 0).
    var unacknowledgedChunks: Int {
        guard let s = socket, isConnected else { return 0 }
        var st = sctp_status()
        var len = socklen_t(MemoryLayout<sctp_status>.size)
        guard usrsctp_getsockopt(s, Int32(IPPROTO_SCTP), SCTP_STATUS, &st, &len) == 0 else { return 0 }
        return Int(st.sstat_unackdata) + Int(st.sstat_penddata)
    }

    private func send(_ data: [UInt8], stream: UInt16, ppid: UInt32, reliability: DataChannelReliability) -> Bool {
        guard let s = socket else { return false }
        var spa = sctp_sendv_spa()
        spa.sendv_flags = UInt32(SCTP_SEND_SNDINFO_VALID)
        spa.sendv_sndinfo.snd_sid = stream
        spa.sendv_sndinfo.snd_ppid = ppid.bigEndian
        spa.sendv_sndinfo.snd_flags = UInt16(SCTP_EOR) | (reliability.ordered ? 0 : UInt16(SCTP_UNORDERED))
        if let r = reliability.maxRetransmits {
            spa.sendv_flags |= UInt32(SCTP_SEND_PRINFO_VALID)
            spa.sendv_prinfo.pr_policy = UInt16(SCTP_PR_SCTP_RTX)
            spa.sendv_prinfo.pr_value = r
        } else if let t = reliability.maxPacketLifeTimeMs {
            spa.sendv_flags |= UInt32(SCTP_SEND_PRINFO_VALID)
            spa.sendv_prinfo.pr_policy = UInt16(SCTP_PR_SCTP_TTL)
            spa.sendv_prinfo.pr_value = t
        }
        timers.activity()
        let n = data.withUnsafeBytes { d in
            usrsctp_sendv(s, d.baseAddress, d.count, nil, 0, &spa, socklen_t(MemoryLayout<sctp_sendv_spa>.size), UInt32(SCTP_SENDV_SPA), 0)
        }
        drain()
        return n == data.count
    }

    // MARK: - Loop-side handling of what usrsctp handed over

    /// An outgoing packet produced on the loop thread: send it now, after anything queued earlier.
    fileprivate func outputNow(_ packet: UnsafeRawBufferPointer) {
        timers.activity()
        flushOutbox()
        delegate?.sctpSend(packet)
    }

    fileprivate func drainPosted() { drain() }

    private func flushOutbox() {
        for p in mailbox.takeOutbox() { p.withUnsafeBytes { delegate?.sctpSend($0) } }
    }

    /// Processes everything usrsctp queued.
    private func drain() {
        flushOutbox()
        while true {
            let items = mailbox.takeInbox()
            if items.isEmpty { break }
            for item in items { process(item) }
        }
    }

    private func process(_ item: SCTPInboxItem) {
        switch item {
        case .eof:
            if !closed { finish(failed: false) }
        case .notification(let bytes):
            bytes.withUnsafeBytes { handleNotification($0) }
        case .data(let stream, let ppid, let complete, let bytes):
            var message = reassembly.removeValue(forKey: stream) ?? []
            guard message.count + bytes.count <= maxMessageSize else {
                droppedMessages += 1
                badInput.log(.warning, now: MonotonicClock.nanos(), "data-channel message on stream \(stream) exceeds \(maxMessageSize) bytes; dropped")
                return
            }
            message += bytes
            if !complete {
                reassembly[stream] = message
                return
            }
            handleMessage(stream: stream, ppid: ppid, data: message)
        }
    }

    private func handleNotification(_ n: UnsafeRawBufferPointer) {
        guard let base = n.baseAddress else { return }
        switch shim_sctp_notification_type(base, n.count) {
        case Int32(SCTP_ASSOC_CHANGE):
            switch shim_sctp_assoc_change_state(base, n.count) {
            case Int32(SCTP_COMM_UP), Int32(SCTP_RESTART):
                if !isConnected {
                    isConnected = true
                    delegate?.sctpConnected()
                }
            case Int32(SCTP_COMM_LOST), Int32(SCTP_CANT_STR_ASSOC):
                finish(failed: true)
            case Int32(SCTP_SHUTDOWN_COMP):
                finish(failed: false)
            default: break
            }
        case Int32(SCTP_STREAM_RESET_EVENT):
            let flags = shim_sctp_stream_reset_flags(base, n.count)
            guard flags >= 0, flags & Int32(SCTP_STREAM_RESET_INCOMING_SSN) != 0 else { return }
            for i in 0..<shim_sctp_stream_reset_count(base, n.count) {
                let id = shim_sctp_stream_reset_stream(base, i)
                guard let ch = channels.removeValue(forKey: id) else { continue }
                // Reset our side too so the stream id can be reused (RFC 8831 §6.7).
                if let s = socket { _ = shim_sctp_reset_stream(s, id) }
                reassembly[id] = nil
                delegate?.sctpChannelClosed(ch)
            }
        case Int32(SCTP_SHUTDOWN_EVENT):
            finish(failed: false)
        case Int32(SCTP_SENDER_DRY_EVENT):
            senderDryEvents += 1
            delegate?.sctpSenderDry()
        default:
            break
        }
    }

    private func handleMessage(stream: UInt16, ppid: UInt32, data: [UInt8]) {
        switch ppid {
        case DataChannelPPID.dcep:
            let msg: DCEPMessage
            do {
                msg = try data.withUnsafeBytes { b throws(DCEPError) in try DCEPMessage(parsing: b) }
            } catch {
                droppedMessages += 1
                badInput.log(.warning, now: MonotonicClock.nanos(), "DCEP message on stream \(stream) dropped: \(error)")
                return
            }
            switch msg {
            case .open(let label, let proto, let rel, _):
                guard channels[stream] == nil else {
                    droppedMessages += 1
                    return
                }
                let info = DataChannelInfo(id: stream, label: label, protocol: proto, reliability: rel, remotelyOpened: true)
                channels[stream] = info
                _ = send(DCEPMessage.ack.bytes, stream: stream, ppid: DataChannelPPID.dcep, reliability: .reliable)
                delegate?.sctpChannelOpened(info)
                if let queued = early.removeValue(forKey: stream) {
                    for q in queued {
                        earlyBytes -= q.data.count
                        deliver(info, ppid: q.ppid, data: q.data)
                    }
                }
            case .ack:
                if let ch = channels[stream], !ch.remotelyOpened { delegate?.sctpChannelOpened(ch) }
            }
        case DataChannelPPID.string, DataChannelPPID.binary, DataChannelPPID.stringEmpty, DataChannelPPID.binaryEmpty:
            if let ch = channels[stream] {
                deliver(ch, ppid: ppid, data: data)
            } else if earlyBytes + data.count <= 65_536, (early[stream]?.count ?? 0) < 16 {
                early[stream, default: []].append((ppid, data))
                earlyBytes += data.count
            } else {
                droppedMessages += 1
            }
        default:
            // Deprecated partial PPIDs (52, 54) and unknown ones.
            droppedMessages += 1
            badInput.log(.warning, now: MonotonicClock.nanos(), "data-channel message with PPID \(ppid) on stream \(stream) dropped")
        }
    }

    private func deliver(_ ch: DataChannelInfo, ppid: UInt32, data: [UInt8]) {
        let empty = ppid == DataChannelPPID.stringEmpty || ppid == DataChannelPPID.binaryEmpty
        let binary = ppid == DataChannelPPID.binary || ppid == DataChannelPPID.binaryEmpty
        delegate?.sctpMessage(ch, data: empty ? [] : data, binary: binary)
    }

    private func finish(failed: Bool) {
        guard !closed else { return }
        closed = true
        isConnected = false
        let open = channels.values.sorted { $0.id < $1.id }
        channels.removeAll()
        for ch in open { delegate?.sctpChannelClosed(ch) }
        delegate?.sctpClosed(failed: failed)
    }

    /// Aborts the association (SO_LINGER 0 makes close send ABORT) and stops. Idempotent.
    func close() {
        closeSocket()
        drain()
        if !closed {
            closed = true
            channels.removeAll()
        }
    }

    private func closeSocket() {
        guard let s = socket else { return }
        socket = nil
        usrsctp_close(s)
    }
}

/// One item usrsctp handed over.
enum SCTPInboxItem {
    case data(stream: UInt16, ppid: UInt32, complete: Bool, bytes: [UInt8])
    case notification([UInt8])
    case eof
}

/// What usrsctp's callbacks may touch from any thread: two queues and a wake-up flag.
/// The transport itself is reached only on the loop thread (`transport` is read there only).
final class SCTPMailbox: @unchecked Sendable {
    // @unchecked: `inbox`, `outbox` and `drainScheduled` are synchronised; `transport`
    // is written once on the loop thread before usrsctp can call back and read only there.
    let loop: GLibLoop
    weak var transport: SCTPTransport?
    // PosixLock (a pthread mutex) rather than Mutex: Thread Sanitizer sees it, and this is not the media path.
    private let lock = PosixLock()
    private var inbox: [SCTPInboxItem] = []
    private var outbox: [[UInt8]] = []
    private let drainScheduled = Atomic<Bool>(false)

    init(loop: GLibLoop) { self.loop = loop }

    func output(_ packet: UnsafeRawBufferPointer) {
        if loop.isCurrent, let t = transport {
            t.outputNow(packet)
        } else {
            let copy = Array(packet)
            lock.withLock { outbox.append(copy) }
            scheduleDrain()
        }
    }

    func received(_ item: SCTPInboxItem) {
        lock.withLock { inbox.append(item) }
        scheduleDrain()
    }

    func takeInbox() -> [SCTPInboxItem] { lock.withLock { defer { inbox.removeAll() }; return inbox } }
    func takeOutbox() -> [[UInt8]] { lock.withLock { defer { outbox.removeAll() }; return outbox } }

    private func scheduleDrain() {
        guard !drainScheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        loop.post { [self] in
            drainScheduled.store(false, ordering: .releasing)
            transport?.drainPosted()
        }
    }
}

/// usrsctp's process-wide state: one initialisation, and a registry from the address
/// token usrsctp hands back to the mailbox of the transport that owns it.
enum USRSCTP {
    private final class Registry: @unchecked Sendable {
        // @unchecked: every field is guarded by `lock` (a pthread mutex Thread Sanitizer sees).
        let lock = PosixLock()
        var initialized = false
        var next: UInt = 1
        var mailboxes: [UInt: SCTPMailbox] = [:]
        /// One timer driver per loop with associations (weak: the transports own them).
        var drivers: [ObjectIdentifier: WeakDriver] = [:]
        /// Serialises `usrsctp_handle_timers` (usrsctp expects one caller at a time) and
        /// guards `lastTimerNanos`. Never taken while `lock` is held: a timer's callbacks
        /// take `lock` (``USRSCTP/mailbox(for:)``).
        let timerLock = PosixLock()
        var lastTimerNanos = MonotonicClock.nanos()

        func withLock<T>(_ body: (Registry) -> T) -> T { lock.withLock { body(self) } }
    }

    private static let registry = Registry()

    static func register(_ mailbox: SCTPMailbox) -> UnsafeMutableRawPointer {
        let id = registry.withLock { r -> UInt in
            if !r.initialized {
                // No timer thread and no raw-socket receive threads: SCTPTimerDriver runs the
                // timers on the loops, and AF_CONN input comes through usrsctp_conninput.
                usrsctp_init_nothreads(0, sctpOutputCallback, nil)
                usrsctp_sysctl_set_sctp_ecn_enable(0)
                usrsctp_sysctl_set_sctp_blackhole(2)
                r.initialized = true
            }
            let id = r.next
            r.next += 1
            r.mailboxes[id] = mailbox
            return id
        }
        let token = UnsafeMutableRawPointer(bitPattern: id)!
        usrsctp_register_address(token)
        return token
    }

    /// The timer driver of `loop`, created with its first association. Called on that loop.
    static func timerDriver(for loop: GLibLoop) -> SCTPTimerDriver {
        registry.withLock { r in
            if let d = r.drivers[ObjectIdentifier(loop)]?.driver { return d }
            r.drivers = r.drivers.filter { $0.value.driver != nil }
            let d = SCTPTimerDriver(loop: loop)
            r.drivers[ObjectIdentifier(loop)] = WeakDriver(driver: d)
            return d
        }
    }

    /// Advances usrsctp's clock by the milliseconds since the last call (from any loop) and
    /// runs the timers that are due. Called on a loop thread, never with `lock` held.
    static func handleTimers() {
        let r = registry
        r.timerLock.lock()
        defer { r.timerLock.unlock() }
        let now = MonotonicClock.nanos()
        if now < r.lastTimerNanos { r.lastTimerNanos = now }
        let ms = (now - r.lastTimerNanos) / 1_000_000
        guard ms > 0 else { return }
        r.lastTimerNanos += ms * 1_000_000
        usrsctp_handle_timers(UInt32(min(ms, 600_000)))
    }

    static func deregister(token: UnsafeMutableRawPointer) {
        let id = UInt(bitPattern: token)
        registry.withLock { _ = $0.mailboxes.removeValue(forKey: id) }
        usrsctp_deregister_address(token)
    }

    static func mailbox(for token: UnsafeMutableRawPointer?) -> SCTPMailbox? {
        guard let token else { return nil }
        let id = UInt(bitPattern: token)
        return registry.withLock { $0.mailboxes[id] }
    }
}

private struct WeakDriver {
    weak var driver: SCTPTimerDriver?
}

private let sctpOutputCallback: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int, UInt8, UInt8) -> Int32 = {
    addr, buffer, length, _, _ in
    guard let buffer, length > 0, let m = USRSCTP.mailbox(for: addr) else { return 0 }
    m.output(UnsafeRawBufferPointer(start: buffer, count: length))
    return 0
}

private let sctpReceiveCallback: @convention(c) (OpaquePointer?, sctp_sockstore, UnsafeMutableRawPointer?, Int, sctp_rcvinfo, Int32, UnsafeMutableRawPointer?) -> Int32 = {
    _, _, data, length, info, flags, ulp in
    defer { if let data { free(data) } }
    guard let m = USRSCTP.mailbox(for: ulp) else { return 1 }
    if let data {
        let bytes = Array(UnsafeRawBufferPointer(start: data, count: length))
        if flags & Int32(MSG_NOTIFICATION) != 0 {
            m.received(.notification(bytes))
        } else {
            m.received(.data(stream: info.rcv_sid, ppid: UInt32(bigEndian: info.rcv_ppid), complete: flags & Int32(MSG_EOR) != 0, bytes: bytes))
        }
    } else {
        m.received(.eof)
    }
    return 1
}

/// The SCTP association could not be set up.
public struct SCTPError: Error, Sendable, Equatable, CustomStringConvertible {
    enum Code: Sendable, Equatable { case socket(Int32), bind(Int32), connect(Int32) }
    let code: Code
    init(_ code: Code) { self.code = code }

    public var description: String {
        switch code {
        case .socket(let e): "SCTP socket could not be created (errno \(e))."
        case .bind(let e): "SCTP socket could not be bound (errno \(e))."
        case .connect(let e): "SCTP association could not be started (errno \(e))."
        }
    }
}
