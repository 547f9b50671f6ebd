package gen

import (
	"fmt"
	"strconv"

	"github.com/dave/jennifer/jen"
)

// Import paths that generated code uses.
const (
	codecPkg = "github.com/yrpc/yrpc/rt/codec"
	rtPkg    = "github.com/yrpc/yrpc/rt"
	mathPkg  = "math"
	timePkg  = "time"
)

// wireType is the protobuf wire type of a value.
type wireType uint8

const (
	wireVarint  wireType = 0
	wireFixed64 wireType = 1
	wireBytes   wireType = 2
	wireFixed32 wireType = 5
)

// kindInfo is how one kind is represented in Go and on the wire.
type kindInfo struct {
	wire wireType
	// goType is the Go type; nil for enums and messages, which are named.
	goType func() *jen.Statement
	// enc converts a Go value to the uint64 (varint) or uint32/uint64
	// (fixed) that the wire carries; dec converts back from x.
	enc func(v jen.Code) jen.Code
	dec func(x jen.Code) jen.Code
}

func (k kindInfo) packable() bool { return k.wire != wireBytes }

func call(pkg, name string) func(v jen.Code) jen.Code {
	return func(v jen.Code) jen.Code { return jen.Qual(pkg, name).Call(v) }
}

func conv(typ func() *jen.Statement) func(v jen.Code) jen.Code {
	return func(v jen.Code) jen.Code { return typ().Call(v) }
}

func same(v jen.Code) jen.Code { return v }

var kinds = map[Kind]kindInfo{
	KindBool: {wireVarint, jen.Bool, call(codecPkg, "EncodeBool"),
		func(x jen.Code) jen.Code { return jen.Add(x).Op("!=").Lit(0) }},
	KindInt32:    {wireVarint, jen.Int32, conv(jen.Uint64), conv(jen.Int32)},
	KindInt64:    {wireVarint, jen.Int64, conv(jen.Uint64), conv(jen.Int64)},
	KindUint32:   {wireVarint, jen.Uint32, conv(jen.Uint64), conv(jen.Uint32)},
	KindUint64:   {wireVarint, jen.Uint64, same, same},
	KindSint32:   {wireVarint, jen.Int32, call(codecPkg, "EncodeZigZag32"), call(codecPkg, "DecodeZigZag32")},
	KindSint64:   {wireVarint, jen.Int64, call(codecPkg, "EncodeZigZag64"), call(codecPkg, "DecodeZigZag64")},
	KindEnum:     {wireVarint, nil, conv(jen.Uint64), nil},
	KindFixed32:  {wireFixed32, jen.Uint32, same, same},
	KindSfixed32: {wireFixed32, jen.Int32, conv(jen.Uint32), conv(jen.Int32)},
	KindFloat32:  {wireFixed32, jen.Float32, call(mathPkg, "Float32bits"), call(mathPkg, "Float32frombits")},
	KindFixed64:  {wireFixed64, jen.Uint64, same, same},
	KindSfixed64: {wireFixed64, jen.Int64, conv(jen.Uint64), conv(jen.Int64)},
	KindFloat64:  {wireFixed64, jen.Float64, call(mathPkg, "Float64bits"), call(mathPkg, "Float64frombits")},
	KindString:   {wireBytes, jen.String, nil, nil},
	KindBytes:    {wireBytes, func() *jen.Statement { return jen.Index().Byte() }, nil, nil},
	KindTime:     {wireBytes, func() *jen.Statement { return jen.Qual(timePkg, "Time") }, nil, nil},
	KindDuration: {wireBytes, func() *jen.Statement { return jen.Qual(timePkg, "Duration") }, nil, nil},
	KindMessage:  {wireBytes, nil, nil, nil},
}

// elemType is the Go type of one value of f: the element of a list, the
// value of a map, or the field itself without Optional's pointer.
func (f *fieldModel) elemType() *jen.Statement {
	switch f.Kind {
	case KindEnum:
		return jen.Id(f.Enum.Name)
	case KindMessage:
		return jen.Op("*").Id(f.Message)
	}
	return kinds[f.Kind].goType()
}

// goType is the Go type of the struct field.
func (f *fieldModel) goType() *jen.Statement {
	switch {
	case f.MapKey != "":
		return jen.Map(kinds[f.MapKey].goType()).Add(f.elemType())
	case f.List:
		return jen.Index().Add(f.elemType())
	case f.pointer():
		return jen.Op("*").Add(f.elemType())
	}
	return f.elemType()
}

// pointer reports whether the field is an Optional scalar held by pointer.
// Optional bytes keep []byte, where nil means absent.
func (f *fieldModel) pointer() bool {
	return f.Optional && f.MapKey == "" && !f.List && f.Kind != KindMessage && f.Kind != KindBytes
}

// tagBytes returns the wire tag of field number num with wire type w, as the
// bytes of its varint.
func tagBytes(num int32, w wireType) []jen.Code {
	v := uint64(num)<<3 | uint64(w)
	var out []jen.Code
	for v >= 0x80 {
		out = append(out, jen.Id(fmt.Sprintf("0x%02x", byte(v)|0x80)))
		v >>= 7
	}
	return append(out, jen.Id(fmt.Sprintf("0x%02x", v)))
}

func tagValue(num int32, w wireType) uint64 { return uint64(num)<<3 | uint64(w) }

// tagLit is tag as an untyped constant in generated code: the largest
// tags (field numbers from 2^28) do not fit in a 32-bit int, so they
// must not pass through one where yrpcc runs on a 32-bit platform.
func tagLit(tag uint64) jen.Code { return jen.Id(strconv.FormatUint(tag, 10)) }

// value is the type of one encoded value: a field's element or map value,
// or a map key.
type value struct {
	kind Kind
	enum *enumModel
	msg  *msgModel
}

func (f *fieldModel) value() value { return value{f.Kind, f.enum, f.msg} }

func (v value) info() kindInfo { return kinds[v.kind] }

// width is the encoded size of every value of v, or 0 when it varies.
func (v value) width() int {
	switch {
	case v.kind == KindBool:
		return 1
	case v.info().wire == wireFixed32:
		return 4
	case v.info().wire == wireFixed64:
		return 8
	}
	return 0
}

// size is the encoded size of x without its tag (length prefix included).
func (v value) size(x jen.Code) jen.Code {
	switch v.info().wire {
	case wireFixed32:
		return jen.Lit(4)
	case wireFixed64:
		return jen.Lit(8)
	case wireVarint:
		if v.kind == KindBool {
			return jen.Lit(1)
		}
		return jen.Qual(codecPkg, "SizeVarint").Call(v.info().enc(x))
	}
	var inner jen.Code
	switch v.kind {
	case KindMessage:
		inner = jen.Add(x).Dot("Size").Call()
	case KindTime:
		inner = jen.Qual(codecPkg, "SizeTime").Call(x)
	case KindDuration:
		inner = jen.Qual(codecPkg, "SizeDuration").Call(x)
	default:
		inner = jen.Len(x)
	}
	return jen.Qual(codecPkg, "SizeBytes").Call(inner)
}

// appendTo returns the statements that append x (without its tag) to b.
func (v value) appendTo(x jen.Code) []jen.Code {
	appendCall := func(fn string, arg jen.Code) []jen.Code {
		return []jen.Code{jen.Id("b").Op("=").Qual(codecPkg, fn).Call(jen.Id("b"), arg)}
	}
	switch v.info().wire {
	case wireVarint:
		return appendCall("AppendVarint", v.info().enc(x))
	case wireFixed32:
		return appendCall("AppendFixed32", v.info().enc(x))
	case wireFixed64:
		return appendCall("AppendFixed64", v.info().enc(x))
	}
	switch v.kind {
	case KindString:
		return appendCall("AppendString", x)
	case KindBytes:
		return appendCall("AppendBytes", x)
	case KindTime:
		return appendCall("AppendTime", x)
	case KindDuration:
		return appendCall("AppendDuration", x)
	}
	return append(appendCall("AppendVarint", jen.Uint64().Call(jen.Add(x).Dot("Size").Call())),
		jen.Id("b").Op("=").Add(x).Dot("appendTo").Call(jen.Id("b")))
}

// decoder names the variables of the decoding loop that a value is read
// from, and what to report in errors.
type decoder struct {
	buf, idx string // the input slice and the read offset into it
	msg      string // full message name, for errors
	field    string // schema field name, for errors
}

// fail returns `return codec.Err(msg, field, code)`.
func (d decoder) fail(code jen.Code) jen.Code {
	return jen.Return(jen.Qual(codecPkg, "Err").Call(jen.Lit(d.msg), jen.Lit(d.field), code))
}

// consume returns `x, n := fn(buf[idx:]); if n < 0 {...}; idx += n`.
func (d decoder) consume(x, fn string) []jen.Code {
	return []jen.Code{
		jen.List(jen.Id(x), jen.Id("n")).Op(":=").Qual(codecPkg, fn).Call(jen.Id(d.buf).Index(jen.Id(d.idx).Op(":"))),
		jen.If(jen.Id("n").Op("<").Lit(0)).Block(d.fail(jen.Id("n"))),
		jen.Id(d.idx).Op("+=").Id("n"),
	}
}

// consumeTag reads the field tag at idx into tag, with the tags of fields
// 1 to 2047 (one or two bytes) decoded inline: a call per field costs
// more than the rest of decoding a small field.
func (d decoder) consumeTag(g *jen.Group) {
	buf, idx := jen.Id(d.buf), jen.Id(d.idx)
	g.Id("tag").Op(":=").Uint64().Call(buf.Clone().Index(idx.Clone()))
	g.If(jen.Id("tag").Op("<").Id("0x80")).Block(
		idx.Clone().Op("++"),
	).Else().If(idx.Clone().Op("+").Lit(1).Op("<").Len(buf.Clone()).Op("&&").Add(buf.Clone()).Index(idx.Clone().Op("+").Lit(1)).Op("<").Id("0x80")).Block(
		jen.Id("tag").Op("=").Id("tag").Op("&").Id("0x7f").Op("|").Uint64().Call(buf.Clone().Index(idx.Clone().Op("+").Lit(1))).Op("<<").Lit(7),
		idx.Clone().Op("+=").Lit(2),
	).Else().BlockFunc(func(g *jen.Group) {
		for _, c := range d.consume("t", "ConsumeVarint") {
			g.Add(c)
		}
		g.Id("tag").Op("=").Id("t")
	})
}

// span reads a length prefix into l and checks it against the input; the
// value is then buf[idx:idx+int(l)].
func (d decoder) span() []jen.Code {
	return append(d.consume("l", "ConsumeVarint"),
		jen.If(jen.Id("l").Op(">").Uint64().Call(jen.Len(jen.Id(d.buf)).Op("-").Id(d.idx))).Block(
			d.fail(jen.Qual(codecPkg, "CodeTruncated"))))
}

func (d decoder) spanEnd() jen.Code { return jen.Id(d.idx).Op("+").Int().Call(jen.Id("l")) }

// decode returns statements that read one value of v (without its tag,
// with wire type v's) from buf at idx, store it with the statements that
// assign returns for the value's expression, and advance idx past it.
func (d decoder) decode(v value, assign func(x jen.Code) []jen.Code) []jen.Code {
	switch v.info().wire {
	case wireVarint:
		var val jen.Code
		if v.kind == KindEnum {
			val = jen.Id(v.enum.Name).Call(jen.Int32().Call(jen.Id("u")))
		} else {
			val = v.info().dec(jen.Id("u"))
		}
		return append(d.consume("u", "ConsumeVarint"), assign(val)...)
	case wireFixed32, wireFixed64:
		fn := "ConsumeFixed32"
		if v.info().wire == wireFixed64 {
			fn = "ConsumeFixed64"
		}
		return append(d.consume("u", fn), assign(v.info().dec(jen.Id("u")))...)
	}
	switch v.kind {
	case KindTime:
		return append(d.consume("x", "ConsumeTime"), assign(jen.Id("x"))...)
	case KindDuration:
		return append(d.consume("x", "ConsumeDuration"), assign(jen.Id("x"))...)
	}
	s := d.span()
	end := d.spanEnd()
	sub := jen.Id(d.buf).Index(jen.Id(d.idx).Op(":").Add(end))
	switch v.kind {
	case KindString:
		s = append(s, assign(jen.Qual(codecPkg, "String").Call(sub))...)
	case KindBytes:
		s = append(s, assign(jen.Id(d.buf).Index(jen.Id(d.idx).Op(":").Add(end).Op(":").Add(end)))...)
	case KindMessage:
		s = append(s,
			jen.Id("x").Op(":=").New(jen.Id(v.msg.Name)),
			jen.If(jen.Err().Op(":=").Id("x").Dot("unmarshal").Call(sub, jen.Id("depth").Op("+").Lit(1)),
				jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())))
		s = append(s, assign(jen.Id("x"))...)
	}
	return append(s, jen.Id(d.idx).Op("+=").Int().Call(jen.Id("l")))
}

// assignTo returns an assign function for decode that sets target.
func assignTo(target func() *jen.Statement) func(x jen.Code) []jen.Code {
	return func(x jen.Code) []jen.Code { return []jen.Code{target().Op("=").Add(x)} }
}

// appendTo returns an assign function for decode that appends to the
// slice target.
func appendTo(target func() *jen.Statement) func(x jen.Code) []jen.Code {
	return func(x jen.Code) []jen.Code { return []jen.Code{target().Op("=").Append(target(), x)} }
}

// knownKind reports whether k is one of the Kind constants.
func knownKind(k Kind) bool {
	_, ok := kinds[k]
	return ok
}

// numeric reports whether k is an integer or floating-point kind.
func numeric(k Kind) bool {
	return knownKind(k) && kinds[k].wire != wireBytes && k != KindBool && k != KindEnum
}

// packable reports whether a list of k may be packed: numbers, bools and
// enums.
func packable(k Kind) bool { return knownKind(k) && kinds[k].packable() }

// mapKeyKind reports whether k may key a map: integers, bools and strings.
func mapKeyKind(k Kind) bool {
	return k == KindString || k == KindBool || numeric(k) && k != KindFloat32 && k != KindFloat64
}
