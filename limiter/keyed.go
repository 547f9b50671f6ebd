package limiter

import (
	"hash/maphash"
	"math"
	"math/bits"
	"strings"
	"sync"
	"time"
)

// KeyedOptions configures a [Keyed] limiter. The zero value means the
// defaults given per field; the zero Rate admits nothing (see the package
// doc), so a useful KeyedOptions always sets Rate.
type KeyedOptions struct {
	// Rate and Burst are the bucket of every key.
	Rate  float64
	Burst int
	// MaxKeys bounds the table; 0 means 65536. When the table is full a
	// new key evicts an old one (see [Keyed]).
	MaxKeys int
	// Shards is the number of independently locked parts of the table,
	// rounded up to a power of two and lowered so that each holds at least
	// one key; 0 means 16.
	Shards int
}

// Keyed is a token bucket per key: per client IP (see [ClientIP]) or per
// calling app. Its table holds at most MaxKeys keys, split into shards that
// each lock on their own.
//
// When a shard is full, a new key replaces a bucket that has refilled to
// full if one of the next few slots holds one (a full bucket is the same
// as a new one, so dropping it loses nothing), and otherwise one chosen by
// the CLOCK algorithm (an approximation of least recently used). Only when no
// full bucket is found is a partly drained one dropped (its key starts
// afresh with a full bucket if it returns) — the price of a bounded table
// under a flood of more than MaxKeys active keys. A key seen once is evicted
// before keys seen again, so a scan of one-off keys does not push out the
// regular callers.
//
// Cost: an existing key takes a shard lock and one map lookup, with no
// allocation. A new key also copies the key string (one allocation) and
// occasionally grows the shard's map until it reaches its bound.
//
// Keyed is safe for concurrent use. The zero Keyed is not usable; make one
// with [NewKeyed].
type Keyed struct {
	seed   maphash.Seed
	mask   uint64
	shards []keyedShard
}

// fullProbe is how many slots from the CLOCK hand a full shard looks at
// for a full bucket before evicting by CLOCK.
const fullProbe = 8

// keyedShard is one part of the table; pad keeps shards on separate cache
// lines.
type keyedShard struct {
	mu    sync.Mutex
	lim   limit
	index map[string]int32 // key -> position in slots
	slots []keyedSlot
	hand  int // CLOCK hand
	cap   int
	_     [64]byte
}

// keyedSlot is one key's bucket.
type keyedSlot struct {
	key string
	tat int64 // as in bucketState; math.MinInt64 means full
	ref bool  // seen again since the hand last passed
}

// NewKeyed returns an empty keyed limiter.
func NewKeyed(o KeyedOptions) *Keyed {
	maxKeys := o.MaxKeys
	if maxKeys <= 0 {
		maxKeys = 65536
	}
	shards := o.Shards
	if shards <= 0 {
		shards = 16
	}
	shards = min(shards, maxKeys, 1<<16)
	n := 1 << bits.Len(uint(shards-1)) // round up to a power of two
	if n > maxKeys {
		n >>= 1
	}
	k := &Keyed{seed: maphash.MakeSeed(), mask: uint64(n - 1), shards: make([]keyedShard, n)}
	lim := newLimit(o.Rate, o.Burst)
	for i := range k.shards {
		s := &k.shards[i]
		s.lim = lim
		s.cap = maxKeys / n
		s.index = make(map[string]int32)
	}
	return k
}

// Allow is AllowN(key, now, 1).
func (k *Keyed) Allow(key string, now time.Time) bool { return k.AllowN(key, now, 1) }

// AllowN reports whether n tokens can be taken at now from key's bucket,
// and takes them if so. n ≤ 0 is always allowed.
func (k *Keyed) AllowN(key string, now time.Time, n int) bool {
	if n <= 0 {
		return true
	}
	t := nanos(now)
	s := &k.shards[maphash.String(k.seed, key)&k.mask]
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.lim.mode {
	case modeUnlimited:
		return true
	case modeClosed:
		return false
	}
	if int64(n) > s.lim.n {
		return false
	}
	i, seen := s.index[key]
	if seen {
		s.slots[i].ref = true
	} else {
		i = s.insert(key, t)
	}
	sl := &s.slots[i]
	next, _, ok := s.lim.take(sl.tat, t, int64(n), 0)
	if ok {
		sl.tat = next
	}
	return ok
}

// insert adds key with a full bucket and returns its slot, evicting
// another key if the shard is full.
func (s *keyedShard) insert(key string, now int64) int32 {
	key = strings.Clone(key) // the caller's string may pin a larger buffer
	if len(s.slots) < s.cap {
		s.slots = append(s.slots, keyedSlot{key: key, tat: math.MinInt64})
		i := int32(len(s.slots) - 1)
		s.index[key] = i
		return i
	}
	// A full bucket is the same as a new one: drop one if the next few
	// slots hold one.
	for j := range min(fullProbe, len(s.slots)) {
		i := (s.hand + j) % len(s.slots)
		if s.slots[i].tat <= now {
			return s.replace(i, key)
		}
	}
	// CLOCK: drop the first slot not seen again since the hand last passed,
	// clearing seen bits on the way. Ends within two turns.
	for {
		i := s.hand
		s.hand++
		if s.hand == len(s.slots) {
			s.hand = 0
		}
		if !s.slots[i].ref {
			return s.replace(i, key)
		}
		s.slots[i].ref = false
	}
}

// replace gives slot i to key with a full bucket.
func (s *keyedShard) replace(i int, key string) int32 {
	delete(s.index, s.slots[i].key)
	s.slots[i] = keyedSlot{key: key, tat: math.MinInt64}
	s.index[key] = int32(i)
	return int32(i)
}

// SetLimit changes every key's rate and burst from now on, keeping each
// bucket's missing tokens as [Bucket.SetLimit] does. It takes each shard's
// lock in turn and visits every key: O(MaxKeys), meant for configuration
// changes, not per call. While it runs, keys in shards it has not reached
// yet are still decided under the old limit.
func (k *Keyed) SetLimit(rate float64, burst int, now time.Time) {
	lim := newLimit(rate, burst)
	t := nanos(now)
	for i := range k.shards {
		s := &k.shards[i]
		s.mu.Lock()
		for j := range s.slots {
			sl := &s.slots[j]
			sl.tat = lim.convert(&s.lim, sl.tat, t)
		}
		s.lim = lim
		s.mu.Unlock()
	}
}

// Limit returns the rate and burst as last given to NewKeyed or SetLimit.
func (k *Keyed) Limit() (rate float64, burst int) {
	s := &k.shards[0]
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lim.rate, s.lim.burst
}

// Len returns the number of keys in the table; it never exceeds MaxKeys.
func (k *Keyed) Len() int {
	n := 0
	for i := range k.shards {
		s := &k.shards[i]
		s.mu.Lock()
		n += len(s.slots)
		s.mu.Unlock()
	}
	return n
}

// Tokens returns how many tokens key's bucket holds at now; a key not in
// the table has a full bucket.
func (k *Keyed) Tokens(key string, now time.Time) float64 {
	s := &k.shards[maphash.String(k.seed, key)&k.mask]
	s.mu.Lock()
	defer s.mu.Unlock()
	tat := int64(math.MinInt64)
	if i, ok := s.index[key]; ok {
		tat = s.slots[i].tat
	}
	return s.lim.tokens(tat, nanos(now))
}
