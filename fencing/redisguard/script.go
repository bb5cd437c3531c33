package redisguard

import "github.com/redis/go-redis/v9"

// admitScript admits the token ARGV[1] for the fence KEYS[1] unless the
// fence holds a newer one, and then makes the protected write ARGV[2]
// ("set" KEYS[2] to ARGV[3], "hset" KEYS[2]'s fields ARGV[3], ARGV[4]...,
// or "admit": none). It returns {1} if it admitted the token, and {0,
// newest} if not.
//
// Tokens are decimal strings without leading zeros, compared as strings
// (the shorter is smaller; of equal length, the lexicographically
// smaller), never with tonumber: Lua numbers are doubles, exact only up to
// 2^53. The write comes before the raise, because a script's effects stay
// even if it fails: a write that fails (WRONGTYPE, say) raises nothing.
// HSET takes its fields in batches, well below Lua's limit on unpack.
// Keys and values travel only in KEYS and ARGV.
var admitScript = redis.NewScript(`
local token, newest = ARGV[1], redis.call('GET', KEYS[1])
if newest and (#newest > #token or (#newest == #token and newest > token)) then
	return {0, newest}
end
local op = ARGV[2]
if op == 'set' then
	redis.call('SET', KEYS[2], ARGV[3])
elseif op == 'hset' then
	for i = 3, #ARGV, 256 do
		redis.call('HSET', KEYS[2], unpack(ARGV, i, math.min(i + 255, #ARGV)))
	end
end
redis.call('SET', KEYS[1], token)
return {1}
`)
