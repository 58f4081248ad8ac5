import BedrudProtocol
import Dispatch
import FoundationEssentials
import Glibc

/// Where a session's files go: `<output_dir>/<path_template>` with `{room}`, `{instance}`,
/// `{date}` and `{time}` (UTC) filled in. Pure: ``SessionFolder/create(base:directoryMode:fileMode:)``
/// makes the folder (and `-2`, `-3` when it is taken) atomically.
enum RecordingLayout {
    static func directory(outputDir: String, template: String, room: String, instance: String, startUnixSeconds: Double) -> String {
        var t = time_t(startUnixSeconds)
        var tmv = tm()
        gmtime_r(&t, &tmv)
        let date = String(cFormat: "%04d-%02d-%02d", tmv.tm_year + 1900, tmv.tm_mon + 1, tmv.tm_mday)
        let time = String(cFormat: "%02d%02d%02d", tmv.tm_hour, tmv.tm_min, tmv.tm_sec)
        var relative = template
        for (k, v) in [("{room}", RecordingFileName.make(room, fallback: "room")), ("{instance}", RecordingFileName.make(instance, fallback: "instance")),
                       ("{date}", date), ("{time}", time)] {
            relative = relative.replacingScalars(k, with: v)
        }
        let parts = relative.split(separator: "/").filter { $0 != ".." && $0 != "." && !$0.isEmpty }
        return PathText.appending(parts.joined(separator: "/"), to: outputDir)
    }
}
