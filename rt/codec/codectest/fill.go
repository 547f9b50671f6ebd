package codectest

import (
	"math"
	"math/rand/v2"
	"reflect"
	"time"
)

// Filler sets generated messages to random values that survive a round trip
// unchanged: empty lists, maps and non-optional bytes are nil (the encoder
// omits them, so they decode as nil), list and map elements are never nil
// messages, floats are never NaN. The zero value is ready to use with
// MaxDepth 2 and MaxLen 4; a Filler is not safe for concurrent use.
type Filler struct {
	Rand     *rand.Rand // source of randomness; nil means a fixed seed
	MaxDepth int        // nesting of messages; 0 means 2
	MaxLen   int        // elements of lists and maps; 0 means 4
}

var (
	timeType     = reflect.TypeFor[time.Time]()
	durationType = reflect.TypeFor[time.Duration]()
	bytesType    = reflect.TypeFor[[]byte]()
)

// Fill sets *msg, a pointer to a generated message struct, to a random
// value.
func (f *Filler) Fill(msg any) {
	if f.Rand == nil {
		f.Rand = rand.New(rand.NewPCG(1, 2))
	}
	v := reflect.ValueOf(msg).Elem()
	v.SetZero()
	f.fillStruct(v, 0)
}

func (f *Filler) maxDepth() int {
	if f.MaxDepth == 0 {
		return 2
	}
	return f.MaxDepth
}

func (f *Filler) maxLen() int {
	if f.MaxLen == 0 {
		return 4
	}
	return f.MaxLen
}

func (f *Filler) fillStruct(v reflect.Value, depth int) {
	for i := range v.NumField() {
		if f.Rand.IntN(4) == 0 {
			continue // leave a quarter of the fields empty
		}
		f.fillField(v.Field(i), depth)
	}
}

func (f *Filler) fillField(v reflect.Value, depth int) {
	t := v.Type()
	switch {
	case t == bytesType:
		if b := f.bytes(); len(b) > 0 {
			v.SetBytes(b)
		}
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct && t.Elem() != timeType:
		if depth < f.maxDepth() {
			p := reflect.New(t.Elem())
			f.fillStruct(p.Elem(), depth+1)
			v.Set(p)
		}
	case t.Kind() == reflect.Pointer: // Optional scalar: present, maybe zero
		p := reflect.New(t.Elem())
		if f.Rand.IntN(3) > 0 {
			f.fillValue(p.Elem(), depth, false)
		}
		v.Set(p)
	case t.Kind() == reflect.Slice:
		n := f.Rand.IntN(f.maxLen() + 1)
		if n == 0 {
			return
		}
		s := reflect.MakeSlice(t, n, n)
		for i := range n {
			f.fillValue(s.Index(i), depth, true)
		}
		v.Set(s)
	case t.Kind() == reflect.Map:
		n := f.Rand.IntN(f.maxLen() + 1)
		if n == 0 {
			return
		}
		m := reflect.MakeMapWithSize(t, n)
		for range n {
			k := reflect.New(t.Key()).Elem()
			f.fillValue(k, depth, true)
			e := reflect.New(t.Elem()).Elem()
			f.fillValue(e, depth, true)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	default:
		f.fillValue(v, depth, false)
	}
}

// fillValue sets a scalar, string, bytes, time, duration or message value;
// elem says it is a list element or map entry, which is always present.
func (f *Filler) fillValue(v reflect.Value, depth int, elem bool) {
	r := f.Rand
	t := v.Type()
	switch {
	case t == timeType:
		if elem || r.IntN(5) > 0 {
			sec := r.Int64N(253402300799+62135596800) - 62135596800 // years 1 to 9999
			v.Set(reflect.ValueOf(time.Unix(sec, r.Int64N(1e9)).UTC()))
		}
		return
	case t == durationType:
		v.SetInt(f.int64())
		return
	case t == bytesType:
		b := f.bytes()
		if b == nil && elem {
			b = []byte{}
		}
		v.SetBytes(b)
		return
	case t.Kind() == reflect.Pointer: // message element: never nil
		p := reflect.New(t.Elem())
		if depth < f.maxDepth() {
			f.fillStruct(p.Elem(), depth+1)
		}
		v.Set(p)
		return
	}
	switch t.Kind() {
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int32:
		v.SetInt(int64(int32(f.int64())))
	case reflect.Int64:
		v.SetInt(f.int64())
	case reflect.Uint32:
		v.SetUint(uint64(uint32(f.int64())))
	case reflect.Uint64:
		v.SetUint(uint64(f.int64()))
	case reflect.Float32:
		v.SetFloat(float64(float32(f.float())))
	case reflect.Float64:
		v.SetFloat(f.float())
	case reflect.String:
		v.SetString(f.string())
	}
}

// int64 returns small, negative, large and boundary values.
func (f *Filler) int64() int64 {
	switch f.Rand.IntN(6) {
	case 0:
		return f.Rand.Int64N(128)
	case 1:
		return -f.Rand.Int64N(1 << 20)
	case 2:
		return []int64{0, 1, -1, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64, math.MaxUint32}[f.Rand.IntN(8)]
	case 3:
		return f.Rand.Int64N(1 << 35)
	}
	return int64(f.Rand.Uint64())
}

func (f *Filler) float() float64 {
	switch f.Rand.IntN(4) {
	case 0:
		return []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64}[f.Rand.IntN(8)]
	case 1:
		return float64(f.Rand.IntN(1000) - 500)
	}
	return (f.Rand.Float64() - 0.5) * math.Pow(10, float64(f.Rand.IntN(40)-20))
}

var runes = []rune("aZ09 _-héllo wörld 日本語 许多往事 🙂👍 \u00a0\u200b\t\n")

func (f *Filler) string() string {
	n := f.Rand.IntN(24)
	if f.Rand.IntN(20) == 0 {
		n = 200 + f.Rand.IntN(300) // long enough for a 2-byte length
	}
	rs := make([]rune, n)
	for i := range rs {
		rs[i] = runes[f.Rand.IntN(len(runes))]
	}
	return string(rs)
}

func (f *Filler) bytes() []byte {
	n := f.Rand.IntN(20)
	if n == 0 {
		return nil
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(f.Rand.Uint32())
	}
	return b
}
