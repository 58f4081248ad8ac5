import BedrudProtocol
import FoundationEssentials
import Glibc

/// `report SESSION_DIR…`: (re)writes a session folder's `report.html`.
enum ReportCommand {
    static let spec = CommandSpec(
        "report", summary: "write report.html for session folders: timeline, players, chat and figures in one page",
        discussion: """
            A finished session already has report.html (written when it ends, and by repair).
            This writes it again, e.g. after an upgrade or for a folder recorded by an older
            version. The page is one self-contained file: inline style and script, the audio
            by relative path, no network access; open it in any browser, or move or serve the
            folder as it is. It reads events.jsonl and summary.json and decodes each .opus file
            once for its level strip.

            Exit status: 0 when every page was written, 5 when a folder is not a session
            folder (no events.jsonl), 1 when a page could not be written.

            Examples:
              bedrud-bot report recordings/standup/2026-11-29_120000
              bedrud-bot report --open "$(bedrud-bot recordings --json | jq -r '.[0].folder')"
            """,
        arguments: [ArgumentSpec("SESSION_DIR", variadic: true, help: "Session folders (with events.jsonl).")],
        options: [Options.open.spec],
        action: run)

    /// Declared once: the spec lists them and the command reads them through these.
    enum Options {
        static let open = Flag("open", help: "Open the page with xdg-open afterwards, when there is a display (DISPLAY or WAYLAND_DISPLAY).")
    }

    static func run(_ inv: Invocation) async throws -> ExitCode {
        guard !inv.positionals.isEmpty else { throw CommandFailure(.usage, "report needs at least one SESSION_DIR") }
        var worst = ExitCode.success
        for dir in inv.positionals {
            let folder = SessionFolder.Contents(reading: PathText.fixingSlashes(dir))
            do {
                let path = try SessionReport.write(folder, instance: instanceName(server: folder.summary?.server.value, inv))
                inv.console.out(path)
                if inv[Options.open] { open(path, inv) }
            } catch let e as CommandFailure {
                inv.console.err("bedrud-bot: \(e.description)")
                if worst == .success { worst = e.code }
            }
        }
        return worst
    }

    /// The configured instance whose server recorded the folder (its summary's `server`),
    /// for the page's header; nil when none matches or the configuration cannot be read.
    static func instanceName(server: String?, _ inv: Invocation) -> String? {
        guard let config = try? inv.configuration(), let server else { return nil }
        return config.instances.first { (try? config.instance(named: $0.name))?.server == server }?.name
    }

    /// Hands the page to the desktop's browser; says why not when there is no display.
    static func open(_ path: String, _ inv: Invocation) {
        let env = inv.environment
        guard !(env["DISPLAY"] ?? "").isEmpty || !(env["WAYLAND_DISPLAY"] ?? "").isEmpty else {
            inv.console.note("No display (DISPLAY and WAYLAND_DISPLAY are unset): open \(path) in a browser.")
            return
        }
        let dirs = (env["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        guard let tool = dirs.map({ $0 + "/xdg-open" }).first(where: { access($0, X_OK) == 0 }) else {
            inv.console.note("xdg-open is not installed: open \(path) in a browser.")
            return
        }
        switch ChildSpawn.start(tool, ["xdg-open", path], environment: env.map { "\($0.key)=\($0.value)" }) {
        case .success(let pid):
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)  // xdg-open hands over to the browser and returns
        case .failure(let e):
            inv.console.note("Could not start xdg-open (\(e.description)): open \(path) in a browser.")
        }
    }
}
