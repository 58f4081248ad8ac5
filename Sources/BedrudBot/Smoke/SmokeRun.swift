import BedrudProtocol
import Dispatch
import FoundationEssentials
import Glibc

/// One step of `bedrud-bot smoke`, in the order they run.
public enum SmokeStage: String, CaseIterable, Sendable, Equatable {
    case api, auth, token, signalling, ice, dtls, publish, receive, quality, chat, leave

    public var title: String {
        switch self {
        case .api: "API answers"
        case .auth: "auth (two identities)"
        case .token: "join tokens"
        case .signalling: "signalling (both sides)"
        case .ice: "ICE"
        case .dtls: "DTLS"
        case .publish: "publish test signal"
        case .receive: "receive + decode"
        case .quality: "media quality"
        case .chat: "chat message"
        case .leave: "both leave cleanly"
        }
    }

    /// The exit code when this stage is the first that failed.
    public var exitCode: ExitCode {
        switch self {
        case .api: .smokeAPI
        case .auth: .smokeAuth
        case .token: .smokeRoom
        case .signalling: .smokeSignalling
        case .ice: .smokeICE
        case .dtls: .smokeDTLS
        case .publish, .receive: .smokeMedia
        case .quality: .smokeQuality
        case .chat: .smokeData
        case .leave: .smokeLeave
        }
    }
}

/// The limits the media must stay within (`--thresholds latency=500ms,loss=5%,jitter=30ms`,
/// or `--max-latency`, `--max-loss`, `--max-jitter`).
public struct SmokeThresholds: Sendable, Equatable {
    /// Worst burst latency, send deadline to detection at the listener.
    public var latencyMs: Double
    public var lossPercent: Double
    public var jitterMs: Double

    /// Each threshold not given is the table's (`smoke.max_latency`, `smoke.max_loss`,
    /// `smoke.max_jitter`).
    public init(latencyMs: Double? = nil, lossPercent: Double? = nil, jitterMs: Double? = nil) {
        self.latencyMs = latencyMs ?? Self.table.latencyMs
        self.lossPercent = lossPercent ?? Self.table.lossPercent
        self.jitterMs = jitterMs ?? Self.table.jitterMs
    }

    /// The `smoke.max_*` rows' defaults, read as `--thresholds` reads its values.
    static let table: (latencyMs: Double, lossPercent: Double, jitterMs: Double) = {
        guard let latency = try? milliseconds(Settings.Smoke.maxLatency.builtIn), let loss = try? percent(Settings.Smoke.maxLoss.builtIn),
              let jitter = try? milliseconds(Settings.Smoke.maxJitter.builtIn) else {
            preconditionFailure("a smoke.max_* default of SettingSpec.all is not a threshold")
        }
        return (latency, loss, jitter)
    }()

    /// `latency=500ms,loss=5%,jitter=30ms`: the defaults as `--thresholds` takes them.
    static var defaultsText: String {
        "latency=\(Settings.Smoke.maxLatency.builtIn),loss=\(Settings.Smoke.maxLoss.builtIn),jitter=\(Settings.Smoke.maxJitter.builtIn)"
    }

    /// Applies `key=value[,key=value]` (keys latency, loss, jitter; `ms`/`s` and `%` optional).
    public mutating func apply(_ text: String) throws(SmokeThresholdError) {
        for item in text.split(separator: ",") {
            let kv = item.split(separator: "=", maxSplits: 1).map { $0.trimmingWhitespaceScalars(newlines: false) }
            guard kv.count == 2 else { throw SmokeThresholdError(text: String(item)) }
            switch kv[0] {
            case "latency": latencyMs = try Self.milliseconds(kv[1])
            case "jitter": jitterMs = try Self.milliseconds(kv[1])
            case "loss": lossPercent = try Self.percent(kv[1])
            default: throw SmokeThresholdError(text: String(item))
            }
        }
    }

    static func milliseconds(_ s: String) throws(SmokeThresholdError) -> Double {
        let (number, scale): (Substring, Double) =
            s.hasSuffix("ms") ? (s.dropLast(2), 1) : s.hasSuffix("s") ? (s.dropLast(), 1000) : (Substring(s), 1)
        guard let v = Double(number), v.isFinite, v >= 0 else { throw SmokeThresholdError(text: s) }
        return v * scale
    }

    static func percent(_ s: String) throws(SmokeThresholdError) -> Double {
        guard let v = Double(s.hasSuffix("%") ? String(s.dropLast()) : s), v.isFinite, v >= 0, v <= 100 else { throw SmokeThresholdError(text: s) }
        return v
    }
}

public struct SmokeThresholdError: Error, Sendable, CustomStringConvertible {
    public var text: String
    public var description: String { "bad threshold '\(text)': use latency=500ms, loss=5% or jitter=30ms" }
}

/// What the listener measured of the test signal.
public struct SmokeMedia: Sendable, Equatable {
    public var burstsSent: Int
    /// Latency of each detected burst (ms), in order.
    public var latenciesMs: [Double]
    /// Packets that arrived in time, without being NACKed (``PacketLoss/arrivedFirstTime``).
    public var packetsReceived: Int
    /// Packets the path lost: missing in the end plus those NACKs recovered (the loss
    /// the network caused, not what retransmission left; ``PacketLoss/pathLost``).
    public var packetsLost: Int
    public var jitterMs: Double

    public init(burstsSent: Int, latenciesMs: [Double], packetsReceived: Int, packetsLost: Int, jitterMs: Double) {
        self.burstsSent = burstsSent
        self.latenciesMs = latenciesMs
        self.packetsReceived = packetsReceived
        self.packetsLost = packetsLost
        self.jitterMs = jitterMs
    }

    public var lossPercent: Double {
        100 * (PacketLoss(received: packetsReceived, lost: packetsLost).residualRatio ?? 0)
    }
}

/// What the I/O shell tells ``SmokeRun``.
public enum SmokeEvent: Sendable, Equatable {
    /// The stage succeeded after `seconds`; `measured` says what was seen (e.g. the ICE pair).
    case passed(SmokeStage, seconds: Double, measured: String = "")
    case failed(SmokeStage, seconds: Double, why: String)
    /// The listener's measurements, at the end of the signal: decides receive and quality.
    case measured(SmokeMedia, seconds: Double)
    /// The chat text sent, and what the listener received (nil: nothing).
    case chat(sent: String, received: String?, seconds: Double)
}

/// What the shell should do next.
public enum SmokeAction: Sendable, Equatable {
    /// Run this stage next.
    case run(SmokeStage)
    /// Every stage has an outcome: exit with this code.
    case finish(ExitCode)
}

/// The outcome of one stage, for the summary, `--json` and `--junit`.
public struct SmokeStageResult: Sendable, Equatable {
    public enum Outcome: String, Sendable { case passed, failed, skipped }
    public var stage: SmokeStage
    public var outcome: Outcome
    public var seconds: Double
    /// The measured value, in words ("host/udp", "loss 0.0 %").
    public var measured: String
    /// The limit it was held to, if any.
    public var threshold: String
    /// Why it failed (names the measured value and the threshold for quality).
    public var message: String
}

/// The decisions of `bedrud-bot smoke`: which stage runs next, whether each passed,
/// and the exit code. A pure value; the command feeds it events and does what it returns.
///
/// Stages run in ``SmokeStage`` order. After a failure the remaining stages up to `leave`
/// are skipped, but `leave` always runs (so the bot never lingers in the room); the exit
/// code is that of the first failed stage.
public struct SmokeRun: Sendable, Equatable {
    public let thresholds: SmokeThresholds
    public private(set) var results: [SmokeStageResult] = []
    public init(thresholds: SmokeThresholds) { self.thresholds = thresholds }

    /// The first action: run the first stage.
    public static var start: SmokeAction { .run(.api) }

    public var firstFailure: SmokeStageResult? { results.first { $0.outcome == .failed } }
    public var exitCode: ExitCode { firstFailure?.stage.exitCode ?? .success }
    public var isFinished: Bool { results.contains { $0.stage == .leave } }

    public mutating func handle(_ event: SmokeEvent) -> [SmokeAction] {
        guard !isFinished else { return [] }
        switch event {
        case .passed(let stage, let s, let measured):
            guard stage != .receive, stage != .quality else { return [] }
            record(SmokeStageResult(stage: stage, outcome: .passed, seconds: s, measured: measured, threshold: "", message: ""))
        case .failed(let stage, let s, let why):
            record(SmokeStageResult(stage: stage, outcome: .failed, seconds: s, measured: "", threshold: "", message: why))
        case .measured(let media, let s):
            record(receive(media, seconds: s))
            if results.last?.outcome == .passed { record(quality(media)) }
        case .chat(let sent, let received, let s):
            let ok = received == sent
            let why = received == nil ? "the listener received no chat message" : "the listener received a different message: '\(received!.prefix(200))'"
            record(SmokeStageResult(stage: .chat, outcome: ok ? .passed : .failed, seconds: s,
                                    measured: ok ? "\(sent.utf8.count) bytes intact" : "", threshold: "", message: ok ? "" : why))
        }
        if isFinished { return [.finish(exitCode)] }
        return [.run(next)]
    }

    /// The stage to run after the recorded ones: the next in order, or `leave` once one failed.
    var next: SmokeStage {
        if firstFailure != nil { return .leave }
        let done = Set(results.map(\.stage))
        return SmokeStage.allCases.first { !done.contains($0) } ?? .leave
    }

    private mutating func record(_ r: SmokeStageResult) {
        if let i = results.firstIndex(where: { $0.stage == r.stage }) {
            // A stage confirmed later may still fail: the join token passes when Bedrud
            // issues it, and fails when the media server refuses it at signalling.
            guard r.outcome == .failed, results[i].outcome == .passed, firstFailure == nil else { return }
            results[i].outcome = .failed
            results[i].message = r.message
            return
        }
        if r.stage == .leave || firstFailure != nil {
            // Everything between the last outcome and this one was not run.
            let done = Set(results.map(\.stage))
            for s in SmokeStage.allCases where s != r.stage && !done.contains(s) && s.index < r.stage.index {
                results.append(SmokeStageResult(stage: s, outcome: .skipped, seconds: 0, measured: "", threshold: "", message: "skipped: an earlier stage failed"))
            }
        }
        results.append(r)
        results.sort { $0.stage.index < $1.stage.index }
    }

    func receive(_ m: SmokeMedia, seconds: Double) -> SmokeStageResult {
        var r = SmokeStageResult(stage: .receive, outcome: .passed, seconds: seconds, measured: "", threshold: "signal detected", message: "")
        r.measured = "\(m.packetsReceived) packets, \(m.latenciesMs.count) of \(m.burstsSent) bursts detected"
        if m.packetsReceived == 0 {
            r.outcome = .failed
            r.message = "no audio reached the listener (0 packets; \(m.burstsSent) bursts sent)"
        } else if m.latenciesMs.isEmpty {
            r.outcome = .failed
            r.message = "\(m.packetsReceived) packets arrived but no burst of the test signal was detected in them"
        }
        return r
    }

    func quality(_ m: SmokeMedia) -> SmokeStageResult {
        let t = thresholds
        let worst = m.latenciesMs.max() ?? 0
        let median = m.latenciesMs.sorted()[m.latenciesMs.count / 2]
        var problems: [String] = []
        if m.latenciesMs.count < m.burstsSent { problems.append("\(m.burstsSent - m.latenciesMs.count) of \(m.burstsSent) bursts not detected") }
        if worst > t.latencyMs { problems.append("latency \(Self.f0(worst)) ms > \(Self.f0(t.latencyMs)) ms") }
        if m.lossPercent > t.lossPercent { problems.append("loss \(Self.f1(m.lossPercent)) % > \(Self.f1(t.lossPercent)) %") }
        if m.jitterMs > t.jitterMs { problems.append("jitter \(Self.f1(m.jitterMs)) ms > \(Self.f1(t.jitterMs)) ms") }
        return SmokeStageResult(
            stage: .quality, outcome: problems.isEmpty ? .passed : .failed, seconds: 0,
            measured: "latency \(Self.f0(worst)) ms (median \(Self.f0(median))), loss \(Self.f1(m.lossPercent)) %, jitter \(Self.f1(m.jitterMs)) ms",
            threshold: "latency ≤ \(Self.f0(t.latencyMs)) ms, loss ≤ \(Self.f1(t.lossPercent)) %, jitter ≤ \(Self.f1(t.jitterMs)) ms",
            message: problems.joined(separator: "; "))
    }

    static func f0(_ v: Double) -> String { String(Int(v.rounded())) }
    static func f1(_ v: Double) -> String {
        let tenths = Int((v * 10).rounded())
        return "\(tenths / 10).\(abs(tenths % 10))"
    }
}

extension SmokeStage {
    var index: Int { Self.allCases.firstIndex(of: self)! }
}
