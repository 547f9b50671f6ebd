package hpack

import "errors"

// huffLengths holds the bit length of the Huffman code of each symbol:
// the 256 byte values, then EOS (256). The data is RFC 7541 Appendix B's.
// The code is canonical (codes of one length are consecutive, in symbol
// order, and shorter codes come first), so the lengths define it; see
// newHuffman.
var huffLengths = [257]uint8{
	13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
	28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
	6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,
	5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
	13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
	7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
	15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,
	6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
	20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
	24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
	22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
	21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
	26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
	19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
	20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
	26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
	30,
}

const (
	eos        = 256
	minHuffLen = 5
	maxHuffLen = 30
)

// huffman is the code of huffLengths, for encoding and for canonical
// decoding.
type huffman struct {
	code [257]uint32 // each symbol's code, right-aligned
	// For decoding, by code length L: limit[L] is one past the last code
	// of length L, left-aligned in 32 bits (0 when L has no codes and no
	// longer length has either); first[L] is the first code of length L;
	// base[L] is where the symbols of length L start in syms.
	limit [maxHuffLen + 1]uint64
	first [maxHuffLen + 1]uint32
	base  [maxHuffLen + 1]int
	syms  [257]uint16 // the symbols by code length, then value
}

// huff is the code, built once; it is never changed after.
var huff = newHuffman()

// newHuffman assigns the canonical codes of huffLengths.
func newHuffman() *huffman {
	h := &huffman{}
	var count [maxHuffLen + 1]int
	for _, l := range huffLengths {
		count[l]++
	}
	n, code := 0, uint32(0)
	for l := minHuffLen; l <= maxHuffLen; l++ {
		h.first[l], h.base[l] = code, n
		for s, sl := range huffLengths {
			if int(sl) == l {
				h.code[s] = code
				h.syms[n] = uint16(s)
				code++
				n++
			}
		}
		h.limit[l] = uint64(code) << (32 - l)
		code <<= 1
	}
	return h
}

// huffmanLen returns the length of s Huffman-coded, in bytes.
func huffmanLen(s string) int {
	bits := 0
	for i := 0; i < len(s); i++ {
		bits += int(huffLengths[s[i]])
	}
	return (bits + 7) / 8
}

// appendHuffman appends s Huffman-coded, padded with the most
// significant bits of EOS (ones).
func appendHuffman(b []byte, s string) []byte {
	var acc uint64 // pending bits, right-aligned
	n := 0         // how many
	for i := 0; i < len(s); i++ {
		l := int(huffLengths[s[i]])
		acc = acc<<l | uint64(huff.code[s[i]])
		n += l
		for n >= 8 {
			n -= 8
			b = append(b, byte(acc>>n))
		}
	}
	if n > 0 {
		b = append(b, byte(acc<<(8-n))|byte(0xff>>n))
	}
	return b
}

var (
	errHuffmanEOS     = errors.New("hpack: Huffman-coded string holds EOS")
	errHuffmanPadding = errors.New("hpack: Huffman-coded string padded with more than 7 bits or with bits that are not EOS's")
)

// appendUnhuffman appends the Huffman-coded string p decoded.
func appendUnhuffman(b, p []byte) ([]byte, error) {
	var acc uint64 // pending bits, right-aligned
	n := 0         // how many
	for i := 0; ; {
		for n <= 56 && i < len(p) {
			acc = acc<<8 | uint64(p[i])
			n += 8
			i++
		}
		if n < minHuffLen {
			break
		}
		// The next 32 bits, left-aligned (zeros past the end).
		var w uint64
		if n >= 32 {
			w = acc >> (n - 32) & 0xffffffff
		} else {
			w = acc << (32 - n) & 0xffffffff
		}
		l := minHuffLen
		for l <= maxHuffLen && w >= huff.limit[l] {
			l++
		}
		if l > n {
			break // the rest is padding, or a truncated code
		}
		if l > maxHuffLen {
			return b, errHuffmanEOS // only EOS's prefix is this long
		}
		s := huff.syms[huff.base[l]+int(uint32(w>>(32-l))-huff.first[l])]
		if s == eos {
			return b, errHuffmanEOS
		}
		b = append(b, byte(s))
		n -= l
	}
	// What is left must be at most 7 bits, all ones (EOS's first bits).
	if n > 7 || acc&(1<<n-1) != 1<<n-1 {
		return b, errHuffmanPadding
	}
	return b, nil
}
