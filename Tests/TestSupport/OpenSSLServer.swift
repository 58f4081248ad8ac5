import Foundation

/// A self-signed certificate made with the openssl CLI in a temporary folder.
public struct TestCertificate: Sendable {
    public let directory: URL
    public let certPath: String
    public let keyPath: String
    /// `AB:CD:…` SHA-256 fingerprint of the certificate, as openssl prints it.
    public let fingerprint: String

    /// - Parameter names: subjectAltName entries, e.g. `IP:127.0.0.1`, `DNS:localhost`.
    public static func make(names: [String] = ["IP:127.0.0.1", "DNS:localhost"]) throws -> TestCertificate {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bedrud-cert-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let cert = dir.appendingPathComponent("cert.pem").path
        let key = dir.appendingPathComponent("key.pem").path
        let openssl = URL(fileURLWithPath: "/usr/bin/openssl")
        let r = try Subprocess.run(openssl, [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=bedrud-test",
            "-addext", "subjectAltName=" + names.joined(separator: ","),
        ])
        guard r.exitCode == 0 else { throw TestSupportError("openssl req failed: \(r.stderr)") }
        let f = try Subprocess.run(openssl, ["x509", "-in", cert, "-noout", "-fingerprint", "-sha256"])
        guard let fp = f.stdout.split(separator: "=").last?.trimmingCharacters(in: .whitespacesAndNewlines) else {
            throw TestSupportError("no fingerprint")
        }
        return TestCertificate(directory: dir, certPath: cert, keyPath: key, fingerprint: fp)
    }
}

/// `openssl s_server -www` on 127.0.0.1: an independent TLS server that answers
/// `GET /` with a small HTTP/1.0 page. For testing the client's trust decisions.
public final class OpenSSLServer: @unchecked Sendable {
    // @unchecked: immutable after init; the child is its own thread-safe owner.
    public let port: UInt16
    public let certificate: TestCertificate
    /// The running `openssl s_server`.
    public let process: ChildProcess

    public init(certificate: TestCertificate) throws {
        self.certificate = certificate
        // stdin is a pipe left open: s_server ends when its stdin reaches end of file.
        let child = try ChildProcess(
            URL(fileURLWithPath: "/usr/bin/openssl"),
            ["s_server", "-accept", "127.0.0.1:0", "-cert", certificate.certPath, "-key", certificate.keyPath, "-www"], stdin: .pipe)
        let line: String
        do {
            line = try child.waitForLine(timeout: 20, "ACCEPT") { $0.hasPrefix("ACCEPT") }
        } catch {
            child.stop()
            throw TestSupportError("openssl s_server did not start: \(error)")
        }
        guard let port = line.split(separator: ":").last.flatMap({ UInt16($0.trimmingCharacters(in: .whitespaces)) }) else {
            child.stop()
            throw TestSupportError("openssl s_server printed no port: \(line)")
        }
        self.port = port
        process = child
    }

    /// SIGTERM to its process group, SIGKILL after 2 s; reaped. Idempotent.
    public func stop() { process.stop(grace: 2) }

    deinit { stop() }
}

public struct TestSupportError: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}
