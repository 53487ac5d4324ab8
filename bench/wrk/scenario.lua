-- One benchmark scenario for wrk, driven by bench/wrk.ts.
--
-- Arguments after `--`: method, body ('' for none), server-timing flag ('1' to collect
-- `Server-Timing: app;dur=<ms>` from every response), then header lines "Name: value".
-- The request is the same every time, so it is set on `wrk` in init() and wrk sends it as a static
-- request (no Lua call per request). response() is defined (in init, which wrk runs before it
-- looks for one) only when server timing is wanted: it makes wrk hand every response's headers to
-- Lua, which costs throughput. Non-2xx/3xx responses are counted by wrk either way.
--
-- done() prints one line, "WRK_RESULT <json>", that bench/wrk.ts parses.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  wrk.method = args[1]
  if args[2] ~= nil and args[2] ~= "" then
    wrk.body = args[2]
  end
  for i = 4, #args do
    local name, value = string.match(args[i], "^([^:]+):%s*(.*)$")
    if name then
      wrk.headers[name] = value
    end
  end
  server_ms = {}
  statuses = {}
  if args[3] == "1" then
    response = record_timing
  end
end

function record_timing(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  local timing = headers["Server-Timing"] or headers["server-timing"]
  if timing then
    local dur = string.match(timing, "app;[^,]*dur=([%d%.]+)")
    if dur then
      server_ms[#server_ms + 1] = tonumber(dur)
    end
  end
end

local function json_number_list(values)
  local parts = {}
  for i = 1, #values do
    parts[i] = string.format("%.4f", values[i])
  end
  return "[" .. table.concat(parts, ",") .. "]"
end

function done(summary, latency, requests)
  local server = {}
  local status_counts = {}
  for _, thread in ipairs(threads) do
    local values = thread:get("server_ms") or {}
    for i = 1, #values do
      server[#server + 1] = values[i]
    end
    local counts = thread:get("statuses") or {}
    for status, n in pairs(counts) do
      status_counts[status] = (status_counts[status] or 0) + n
    end
  end
  table.sort(server)
  local status_parts = {}
  for status, n in pairs(status_counts) do
    status_parts[#status_parts + 1] = string.format('"%d":%d', status, n)
  end
  io.write(string.format(
    'WRK_RESULT {"requests":%d,"duration_us":%d,"bytes":%d,' ..
      '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
      '"latency_us":{"min":%d,"mean":%.2f,"max":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d},' ..
      '"statuses":{%s},"server_ms":%s}\n',
    summary.requests, summary.duration, summary.bytes,
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status, summary.errors.timeout,
    latency.min, latency.mean, latency.max,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9),
    table.concat(status_parts, ","), json_number_list(server)))
end
