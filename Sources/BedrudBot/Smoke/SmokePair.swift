/// The kind of an ICE pair from its description ("ip:port host/udp <-> ip:port host/udp").
enum SmokePair {
    static func kind(_ description: String) -> String {
        let sides = description.split(separator: " <-> ", omittingEmptySubsequences: false).map { $0.split(separator: " ").last.map(String.init) ?? "?" }
        return sides.joined(separator: " ↔ ")
    }
}
