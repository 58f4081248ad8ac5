import BedrudProtocol

/// The session's logger of one room's run. With a labelled console (several rooms in one
/// process) its lines go through that console, so they start with `[room] ` (or carry
/// `"room"` as JSON); otherwise it is the plain `session` logger.
struct RoomLogger: Sendable {
    let logger: Logger
    /// Set only for a labelled console.
    let console: Console?

    init(_ label: String, console: Console) {
        logger = Logger(label)
        self.console = console.label == nil ? nil : console
    }

    func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard let console else { return logger.log(level, message()) }
        guard Logging.isEnabled(level), StderrLogSink.isShown(level: level, label: logger.label) else { return }
        console.log(level: level, category: logger.label, message: message())
    }

    func debug(_ m: @autoclosure () -> String) { log(.debug, m()) }
    func info(_ m: @autoclosure () -> String) { log(.info, m()) }
    func warning(_ m: @autoclosure () -> String) { log(.warning, m()) }
    func error(_ m: @autoclosure () -> String) { log(.error, m()) }
}
