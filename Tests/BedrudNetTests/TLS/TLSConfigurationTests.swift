import BedrudNet
import BedrudProtocol
import Testing
import TestSupport

/// Trust decisions against an independent TLS server (openssl s_server).
@Suite(.serialized) struct TLSConfigurationTests {
    let cert: TestCertificate
    let server: OpenSSLServer

    init() throws {
        cert = try TestCertificate.make()
        server = try OpenSSLServer(certificate: cert)
    }

    func fetch(host: String = "127.0.0.1", _ tls: TLSConfiguration) async throws -> HTTPResponse {
        var o = HTTPClientOptions()
        o.tls = tls
        o.requestTimeout = 10
        return try await HTTPClient(options: o).send(HTTPRequest(url: WebURL("https://\(host):\(server.port)/")!))
    }

    @Test func systemTrustRefusesSelfSignedAndNamesTheFingerprint() async throws {
        do {
            _ = try await fetch(.system)
            Issue.record("a self-signed certificate must not be trusted by default")
        } catch let e as NetworkError {
            #expect(e.code == .certificateUntrusted)
            #expect(e.description.contains(cert.fingerprint))
            #expect(e.description.contains("ca_file"))
        }
    }

    @Test func caFileTrustsIt() async throws {
        let r = try await fetch(TLSConfiguration(caFile: cert.certPath))
        #expect(r.status == 200)
        let byName = try await fetch(host: "localhost", TLSConfiguration(caFile: cert.certPath))
        #expect(byName.status == 200)
    }

    @Test func pinnedFingerprintTrustsIt() async throws {
        let pin = try #require(CertificateFingerprint.parse(cert.fingerprint))
        #expect(try await fetch(TLSConfiguration(pinnedSHA256: [pin])).status == 200)
    }

    @Test func wrongPinIsRefused() async throws {
        do {
            _ = try await fetch(TLSConfiguration(pinnedSHA256: [[UInt8](repeating: 7, count: 32)]))
            Issue.record("wrong pin accepted")
        } catch let e as NetworkError {
            #expect(e.code == .certificatePinMismatch, "\(e)")
            #expect(e.description.contains(cert.fingerprint))
        }
    }

    @Test func hostNameMustMatch() async throws {
        let other = try TestCertificate.make(names: ["DNS:other.example"])
        let s = try OpenSSLServer(certificate: other)
        var o = HTTPClientOptions()
        o.tls = TLSConfiguration(caFile: other.certPath)
        do {
            _ = try await HTTPClient(options: o).send(HTTPRequest(url: WebURL("https://127.0.0.1:\(s.port)/")!))
            Issue.record("host name mismatch accepted")
        } catch let e as NetworkError {
            #expect(e.code == .certificateUntrusted)
            #expect(e.description.lowercased().contains("mismatch"))
        }
    }

    @Test func insecureSkipsVerification() async throws {
        #expect(try await fetch(TLSConfiguration(insecure: true)).status == 200)
    }

    @Test func plainHTTPServerIsAClearTLSError() async throws {
        let plain = try ScriptedServer { c in _ = c.readMore(); c.write("HTTP/1.1 400 Bad Request\r\n\r\n") }
        do {
            _ = try await HTTPClient().send(HTTPRequest(url: WebURL("https://127.0.0.1:\(plain.port)/")!))
            Issue.record("expected a TLS failure")
        } catch let e as NetworkError {
            #expect(e.code == .tlsHandshakeFailed)
        }
    }

    @Test func missingCAFileIsAClearError() async throws {
        do {
            _ = try await fetch(TLSConfiguration(caFile: "/nonexistent/ca.pem"))
            Issue.record("expected an error")
        } catch let e as NetworkError {
            #expect(e.description.contains("/nonexistent/ca.pem"))
        }
    }

    /// Pins as users write them (`sha256:`-prefixed, colon-separated or plain hex).
    @Test func fingerprints() throws {
        let hex = String(repeating: "ab", count: 32)
        let bytes = try #require(CertificateFingerprint.parse(hex))
        #expect(bytes.count == 32)
        #expect(CertificateFingerprint.parse(CertificateFingerprint.format(bytes)) == bytes)
        #expect(CertificateFingerprint.parse("sha256:" + CertificateFingerprint.format(bytes)) == bytes)
        #expect(CertificateFingerprint.parse("abcd") == nil)
        #expect(CertificateFingerprint.parse(String(repeating: "zz", count: 32)) == nil)
    }
}
