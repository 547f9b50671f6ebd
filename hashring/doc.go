// Package hashring implements an immutable, ketama-style consistent-hash
// ring with allocation-free lookups, lookups of the next distinct nodes (for
// retries) and bounded-load lookups.
//
// # Ring points
//
// As in libketama, a node with key K gets its points from md5 digests of the
// strings "K-0", "K-1", ...; each 16-byte digest yields four 32-bit points
// (little-endian words 0..3). A node of weight w gets
// round(Replicas*w/WeightUnit) points, 160 per weight unit by default, so
// two rings built from the same set of nodes are identical whatever the
// order of the nodes, and adding or removing one node moves only the keys
// that land on that node's points (about 1/n of them).
//
// # Key hash
//
// Lookup keys are not hashed with md5, which is slow for a per-call hash.
// They use a 64-bit multiply-rotate hash that reads 8 bytes at a time (the
// round function and primes of xxHash64) followed by the MurmurHash3 64-bit
// finalizer, whose avalanche makes every output bit depend on every input
// bit; the top 32 bits are the key's position on the ring. See Hash.
//
// # Bounded loads
//
// GetBounded implements "Consistent Hashing with Bounded Loads" (Mirrokni,
// Thorup and Zadimoghaddam, 2016): a key goes to the first node clockwise
// whose load is below its capacity ceil(c*(total+1)*w/W), where total is
// the current load of all nodes, w the node's weight and W the sum of the
// weights; for equal weights that is ceil(c*(total+1)/n). With c >= 1 some
// node always has room, and no node ever exceeds its capacity.
//
// # Lookups
//
// A lookup hashes the key, finds the first point at or after the hash by
// binary search on the sorted points (narrowed first by a bucket index on
// the hash's top bits, so it touches a couple of cache lines), and returns
// the owner of that point, wrapping past the last point to the first. No
// lookup allocates.
//
// A Ring is built once with New and never changes; when membership or
// weights change the caller builds a new Ring and swaps it in.
package hashring
