import Foundation

/// Where a session's files go: `<output_dir>/<path_template>` with `{room}`, `{instance}`,
/// `{date}` and `{time}` (UTC) filled in, made unique with `-2`, `-3` if it exists.
enum RecordingLayout {
    static func directory(outputDir: String, template: String, room: String, instance: String, startUnixSeconds: Double) throws -> String {
        var t = time_t(startUnixSeconds)
        var tmv = tm()
        gmtime_r(&t, &tmv)
        let date = String(format: "%04d-%02d-%02d", tmv.tm_year + 1900, tmv.tm_mon + 1, tmv.tm_mday)
        let time = String(format: "%02d%02d%02d", tmv.tm_hour, tmv.tm_min, tmv.tm_sec)
        func safe(_ s: String) -> String {
            let mapped = String(s.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." ? $0 : "_" })
            return mapped.trimmingCharacters(in: CharacterSet(charactersIn: ".")).isEmpty ? "_" : mapped
        }
        var relative = template
        for (k, v) in [("{room}", safe(room)), ("{instance}", safe(instance)), ("{date}", date), ("{time}", time)] {
            relative = relative.replacingOccurrences(of: k, with: v)
        }
        let parts = relative.split(separator: "/").filter { $0 != ".." && $0 != "." && !$0.isEmpty }
        var path = (outputDir as NSString).appendingPathComponent(parts.joined(separator: "/"))
        var n = 2
        let base = path
        while FileManager.default.fileExists(atPath: path) {
            path = "\(base)-\(n)"
            n += 1
        }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw CommandFailure(.config, "cannot create the recording folder \(path): \(error.localizedDescription)")
        }
        return path
    }
}
