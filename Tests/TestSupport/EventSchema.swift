import Foundation

/// Checks event transcripts against docs/events.schema.json with an independent validator
/// (python-jsonschema, pinned in scripts/requirements.txt; scripts/validate-events).
public enum EventSchema {
    /// Runs the validator on `paths` (events.jsonl files, or folders holding them): exit 0
    /// when every line of every file is valid, 1 when one is not (stdout says which).
    public static func run(_ paths: [String]) async throws -> ProcessResult {
        try await offPool {
            try Subprocess.run(Repo.python, [Repo.root.appendingPathComponent("scripts/validate_events.py").path] + paths, timeout: 60)
        }
    }
}
