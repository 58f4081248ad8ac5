/// `/metrics` in Prometheus' text exposition format (version 0.0.4): the decider's counts,
/// the webhook requests by result, and what the shell measured.
struct ServeMetrics: Sendable {
    /// Webhook requests by how they were answered: `accepted`, `signature`, `malformed`,
    /// `stale`, `replay`, `too_large`, `method`.
    var requests: [String: Int] = [:]
    var bytesWritten: Int64 = 0
    var packetsReceived: Int64 = 0
    var packetsLost: Int64 = 0
    var reconcileErrors = 0
    var freeDiskBytes: Int64?
    var ready = false

    func text(_ s: ServeState) -> String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            out += "# HELP bedrud_bot_\(name) \(help)\n# TYPE bedrud_bot_\(name) \(type)\n"
            for (l, v) in samples { out += "bedrud_bot_\(name)\(l.isEmpty ? "" : "{\(l)}") \(v)\n" }
        }
        func labelled(_ key: String, _ d: [String: Int]) -> [(labels: String, value: String)] {
            d.sorted { $0.key < $1.key }.map { ("\(key)=\"\(Self.escape($0.key))\"", String($0.value)) }
        }
        let c = s.counts
        family("ready", "gauge", "1 once logged in and reconciled (or relying on webhooks alone).", [("", ready ? "1" : "0")])
        family("meetings_recording", "gauge", "Meetings being recorded now.", [("", String(s.recording.count))])
        family("meetings_started_total", "counter", "Recordings started, by what announced the meeting.",
               [ServeState.Cause.webhook, .reconcile].map { ("cause=\"\($0.rawValue)\"", String(c.started[$0] ?? 0)) })
        family("meetings_finished_total", "counter", "Recordings that ended, by end reason.", labelled("reason", c.finished))
        family("meetings_failed_total", "counter", "Recordings that could not start or failed, by reason.", labelled("reason", c.failed))
        family("meetings_skipped_total", "counter", "Meetings announced but not recorded, by why.", [
            ("why=\"own_join\"", String(c.ignoredOwnJoin)), ("why=\"out_of_shard\"", String(c.outOfShard)),
            ("why=\"not_in_policy\"", String(c.notInPolicy)), ("why=\"not_allowed\"", String(c.notAllowed)),
            ("why=\"at_capacity\"", String(c.atCapacity)), ("why=\"resting\"", String(c.resting)),
        ])
        family("webhook_requests_total", "counter", "Requests to the webhook endpoint, by result.", labelled("result", requests))
        family("webhook_events_total", "counter", "Accepted webhook envelopes, by event (unknown events are counted too).",
               labelled("event", c.webhooks.reduce(into: [:]) { $0[Self.eventLabel($1.key), default: 0] += $1.value }))
        family("reconcile_runs_total", "counter", "Reconciles against the list of active rooms.", [("", String(c.reconcileRuns))])
        family("reconcile_errors_total", "counter", "Reconciles that failed (the server did not answer).", [("", String(reconcileErrors))])
        family("bytes_written_total", "counter", "Bytes of finished recordings.", [("", String(bytesWritten))])
        family("packets_received_total", "counter", "Audio packets received in finished recordings.", [("", String(packetsReceived))])
        family("packets_lost_total", "counter", "Audio packets lost in finished recordings.", [("", String(packetsLost))])
        if let free = freeDiskBytes { family("disk_free_bytes", "gauge", "Free space where recordings are written.", [("", String(free))]) }
        return out
    }

    /// Event names are the sender's: a known one as it is, anything else as `other`, so a
    /// sender cannot grow the label set.
    static func eventLabel(_ event: String) -> String {
        WebhookEnvelope.Kind(rawValue: event) != nil ? event : "other"
    }

    static func escape(_ s: String) -> String {
        var o = ""
        for ch in s.unicodeScalars {
            switch ch {
            case "\\": o += "\\\\"
            case "\"": o += "\\\""
            case "\n": o += "\\n"
            default: o.unicodeScalars.append(ch)
            }
        }
        return o
    }
}
