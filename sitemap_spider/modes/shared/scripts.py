"""The Lua scripts of a shared crawl (:mod:`sitemap_spider.modes.shared`), registered by name.

Each script is one atomic step on the keys of :class:`~sitemap_spider.modes.shared.crawl.CrawlKeys`;
the KEYS and ARGV it takes are listed above it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import redis
    from redis.commands.core import Script

# Scripts read the server's clock: workers on several hosts compare one time.
_NOW = "local t = redis.call('TIME') local now = tonumber(t[1]) + tonumber(t[2]) / 1000000\n"

# KEYS: meta, workers, ended, then the data keys; ARGV: worker, resume, lease seconds, start URLs.
_JOIN = _NOW + """
local status = redis.call('HGET', KEYS[1], 'status')
local unfinished = status == 'running' or status == 'ending'
local live = redis.call('ZCOUNT', KEYS[2], now - tonumber(ARGV[3]), '+inf')
local role
if unfinished and live > 0 then
  role = 'joined'
elseif unfinished and ARGV[2] == '1' then
  redis.call('HSET', KEYS[1], 'status', 'running')
  redis.call('HDEL', KEYS[1], 'publisher')
  redis.call('UNLINK', KEYS[3])
  role = 'resumed'
else
  for i = 2, #KEYS do redis.call('UNLINK', KEYS[i]) end
  redis.call('DEL', KEYS[1])
  -- Until the start URLs are queued, an empty queue does not mean the crawl is over.
  redis.call('HSET', KEYS[1], 'status', 'running', 'start_urls', ARGV[4], 'seeding', ARGV[1])
  role = 'started'
end
redis.call('ZADD', KEYS[2], now, ARGV[1])
redis.call('HSET', KEYS[1], 'last_active', now)
return role
"""

# KEYS: requests, leases, lease_seq, meta; ARGV: worker. -> {lease, request} or nil
_TAKE = _NOW + """
local item = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #item == 0 then return false end
redis.call('ZREM', KEYS[1], item[1])
local lease = ARGV[1] .. ':' .. redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[2], lease, item[2] .. ' ' .. item[1])
redis.call('HSET', KEYS[4], 'last_active', now)
return {lease, item[1]}
"""

# KEYS: seen, requests, leases, meta
# ARGV: fingerprint ('' = unfiltered), score, request, lease it ends ('' = none)
_PUSH = _NOW + """
local stored = 1
if ARGV[1] ~= '' then stored = redis.call('SADD', KEYS[1], ARGV[1]) end
if stored == 1 then redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3]) end
if ARGV[4] ~= '' then redis.call('HDEL', KEYS[3], ARGV[4]) end
redis.call('HSET', KEYS[4], 'last_active', now)
return stored
"""

# KEYS: leases, meta; ARGV: lease
_DONE = _NOW + """
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], 'last_active', now)
"""

# KEYS: workers, leases, requests; ARGV: lease seconds, owner ('' = every owner not alive). -> leases put back
_REQUEUE = _NOW + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - tonumber(ARGV[1])))
local live = {}
for _, w in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do live[w] = true end
local all = redis.call('HGETALL', KEYS[2])
local moved = 0
for i = 1, #all, 2 do
  local owner = string.match(all[i], '^(.*):%d+$')
  if (ARGV[2] == '' and not live[owner]) or owner == ARGV[2] then
    local value = all[i + 1]
    local space = string.find(value, ' ', 1, true)
    redis.call('ZADD', KEYS[3], string.sub(value, 1, space - 1), string.sub(value, space + 1))
    redis.call('HDEL', KEYS[2], all[i])
    moved = moved + 1
  end
end
return moved
"""

# KEYS: meta, workers, ended, requests, leases; ARGV: worker, idle seconds, lease seconds
# -> {outcome, publisher}
_END = _NOW + """
local status = redis.call('HGET', KEYS[1], 'status')
if status == 'running' then
  local seeder = redis.call('HGET', KEYS[1], 'seeding')
  if seeder and tonumber(redis.call('ZSCORE', KEYS[2], seeder) or '0') >= now - tonumber(ARGV[3]) then
    return {'wait'}
  end
  if redis.call('ZCARD', KEYS[4]) > 0 or redis.call('HLEN', KEYS[5]) > 0 then return {'busy'} end
  local last = tonumber(redis.call('HGET', KEYS[1], 'last_active') or '0')
  if now - last < tonumber(ARGV[2]) then return {'wait'} end
  redis.call('HSET', KEYS[1], 'status', 'ending')
elseif status == 'finished' then
  return {'leave', redis.call('HGET', KEYS[1], 'publisher')}
elseif status ~= 'ending' then
  return {'gone'}
end
redis.call('SADD', KEYS[3], ARGV[1])
local publisher = redis.call('HGET', KEYS[1], 'publisher')
if publisher then return {'leave', publisher} end
for _, w in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], now - tonumber(ARGV[3]), '+inf')) do
  if redis.call('SISMEMBER', KEYS[3], w) == 0 then return {'wait'} end
end
redis.call('HSET', KEYS[1], 'publisher', ARGV[1])
return {'publish', ARGV[1]}
"""

# KEYS: workers, meta; ARGV: worker -> the crawl's status (nil: Redis lost the crawl's data)
_HEARTBEAT = _NOW + "redis.call('ZADD', KEYS[1], now, ARGV[1]) return redis.call('HGET', KEYS[2], 'status')"

# KEYS: exclusions, excluded (the counts by reason); ARGV: the exclusion's field, its detail, its
# reason. One step: sent again after a lost reply, it finds the field there and counts nothing.
_EXCLUDE = """
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then redis.call('HINCRBY', KEYS[2], ARGV[3], 1) end
"""

_SCRIPTS = {
    "join": _JOIN, "take": _TAKE, "push": _PUSH, "done": _DONE,
    "requeue": _REQUEUE, "end": _END, "heartbeat": _HEARTBEAT, "exclude": _EXCLUDE,
}  # fmt: skip


def register_scripts(client: redis.Redis) -> dict[str, Script]:
    """Every script registered with ``client``, by its name in _SCRIPTS."""
    return {name: client.register_script(source) for name, source in _SCRIPTS.items()}
