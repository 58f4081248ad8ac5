import Synchronization

/// Severity of a log line; higher is more severe.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case trace = 0, debug, info, warning, error, off

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }

    /// Parses `trace|debug|info|warning|warn|error|off` (case-insensitive).
    public init?(name: String) {
        switch name.lowercased() {
        case "trace": self = .trace
        case "debug": self = .debug
        case "info": self = .info
        case "warning", "warn": self = .warning
        case "error": self = .error
        case "off", "none": self = .off
        default: return nil
        }
    }

    public var name: String {
        switch self {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .warning: "warning"
        case .error: "error"
        case .off: "off"
        }
    }
}

/// Where log lines go. Called from any thread; implementations must be thread-safe.
public protocol LogSink: Sendable {
    /// - Parameter room: the room the line belongs to when one process records several
    ///   (``Logger/room``); nil otherwise.
    func write(level: LogLevel, label: String, room: String?, message: String)
}

/// The process-wide log configuration. Only the CLI (or a test) calls `bootstrap`;
/// library code just creates ``Logger``s.
public enum Logging {
    private static let state = Mutex<(sink: (any LogSink)?, minimum: LogLevel)>((nil, .info))
    private static let minimumRaw = Atomic<Int>(LogLevel.info.rawValue)

    /// Installs the sink and the minimum level for every logger in the process.
    public static func bootstrap(sink: any LogSink, level: LogLevel) {
        state.withLock { $0 = (sink, level) }
        minimumRaw.store(level.rawValue, ordering: .relaxed)
    }

    /// Changes the minimum level, keeping the sink.
    public static func setLevel(_ level: LogLevel) {
        state.withLock { $0.minimum = level }
        minimumRaw.store(level.rawValue, ordering: .relaxed)
    }

    /// True when a line at `level` would be written. One relaxed atomic load.
    @inline(__always)
    public static func isEnabled(_ level: LogLevel) -> Bool {
        level.rawValue >= minimumRaw.load(ordering: .relaxed) && level != .off
    }

    static func emit(_ level: LogLevel, _ label: String, _ room: String?, _ message: String) {
        let sink = state.withLock { $0.sink }
        sink?.write(level: level, label: label, room: room, message: message)
    }
}

/// A named logger. Cheap to copy; a disabled level costs one atomic load and never
/// evaluates its message.
///
/// Never put secrets (passwords, tokens, keys) into a message: use ``Redact`` when a
/// value might hold one.
public struct Logger: Sendable {
    public let label: String
    /// The room this logger's lines belong to, set only when one process records several
    /// rooms (`join A B`): the lines then say which room they are about.
    public let room: String?
    public init(_ label: String, room: String? = nil) {
        self.label = label
        self.room = room
    }

    @inline(__always)
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard Logging.isEnabled(level) else { return }
        Logging.emit(level, label, room, message())
    }

    @inline(__always) public func trace(_ m: @autoclosure () -> String) { log(.trace, m()) }
    @inline(__always) public func debug(_ m: @autoclosure () -> String) { log(.debug, m()) }
    @inline(__always) public func info(_ m: @autoclosure () -> String) { log(.info, m()) }
    @inline(__always) public func warning(_ m: @autoclosure () -> String) { log(.warning, m()) }
    @inline(__always) public func error(_ m: @autoclosure () -> String) { log(.error, m()) }
}

/// Logs at most `burst` lines per `intervalNanos`, then counts what it suppressed and
/// reports the count with the next line let through. For bad-input warnings on the
/// network path, where a flood of garbage must not become a flood of log lines.
///
/// Thread contract: used from one thread (it is a value; keep one per owner).
public struct RateLimitedLog: Sendable {
    public let logger: Logger
    public let intervalNanos: UInt64
    public let burst: Int
    private var windowStart: UInt64 = 0
    private var inWindow = 0
    private var suppressed = 0

    public init(_ logger: Logger, intervalNanos: UInt64 = 10_000_000_000, burst: Int = 5) {
        self.logger = logger
        self.intervalNanos = intervalNanos
        self.burst = burst
    }

    /// - Parameter now: the caller's monotonic time in nanoseconds.
    public mutating func log(_ level: LogLevel, now: UInt64, _ message: @autoclosure () -> String) {
        guard Logging.isEnabled(level) else { return }
        if now &- windowStart >= intervalNanos {
            windowStart = now
            inWindow = 0
        }
        guard inWindow < burst else {
            suppressed += 1
            return
        }
        inWindow += 1
        if suppressed > 0 {
            let n = suppressed
            suppressed = 0
            logger.log(level, "\(message()) (\(n) similar suppressed)")
        } else {
            logger.log(level, message())
        }
    }
}
