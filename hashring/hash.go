package hashring

import "math/bits"

// Primes of xxHash64 (Yann Collet, https://github.com/Cyan4973/xxHash,
// doc/xxhash_spec.md) and the MurmurHash3 fmix64 constants (Austin
// Appleby, https://github.com/aappleby/smhasher).
const (
	prime1 = 0x9E3779B185EBCA87
	prime2 = 0xC2B2AE3D27D4EB4F
	prime3 = 0x165667B19E3779F9
	fmix1  = 0xff51afd7ed558ccd
	fmix2  = 0xc4ceb9fe1a85ec53
)

// Hash returns the 32-bit ring position of key, as Get uses it. It is a
// fast non-cryptographic hash: 8 bytes per xxHash64-style round, then the
// MurmurHash3 finalizer. It does not allocate and is stable across
// processes and releases of this package's major version.
func Hash(key []byte) uint32 { return hash(key) }

// HashString is Hash for a string key.
func HashString(key string) uint32 { return hash(key) }

func hash[T string | []byte](b T) uint32 {
	h := prime3 + uint64(len(b))*prime1
	for len(b) >= 8 {
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		h ^= bits.RotateLeft64(w*prime2, 31) * prime1
		h = bits.RotateLeft64(h, 27)*prime1 + prime2
		b = b[8:]
	}
	if len(b) > 0 {
		var w uint64
		for i := len(b) - 1; i >= 0; i-- {
			w = w<<8 | uint64(b[i])
		}
		h ^= bits.RotateLeft64(w*prime2, 31) * prime1
		h = bits.RotateLeft64(h, 27)*prime1 + prime2
	}
	h ^= h >> 33
	h *= fmix1
	h ^= h >> 33
	h *= fmix2
	h ^= h >> 33
	return uint32(h >> 32)
}
