#if canImport(Glibc)
import Glibc
#endif
import BedrudProtocol
import FoundationEssentials
import Dispatch

/// Applies ``ConfigEditor`` changes to the config file on disk, atomically, keeping the
/// file's permissions (new files are created 0600: they may name accounts and paths).
public enum ConfigFileWriter {
    /// The file `instance add/use/remove` edits: the one in use, or the user's default location.
    public static func targetPath(_ config: Configuration) -> String {
        config.path ?? Configuration.userConfigPath(config.environment)
    }

    public static func edit(_ path: String, _ change: (inout ConfigEditor) throws -> Void) throws {
        let existing = FileManager.default.contents(atPath: path).flatMap { String(data: $0, encoding: .utf8) }
        var editor = ConfigEditor(text: existing ?? "# bedrud-bot configuration (see docs/CONFIG.md)\n")
        try change(&editor)
        // The result must still parse: never write a file bedrud-bot cannot read back.
        do {
            _ = try ConfigSyntax.parse(editor.text, file: path, environment: ProcessInfo.processInfo.environment)
        } catch let e {
            throw ConfigError(file: path, line: e.line, "refusing to write a config file that would not parse: \(e.message)")
        }
        let dir = PathText.deletingLastComponent(path)
        if !FileManager.default.fileExists(atPath: dir) {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        var st = stat()
        let mode: mode_t = stat(path, &st) == 0 ? st.st_mode & 0o777 : 0o600
        let tmp = AtomicFile.hiddenTemporary(for: path)
        do throws(AtomicFile.Failure) {
            try AtomicFile.write(editor.text.utf8, to: path, through: tmp, mode: mode, replacing: true)
        } catch where error.step == .place {
            throw ConfigError(file: path, "cannot replace the config file: \(error.reason)")
        } catch {
            throw ConfigError(file: path, "cannot write the config file (is the folder writable? use --config to pick another file)")
        }
    }
}
