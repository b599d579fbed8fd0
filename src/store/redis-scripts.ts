/**
 * The Lua side of the Redis store: every change to a shared crawl is one of
 * these scripts, so each runs atomically on the server (no other worker's
 * command runs in between) and a worker that dies mid-call leaves either all
 * of a change or none of it.
 *
 * Layout (P is the crawl's prefix, `crawl:{ID}:`; the braces are a Redis
 * Cluster hash tag, so every key of a crawl lives in one slot and scripts may
 * build keys from P):
 *   P meta       hash   fingerprint, created, finished, finished_at, gen (a
 *                       random id written when the crawl is created: the
 *                       marker that the crawl's state is still there), pass
 *                       (absent for the first), pass_started_at, keyid (the
 *                       thumbprint of the key the crawl's requests are signed
 *                       with, '' for an unsigned crawl; absent in a crawl made
 *                       before it was kept: the next worker's is taken)
 *   P seeds      list   every seed ever given, first-given first; P seedset dedupes it
 *   P s:XXXX     set    the seen set: a 64-bit fingerprint of every canonical URL
 *                       ever accepted (queued or only seen), bucketed by its
 *                       first 16 bits (XXXX, hex); each bucket holds the other
 *                       48 bits as integers, so Redis keeps it as an intset
 *                       (8 bytes a member) up to set-max-intset-entries
 *   P rlock:ORIGIN string the worker fetching ORIGIN's robots.txt (expires)
 *   P q:HOST     list   HOST's queue, head on the left; entries in the compact
 *                       form below
 *   P par        hash   interned parent URLs: tag → URL (a parent is stored once,
 *                       however many queued, delayed or leased entries name it)
 *   P pref       hash   tag → how many stored entries name it; at 0 both go
 *   P work       set    hosts whose queue is not empty
 *   P delayed    zset   "HOST\nENTRY" by due time (the releasing worker's clock)
 *   P leases     hash   ID:o owner, ID:k host, ID:e entry, ID:l "BEFORE RESERVED" (the
 *                       host's last start before the claim, '' for none, and the one
 *                       the claim reserved), per lease; ID:f once the lease's
 *                       request is over while its page renders (HAND_OFF); ID:w,
 *                       for a host with windows, "COUNT MS TTL" per window, and
 *                       ID:t the start logged in them (log_start); a slot
 *                       (SLOT: a start for no queued URL) has the entry ''
 *   P lexp       zset   lease ids by expiry (Redis time, ms)
 *   P seq        string last lease id
 *   P n          hash   queued, delayed, leased, seen: the totals every answer carries
 *   P counters   hash   started, …
 *   P spend      hash   the spend ledger (HTTP 402 pricing), micro-units per
 *                       currency C: s:C spent, h:C:HOST spent on HOST, r:C
 *                       held by leases' reservations (each lease's as ID:$
 *                       "C MICROS" in P leases; its end gives it back)
 *   P h:HOST     hash   the host's shared politeness (Redis time, ms): last
 *                       start, inflight, pause, factor, cdelay, sgap, suntil,
 *                       givenup, failures; real: the latest start that was
 *                       not later than last (a reservation's, maybe, for its
 *                       return unwritten to go back to); and the last saver's
 *                       HostSaved JSON (saved) with that saver's clock offset (off)
 *   P h:HOST:w:MS list  starts in the host's window of MS ms, as written (or read
 *                       by the server), newest logged first
 *   P h:HOST:pend set   leases of HOST claimed but not yet written to their socket
 *   P hosts      set    hosts with a saved record
 *   P robots     hash   origin → RobotsRecord JSON
 *   P dropped    list   entries queued for a host after it was given up
 *   P outcomes   hash   completed URLs by outcome (a status, an error code, a skip reason)
 *   P recent     zset   lease ids completed in the last minute, by Redis time (for a rate)
 *   P pages      hash   every completed URL, by its page key (a 53-bit fingerprint of
 *                       the URL in base 36, computed by the worker), as 7 lines:
 *                       host, the stored entry it was completed as (its parent
 *                       stays interned), then its history — `status fetched every`
 *                       (whole seconds; '' for none), ETag, Last-Modified, digest —
 *                       and its outlinks as page keys, space-separated (redis-history.ts);
 *                       an 8th line 'w' while a revisit of it waits (--revisit)
 *
 * Every script takes P as ARGV[1] and declares P meta as its one key (so a
 * cluster client routes it to the crawl's slot). After OPEN, a worker sends
 * ARGV[1] as P, a newline and the crawl's gen (a crawl id has no whitespace,
 * so the cut is unambiguous): the prelude then answers the error
 * `CRAWL_STATE_LOST` and changes nothing unless P meta still holds that gen.
 * Redis restarted without persistence, FLUSHALL, eviction of the marker or a
 * failover to an empty replica all leave it missing; a crawl created again
 * under the same id leaves another gen. Without the check, a worker would
 * read the empty crawl as a finished one. Most answers start with the
 * VIEW: queued, delayed, leased, seen, the earliest due time ('' for none)
 * and the `started` counter — what the worker's synchronous views show.
 * A BRIEF answer has six '' there instead: the two calls a page (a claim
 * granted, a lease completed) leave the worker to count its own change,
 * three commands fewer each.
 *
 * A stored entry (queues, `delayed`, `leases`) is `HEAD|TAG|TAIL`, about
 * 16 bytes plus its path where FrontierEntry JSON took ~150 plus the URL
 * (field names, and the parent: a whole URL): HEAD is
 * `depth,hops,attempt,throttles,extraLen` with trailing defaults left out
 * (`1` for a plain link), TAG the parent's 12-hex-digit key in `P par` (''
 * for none), TAIL the extra's JSON (extraLen characters; usually none) then
 * the URL, written `/PATH` for `https://HOST/PATH` and `*` then `/PATH` for
 * `http://HOST/PATH` when HOST is its queue's host key. Scripts take an entry as
 * HEAD, PARENT, TAIL (PARENT '' for none, else `p` and the URL) and answer
 * with the stored form and PARENT; redis-store.ts encodes and decodes it.
 *
 * Encodings: Redis keeps a small hash or sorted set as one flat list
 * (a listpack: under 512 fields and 128 members by default) and scans it
 * whole at every read and write, parsing each score of a sorted set on
 * the way. P leases holds ~7 fields for each of up to a few hundred leases
 * and P lexp a fractional expiry for each: flat, a lease's HSET, HMGET and
 * HDEL cost 10–19 µs each inside Redis, and its ZADD 10 µs (0.3–0.6 µs as
 * a hash table and a skip list). OPEN therefore gives each a member longer
 * than a flat list may hold (ENCODING_MARK: 'encoding' in P leases, with
 * score +inf in P lexp), which turns the key into a table for good. The
 * mark is never a lease: no field of it ends in ':o' or ':e', and no
 * expiry before +inf reaches it. P recent's times are whole milliseconds,
 * which a flat list keeps as integers and compares without parsing.
 *
 * Numbers leave Lua as strings: Redis truncates a Lua number to an integer
 * in a reply, and times here have fractions of a millisecond.
 */

/**
 * Longer than a listpack entry may be (hash-max-listpack-value and
 * zset-max-listpack-value, 64 bytes by default; this is 79), so a key holding it is a
 * hash table or a skip list for good (Encodings, above). Plain ASCII: it
 * goes into a Lua string literal as it is.
 */
const ENCODING_MARK = 'makes Redis keep this key as a table: a flat listpack is scanned at every lease';

const PRELUDE = `
local P = ARGV[1]
local GEN = nil
local cut = string.find(P, '\\n', 1, true)
if cut then
  GEN = string.sub(P, cut + 1)
  P = string.sub(P, 1, cut - 1)
  local held = redis.call('HGET', P .. 'meta', 'gen')
  if held ~= GEN then return redis.error_reply('CRAWL_STATE_LOST ' .. (held and 'replaced' or 'missing')) end
end
local function fmt(x) return string.format('%.17g', x) end
local function redis_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local function view(extra)
  local c = redis.call('HMGET', P .. 'n', 'queued', 'delayed', 'leased', 'seen')
  local d = redis.call('ZRANGE', P .. 'delayed', 0, 0, 'WITHSCORES')
  local out = { c[1] or '0', c[2] or '0', c[3] or '0', c[4] or '0', d[2] or '', redis.call('HGET', P .. 'counters', 'started') or '0' }
  for i = 1, #extra do out[#out + 1] = extra[i] end
  return out
end
-- An answer without the VIEW's totals ('' for each): a claim granted or a lease completed, whose change
-- the worker adds to its own view (three commands fewer, at two calls a page). A claim that finds the
-- queue empty answers the whole VIEW: a worker whose hosts run dry learns what the others did.
local function brief(extra)
  local out = { '', '', '', '', '', '' }
  for i = 1, #extra do out[#out + 1] = extra[i] end
  return out
end
-- Additions to the started counter a lease's end carries for its worker ('' or none: nothing).
local function add_started(by)
  local n = tonumber(by)
  if n and n ~= 0 then redis.call('HINCRBY', P .. 'counters', 'started', n) end
end
local function bump(field, by)
  -- (HINCRBY refuses '-0')
  if by ~= 0 then redis.call('HINCRBY', P .. 'n', field, by) end
end
local function qkey(host) return P .. 'q:' .. host end
-- Adds the URL's 64-bit fingerprint to the seen set (layout above): true if it was not there.
local function mark_seen(url)
  local fp = redis.sha1hex(url)
  return redis.call('SADD', P .. 's:' .. string.sub(fp, 1, 4), string.format('%.0f', tonumber(string.sub(fp, 5, 16), 16))) == 1
end
local function split(member)
  local nl = string.find(member, '\\n', 1, true)
  return string.sub(member, 1, nl - 1), string.sub(member, nl + 1)
end
local function requeue_head(host, entry)
  redis.call('LPUSH', qkey(host), entry)
  redis.call('SADD', P .. 'work', host)
  bump('queued', 1)
end
local function end_in_flight(host)
  local h = P .. 'h:' .. host
  -- (never below 0: a count restored from an older crawl may already be there)
  if redis.call('HINCRBY', h, 'inflight', -1) < 0 then redis.call('HSET', h, 'inflight', 0) end
end
-- Interns a parent ('' or 'p' .. URL) and counts one more entry naming it:
-- its tag, the first 48 bits of its SHA-1 (probing on to URL, newline, k if another
-- URL holds that tag: an entry only ever names the tag whose URL is its parent).
local function intern(parent)
  if parent == '' then return '' end
  local url = string.sub(parent, 2)
  local k = 0
  while true do
    local tag = string.sub(redis.sha1hex(k == 0 and url or (url .. '\\n' .. k)), 1, 12)
    local held = redis.call('HGET', P .. 'par', tag)
    if not held then
      redis.call('HSET', P .. 'par', tag, url)
      redis.call('HSET', P .. 'pref', tag, 1)
      return tag
    end
    if held == url then
      redis.call('HINCRBY', P .. 'pref', tag, 1)
      return tag
    end
    k = k + 1
  end
end
local function stored_entry(head, parent, tail) return head .. '|' .. intern(parent) .. '|' .. tail end
local function tag_of(entry)
  local a = string.find(entry, '|', 1, true)
  local b = string.find(entry, '|', a + 1, true)
  return string.sub(entry, a + 1, b - 1)
end
-- PARENT of a stored entry: '' or 'p' .. URL.
local function parent_of(entry)
  local tag = tag_of(entry)
  if tag == '' then return '' end
  local url = redis.call('HGET', P .. 'par', tag)
  return url and ('p' .. url) or ''
end
-- Appends an entry as an answer sends it back: entry, PARENT, host.
local function push_entry(t, entry, host)
  t[#t + 1] = entry
  t[#t + 1] = parent_of(entry)
  t[#t + 1] = host
end
-- A stored entry leaves the crawl for good: one entry fewer names its parent.
local function unref(entry)
  local tag = tag_of(entry)
  if tag == '' then return end
  if redis.call('HINCRBY', P .. 'pref', tag, -1) <= 0 then
    redis.call('HDEL', P .. 'pref', tag)
    redis.call('HDEL', P .. 'par', tag)
  end
end
-- The lines of a string, as a table ('' for an empty line).
local function split_lines(s)
  local t = {}
  for line in string.gmatch(s .. '\\n', '([^\\n]*)\\n') do t[#t + 1] = line end
  return t
end
-- A P pages value's lines: host, entry, history (4 lines), links, and 'w' while a revisit waits.
local function page_fields(value)
  local f = split_lines(value)
  for i = #f + 1, 8 do f[i] = '' end
  return f
end
local function put_page(key, f)
  redis.call('HSET', P .. 'pages', key, table.concat(f, '\\n', 1, f[8] == '' and 7 or 8))
end
-- Keeps a page in P pages: its host and completed entry (nil: the ones kept; a new entry
-- replaces the old one, whose parent reference goes), its history ('' keeps the kept
-- one) and its links ('-' keeps the kept ones).
local function keep_page(key, host, entry, hist, links)
  local old = redis.call('HGET', P .. 'pages', key)
  local f = old and page_fields(old) or { '', '', '', '', '', '', '', '' }
  if entry then
    if f[2] ~= '' then unref(f[2]) end
    -- Completed: a revisit that waited for it is over.
    f[1], f[2], f[8] = host, entry, ''
  end
  if hist ~= '' then
    local h = split_lines(hist)
    for i = 1, 4 do f[2 + i] = h[i] or '' end
  end
  if links ~= '-' then f[7] = links end
  put_page(key, f)
end
-- Bytes of the first n UTF-16 code units of a UTF-8 string (an entry's extraLen counts those).
local function u16_bytes(s, n)
  local i, units = 1, 0
  while units < n and i <= #s do
    local b = string.byte(s, i)
    if b >= 0xF0 then i = i + 4; units = units + 2
    elseif b >= 0xE0 then i = i + 3; units = units + 1
    elseif b >= 0xC0 then i = i + 2; units = units + 1
    else i = i + 1; units = units + 1 end
  end
  return i - 1
end
local function u16_len(s)
  local units = 0
  for i = 1, #s do
    local b = string.byte(s, i)
    if b >= 0xF0 then units = units + 2 elseif b < 0x80 or b >= 0xC0 then units = units + 1 end
  end
  return units
end
-- A stored entry for a new pass: attempts and throttles reset, the attempt history
-- (extra.history) dropped; the rest of the extra stays. Also answers its URL part.
local function fresh_entry(entry)
  local a = string.find(entry, '|', 1, true)
  local b = string.find(entry, '|', a + 1, true)
  local tail = string.sub(entry, b + 1)
  local f = {}
  for x in string.gmatch(string.sub(entry, 1, a - 1) .. ',', '([^,]*),') do f[#f + 1] = x end
  local extra, short = '', tail
  local extraLen = tonumber(f[5] or '0') or 0
  if extraLen > 0 then
    local nb = u16_bytes(tail, extraLen)
    extra, short = string.sub(tail, 1, nb), string.sub(tail, nb + 1)
    local ok, t = pcall(cjson.decode, extra)
    if ok and type(t) == 'table' and t.history ~= nil then
      t.history = nil
      extra = next(t) == nil and '' or cjson.encode(t)
    end
  end
  -- As encodeEntry writes a HEAD: trailing defaults left out.
  local h = { f[1], f[2] or '0', '0', '', tostring(u16_len(extra)) }
  local defaults = { '', '0', '0', '', '0' }
  while #h > 1 and h[#h] == defaults[#h] do h[#h] = nil end
  return table.concat(h, ',') .. '|' .. string.sub(entry, a + 1, b - 1) .. '|' .. extra .. short, short
end
local function is_zero(entry) return string.sub(entry, 1, 2) == '0|' or string.sub(entry, 1, 2) == '0,' end
-- The lease's start in each window's log of its host (win: the lease's ':w' and ':t' fields, what to log
-- and what it logged; nil for a host without windows). A start is logged once its request is written,
-- at the start its worker reported, and moved later by a later bound of its arrival at the server.
local function log_start(id, host, start, win)
  if not win or not win[1] then return end
  local s = tonumber(start)
  local logged = win[2]
  if not s or (logged and s <= tonumber(logged)) then return end
  local h = P .. 'h:' .. host
  for count, name, ttl in string.gmatch(win[1], '(%S+) (%S+) (%S+)') do
    local log = h .. ':w:' .. name
    if logged then
      -- Moved later where it is, as StartLog.update does: pushed again, it would count as the newest,
      -- and trimming would drop a start later than it. One trimmed out already stays out.
      local at = redis.call('LPOS', log, logged)
      if at then redis.call('LSET', log, at, start) end
    else
      redis.call('LPUSH', log, start)
      redis.call('LTRIM', log, 0, tonumber(count) - 1)
    end
    redis.call('PEXPIRE', log, ttl)
  end
  redis.call('HSET', P .. 'leases', id .. ':t', start)
end
-- The lease's request was written to its socket (or read by the server) no later than start (Redis time,
-- or none): the host's last start and the lease's start in its window logs move there if later, and the
-- host's next claim is no longer held back by this lease.
local function started(id, host, start, win)
  local h = P .. 'h:' .. host
  redis.call('SREM', h .. ':pend', id)
  local s = tonumber(start)
  if s then
    local last = tonumber(redis.call('HGET', h, 'last'))
    if not last or s > last then
      redis.call('HSET', h, 'last', start)
    elseif s > (tonumber(redis.call('HGET', h, 'real')) or -math.huge) then
      -- Not later than the last start, which may be a reservation made since: kept as 'real', for that
      -- reservation given back unwritten (end_start) to go back to.
      redis.call('HSET', h, 'real', start)
    end
  end
  log_start(id, host, start, win)
end
-- The end of a lease's or a slot's request (host: the lease's, which every caller has read already;
-- handed: its in-flight count went back at HAND_OFF, so the end leaves it alone; win: as log_start's).
local function end_start(id, host, start, handed, win)
  if not handed then end_in_flight(host) end
  local h = P .. 'h:' .. host
  -- Its worker says it was never written (robots.txt to wait for, a skip, a dead name), and no STARTED
  -- says otherwise (it is still pending): the host's last start goes back to what it was before the
  -- reservation, or to a start that landed after the reservation but was not later than it (another
  -- request's end, carrying when the server can have read it, late), unless a later start has moved it since.
  if start == '-' and redis.call('SISMEMBER', h .. ':pend', id) == 1 then
    local mark = redis.call('HGET', P .. 'leases', id .. ':l')
    local before, reserved = string.match(mark or '', '^(%S*) (%S+)$')
    if reserved and redis.call('HGET', h, 'last') == reserved then
      local real = redis.call('HGET', h, 'real')
      if real and (before == '' or tonumber(real) > tonumber(before)) then before = real end
      if before == '' then redis.call('HDEL', h, 'last') else redis.call('HSET', h, 'last', before) end
    end
  end
  -- A start its worker had not yet seen written comes with the end (its STARTED may land after this):
  -- the hold goes only with the last start where the request really was.
  started(id, host, start, win)
  redis.call('HDEL', P .. 'leases', id .. ':o', id .. ':k', id .. ':e', id .. ':f', id .. ':l', id .. ':w', id .. ':t')
  redis.call('ZREM', P .. 'lexp', id)
end
-- A lease's reservation against the budget (SPEND_RESERVE), given back: its lease ended or expired.
local function end_spend(id)
  local held = redis.call('HGET', P .. 'leases', id .. ':$')
  if not held then return end
  local c, m = string.match(held, '^(%S+) (%d+)$')
  redis.call('HINCRBY', P .. 'spend', 'r:' .. c, -tonumber(m))
  redis.call('HDEL', P .. 'leases', id .. ':$')
end
-- A lease's end: its start's, and one URL fewer leased (a slot is none).
local function end_lease(id, host, start, handed, win)
  end_start(id, host, start, handed, win)
  bump('leased', -1)
end
`;

/**
 * OPEN(P, fingerprint, gen, keyid, previous keyid, seed...) → VIEW, existed
 * 0|1, fingerprint, finished 0|1, the crawl's gen, seed count, the seeds
 * before this open, the pass the crawl is in; or VIEW, 'refused', the
 * crawl's keyid, changing nothing.
 * Creates the crawl (its gen: the one given) or joins it; appends seeds
 * never given before. A crawl created before gens existed takes the one
 * given. keyid is the thumbprint of the worker's signing key ('' when it
 * does not sign), previous keyid its second key's during a rotation ('' for
 * none): a worker joins only a crawl signed with one of them (an unsigned
 * one when it has neither), and the crawl is signed with its keyid from
 * then on (crawl-signing-key.ts says it for the worker, in one line).
 */
const OPEN = `
local m = P .. 'meta'
local keyid = redis.call('HGET', m, 'keyid')
if keyid and keyid ~= ARGV[4] and (ARGV[5] == '' or keyid ~= ARGV[5]) then return view({ 'refused', keyid }) end
redis.call('HSET', m, 'keyid', ARGV[4])
local fp = redis.call('HGET', m, 'fingerprint')
local finished = redis.call('HGET', m, 'finished') or '0'
local before = redis.call('LRANGE', P .. 'seeds', 0, -1)
if not fp then redis.call('HSET', m, 'fingerprint', ARGV[2], 'created', fmt(redis_now())) end
local gen = redis.call('HGET', m, 'gen')
if not gen then
  gen = ARGV[3]
  redis.call('HSET', m, 'gen', gen)
end
for i = 6, #ARGV do
  if redis.call('SADD', P .. 'seedset', ARGV[i]) == 1 then redis.call('RPUSH', P .. 'seeds', ARGV[i]) end
end
-- The lease keys as a table and a skip list from the start (Encodings, above); a crawl an older version made gets them now.
redis.call('HSETNX', P .. 'leases', 'encoding', '${ENCODING_MARK}')
redis.call('ZADD', P .. 'lexp', 'NX', '+inf', '${ENCODING_MARK}')
local out = { fp and 1 or 0, fp or ARGV[2], finished, gen, #before }
for i = 1, #before do out[#out + 1] = before[i] end
out[#out + 1] = redis.call('HGET', m, 'pass') or '1'
return view(out)
`;

/**
 * PEEK(P) → exists 0|1, fingerprint, finished 0|1, the crawl's gen ('' for
 * none), keyid kept 0|1, keyid, the seeds. Changes nothing.
 */
const PEEK = `
local m = P .. 'meta'
local out = { redis.call('HEXISTS', m, 'fingerprint'), redis.call('HGET', m, 'fingerprint') or '', redis.call('HGET', m, 'finished') or '0', redis.call('HGET', m, 'gen') or '' }
out[5] = redis.call('HEXISTS', m, 'keyid')
out[6] = redis.call('HGET', m, 'keyid') or ''
for _, seed in ipairs(redis.call('LRANGE', P .. 'seeds', 0, -1)) do out[#out + 1] = seed end
return out
`;

/** QUEUES(P) → VIEW, then host, queue length pairs for every host with work. */
const QUEUES = `
local out = {}
for _, host in ipairs(redis.call('SMEMBERS', P .. 'work')) do
  out[#out + 1] = host
  out[#out + 1] = redis.call('LLEN', qkey(host))
end
return view(out)
`;

/**
 * ADD(P, then per URL: url, host, HEAD or '', PARENT, TAIL) → VIEW, then new
 * 0|1 per URL in order, then host and queue length per host queued to. A
 * URL whose fingerprint is in the seen set is not new (two URLs share a
 * 64-bit fingerprint with odds of about n²/2⁶⁵: 3 in a million at ten
 * million URLs); a host given up takes nothing more (the URL is only
 * marked seen); HEAD '' only marks it seen. One call carries the URLs a
 * worker added in one turn (a page's links).
 */
const ADD = `
local out, lengths, hosts = {}, {}, {}
local seen, queued = 0, 0
for i = 2, #ARGV - 4, 5 do
  local new = mark_seen(ARGV[i])
  out[#out + 1] = new and 1 or 0
  if new then
    seen = seen + 1
    local host = ARGV[i + 1]
    if ARGV[i + 2] ~= '' then
      local length
      if redis.call('HGET', P .. 'h:' .. host, 'givenup') ~= '1' then
        length = redis.call('RPUSH', qkey(host), stored_entry(ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]))
        -- A host with a longer queue is in P work already.
        if length == 1 then redis.call('SADD', P .. 'work', host) end
        queued = queued + 1
      else
        length = redis.call('LLEN', qkey(host))
      end
      if lengths[host] == nil then hosts[#hosts + 1] = host end
      lengths[host] = length
    end
  end
end
bump('seen', seen)
bump('queued', queued)
for _, host in ipairs(hosts) do
  out[#out + 1] = host
  out[#out + 1] = lengths[host]
end
return view(out)
`;

/**
 * CLAIM(P, host, owner, leaseMs, intervalMs, concurrency (0: none), busyMs,
 * gap ratio, gap ms, gap ms ratio, window ratio, window ms, window count,
 * then count, windowMs per window, then quiet hours: '' | state, n, n
 * instants) → VIEW, then one of
 *   0, now, queue length            nothing queued (or the host is given up)
 *   1, now, notBefore               not before then (Redis time)
 *   2, now, lease id, entry, PARENT, queue length
 *
 * readyAt is host-limiter.ts's, on the shared state and Redis's clock: the
 * pause; the gap (interval / rate factor, Crawl-delay and a RateLimit pace
 * as floors) plus its margin after the last start; each window's oldest of
 * its last `count` starts plus the window and its margin; and a host at its
 * concurrency waits `busyMs` (no release of another worker wakes this one);
 * and quiet hours: outside the window, the next opening. The worker turns
 * the window into the instants it opens and closes around its estimate of
 * Redis's now (the zone's rules are not in Lua); the script judges them on
 * Redis's own TIME, the wall clock every worker's claims share.
 * A start reserved here counts at once: last start = now, one more in
 * flight, and no other start to the host until its write is known; then it
 * enters each window's log at its write (log_start). It counts until the
 * lease is completed, released or expires.
 */
/**
 * The policy arguments CLAIM and SLOT share, after P (RedisStore's
 * `policyArgs` sends them in this order).
 */
const POLICY_ARGS = `
local host, owner = ARGV[2], ARGV[3]
local leaseMs = tonumber(ARGV[4])
local intervalMs = tonumber(ARGV[5])          -- policy.intervalMs (1000 / rate)
local concurrency = tonumber(ARGV[6])         -- policy.concurrency; 0: none
local busyMs = tonumber(ARGV[7])              -- how long a host at its concurrency (or awaiting a dispatch) waits
local gapRatio, gapMs, gapMsRatio = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])   -- GAP_MARGIN
local windowRatio, windowMs = tonumber(ARGV[11]), tonumber(ARGV[12])                          -- WINDOW_MARGIN
local windowCount = tonumber(ARGV[13])
-- Window i (0-based): its count and length, ARGV[14 + 2i] and ARGV[15 + 2i].
local function window(i) return tonumber(ARGV[14 + 2 * i]), ARGV[15 + 2 * i] end
-- Quiet hours, after the windows: '' (none), or '1'/'0' (open/closed at the worker's reference instant,
-- a minute before its estimate of Redis's now), then how many instants follow and the instants (Redis
-- time, ascending) at which the window changes from there.
local hoursAt = 14 + 2 * windowCount
local hoursState = ARGV[hoursAt] or ''
`;

/**
 * The host's readiness and its reservation, shared by CLAIM and SLOT: with
 * `h`, `now` and `f` (the host hash's fields below) read, answers
 * `{ 1, now, at }` when a start must wait, else reserves it as
 * HostLimiter.acquire does (last start, one more in flight, the start in
 * every window's log).
 */
const RESERVE_START = `
local lastStart, inFlight, pausedUntil = tonumber(f[1]), tonumber(f[2]) or 0, tonumber(f[3])
local rateFactor, crawlDelay, serverGap, serverGapUntil = tonumber(f[4]) or 1, tonumber(f[5]) or 0, tonumber(f[6]) or 0, tonumber(f[7])
-- readyAt, step by step as HostLimiter.readyAt (politeness/host-limiter.ts) takes them:
-- 1. the pause (Retry-After) is the earliest start, "at = pausedUntilAt".
local at = pausedUntil or -math.huge
-- 2. a host at its concurrency waits (there: Infinity, woken by a release; here: busyMs, since no
--    other worker's release wakes this one).
if concurrency > 0 and inFlight >= concurrency then at = math.max(at, now + busyMs) end
-- 3. the gap in force: effectiveIntervalMs = max(interval / rate factor, Crawl-delay, the server's
--    RateLimit pace while it lasts).
local gap = math.max(intervalMs / rateFactor, crawlDelay)
if serverGapUntil and now < serverGapUntil then gap = math.max(gap, serverGap) end
-- 4. the gap, with gapWithMargin's margin, after the last start.
if gap > 0 and lastStart then
  at = math.max(at, lastStart + gap + gap * gapRatio + math.min(gapMs, gap * gapMsRatio))
end
-- 5. a start reserved but not yet written to its socket holds back the next (there: awaitingDispatch,
--    Infinity until its dispatch; here: busyMs, until STARTED for it arrives): the gap counts from
--    the real write, not from the reservation.
if (gap > 0 or windowCount > 0) and redis.call('SCARD', h .. ':pend') > 0 then at = math.max(at, now + busyMs) end
-- 6. each window: the oldest of its last "count" starts, plus the window and its margin (StartLog.readyAt).
for i = 0, windowCount - 1 do
  local count, name = window(i)
  local w = tonumber(name)
  local starts = redis.call('LRANGE', h .. ':w:' .. name, 0, count - 1)
  if #starts >= count then
    local oldest = math.huge
    for _, s in ipairs(starts) do oldest = math.min(oldest, tonumber(s)) end
    at = math.max(at, oldest + w + w * windowRatio + windowMs)
  end
end
-- 7. quiet hours (HostLimiter.openAtOrAfter): a start only while the window is open, on Redis's clock.
if hoursState ~= '' then
  local t = math.max(at, now)
  local open, opening = hoursState == '1', nil
  for i = 1, tonumber(ARGV[hoursAt + 1]) do
    local b = tonumber(ARGV[hoursAt + 1 + i])
    if b > t then
      if not open then opening = b end
      break
    end
    open = not open
  end
  if not open then at = opening or (t + busyMs) end
end
if at > now then return view({ 1, fmt(now), fmt(at) }) end

-- Ready: reserve the start at once. The lease keeps the last start before it and its own (reserved), so an
-- end that says it was never written gives the start back (end_start).
local reservedLast = fmt(math.max(lastStart or now, now))
local reserved = (f[1] or '') .. ' ' .. reservedLast
redis.call('HSET', h, 'last', reservedLast, 'inflight', tostring(inFlight + 1))
-- The start enters the window logs when its write is known (log_start), not now: a claim is no request
-- yet (connecting takes its time: a start logged now would let the window's next start come that much
-- early at the server), and one never written is none at all. Until then its pending start holds every
-- other start to the host back (step 5). The lease keeps what to log: count, window and the log's
-- lifetime, per window.
local windowSpec = nil
if windowCount > 0 then
  local spec = {}
  for i = 0, windowCount - 1 do
    local count, name = window(i)
    local w = tonumber(name)
    spec[#spec + 1] = count .. ' ' .. name .. ' ' .. (math.ceil(w + w * windowRatio + windowMs) + 1000)
  end
  windowSpec = table.concat(spec, ' ')
end
`;

/**
 * After RESERVE_START, with `entry` ('' for a slot): the reserved start as a
 * lease record `id` (see "P leases" above), pending until its write is
 * known (STARTED, or its end), and expiring unless renewed. CLAIM and SLOT
 * share it, so a lease and a slot are one record.
 */
const HOLD_START = `
local id = redis.call('INCR', P .. 'seq')
redis.call('HSET', P .. 'leases', id .. ':o', owner, id .. ':k', host, id .. ':e', entry, id .. ':l', reserved)
if windowSpec then redis.call('HSET', P .. 'leases', id .. ':w', windowSpec) end
redis.call('SADD', h .. ':pend', id)
redis.call('ZADD', P .. 'lexp', fmt(now + leaseMs), id)
`;

/**
 * CLAIM(P, POLICY_ARGS) → VIEW (BRIEF when a lease is granted), then 0,
 * now, queue length (nothing queued,
 * or the host given up) | 1, now, not before (Redis times) | 2, now, lease
 * id, entry, PARENT, queue length left. The host's shared politeness
 * decides (RESERVE_START); a lease's start waits in `P h:HOST:pend` until
 * its write is known (STARTED, or the lease's end).
 */
const CLAIM = `${POLICY_ARGS}
local q = qkey(host)
local now = redis_now()
local queued = redis.call('LLEN', q)
if queued == 0 then return view({ 0, fmt(now), 0 }) end
local h = P .. 'h:' .. host
-- The host's shared state (saveHost writes it; see "P h:HOST" above).
local f = redis.call('HMGET', h, 'last', 'inflight', 'pause', 'factor', 'cdelay', 'sgap', 'suntil', 'givenup')
if f[8] == '1' then
  -- Given up: what is still queued is dropped (no skip record), and nothing is claimed.
  local left = redis.call('LRANGE', q, 0, -1)
  for i = 1, #left do
    -- Kept whole: the parent's URL goes with it.
    redis.call('RPUSH', P .. 'dropped', parent_of(left[i]) .. '\\n' .. left[i])
    unref(left[i])
  end
  redis.call('DEL', q)
  redis.call('SREM', P .. 'work', host)
  bump('queued', -#left)
  return view({ 0, fmt(now), 0 })
end
${RESERVE_START}
-- and hand out the queue's head as a lease.
local entry = redis.call('LPOP', q)
local left = queued - 1
if left == 0 then redis.call('SREM', P .. 'work', host) end
${HOLD_START}
bump('queued', -1)
bump('leased', 1)
return brief({ 2, fmt(now), id, entry, parent_of(entry), left })
`;

/**
 * SLOT(P, POLICY_ARGS) → VIEW, then 1, now, not before | 2, now, slot id.
 * A start for a request that is no queued URL's (a robots.txt request, a
 * browser's request while it renders a page), under the same shared
 * politeness as a claim, so every worker's requests to a host share its
 * gap, windows and concurrency. The slot is a lease with an empty entry:
 * renewed, dispatched (STARTED) and reaped like one, ended by SLOT_END; it
 * is not a URL, so it is not in the `leased` total and a reaped one
 * requeues nothing.
 */
const SLOT = `${POLICY_ARGS}
local now = redis_now()
local h = P .. 'h:' .. host
local f = redis.call('HMGET', h, 'last', 'inflight', 'pause', 'factor', 'cdelay', 'sgap', 'suntil')
${RESERVE_START}
local entry = ''
${HOLD_START}
return view({ 2, fmt(now), id })
`;

/**
 * SLOT_END(P, id, owner, start or '' or '-') → VIEW, held 1 | lost 0. The
 * slot's request is over (its start, when STARTED may not have landed; '-'
 * when it was never written: the reserved start goes back, end_start).
 */
const SLOT_END = `
local id = ARGV[2]
local lease = redis.call('HMGET', P .. 'leases', id .. ':o', id .. ':k', id .. ':w', id .. ':t')
if lease[1] ~= ARGV[3] then return view({ 0 }) end
end_start(id, lease[2], ARGV[4], nil, { lease[3], lease[4] })
return view({ 1 })
`;

/**
 * HAND_OFF(P, id, owner, start or '') → VIEW, 1 | 0 (not held, or handed
 * off already). A page lease's request is over while its page is not (it
 * renders): the host's in-flight count goes back now, because the
 * browser's requests to that host need it, and the lease stays until its
 * completion, which then leaves the count alone (`:f`).
 */
const HAND_OFF = `
local id = ARGV[2]
local lease = redis.call('HMGET', P .. 'leases', id .. ':o', id .. ':k', id .. ':f', id .. ':w', id .. ':t')
if lease[1] ~= ARGV[3] or lease[3] then return view({ 0 }) end
end_in_flight(lease[2])
started(id, lease[2], ARGV[4], { lease[4], lease[5] })
redis.call('HSET', P .. 'leases', id .. ':f', '1')
return view({ 1 })
`;

/**
 * COMPLETE(P, id, owner, outcome, start or '' or '-', page key, history,
 * links, started to add or '', '1' for a VIEW) → BRIEF (VIEW when asked) then held 1 | VIEW then lost 0 (expired and given back, maybe claimed by
 * another worker). `start`: the request's start, when its STARTED may not
 * have landed yet (end_lease); '-': no request was written (a skip, a dead
 * name), so the start the claim reserved goes back (end_start). With a
 * page key, the URL is kept in P pages with the entry it was completed as
 * (for a new pass), and its history: 4 lines ('' keeps the page's earlier
 * history) and its links ('-' keeps the earlier ones).
 */
const COMPLETE = `
local id = ARGV[2]
add_started(ARGV[9])
local lease = redis.call('HMGET', P .. 'leases', id .. ':o', id .. ':k', id .. ':e', id .. ':f', id .. ':w', id .. ':t')
if lease[1] ~= ARGV[3] then return view({ 0 }) end
local host, entry = lease[2], lease[3]
if ARGV[6] and ARGV[6] ~= '' then
  keep_page(ARGV[6], host, entry, ARGV[7], ARGV[8])
else
  unref(entry)
end
end_lease(id, host, ARGV[5], lease[4], { lease[5], lease[6] })
-- Its charge, booked with its completion (crawl-store.ts SpendLedger); its reservation given back.
if ARGV[12] and ARGV[12] ~= '' then
  redis.call('HINCRBY', P .. 'spend', 's:' .. ARGV[11], ARGV[12])
  redis.call('HINCRBY', P .. 'spend', 'h:' .. ARGV[11] .. ':' .. host, ARGV[12])
end
if ARGV[13] == '1' then end_spend(id) end
if ARGV[4] and ARGV[4] ~= '' then
  redis.call('HINCRBY', P .. 'outcomes', ARGV[4], 1)
  local now = redis_now()
  -- Whole milliseconds: a small P recent stays cheap (Encodings, above).
  redis.call('ZADD', P .. 'recent', fmt(math.floor(now)), id)
  -- Trimmed at every 64th lease (STATUS trims before it counts): a minute's completions and a few more.
  if tonumber(id) % 64 == 0 then redis.call('ZREMRANGEBYSCORE', P .. 'recent', '-inf', now - 60000) end
end
if ARGV[10] == '1' then return view({ 1 }) end
return brief({ 1 })
`;

/** HIST_PUT(P, page key, history, links) → 1. A page's history, kept apart from a completion (its lease is not this worker's). */
const HIST_PUT = `
keep_page(ARGV[2], nil, nil, ARGV[3], ARGV[4])
return 1
`;

/** HIST_GET(P, page key) → the page's 7 lines, or ''. */
const HIST_GET = `
return redis.call('HGET', P .. 'pages', ARGV[2]) or ''
`;

/** HIST_LINKS(P, page key) → host, stored entry pairs of the page's outlinks this crawl completed. */
const HIST_LINKS = `
local value = redis.call('HGET', P .. 'pages', ARGV[2])
local out = {}
if not value then return out end
local f = page_fields(value)
for key in string.gmatch(f[7], '%S+') do
  local linked = redis.call('HGET', P .. 'pages', key)
  if linked then
    local g = page_fields(linked)
    if g[2] ~= '' then
      out[#out + 1] = g[1]
      out[#out + 1] = g[2]
    end
  end
end
return out
`;

/**
 * NEW_PASS(P, pass expected) → VIEW, the pass the crawl is in (-1: leases
 * are held, nothing changed). Unless another worker began it already (the
 * pass is not the one expected), begins the next: every URL queued, delayed
 * or completed is queued again (completed ones by depth), once, with its
 * attempts, throttles and attempt history reset; the seen set holds those
 * URLs only (what was only seen may be found again); the started counter,
 * outcomes, the record log and dropped entries start over; the crawl is no
 * longer finished. History stays. One script, so a crash leaves either pass:
 * it reads every completed URL, so Redis answers nothing else meanwhile
 * (about a second per few hundred thousand pages).
 */
const NEW_PASS = `
local m = P .. 'meta'
local pass = tonumber(redis.call('HGET', m, 'pass') or '1')
if pass ~= tonumber(ARGV[2]) then return view({ tostring(pass) }) end
if (tonumber(redis.call('HGET', P .. 'n', 'leased')) or 0) > 0 then return view({ '-1' }) end
-- What is queued or delayed keeps its place (and its parent reference).
local moved = {}
for _, host in ipairs(redis.call('SMEMBERS', P .. 'work')) do
  for _, e in ipairs(redis.call('LRANGE', qkey(host), 0, -1)) do
    moved[#moved + 1] = host
    moved[#moved + 1] = e
  end
  redis.call('DEL', qkey(host))
end
redis.call('DEL', P .. 'work')
for _, member in ipairs(redis.call('ZRANGE', P .. 'delayed', 0, -1)) do
  local host, e = split(member)
  moved[#moved + 1] = host
  moved[#moved + 1] = e
end
redis.call('DEL', P .. 'delayed')
for i = 0, 65535 do redis.call('DEL', P .. 's:' .. string.format('%04x', i)) end
local queued = 0
local function requeue(host, e)
  local stored, short = fresh_entry(e)
  local url = short
  if string.sub(short, 1, 1) == '/' then url = 'https://' .. host .. short
  elseif string.sub(short, 1, 1) == '*' then url = 'http://' .. host .. string.sub(short, 2) end
  if not mark_seen(url) then return false end
  redis.call('RPUSH', qkey(host), stored)
  redis.call('SADD', P .. 'work', host)
  queued = queued + 1
  return true
end
for i = 1, #moved, 2 do
  if not requeue(moved[i], moved[i + 1]) then unref(moved[i + 1]) end
end
-- Completed URLs, shallowest first (the order a crawl finds them in).
local byDepth, depths = {}, {}
local cursor = '0'
repeat
  local r = redis.call('HSCAN', P .. 'pages', cursor, 'COUNT', 1000)
  cursor = r[1]
  for i = 2, #r[2], 2 do
    local f = page_fields(r[2][i])
    if f[2] ~= '' then
      local d = tonumber(string.match(f[2], '^(%d+)')) or 0
      if not byDepth[d] then byDepth[d] = {}; depths[#depths + 1] = d end
      local list = byDepth[d]
      list[#list + 1] = f[1]
      list[#list + 1] = f[2]
    end
  end
until cursor == '0'
table.sort(depths)
for _, d in ipairs(depths) do
  local list = byDepth[d]
  for i = 1, #list, 2 do
    -- The queued copy names the parent too.
    if requeue(list[i], list[i + 1]) then
      local tag = tag_of(list[i + 1])
      if tag ~= '' then redis.call('HINCRBY', P .. 'pref', tag, 1) end
    end
  end
end
redis.call('HSET', P .. 'n', 'queued', queued, 'delayed', 0, 'seen', queued)
redis.call('HSET', P .. 'counters', 'started', 0)
redis.call('DEL', P .. 'outcomes', P .. 'recent', P .. 'records', P .. 'dropped')
redis.call('HDEL', m, 'finished', 'finished_at')
redis.call('HSET', m, 'pass', pass + 1, 'pass_started_at', fmt(redis_now()))
return view({ tostring(pass + 1) })
`;

/**
 * STATUS(P) → VIEW, then the meta (fingerprint, created, finished,
 * finished_at, Redis now), then counted groups, each a count followed by its
 * items: seeds; hosts with work (host, queue length); lease owners (owner,
 * leases, how many of them are past their expiry); host records (host, pause, factor, givenup); robots records
 * (origin, JSON); outcomes (outcome, count); the number of URLs completed in the
 * last minute; the pass, when it began ('' for the first) and how many pages are kept. Read-only but for trimming the recent-completions log.
 */
const STATUS = `
local m = P .. 'meta'
local now = redis_now()
local out = { redis.call('HGET', m, 'fingerprint') or '', redis.call('HGET', m, 'created') or '', redis.call('HGET', m, 'finished') or '0', redis.call('HGET', m, 'finished_at') or '', fmt(now) }
local function group(items)
  out[#out + 1] = #items
  for i = 1, #items do out[#out + 1] = items[i] end
end
group(redis.call('LRANGE', P .. 'seeds', 0, -1))
local work = {}
for _, host in ipairs(redis.call('SMEMBERS', P .. 'work')) do
  work[#work + 1] = host
  work[#work + 1] = redis.call('LLEN', qkey(host))
end
group(work)
local owners, counts, expired = {}, {}, {}
local leases = redis.call('HGETALL', P .. 'leases')
-- Slots (SLOT: a robots.txt or browser request under way) are no URL: not counted as leases.
local slot = {}
for i = 1, #leases, 2 do
  if string.sub(leases[i], -2) == ':e' and leases[i + 1] == '' then slot[string.sub(leases[i], 1, -3)] = true end
end
for i = 1, #leases, 2 do
  if string.sub(leases[i], -2) == ':o' and not slot[string.sub(leases[i], 1, -3)] then
    local o = leases[i + 1]
    if not counts[o] then counts[o] = 0; expired[o] = 0; owners[#owners + 1] = o end
    counts[o] = counts[o] + 1
    local until_ = redis.call('ZSCORE', P .. 'lexp', string.sub(leases[i], 1, -3))
    if not until_ or tonumber(until_) <= now then expired[o] = expired[o] + 1 end
  end
end
local flat = {}
for _, o in ipairs(owners) do flat[#flat + 1] = o; flat[#flat + 1] = counts[o]; flat[#flat + 1] = expired[o] end
group(flat)
local hosts = {}
for _, host in ipairs(redis.call('SMEMBERS', P .. 'hosts')) do
  local v = redis.call('HMGET', P .. 'h:' .. host, 'pause', 'factor', 'givenup')
  hosts[#hosts + 1] = host
  hosts[#hosts + 1] = v[1] or ''
  hosts[#hosts + 1] = v[2] or '1'
  hosts[#hosts + 1] = v[3] or '0'
end
group(hosts)
group(redis.call('HGETALL', P .. 'robots'))
group(redis.call('HGETALL', P .. 'outcomes'))
redis.call('ZREMRANGEBYSCORE', P .. 'recent', '-inf', now - 60000)
out[#out + 1] = redis.call('ZCARD', P .. 'recent')
out[#out + 1] = redis.call('HGET', m, 'pass') or '1'
out[#out + 1] = redis.call('HGET', m, 'pass_started_at') or ''
out[#out + 1] = redis.call('HLEN', P .. 'pages')
return view(out)
`;

/**
 * RELEASE(P, id, owner, HEAD, PARENT, TAIL, due or '', start or '' or '-',
 * started to add or '') → VIEW,
 * held 1 | lost 0, host, its queue length. Back to the head of the host's
 * queue, or delayed. `start` as for COMPLETE.
 */
const RELEASE = `
local id = ARGV[2]
add_started(ARGV[9])
local lease = redis.call('HMGET', P .. 'leases', id .. ':o', id .. ':k', id .. ':e', id .. ':f', id .. ':w', id .. ':t')
if lease[1] ~= ARGV[3] then return view({ 0 }) end
local host = lease[2]
local entry = stored_entry(ARGV[4], ARGV[5], ARGV[6])
unref(lease[3])
end_lease(id, host, ARGV[8], lease[4], { lease[5], lease[6] })
if ARGV[10] == '1' then end_spend(id) end
if ARGV[7] == '' then
  requeue_head(host, entry)
else
  redis.call('ZADD', P .. 'delayed', ARGV[7], host .. '\\n' .. entry)
  bump('delayed', 1)
end
return view({ 1, host, redis.call('LLEN', qkey(host)) })
`;

/**
 * PROMOTE(P, now) → VIEW, n, n hosts (one per entry, in due order), then
 * host, queue length pairs. Due entries go to the heads of their queues in
 * due order, so the latest due ends up first (as the memory store does).
 */
const PROMOTE = `
local due = redis.call('ZRANGEBYSCORE', P .. 'delayed', '-inf', ARGV[2])
local out = { #due }
local touched = {}
for _, member in ipairs(due) do
  local host, entry = split(member)
  redis.call('LPUSH', qkey(host), entry)
  redis.call('SADD', P .. 'work', host)
  out[#out + 1] = host
  touched[host] = true
end
if #due > 0 then
  redis.call('ZREMRANGEBYSCORE', P .. 'delayed', '-inf', ARGV[2])
  bump('delayed', -#due)
  bump('queued', #due)
end
for host in pairs(touched) do
  out[#out + 1] = host
  out[#out + 1] = redis.call('LLEN', qkey(host))
end
return view(out)
`;

/** DRAIN(P, host or '' for all) → VIEW, then every entry removed, as entry, PARENT, host triples (queued first, then delayed). Leases stay. */
const DRAIN = `
local only = ARGV[2]
local out = {}
local hosts = only == '' and redis.call('SMEMBERS', P .. 'work') or { only }
local queued = 0
for _, host in ipairs(hosts) do
  local entries = redis.call('LRANGE', qkey(host), 0, -1)
  for i = 1, #entries do
    push_entry(out, entries[i], host)
    unref(entries[i])
  end
  queued = queued + #entries
  redis.call('DEL', qkey(host))
  redis.call('SREM', P .. 'work', host)
end
bump('queued', -queued)
local delayed = 0
for _, member in ipairs(redis.call('ZRANGE', P .. 'delayed', 0, -1)) do
  local host, entry = split(member)
  if only == '' or host == only then
    push_entry(out, entry, host)
    unref(entry)
    redis.call('ZREM', P .. 'delayed', member)
    delayed = delayed + 1
  end
end
bump('delayed', -delayed)
return view(out)
`;

/**
 * CLEAR(P, host or '' for all) → VIEW, n, then n host, count pairs, then the
 * entries of depth 0 (entry, PARENT, host triples). Removes what DRAIN would, but sends back counts (per
 * host, depth-0 entries not counted) and only the depth-0 entries (seeds and
 * where they redirect), read in slices so no reply grows with the queue.
 */
const CLEAR = `
local only = ARGV[2]
local counts, zero = {}, {}
local hosts = only == '' and redis.call('SMEMBERS', P .. 'work') or { only }
local queued = 0
for _, host in ipairs(hosts) do
  local q = qkey(host)
  local n = redis.call('LLEN', q)
  local kept = 0
  for from = 0, n - 1, 1000 do
    for _, entry in ipairs(redis.call('LRANGE', q, from, from + 999)) do
      if is_zero(entry) then
        push_entry(zero, entry, host)
        kept = kept + 1
      end
      unref(entry)
    end
  end
  if n > kept then counts[host] = (counts[host] or 0) + n - kept end
  queued = queued + n
  redis.call('DEL', q)
  redis.call('SREM', P .. 'work', host)
end
bump('queued', -queued)
local delayed = 0
for _, member in ipairs(redis.call('ZRANGE', P .. 'delayed', 0, -1)) do
  local host, entry = split(member)
  if only == '' or host == only then
    if is_zero(entry) then
      push_entry(zero, entry, host)
    else
      counts[host] = (counts[host] or 0) + 1
    end
    unref(entry)
    redis.call('ZREM', P .. 'delayed', member)
    delayed = delayed + 1
  end
end
bump('delayed', -delayed)
local pairs_out = {}
for host, n in pairs(counts) do
  pairs_out[#pairs_out + 1] = host
  pairs_out[#pairs_out + 1] = n
end
local out = { #pairs_out / 2 }
for i = 1, #pairs_out do out[#out + 1] = pairs_out[i] end
for i = 1, #zero do out[#out + 1] = zero[i] end
return view(out)
`;

/**
 * REAP(P, limit) → VIEW, now, number given back. Leases past their expiry
 * (their worker died, or stopped renewing) go back to the heads of their
 * queues, and their hosts' in-flight counts drop.
 */
const REAP = `
local now = redis_now()
local ids = redis.call('ZRANGEBYSCORE', P .. 'lexp', '-inf', fmt(now), 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do
  end_spend(id)
  local f = redis.call('HMGET', P .. 'leases', id .. ':k', id .. ':e', id .. ':f', id .. ':w', id .. ':t')
  -- Nobody knows whether a dead worker wrote its request, nor when: a start it never reported is logged
  -- in the host's windows now, after any write it can have made.
  if f[1] and not f[5] then log_start(id, f[1], fmt(now), { f[4], nil }) end
  if f[2] == '' then
    -- A slot (SLOT): no URL to give back, and not in the leased total.
    end_start(id, f[1])
  elseif f[1] then
    end_lease(id, f[1], nil, f[3])
    requeue_head(f[1], f[2])
  else
    redis.call('ZREM', P .. 'lexp', id)
  end
end
return view({ fmt(now), #ids })
`;

/** RENEW(P, owner, leaseMs, id...) → VIEW, now, then the ids no longer this owner's. */
const RENEW = `
local now = redis_now()
local out = { fmt(now) }
local expiry = fmt(now + tonumber(ARGV[3]))
for i = 4, #ARGV do
  if redis.call('HGET', P .. 'leases', ARGV[i] .. ':o') == ARGV[2] then
    redis.call('ZADD', P .. 'lexp', 'XX', expiry, ARGV[i])
  else
    out[#out + 1] = ARGV[i]
  end
end
return view(out)
`;

/**
 * SAVE_HOST(P, then per host: host, saved JSON, saver's offset, pause until
 * or '', n, then n field, value pairs) → VIEW. Several hosts in one call: a
 * worker writes every host saved since its last write at once. The pause
 * (Redis time) only ever moves later; the other fields (rate factor,
 * Crawl-delay, RateLimit pace, given-up, failures) are the saver's changes.
 * The last start is no save's: claims, slots and STARTED keep it.
 */
const SAVE_HOST = `
local i = 2
while i <= #ARGV do
  local host = ARGV[i]
  local h = P .. 'h:' .. host
  redis.call('HSET', h, 'saved', ARGV[i + 1], 'off', ARGV[i + 2])
  local pause = tonumber(ARGV[i + 3])
  if pause and pause > (tonumber(redis.call('HGET', h, 'pause')) or -math.huge) then redis.call('HSET', h, 'pause', ARGV[i + 3]) end
  local n = tonumber(ARGV[i + 4])
  for k = i + 5, i + 3 + 2 * n, 2 do redis.call('HSET', h, ARGV[k], ARGV[k + 1]) end
  redis.call('SADD', P .. 'hosts', host)
  i = i + 5 + 2 * n
end
return view({})
`;

/** LOAD_HOSTS(P) → host, saved JSON, saver's offset, for every saved host. */
const LOAD_HOSTS = `
local out = {}
for _, host in ipairs(redis.call('SMEMBERS', P .. 'hosts')) do
  local f = redis.call('HMGET', P .. 'h:' .. host, 'saved', 'off')
  if f[1] then
    out[#out + 1] = host
    out[#out + 1] = f[1]
    out[#out + 1] = f[2] or '0'
  end
end
return out
`;

/**
 * STARTED(P, lease id, host, start, windows, [lease id, host, start,
 * windows]...) → VIEW. Each lease's request was written to its socket no
 * later than its `start` (Redis time): its host's last start moves there if
 * later, the start enters the host's window logs (windows: '1' when its host
 * has windows, '' to skip the look-up), and the host's next claim is no
 * longer held back. One call carries every start a worker made while its
 * previous call was on its way.
 */
const STARTED = `
for i = 2, #ARGV - 3, 4 do
  local win = nil
  if ARGV[i + 3] == '1' then win = redis.call('HMGET', P .. 'leases', ARGV[i] .. ':w', ARGV[i] .. ':t') end
  started(ARGV[i], ARGV[i + 1], ARGV[i + 2], win)
end
return view({})
`;

/** COUNTER(P, name, by) → VIEW, the new value. */
const COUNTER = `
local v = redis.call('HINCRBY', P .. 'counters', ARGV[2], tonumber(ARGV[3]))
return view({ v })
`;

/**
 * SPEND_RESERVE(P, id, owner, currency, micros, limit) → 1 when the lease now
 * holds `micros` of `currency` reserved (spent + every lease's reservations
 * + it ≤ limit), 0 when that would pass the limit or the lease is not the
 * owner's. One script: two workers never both take the budget's last cent.
 */
const SPEND_RESERVE = `
local id, c = ARGV[2], ARGV[4]
if redis.call('HGET', P .. 'leases', id .. ':o') ~= ARGV[3] then return 0 end
end_spend(id)
local v = redis.call('HMGET', P .. 'spend', 's:' .. c, 'r:' .. c)
if (tonumber(v[1]) or 0) + (tonumber(v[2]) or 0) + tonumber(ARGV[5]) > tonumber(ARGV[6]) then return 0 end
redis.call('HINCRBY', P .. 'spend', 'r:' .. c, ARGV[5])
redis.call('HSET', P .. 'leases', id .. ':$', c .. ' ' .. ARGV[5])
return 1
`;

/** SPEND_GET(P) → the P spend hash, field, value, … */
const SPEND_GET = `
return redis.call('HGETALL', P .. 'spend')
`;

/**
 * FINISH(P) → VIEW, 1 if marked finished, 0 if another worker still has
 * work queued, delayed or leased (the crawl is not over for everyone).
 */
const FINISH = `
local c = redis.call('HMGET', P .. 'n', 'queued', 'delayed', 'leased')
if (tonumber(c[1]) or 0) + (tonumber(c[2]) or 0) + (tonumber(c[3]) or 0) > 0 then return view({ 0 }) end
redis.call('HSET', P .. 'meta', 'finished', '1', 'finished_at', fmt(redis_now()))
return view({ 1 })
`;

/*
 * robots.txt: scripts rather than plain commands only for the gen check, so
 * a worker of a crawl that is gone neither reads "no record" (and fetches
 * the file again) nor writes into the emptied crawl.
 */
/** ROBOTS_GET(P, origin) → the RobotsRecord JSON, or '' for none. */
const ROBOTS_GET = `
return redis.call('HGET', P .. 'robots', ARGV[2]) or ''
`;
/** ROBOTS_LOCK(P, origin, owner, ttl ms) → 1 if this worker may fetch the origin's robots.txt, else 0. */
const ROBOTS_LOCK = `
return redis.call('SET', P .. 'rlock:' .. ARGV[2], ARGV[3], 'NX', 'PX', ARGV[4]) and 1 or 0
`;
/** ROBOTS_PUT(P, origin, JSON) → 1. The record is what the waiting workers wanted: the fetch right ends with it. */
const ROBOTS_PUT = `
redis.call('HSET', P .. 'robots', ARGV[2], ARGV[3])
redis.call('DEL', P .. 'rlock:' .. ARGV[2])
return 1
`;

/**
 * A completed page waits for its revisit: a delayed entry of its host, its
 * attempts reset (fresh_entry), due at `due` (the worker's clock, as any
 * delayed entry), and the page marked waiting. Answers whether it did.
 */
const REVISIT_PRELUDE = `
local function revisit(key, f, due)
  local stored = fresh_entry(f[2])
  redis.call('ZADD', P .. 'delayed', fmt(due), f[1] .. '\\n' .. stored)
  local tag = tag_of(stored)
  if tag ~= '' then redis.call('HINCRBY', P .. 'pref', tag, 1) end
  f[8] = 'w'
  put_page(key, f)
  bump('delayed', 1)
end
`;

/** REVISIT_AT(P, page key, due) → VIEW, 1 if the completed page now waits for its revisit, 0 if it is not completed or waits already. */
const REVISIT_AT = `${REVISIT_PRELUDE}
local value = redis.call('HGET', P .. 'pages', ARGV[2])
if not value then return view({ 0 }) end
local f = page_fields(value)
if f[2] == '' or f[8] == 'w' then return view({ 0 }) end
revisit(ARGV[2], f, tonumber(ARGV[3]))
return view({ 1 })
`;

/**
 * REVISIT_ALL(P, default ms, wall to crawl ms) → VIEW, how many. Every
 * completed page with history that waits for nothing is due at its fetch
 * time plus its interval (or the default), moved onto the crawl's clock;
 * the crawl is no longer finished if any is. Reads every completed page.
 */
const REVISIT_ALL = `${REVISIT_PRELUDE}
local n = 0
local cursor = '0'
repeat
  local r = redis.call('HSCAN', P .. 'pages', cursor, 'COUNT', 1000)
  cursor = r[1]
  for i = 1, #r[2], 2 do
    local f = page_fields(r[2][i + 1])
    if f[2] ~= '' and f[3] ~= '' and f[8] ~= 'w' then
      local head = {}
      for x in string.gmatch(f[3], '%S+') do head[#head + 1] = tonumber(x) end
      local every = head[3] and head[3] * 1000 or tonumber(ARGV[2])
      revisit(r[2][i], f, head[2] * 1000 + every + tonumber(ARGV[3]))
      n = n + 1
    end
  end
until cursor == '0'
if n > 0 then redis.call('HDEL', P .. 'meta', 'finished', 'finished_at') end
return view({ n })
`;

export const SCRIPTS = {
  robotsGet: ROBOTS_GET,
  robotsLock: ROBOTS_LOCK,
  robotsPut: ROBOTS_PUT,
  open: OPEN,
  peek: PEEK,
  queues: QUEUES,
  add: ADD,
  claim: CLAIM,
  slot: SLOT,
  slotEnd: SLOT_END,
  handOff: HAND_OFF,
  complete: COMPLETE,
  histPut: HIST_PUT,
  histGet: HIST_GET,
  histLinks: HIST_LINKS,
  newPass: NEW_PASS,
  revisitAt: REVISIT_AT,
  revisitAll: REVISIT_ALL,
  release: RELEASE,
  promote: PROMOTE,
  drain: DRAIN,
  clear: CLEAR,
  reap: REAP,
  renew: RENEW,
  saveHost: SAVE_HOST,
  loadHosts: LOAD_HOSTS,
  counter: COUNTER,
  spendReserve: SPEND_RESERVE,
  spendGet: SPEND_GET,
  finish: FINISH,
  started: STARTED,
  status: STATUS,
} as const;

export type ScriptName = keyof typeof SCRIPTS;

/**
 * The prelude cut into its head (P and the gen check, which every script
 * runs) and its helpers in order, each with the comment lines above it.
 */
function preludeParts(prelude: string): { head: string; helpers: Array<{ name: string; text: string; called: RegExp }> } {
  const head: string[] = [];
  const helpers: Array<{ name: string; lines: string[] }> = [];
  let comments: string[] = [];
  for (const line of prelude.split('\n')) {
    const helper = /^local function (\w+)/.exec(line);
    if (helper) {
      helpers.push({ name: helper[1], lines: [...comments, line] });
      comments = [];
    } else if (helpers.length > 0 && line.startsWith('--')) comments.push(line);
    else (helpers.length === 0 ? head : helpers[helpers.length - 1].lines).push(line);
  }
  return {
    head: head.join('\n'),
    helpers: helpers.map((h) => ({ name: h.name, text: h.lines.join('\n'), called: new RegExp(`\\b${h.name}\\(`) })),
  };
}

/** PRELUDE's parts, cut at the first scriptSource. */
let prelude: ReturnType<typeof preludeParts> | undefined;

/**
 * The script as sent to Redis: the prelude's head, the helpers its body
 * uses (and the ones those use), then its body. Redis makes a closure of
 * every helper a script defines, at every call: all of them cost a call
 * 3 µs, against 1 µs for an empty script.
 */
export function scriptSource(name: ScriptName): string {
  const parts = (prelude ??= preludeParts(PRELUDE));
  const body = SCRIPTS[name];
  const used = new Set<string>();
  for (let grew = true; grew;) {
    grew = false;
    const text = [body, ...parts.helpers.filter((h) => used.has(h.name)).map((h) => h.text)].join('\n');
    for (const h of parts.helpers) {
      if (!used.has(h.name) && h.called.test(text)) {
        used.add(h.name);
        grew = true;
      }
    }
  }
  return [parts.head, ...parts.helpers.filter((h) => used.has(h.name)).map((h) => h.text), body].join('\n');
}

/**
 * Scripts that run before a worker knows its crawl's gen (or only read): sent without it. OPEN is sent
 * with it when PEEK found the crawl first: one that vanished in between is lost, not created anew.
 */
export const UNGUARDED: ReadonlySet<ScriptName> = new Set<ScriptName>(['peek', 'status']);

/** The error a guarded script answers when the crawl's marker is gone or another gen's. */
export const STATE_LOST_REPLY = 'CRAWL_STATE_LOST';

/** How many leading elements of most answers are the VIEW. */
export const VIEW_LENGTH = 6;
