import Foundation
import PushTrailHTTPClient
import XCTest

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Every test talks to a real HTTP server: a small Python script on a loopback port the
/// system picks, plain or behind TLS with a certificate `openssl req -x509` made.
final class HTTPClientTests: XCTestCase {
    /// Echoes the method, path, headers and body (base64) as JSON; /slow?ms=N sleeps N ms
    /// first; /missing is a 404 with a JSON error; /big?n=N sends N bytes, with a
    /// Content-Length unless length=0 (then it closes the connection at the end).
    static let script = #"""
        import base64, json, os, ssl, sys, time
        from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
        from urllib.parse import urlparse, parse_qs

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def reply(self, status, body, kind="application/json", length=True):
                self.send_response(status)
                self.send_header("Content-Type", kind)
                if length:
                    self.send_header("Content-Length", str(len(body)))
                else:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def answer(self):
                url = urlparse(self.path)
                query = parse_qs(url.query)
                size = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(size) if size else b""
                if url.path == "/slow":
                    time.sleep(int(query.get("ms", ["1000"])[0]) / 1000)
                if url.path == "/missing":
                    return self.reply(404, json.dumps({"error": "no such thing"}).encode())
                if url.path == "/big":
                    length = query.get("length", ["1"])[0] == "1"
                    return self.reply(200, b"x" * int(query["n"][0]), "application/octet-stream", length)
                self.reply(200, json.dumps({
                    "method": self.command,
                    "path": self.path,
                    "headers": [[k, v] for k, v in self.headers.items()],
                    "body": base64.b64encode(body).decode(),
                }).encode())

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = answer

        port_file, cert, key = sys.argv[1], sys.argv[2], sys.argv[3]
        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        if cert:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
            server.socket = context.wrap_socket(server.socket, server_side=True)
        with open(port_file + ".tmp", "w") as f:
            f.write(str(server.server_address[1]))
        os.rename(port_file + ".tmp", port_file)
        server.serve_forever()
        """#

    static func firstExecutable(_ name: String) -> String? {
        ["/usr/bin/", "/usr/local/bin/", "/opt/homebrew/bin/"].map { $0 + name }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    var dir = ""
    var servers: [Process] = []
    var base = ""  // http://127.0.0.1:PORT

    override func setUpWithError() throws {
        guard Self.firstExecutable("python3") != nil else {
            throw XCTSkip("python3 is missing (the tests' HTTP server is a Python script): apt-get install python3")
        }
        dir = NSTemporaryDirectory() + "pushtrail-http-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Self.script.write(toFile: dir + "/server.py", atomically: true, encoding: .utf8)
        base = "http://127.0.0.1:\(try startServer())"
    }

    override func tearDown() {
        for server in servers where server.isRunning {
            server.terminate()
            server.waitUntilExit()
        }
        servers = []
        if !dir.isEmpty { try? FileManager.default.removeItem(atPath: dir) }
    }

    /// Starts the script (behind TLS with `cert` and `key`) and returns its port.
    func startServer(cert: String = "", key: String = "") throws -> Int {
        let portFile = dir + "/port-\(servers.count)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.firstExecutable("python3")!)
        process.arguments = [dir + "/server.py", portFile, cert, key]
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        servers.append(process)
        for _ in 0..<400 {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let port = Int(text) {
                return port
            }
            if !process.isRunning { break }
            Thread.sleep(forTimeInterval: 0.025)
        }
        throw XCTSkip("the Python test server did not start")
    }

    /// A self-signed certificate for `names` (subjectAltName entries) and its key.
    func makeCertificate(_ label: String, names: String) throws -> (cert: String, key: String) {
        guard let openssl = Self.firstExecutable("openssl") else {
            throw XCTSkip("openssl is missing (it makes the self-signed certificate): apt-get install openssl")
        }
        let cert = dir + "/\(label)-cert.pem"
        let key = dir + "/\(label)-key.pem"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: openssl)
        process.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=\(label)", "-addext", "subjectAltName=\(names)",
        ]
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "openssl req -x509 failed")
        return (cert, key)
    }

    /// A loopback port nothing listens on: bound by the system, then closed.
    func refusedPort() throws -> Int {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        XCTAssertTrue(bound)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    struct Echo {
        var method: String
        var path: String
        var headers: [(String, String)]
        var body: [UInt8]

        init(_ reply: HTTPClientReply) throws {
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any])
            method = try XCTUnwrap(object["method"] as? String)
            path = try XCTUnwrap(object["path"] as? String)
            headers = try XCTUnwrap(object["headers"] as? [[String]]).map { ($0[0], $0[1]) }
            body = Array(try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(object["body"] as? String))))
        }

        func header(_ name: String) -> [String] {
            headers.filter { $0.0.lowercased() == name.lowercased() }.map(\.1)
        }
    }

    func reply(_ result: Result<HTTPClientReply, HTTPClientError>, file: StaticString = #filePath, line: UInt = #line)
        throws -> HTTPClientReply
    {
        switch result {
        case .success(let reply): return reply
        case .failure(let error):
            XCTFail("expected a reply, got: \(error)", file: file, line: line)
            throw error
        }
    }

    func error(_ result: Result<HTTPClientReply, HTTPClientError>, file: StaticString = #filePath, line: UInt = #line)
        throws -> HTTPClientError
    {
        switch result {
        case .success(let reply):
            XCTFail("expected an error, got HTTP \(reply.status)", file: file, line: line)
            throw HTTPClientError(description: "unexpected reply")
        case .failure(let error):
            XCTAssertFalse(error.description.isEmpty, file: file, line: line)
            XCTAssertFalse(
                error.description.contains(where: { $0.isNewline }), "not one line: \(error)", file: file, line: line)
            return error
        }
    }

    func testGetAndPostArriveAsSent() throws {
        let token = "Bearer tok-0123456789abcdef"
        let json = Array(#"{"user":"u_alice","note":"caf\#u{e9} \#u{1F514}"}"#.utf8) + [0, 255, 10]
        let results = HTTPClient.perform([
            HTTPClientRequest(
                url: base + "/v1/tasks/1102?at=now&x=%20y",
                headers: [("Authorization", token), ("X-Trace", "a, b"), ("X-Empty", "")]),
            HTTPClientRequest(
                url: base + "/v1/events", method: "POST",
                headers: [("Authorization", token), ("Content-Type", "application/x-ndjson")], body: json),
            HTTPClientRequest(url: base + "/empty", method: "POST"),
            HTTPClientRequest(url: base + "/v1/thing", method: "PUT", body: Array("put".utf8)),
            HTTPClientRequest(url: base + "/v1/thing", method: "DELETE"),
            HTTPClientRequest(url: base + "/head", method: "HEAD"),
        ])
        XCTAssertEqual(results.count, 6)

        let get = try reply(results[0])
        XCTAssertEqual(get.status, 200)
        XCTAssertEqual(get.contentType, "application/json")
        let g = try Echo(get)
        XCTAssertEqual(g.method, "GET")
        XCTAssertEqual(g.path, "/v1/tasks/1102?at=now&x=%20y")
        XCTAssertEqual(g.header("Authorization"), [token])
        XCTAssertEqual(g.header("X-Trace"), ["a, b"])
        XCTAssertEqual(g.header("X-Empty"), [""])
        XCTAssertEqual(g.header("User-Agent"), ["pushtrail"])
        XCTAssertEqual(g.header("Content-Length"), [])
        XCTAssertEqual(g.body, [])

        let p = try Echo(try reply(results[1]))
        XCTAssertEqual(p.method, "POST")
        XCTAssertEqual(p.path, "/v1/events")
        XCTAssertEqual(p.body, json)
        XCTAssertEqual(p.header("Authorization"), [token])
        XCTAssertEqual(p.header("Content-Type"), ["application/x-ndjson"])
        XCTAssertEqual(p.header("Content-Length"), ["\(json.count)"])
        XCTAssertEqual(p.header("Expect"), [])

        let empty = try Echo(try reply(results[2]))
        XCTAssertEqual(empty.method, "POST")
        XCTAssertEqual(empty.body, [])
        XCTAssertEqual(empty.header("Content-Length"), ["0"])
        XCTAssertEqual(empty.header("Content-Type"), [], "no form-urlencoded default")

        let put = try Echo(try reply(results[3]))
        XCTAssertEqual(put.method, "PUT")
        XCTAssertEqual(put.body, Array("put".utf8))
        let delete = try Echo(try reply(results[4]))
        XCTAssertEqual(delete.method, "DELETE")
        XCTAssertEqual(delete.body, [])

        let head = try reply(results[5])
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.body, [])
    }

    func testNoRequestsNoResults() {
        XCTAssertTrue(HTTPClient.perform([]).isEmpty)
    }

    func testStatusesOver400AreRepliesWithTheirBodies() throws {
        let results = HTTPClient.perform([HTTPClientRequest(url: base + "/missing")])
        let missing = try reply(results[0])
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(missing.contentType, "application/json")
        let object = try JSONSerialization.jsonObject(with: Data(missing.body)) as? [String: String]
        XCTAssertEqual(object, ["error": "no such thing"])
    }

    func testRequestsRunInParallelAndComeBackInOrder() throws {
        // Sleeps that end in the reverse of the requests' order.
        let sleeps = [1200, 900, 600, 300]
        let start = Date()
        let results = HTTPClient.perform(sleeps.map { HTTPClientRequest(url: base + "/slow?ms=\($0)", timeout: 20) })
        let elapsed = Date().timeIntervalSince(start)
        for (i, ms) in sleeps.enumerated() {
            XCTAssertEqual(try Echo(try reply(results[i])).path, "/slow?ms=\(ms)")
        }
        let sum = Double(sleeps.reduce(0, +)) / 1000
        XCTAssertGreaterThanOrEqual(elapsed, 1.15, "the slowest request alone takes 1.2 s")
        XCTAssertLessThan(elapsed, sum * 0.75, "in turn they would take \(sum) s; they took \(elapsed) s")
    }

    func testSeveralThreadsAtOnce() throws {
        final class Statuses: @unchecked Sendable {
            let lock = NSLock()
            var values = Array(repeating: 0, count: 8)
        }
        let statuses = Statuses()
        let url = base
        DispatchQueue.concurrentPerform(iterations: 8) { i in
            let result = HTTPClient.perform([HTTPClientRequest(url: url + "/thread/\(i)")])
            statuses.lock.withLock { statuses.values[i] = (try? result[0].get().status) ?? -1 }
        }
        XCTAssertEqual(statuses.values, Array(repeating: 200, count: 8))
    }

    func testATimeoutIsAnErrorWithinBounds() throws {
        let start = Date()
        let results = HTTPClient.perform([
            HTTPClientRequest(url: base + "/slow?ms=8000", timeout: 0.5),
            HTTPClientRequest(url: base + "/fast", timeout: 5),
        ])
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertEqual(try error(results[0]).description, "timed out after 0.5 s")
        XCTAssertEqual(try reply(results[1]).status, 200, "a slow request does not fail the others")
        XCTAssertGreaterThanOrEqual(elapsed, 0.45)
        XCTAssertLessThan(elapsed, 4, "a 0.5 s timeout took \(elapsed) s")
    }

    func testARefusedPortIsAOneLineError() throws {
        let port = try refusedPort()
        let start = Date()
        let results = HTTPClient.perform([HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/stats")])
        XCTAssertEqual(try error(results[0]).description, "connection refused")
        XCTAssertLessThan(Date().timeIntervalSince(start), 5)
    }

    func testTheBodyLimit() throws {
        let size = 8 << 20
        let results = HTTPClient.perform([
            HTTPClientRequest(url: base + "/big?n=\(size)"),
            HTTPClientRequest(url: base + "/big?n=\(size)&length=0"),
            HTTPClientRequest(url: base + "/big?n=2000000", maxBodyBytes: 1_000_000),
            HTTPClientRequest(url: base + "/big?n=2000000&length=0", maxBodyBytes: 1_000_000),
            HTTPClientRequest(url: base + "/big?n=1000000&length=0", maxBodyBytes: 1_000_000),
        ])
        for i in 0..<2 {
            let big = try reply(results[i])
            XCTAssertEqual(big.body.count, size)
            XCTAssertTrue(big.body.allSatisfy { $0 == UInt8(ascii: "x") })
            XCTAssertEqual(big.contentType, "application/octet-stream")
        }
        // Refused from its Content-Length, and cut as it arrives without one.
        XCTAssertEqual(try error(results[2]).description, "reply body over 1000000 bytes")
        XCTAssertEqual(try error(results[3]).description, "reply body over 1000000 bytes")
        XCTAssertEqual(try reply(results[4]).body.count, 1_000_000, "a body of exactly the limit is whole")
    }

    func testHTTPSWithItsCAFileAndWithout() throws {
        let (cert, key) = try makeCertificate("localhost", names: "DNS:localhost,IP:127.0.0.1")
        let port = try startServer(cert: cert, key: key)
        let (otherCert, otherKey) = try makeCertificate("elsewhere", names: "DNS:elsewhere.invalid")
        let otherPort = try startServer(cert: otherCert, key: otherKey)
        let results = HTTPClient.perform([
            HTTPClientRequest(
                url: "https://127.0.0.1:\(port)/v1/events", method: "POST", body: Array("{}".utf8), caFile: cert),
            HTTPClientRequest(url: "https://localhost:\(port)/missing", caFile: cert),
            HTTPClientRequest(url: "https://127.0.0.1:\(port)/v1/events"),
            // Trusted, but made out for another name.
            HTTPClientRequest(url: "https://127.0.0.1:\(otherPort)/", caFile: otherCert),
            HTTPClientRequest(url: "https://127.0.0.1:\(port)/", caFile: dir + "/no-such.pem"),
        ])
        let post = try Echo(try reply(results[0]))
        XCTAssertEqual(post.method, "POST")
        XCTAssertEqual(post.body, Array("{}".utf8))
        XCTAssertEqual(try reply(results[1]).status, 404)
        let untrusted = try error(results[2]).description
        XCTAssertTrue(untrusted.hasPrefix("TLS: "), untrusted)
        XCTAssertTrue(untrusted.contains("certificate"), untrusted)
        let wrongName = try error(results[3]).description
        XCTAssertTrue(wrongName.hasPrefix("TLS: "), wrongName)
        XCTAssertTrue(wrongName.contains("127.0.0.1"), wrongName)
        let noBundle = try error(results[4]).description
        XCTAssertTrue(noBundle.hasPrefix("TLS: "), noBundle)
    }

    func testErrorsNeverHoldHeaderValuesOrTheQuery() throws {
        let token = "tok-5ecret-0123456789"
        let headers = [("Authorization", "Bearer " + token), ("X-Api-Key", "key-5ecret-abcdef")]
        let query = "?access_token=query-5ecret-xyz"
        let (cert, key) = try makeCertificate("localhost", names: "DNS:localhost,IP:127.0.0.1")
        let tlsPort = try startServer(cert: cert, key: key)
        let refused = try refusedPort()
        let urls = [
            "http://127.0.0.1:\(refused)/v1/stats" + query,
            base + "/slow?ms=8000&" + query.dropFirst(),
            "https://127.0.0.1:\(tlsPort)/v1/stats" + query,
            "https://user-5ecret:pass-5ecret@127.0.0.1:\(tlsPort)/v1/stats" + query,
            "http://no-such-host.invalid/v1/stats" + query,
            "ftp://user-5ecret:pass-5ecret@127.0.0.1/" + query,
            "http://127.0.0.1:\(refused)/a b" + query,
        ]
        var requests = urls.map { HTTPClientRequest(url: $0, headers: headers, timeout: 0.5, connectTimeout: 3) }
        requests.append(
            HTTPClientRequest(url: base + "/", headers: [("Authorization", "Bearer " + token + "\r\nX-Injected: 1")]))
        requests.append(HTTPClientRequest(url: base + "/", headers: [("Bad Name", token)]))
        let results = HTTPClient.perform(requests)
        for (i, result) in results.enumerated() {
            let description = try error(result).description
            XCTAssertFalse(description.contains("5ecret"), "request \(i): \(description)")
        }
        XCTAssertEqual(try error(results[0]).description, "connection refused")
        XCTAssertEqual(try error(results[1]).description, "timed out after 0.5 s")
    }
}
