import Foundation
import PushTrailServer
import PushTrailStore
import Testing

/// HTTPS through libmicrohttpd's GnuTLS, with a certificate `openssl` makes for the test.
@Suite("pushtrail-server: TLS")
struct TLSTests {
    static var haveOpenSSL: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") }

    /// A self-signed certificate for 127.0.0.1 and its key, as PEM files in `dir`.
    static func certificate(in dir: String) throws -> (certificate: String, key: String) {
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", dir + "/key.pem", "-out",
            dir + "/cert.pem",
        ]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        guard openssl.terminationStatus == 0 else { throw ServerFixture.Failure(description: "openssl failed") }
        return (dir + "/cert.pem", dir + "/key.pem")
    }

    @Test(
        "HTTPS with a self-signed certificate: curl verifies it, the cookie is Secure, HSTS is sent",
        .enabled(if: haveOpenSSL && ServerFixture.haveCurl))
    func https() throws {
        let dir = NSTemporaryDirectory() + "pushtrail-tls-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let files = try Self.certificate(in: dir)
        let tls = HTTPServer.TLS(
            certificate: try String(contentsOfFile: files.certificate, encoding: .utf8),
            key: try String(contentsOfFile: files.key, encoding: .utf8))
        let fixture = try ServerFixture(tls: tls)
        let secret = try AccessTokens.add(
            name: "ops", role: .admin, storePath: fixture.storePath, now: ServerFixture.now)
        let verify = ["--cacert", files.certificate]
        let head = try fixture.request(
            "GET", "/v1/head", headers: ["Authorization: Bearer \(secret)"], scheme: "https", extra: verify)
        #expect(head.status == 200)
        #expect(head.body == fixture.cli(["head", "--json"]).stdout)
        #expect(head.headers.contains("Strict-Transport-Security: max-age="))
        let login = try fixture.request(
            "POST", "/login", headers: ["Content-Type: application/x-www-form-urlencoded"],
            body: Array("token=\(secret)".utf8), scheme: "https", extra: verify)
        #expect(login.status == 303)
        #expect(login.headers.contains("; Secure"), "\(login.headers)")
        // Plain HTTP to the TLS port gets no answer, and an unverified certificate is refused by curl.
        #expect(try fixture.request("GET", "/healthz", timeout: 3).status != 200)
        #expect(try fixture.request("GET", "/healthz", scheme: "https").status == 0)
    }
}
