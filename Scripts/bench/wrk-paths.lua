-- wrk script of the benchmark's server section (Scripts/bench/bench.py):
--   PT_BENCH_PATHS=FILE PT_BENCH_TOKEN=SECRET wrk … -s wrk-paths.lua URL
-- Each wrk thread GETs the paths of FILE (one a line) in turn over its connections, from its own offset,
-- with "Authorization: Bearer SECRET" (the secret comes from the environment, so that it
-- never shows in a process list). At the end it prints one line, "PTBENCH {JSON}": the
-- requests, errors (status counts the non-2xx/3xx answers) and latency percentiles in µs.
local paths = {}
for line in io.lines(os.getenv("PT_BENCH_PATHS")) do
    if #line > 0 then paths[#paths + 1] = line end
end
local headers = {["Authorization"] = "Bearer " .. os.getenv("PT_BENCH_TOKEN")}
local next_start = 0
local i = 0

function setup(thread)
    thread:set("start", next_start)
    next_start = next_start + 97
end

function init(args)
    i = (start or 0) % #paths
end

function request()
    i = i % #paths + 1
    return wrk.format("GET", paths[i], headers)
end

function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format(
        '\nPTBENCH {"requests":%d,"duration_us":%d,"bytes":%d,' ..
        '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
        '"latency_us":{"mean":%.1f,"p50":%d,"p90":%d,"p99":%d,"max":%d}}\n',
        summary.requests, summary.duration, summary.bytes,
        e.connect, e.read, e.write, e.status, e.timeout,
        latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
