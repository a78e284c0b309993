-- wrk script for cross-checking warden-load (docs/benchmarks.md, "Server under load"): POSTs
-- the request bodies of a JSON-lines file in rotation, as warden-load --bodies does.
--   WARDEN_BODIES=build/bench-results/bodies-b1.jsonl wrk -t1 -c50 -d20s --latency \
--     -s bench/peers/wrk_post.lua http://127.0.0.1:18080/embed
local path = os.getenv("WARDEN_BODIES") or "build/bench-results/bodies-b1.jsonl"
local bodies = {}
for line in io.lines(path) do
  if #line > 0 then bodies[#bodies + 1] = line end
end
local next_body = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

function request()
  next_body = next_body % #bodies + 1
  return wrk.format(nil, nil, nil, bodies[next_body])
end

-- One JSON line for bench/run_load (latencies in microseconds, wrk's histogram percentiles).
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_JSON {"requests":%.0f,"duration_us":%.0f,"rps":%.2f,"p50_us":%.0f,"p95_us":%.0f,' ..
    '"p99_us":%.0f,"max_us":%.0f,"errors":{"connect":%.0f,"read":%.0f,"write":%.0f,"non_2xx_3xx":%.0f,"timeout":%.0f}}\n',
    summary.requests, summary.duration, summary.requests / summary.duration * 1e6, latency:percentile(50),
    latency:percentile(95), latency:percentile(99), latency.max, e.connect, e.read, e.write, e.status, e.timeout))
end
