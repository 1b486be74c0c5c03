import PushTrailCLI
import PushTrailHTTPClient

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The remote shards' exchanges, over libcurl.
struct CurlTransport: RemoteTransport {
    func perform(_ requests: [RemoteRequest]) -> [Result<RemoteReply, RemoteFailure>] {
        let asked = requests.map {
            HTTPClientRequest(
                url: $0.url, method: $0.method, headers: $0.headers, body: $0.body, timeout: $0.timeout,
                connectTimeout: $0.connectTimeout, caFile: $0.caFile, maxBodyBytes: $0.maxBodyBytes)
        }
        return HTTPClient.perform(asked).map { result in
            switch result {
            case .success(let reply): .success(RemoteReply(status: reply.status, body: reply.body))
            case .failure(let error): .failure(RemoteFailure(reason: error.description))
            }
        }
    }
}

// `pushtrail`, for a cluster with shards behind `pushtrail serve`: the same commands,
// with an HTTP client to ask them.
signal(SIGPIPE, SIG_IGN)
let context = Context.process()
context.remote = CurlTransport()
exit(PushTrail.main(Array(CommandLine.arguments.dropFirst()), context: context))
