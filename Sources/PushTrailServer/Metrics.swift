import PushTrailStore

/// What `/metrics` reports, in Prometheus' text format: events appended, requests by
/// route template and status, request latency by route, and the store's size. Labels
/// are route templates and statuses only, so their number is fixed.
final class Metrics: @unchecked Sendable {
    /// The latency histogram's upper bounds, in seconds.
    static let bounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    private struct Latency {
        var buckets = [UInt64](repeating: 0, count: Metrics.bounds.count)
        var count: UInt64 = 0
        var sum: Double = 0
    }

    private let monitor = Monitor()
    private var appended: UInt64 = 0
    private var requests: [String: [UInt32: UInt64]] = [:]
    private var latency: [String: Latency] = [:]

    func record(_ request: CompletedRequest) {
        let seconds = Double(request.microseconds) / 1e6
        monitor.locked {
            requests[request.route, default: [:]][request.status, default: 0] += 1
            var l = latency[request.route, default: Latency()]
            if let i = Metrics.bounds.firstIndex(where: { seconds <= $0 }) { l.buckets[i] += 1 }
            l.count += 1
            l.sum += seconds
            latency[request.route] = l
        }
    }

    func appended(_ count: Int) { monitor.locked { appended += UInt64(count) } }

    /// The exposition text; `storeBytes` and `storeEvents` are read at the scrape.
    func text(storeBytes: Int, storeEvents: UInt64) -> String {
        monitor.locked {
            var out = "# HELP pushtrail_events_appended_total Events this server appended.\n"
            out += "# TYPE pushtrail_events_appended_total counter\n"
            out += "pushtrail_events_appended_total \(appended)\n"
            out += "# HELP pushtrail_store_events Events in the store (the chain head's seq).\n"
            out += "# TYPE pushtrail_store_events gauge\n"
            out += "pushtrail_store_events \(storeEvents)\n"
            out += "# HELP pushtrail_store_bytes Bytes of the store file in use.\n"
            out += "# TYPE pushtrail_store_bytes gauge\n"
            out += "pushtrail_store_bytes \(storeBytes)\n"
            out += "# HELP pushtrail_http_requests_total Requests answered, by route template and status.\n"
            out += "# TYPE pushtrail_http_requests_total counter\n"
            for route in requests.keys.sorted() {
                for (status, n) in requests[route]!.sorted(by: { $0.key < $1.key }) {
                    out +=
                        "pushtrail_http_requests_total{route=\"\(Metrics.label(route))\",status=\"\(status)\"} \(n)\n"
                }
            }
            out += "# HELP pushtrail_http_request_duration_seconds Time from a request's headers to its end.\n"
            out += "# TYPE pushtrail_http_request_duration_seconds histogram\n"
            for route in latency.keys.sorted() {
                let l = latency[route]!
                let name = "pushtrail_http_request_duration_seconds"
                let label = "route=\"\(Metrics.label(route))\""
                var cumulative: UInt64 = 0
                for (i, bound) in Metrics.bounds.enumerated() {
                    cumulative += l.buckets[i]
                    out += "\(name)_bucket{\(label),le=\"\(bound)\"} \(cumulative)\n"
                }
                out += "\(name)_bucket{\(label),le=\"+Inf\"} \(l.count)\n"
                out += "\(name)_sum{\(label)} \(l.sum)\n"
                out += "\(name)_count{\(label)} \(l.count)\n"
            }
            return out
        }
    }

    /// A label value, escaped as the text format requires.
    static func label(_ value: String) -> String {
        var out = ""
        for c in value {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(c)
            }
        }
        return out
    }
}
