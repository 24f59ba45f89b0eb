package datatype

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Errors of the codec. Every error of Encode, Decode and Check wraps one of
// them (test with errors.Is) and names the Go type concerned, as in
// "datatype: cannot encode chan int: channels cannot be sent".
var (
	ErrEncode = errors.New("datatype: cannot encode")
	ErrDecode = errors.New("datatype: cannot decode")
)

// method is how the codec handles a type.
type method uint8

const (
	viaGob     method = iota // encoding/gob, through a struct{ V *T } wrapper
	viaString                // a string type: its bytes
	viaStrings               // a slice of a string type: uvarint count, then uvarint length and bytes of each
	viaMemory                // a plain type: its memory
	viaElems                 // a slice of a plain type of non-zero size: its elements' memory
	viaPlan                  // the compiled codec (plan.go)
	refused                  // values of the type can never be encoded
)

// codec is what Encode and Decode know about a type; computed once per type.
type codec struct {
	method method
	size   int               // viaMemory: size of a value; viaElems: size of an element
	bools  func([]byte) bool // viaMemory, viaElems: validates the bools of one value; nil if it has none
	wrap   reflect.Type      // viaGob: struct{ V *T }
	why    string            // refused: why, naming the part of the type at fault
	plan   *plan             // viaPlan
	slabs  int               // viaPlan: slabs a decoder needs
	hint   atomic.Int64      // viaPlan: size of the last encoding, to size the next
}

var codecs sync.Map // reflect.Type -> *codec

func codecOf(t reflect.Type) *codec {
	if c, ok := codecs.Load(t); ok {
		return c.(*codec)
	}
	c := &codec{}
	info := InfoOf(t)
	switch {
	case info.Plain:
		c.method, c.size, c.bools = viaMemory, info.Size, boolCheck(t)
	case t.Kind() == reflect.String:
		c.method = viaString
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		c.method = viaStrings
	case t.Kind() == reflect.Slice && info.Elem.Plain && info.Elem.Size > 0:
		c.method, c.size, c.bools = viaElems, info.Elem.Size, boolCheck(t.Elem())
	default:
		if c.why = refusal(t, "", map[reflect.Type]bool{}); c.why != "" {
			c.method = refused
		} else if p, n := compileTop(t); p != nil {
			c.method, c.plan, c.slabs = viaPlan, p, n
		} else {
			c.method = viaGob
			// gob encodes a struct's fields but not, say, a bare nil pointer
			// or interface; the wrapper makes any type one field of a
			// struct. A pointer field costs nothing on the wire (gob
			// flattens pointers) and spares a copy of the value.
			c.wrap = reflect.StructOf([]reflect.StructField{{Name: "V", Type: reflect.PointerTo(t)}})
		}
	}
	v, _ := codecs.LoadOrStore(t, c)
	return v.(*codec)
}

// boolCheck returns a function that reports whether the bools in the
// memory of one value of the plain type t are all 0 or 1, the only bytes
// that Go programs may find in a bool, or nil if t holds no bool.
func boolCheck(t reflect.Type) func([]byte) bool {
	switch t.Kind() {
	case reflect.Bool:
		return func(b []byte) bool { return b[0] <= 1 }
	case reflect.Array:
		elem := boolCheck(t.Elem())
		if elem == nil || t.Len() == 0 {
			return nil
		}
		size := int(t.Elem().Size())
		return func(b []byte) bool {
			for i := 0; i < len(b); i += size {
				if !elem(b[i : i+size]) {
					return false
				}
			}
			return true
		}
	case reflect.Struct:
		type field struct {
			off, size int
			check     func([]byte) bool
		}
		var fields []field
		for i := range t.NumField() {
			f := t.Field(i)
			if check := boolCheck(f.Type); check != nil {
				fields = append(fields, field{int(f.Offset), int(f.Type.Size()), check})
			}
		}
		if len(fields) == 0 {
			return nil
		}
		return func(b []byte) bool {
			for _, f := range fields {
				if !f.check(b[f.off : f.off+f.size]) {
					return false
				}
			}
			return true
		}
	}
	return nil
}

// Check reports an error (wrapping ErrEncode) naming t if values of t can
// never be encoded: t contains a channel, a function, an unsafe.Pointer or
// a uintptr, or a struct that has fields but no exported one, where the
// encoding would reach it. A nil result does not promise that every value
// encodes: the dynamic types of interface values must be registered with
// gob.Register, and a slice of pointers cannot hold nil.
func Check(t reflect.Type) error {
	if c := codecOf(t); c.method == refused {
		return fmt.Errorf("%w %v: %s", ErrEncode, t, c.why)
	}
	return nil
}

var (
	gobEncoder      = reflect.TypeFor[gob.GobEncoder]()
	binaryMarshaler = reflect.TypeFor[encoding.BinaryMarshaler]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
)

// marshals reports whether gob encodes t through its own method.
func marshals(t reflect.Type) bool {
	for _, m := range []reflect.Type{gobEncoder, binaryMarshaler, textMarshaler} {
		if t.Implements(m) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(m)) {
			return true
		}
	}
	return false
}

// refusal returns why values of t, found at path inside the type being
// checked, can never be encoded, or "" if they can.
func refusal(t reflect.Type, path string, seen map[reflect.Type]bool) string {
	if seen[t] {
		return "" // being checked further up, or checked already
	}
	seen[t] = true
	if marshals(t) || plain(t) {
		return ""
	}
	why := func(s string) string {
		if path == "" {
			return s
		}
		return fmt.Sprintf("%v at %s: %s", t, path, s)
	}
	switch t.Kind() {
	case reflect.Chan:
		return why("channels cannot be sent")
	case reflect.Func:
		return why("functions cannot be sent")
	case reflect.UnsafePointer, reflect.Uintptr:
		return why("addresses mean nothing on another rank")
	case reflect.Pointer:
		return refusal(t.Elem(), path, seen)
	case reflect.Array, reflect.Slice:
		return refusal(t.Elem(), path+"[]", seen)
	case reflect.Map:
		if s := refusal(t.Key(), path+"(key)", seen); s != "" {
			return s
		}
		return refusal(t.Elem(), path+"[]", seen)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				if f.Name == "_" || f.Type.Size() == 0 {
					continue // padding or a marker: nothing to lose
				}
				// gob and the compiled codec would drop it silently: the
				// receiver would get a zero there.
				return why(fmt.Sprintf("field %s is unexported, and only exported fields of encoded types are sent (export it, or give %v a GobEncode or MarshalBinary method)", f.Name, t))
			}
			if s := refusal(f.Type, path+"."+f.Name, seen); s != "" {
				return s
			}
		}
	}
	return ""
}

// gobHint adds to an error of encoding/gob what to do about it.
func gobHint(err error) string {
	s := err.Error()
	for _, p := range []string{"type not registered for interface: ", "name not registered for interface: "} {
		if i := strings.Index(s, p); i >= 0 {
			name := strings.Trim(s[i+len(p):], `"`)
			return s + " (a value of " + name + " travels in an interface only if every rank registers its type first: gob.Register(" + name + "{}) or gob.Register(&" + name + "{}) for a pointer)"
		}
	}
	return s
}

// Encode appends the encoding of *v to dst and returns the extended slice.
// v must be a non-nil pointer. On error dst is returned unchanged (though
// bytes past its length may have been written). *v must not hold a cycle
// of pointers (see the package doc).
func Encode(dst []byte, v any) (out []byte, err error) {
	switch p := v.(type) {
	case *string:
		if p != nil {
			return append(dst, *p...), nil
		}
	case *[]string:
		if p != nil {
			return appendStrings(dst, *p), nil
		}
	case *[]byte:
		if p != nil {
			return append(dst, *p...), nil
		}
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return dst, fmt.Errorf("%w %T: Encode needs a non-nil pointer", ErrEncode, v)
	}
	t := rv.Type().Elem()
	c := codecOf(t)
	switch c.method {
	case refused:
		return dst, fmt.Errorf("%w %v: %s", ErrEncode, t, c.why)
	case viaString:
		return append(dst, rv.Elem().String()...), nil
	case viaStrings:
		s := rv.Elem()
		dst = binary.AppendUvarint(dst, uint64(s.Len()))
		for i := range s.Len() {
			e := s.Index(i).String()
			dst = binary.AppendUvarint(dst, uint64(len(e)))
			dst = append(dst, e...)
		}
		return dst, nil
	case viaMemory:
		return append(dst, unsafe.Slice((*byte)(rv.UnsafePointer()), c.size)...), nil
	case viaElems:
		s := rv.Elem()
		if s.Len() == 0 {
			return dst, nil
		}
		return append(dst, unsafe.Slice((*byte)(s.UnsafePointer()), s.Len()*c.size)...), nil
	}
	defer func() {
		if r := recover(); r != nil { // a panicking marshal method, say
			out, err = dst, fmt.Errorf("%w %v: %v", ErrEncode, t, r)
		}
	}()
	if c.method == viaPlan {
		b := dst
		if h := int(c.hint.Load()); cap(b)-len(b) < h {
			b = append(make([]byte, 0, len(b)+h+h/8), b...)
		}
		b, err := c.plan.enc(nil, b, rv.UnsafePointer(), 0)
		if err == errDeep {
			// Deeper than ordinary data: again, watching for cycles.
			b, err = c.plan.enc(&encoder{inside: map[seenKey]int{}}, b[:len(dst)], rv.UnsafePointer(), 0)
		}
		if err != nil {
			return dst, fmt.Errorf("%w %v: %v", ErrEncode, t, err)
		}
		c.hint.Store(int64(len(b) - len(dst)))
		return b, nil
	}
	if err := checkNesting(rv.Elem()); err != nil {
		return dst, fmt.Errorf("%w %v: %v", ErrEncode, t, err)
	}
	w := reflect.New(c.wrap)
	w.Elem().Field(0).Set(rv.Convert(c.wrap.Field(0).Type))
	buf := bytes.NewBuffer(dst)
	if err := gob.NewEncoder(buf).EncodeValue(w); err != nil {
		return dst, fmt.Errorf("%w %v: %s", ErrEncode, t, gobHint(err))
	}
	return buf.Bytes(), nil
}

// checkNesting walks v, which gob is about to encode, for what would make
// gob recurse until the stack overflows: a cycle, or nesting deeper than
// MaxDepth. The compiled codec checks as it goes; gob cannot be asked to.
// The walk visits what gob will visit, skipping the parts that cannot
// nest (numbers, strings, types that marshal themselves).
func checkNesting(v reflect.Value) error {
	var w walker
	return w.walk(v, 0)
}

type walker struct {
	inside map[seenKey]int // as encoder's, made past cycleCheckAfter
}

// enter is encoder.enter, and reports whether it recorded the value.
func (w *walker) enter(t reflect.Type, p unsafe.Pointer, n, depth int) (bool, error) {
	if depth <= cycleCheckAfter {
		return false, nil
	}
	if w.inside == nil {
		w.inside = map[seenKey]int{}
	}
	err := (*encoder)(w).enter(t, p, n, depth)
	return err == nil, err
}

// leaves caches, per type, whether gob's encoding of it cannot nest.
var leaves sync.Map // reflect.Type -> bool

func leaf(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	}
	if l, ok := leaves.Load(t); ok {
		return l.(bool)
	}
	l := plain(t) || marshals(t)
	leaves.Store(t, l)
	return l
}

func (w *walker) walk(v reflect.Value, depth int) error {
	t := v.Type()
	if leaf(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return nil
		}
		// A cycle through an interface passes through a pointer, slice or
		// map too, where it is found.
		return w.walk(v.Elem(), depth+1)
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		in, err := w.enter(t, v.UnsafePointer(), 0, depth+1)
		if err != nil {
			return err
		}
		if err := w.walk(v.Elem(), depth+1); err != nil {
			return err
		}
		if in {
			delete(w.inside, seenKey{t, v.UnsafePointer(), 0})
		}
	case reflect.Slice:
		if v.Len() == 0 || leaf(t.Elem()) {
			return nil
		}
		in, err := w.enter(t, v.UnsafePointer(), v.Len(), depth+1)
		if err != nil {
			return err
		}
		for i := range v.Len() {
			if err := w.walk(v.Index(i), depth+1); err != nil {
				return err
			}
		}
		if in {
			delete(w.inside, seenKey{t, v.UnsafePointer(), v.Len()})
		}
	case reflect.Array:
		if leaf(t.Elem()) {
			return nil
		}
		for i := range v.Len() {
			if err := w.walk(v.Index(i), depth); err != nil {
				return err
			}
		}
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && !leaf(f.Type) {
				if err := w.walk(v.Field(i), depth); err != nil {
					return err
				}
			}
		}
	case reflect.Map:
		if v.Len() == 0 || leaf(t.Key()) && leaf(t.Elem()) {
			return nil
		}
		in, err := w.enter(t, v.UnsafePointer(), 0, depth+1)
		if err != nil {
			return err
		}
		for it := v.MapRange(); it.Next(); {
			if err := w.walk(it.Key(), depth+1); err != nil {
				return err
			}
			if err := w.walk(it.Value(), depth+1); err != nil {
				return err
			}
		}
		if in {
			delete(w.inside, seenKey{t, v.UnsafePointer(), 0})
		}
	}
	return nil
}

func appendStrings(dst []byte, s []string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	for _, e := range s {
		dst = binary.AppendUvarint(dst, uint64(len(e)))
		dst = append(dst, e...)
	}
	return dst
}

// Decode decodes b, as made by Encode, into *v. v must be a non-nil
// pointer. *v is replaced, not merged into, and is left alone on error.
// Malformed input and trailing bytes are errors (wrapping ErrDecode), never
// panics; so is a bool byte other than 0 or 1 in a plain value. The result
// does not share memory with b, except that the strings of a []string share
// one allocation.
func Decode(b []byte, v any) (err error) { return decode(b, v, false) }

// DecodeOwned is Decode for a b that the caller gives up: the strings of
// the result may share b's memory, so b must never be modified afterwards.
// It saves a copy of every string.
func DecodeOwned(b []byte, v any) error { return decode(b, v, true) }

func decode(b []byte, v any, own bool) (err error) {
	switch p := v.(type) {
	case *string:
		if p != nil {
			*p = string(b)
			return nil
		}
	case *[]string:
		if p != nil {
			s, err := decodeStrings(b)
			if err != nil {
				return fmt.Errorf("%w []string: %v", ErrDecode, err)
			}
			*p = s
			return nil
		}
	case *[]byte:
		if p != nil {
			*p = append(make([]byte, 0, len(b)), b...)
			return nil
		}
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("%w %T: Decode needs a non-nil pointer", ErrDecode, v)
	}
	t := rv.Type().Elem()
	c := codecOf(t)
	switch c.method {
	case refused:
		return fmt.Errorf("%w %v: %s", ErrDecode, t, c.why)
	case viaString:
		rv.Elem().SetString(string(b))
		return nil
	case viaStrings:
		s, err := decodeStrings(b)
		if err != nil {
			return fmt.Errorf("%w %v: %v", ErrDecode, t, err)
		}
		out := reflect.MakeSlice(t, len(s), len(s))
		for i, e := range s {
			out.Index(i).SetString(e)
		}
		rv.Elem().Set(out)
		return nil
	case viaMemory:
		if len(b) != c.size {
			return fmt.Errorf("%w %v: %d bytes, want %d", ErrDecode, t, len(b), c.size)
		}
		if c.bools != nil && !c.bools(b) {
			return fmt.Errorf("%w %v: a bool is neither 0 nor 1", ErrDecode, t)
		}
		copy(unsafe.Slice((*byte)(rv.UnsafePointer()), c.size), b)
		return nil
	case viaElems:
		if len(b)%c.size != 0 {
			return fmt.Errorf("%w %v: %d bytes are not a whole number of %d-byte elements", ErrDecode, t, len(b), c.size)
		}
		if c.bools != nil {
			for i := 0; i < len(b); i += c.size {
				if !c.bools(b[i : i+c.size]) {
					return fmt.Errorf("%w %v: a bool of element %d is neither 0 nor 1", ErrDecode, t, i/c.size)
				}
			}
		}
		n := len(b) / c.size
		out := reflect.MakeSlice(t, n, n)
		if n > 0 {
			copy(unsafe.Slice((*byte)(out.UnsafePointer()), len(b)), b)
		}
		rv.Elem().Set(out)
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w %v: malformed input (%v)", ErrDecode, t, r)
		}
	}()
	if c.method == viaPlan {
		nv := reflect.New(t)
		d := decoder{b: b, own: own}
		if c.slabs > 0 {
			d.slabs = make([]slab, c.slabs)
		}
		if err := c.plan.dec(&d, nv.UnsafePointer()); err != nil {
			return fmt.Errorf("%w %v: %v", ErrDecode, t, err)
		}
		if d.off != len(b) {
			return fmt.Errorf("%w %v: %d trailing bytes", ErrDecode, t, len(b)-d.off)
		}
		rv.Elem().Set(nv.Elem())
		return nil
	}
	r := bytes.NewReader(b)
	w := reflect.New(c.wrap)
	if err := gob.NewDecoder(r).DecodeValue(w); err != nil {
		return fmt.Errorf("%w %v: %s", ErrDecode, t, gobHint(err))
	}
	if r.Len() != 0 {
		return fmt.Errorf("%w %v: %d trailing bytes", ErrDecode, t, r.Len())
	}
	if p := w.Elem().Field(0); p.IsNil() {
		rv.Elem().SetZero() // gob leaves zero values out
	} else {
		rv.Elem().Set(p.Elem())
	}
	return nil
}

// decodeStrings decodes the []string format. The strings share one
// allocation.
func decodeStrings(b []byte) ([]string, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, errors.New("bad count")
	}
	rest := b[k:]
	if n > uint64(len(rest)) { // every string takes at least one byte
		return nil, fmt.Errorf("count %d exceeds the %d bytes left", n, len(rest))
	}
	all := string(rest)
	out := make([]string, n)
	off := 0
	for i := range out {
		l, k := binary.Uvarint(rest[off:])
		if k <= 0 || l > uint64(len(rest)-off-k) {
			return nil, fmt.Errorf("bad length of element %d", i)
		}
		off += k
		out[i] = all[off : off+int(l)]
		off += int(l)
	}
	if off != len(rest) {
		return nil, fmt.Errorf("%d trailing bytes", len(rest)-off)
	}
	return out, nil
}
