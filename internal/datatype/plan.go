package datatype

import (
	"encoding"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"reflect"
	"unsafe"
)

// This file is the compiled codec: for a type made of plain values,
// strings, slices, arrays, structs, maps and pointers (and types with
// their own GobEncode, MarshalBinary or MarshalText methods), Encode and
// Decode follow a plan compiled once per type from reflection, with no
// reflection per value except to allocate slices and maps. Types it
// cannot handle (interfaces, whose dynamic types need gob's registry) go
// through encoding/gob instead. docs/datatypes.md has the measurements that
// chose it over gob, CBOR and MessagePack.
//
// The format, field by field in declaration order:
//
//   - a plain value: its memory (machine layout, as the plain path);
//   - a string: uvarint length, bytes;
//   - a slice or map: uvarint 0 for nil, else uvarint 1+length, then the
//     elements (a slice of plain elements: their memory; a map: key, value,
//     key, value...);
//   - an array: its elements;
//   - a struct: its exported fields (a struct with unexported fields, other
//     than blank or zero-size ones, is refused: see refusal);
//   - a pointer: byte 0 for nil, else 1 and the value it points to;
//   - a type with its own marshaling method: uvarint length and the bytes
//     of GobEncode, MarshalBinary or MarshalText (the first it has), as gob
//     would use.

// MaxDepth bounds how deeply pointers, slices and maps nest in a value
// that Encode or Decode handles (a linked list of MaxDepth nodes is fine,
// one of MaxDepth+1 is refused): the compiled codec and gob recurse once
// per level, and without a bound a deep value, or a corrupt or hostile
// message of a few megabytes, would overflow the stack, which kills the
// process. 10000 is encoding/json's limit too; data that deep is a list,
// and travels better (and faster) as a slice.
const MaxDepth = 10_000

// cycleCheckAfter is the depth past which the encoder records the values
// it is inside, to find a cycle (a value that contains itself: its
// encoding would never end). Ordinary values never get that deep, so
// they pay only for counting levels; a cyclic value always does.
const cycleCheckAfter = 1000

// errTooDeep is the error of a value nested deeper than MaxDepth.
var errTooDeep = fmt.Errorf("pointers, slices and maps nest more than %d deep (the codec's limit; send a long list as a slice)", MaxDepth)

// errDeep makes Encode encode again with an encoder that finds cycles:
// the value is deeper than cycleCheckAfter.
var errDeep = errors.New("deeper than cycleCheckAfter")

// encoder is the state of one Encode of a value deeper than
// cycleCheckAfter: the pointers, slices and maps being encoded (on the
// path from the top), with the depth of each. Shared values that are not
// cycles (two pointers to one value, a DAG) are encoded once per path to
// them, as they are at any depth.
type encoder struct {
	inside map[seenKey]int
}

type seenKey struct {
	t   reflect.Type
	p   unsafe.Pointer
	len int
}

// enter records that the value at p, of pointer, slice (of length n) or
// map type t, is being encoded at depth; it fails on a cycle and past
// MaxDepth. On a nil s (a first attempt, which does not track values) it
// returns errDeep.
func (s *encoder) enter(t reflect.Type, p unsafe.Pointer, n, depth int) error {
	if s == nil {
		return errDeep
	}
	if depth > MaxDepth {
		return errTooDeep
	}
	k := seenKey{t, p, n}
	if at, ok := s.inside[k]; ok {
		levels := "1 level"
		if depth-at != 1 {
			levels = fmt.Sprintf("%d levels", depth-at)
		}
		return fmt.Errorf("the value holds a cycle: a %v contains itself %s of pointers, slices or maps down (only acyclic data can be sent: send the nodes in a slice, with indices for links)", t, levels)
	}
	s.inside[k] = depth
	return nil
}

func (s *encoder) leave(t reflect.Type, p unsafe.Pointer, n int) {
	delete(s.inside, seenKey{t, p, n})
}

// zeroBase is where empty, non-nil slices point.
var zeroBase uint64

type sliceHeader struct {
	data unsafe.Pointer
	len  int
	cap  int
}

type plan struct {
	// enc appends the encoding of the value at p, found depth pointers,
	// slices and maps below the top; s is nil until the value proves
	// deeper than cycleCheckAfter (see encoder).
	enc func(s *encoder, b []byte, p unsafe.Pointer, depth int) ([]byte, error)
	dec func(d *decoder, p unsafe.Pointer) error
	min int // fewest bytes one encoded value takes
}

// decoder is the state of one Decode.
type decoder struct {
	b     []byte
	off   int
	own   bool   // strings may alias b
	all   string // otherwise: a copy of b that strings share, made on first need
	slabs []slab // per slice plan (plan.slab): backing arrays shared by its slices
	depth int    // pointers, slices and maps entered: at most MaxDepth
}

// slab is memory for the elements of many slices of one type: decoding a
// slice of a thousand structs that each hold a []string allocates a few
// slabs of strings instead of a thousand small arrays. Each slice gets
// len == cap, so appending to it never writes into its neighbours.
type slab struct {
	base unsafe.Pointer
	left int
	last int
}

// slabLimit bounds a slab, in elements and bytes.
const (
	slabElems = 4096
	slabBytes = 64 << 10
)

// alloc returns memory for n elements of the slice type t (elements of es bytes).
func (d *decoder) alloc(id int, t reflect.Type, n, es int) unsafe.Pointer {
	if n*es >= slabBytes/4 || id < 0 {
		return reflect.MakeSlice(t, n, n).UnsafePointer()
	}
	sl := &d.slabs[id]
	if n > sl.left {
		size := min(max(n, 2*sl.last, 8), slabElems, max(n, slabBytes/max(es, 1)))
		sl.base, sl.left, sl.last = reflect.MakeSlice(t, size, size).UnsafePointer(), size, size
	}
	p := sl.base
	sl.left -= n
	if sl.left == 0 {
		sl.base = nil // never a pointer past the end of an object
	} else {
		sl.base = unsafe.Add(sl.base, n*es)
	}
	return p
}

// compiler is the state of one compile of a top-level type.
type compiler struct {
	building map[reflect.Type]*plan // plans under construction or done; nil: does not compile
	slabs    int                    // slice plans numbered so far
}

// newSlabID numbers the slice plans of one top-level type; its decoder
// keeps a slab per number. Past 64, slices are allocated one by one.
func (c *compiler) newSlabID() int {
	if c.slabs < 64 {
		c.slabs++
		return c.slabs - 1
	}
	return -1
}

var errShort = errors.New("input ends early")

func (d *decoder) uvarint() (uint64, error) {
	v, k := binary.Uvarint(d.b[d.off:])
	if k <= 0 {
		return 0, errors.New("bad length")
	}
	d.off += k
	return v, nil
}

func (d *decoder) take(n int) ([]byte, error) {
	if n < 0 || n > len(d.b)-d.off {
		return nil, errShort
	}
	b := d.b[d.off : d.off+n]
	d.off += n
	return b, nil
}

// count reads a slice or map header: -1 for nil, else the length, which
// must be possible for elements of at least min bytes each.
func (d *decoder) count(min int) (int, error) {
	v, err := d.uvarint()
	if err != nil {
		return 0, err
	}
	if v == 0 {
		return -1, nil
	}
	n := v - 1
	left := uint64(len(d.b) - d.off)
	if min > 0 && n > left/uint64(min) || min == 0 && n > 1<<20 {
		return 0, fmt.Errorf("%d elements cannot fit in the %d bytes left", n, left)
	}
	return int(n), nil
}

func (d *decoder) str(n int) (string, error) {
	if n < 0 || n > len(d.b)-d.off {
		return "", errShort
	}
	var s string
	if n == 0 {
		s = ""
	} else if d.own {
		s = unsafe.String(&d.b[d.off], n)
	} else {
		if d.all == "" {
			d.all = string(d.b)
		}
		s = d.all[d.off : d.off+n]
	}
	d.off += n
	return s, nil
}

// compile returns the plan for t, or nil if t needs gob. building holds
// the plans under construction, so that recursive types refer to
// themselves.
func compile(t reflect.Type, c *compiler) *plan {
	if p, ok := c.building[t]; ok {
		return p // nil if t was found not to compile
	}
	p := &plan{}
	c.building[t] = p
	if !fill(p, t, c) {
		c.building[t] = nil
		return nil
	}
	return p
}

// compileTop compiles the plan of a top-level type and says how many
// slabs its decoder needs.
func compileTop(t reflect.Type) (*plan, int) {
	c := &compiler{building: map[reflect.Type]*plan{}}
	p := compile(t, c)
	return p, c.slabs
}

var (
	gobDecoder        = reflect.TypeFor[gob.GobDecoder]()
	binaryUnmarshaler = reflect.TypeFor[encoding.BinaryUnmarshaler]()
	textUnmarshaler   = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func fill(p *plan, t reflect.Type, c *compiler) bool {
	size := t.Size()
	if plain(t) {
		check := boolCheck(t)
		n := int(size)
		p.min = n
		p.enc = func(s *encoder, b []byte, ptr unsafe.Pointer, depth int) ([]byte, error) {
			return append(b, unsafe.Slice((*byte)(ptr), n)...), nil
		}
		p.dec = func(d *decoder, ptr unsafe.Pointer) error {
			src, err := d.take(n)
			if err != nil {
				return err
			}
			if check != nil && !check(src) {
				return fmt.Errorf("a bool of %v is neither 0 nor 1", t)
			}
			copy(unsafe.Slice((*byte)(ptr), n), src)
			return nil
		}
		return true
	}
	if t.Kind() != reflect.Pointer && marshals(t) { // a pointer is planned as one, to its element's methods
		return fillMarshal(p, t)
	}
	switch t.Kind() {
	case reflect.String:
		p.min = 1
		p.enc = func(_ *encoder, b []byte, ptr unsafe.Pointer, _ int) ([]byte, error) {
			s := *(*string)(ptr)
			b = binary.AppendUvarint(b, uint64(len(s)))
			return append(b, s...), nil
		}
		p.dec = func(d *decoder, ptr unsafe.Pointer) error {
			n, err := d.uvarint()
			if err != nil {
				return err
			}
			if n > uint64(len(d.b)) {
				return errShort
			}
			s, err := d.str(int(n))
			*(*string)(ptr) = s
			return err
		}
		return true
	case reflect.Slice:
		return fillSlice(p, t, c)
	case reflect.Array:
		e := compile(t.Elem(), c)
		if e == nil {
			return false
		}
		n, es := t.Len(), t.Elem().Size()
		p.min = n * e.min
		p.enc = func(s *encoder, b []byte, ptr unsafe.Pointer, depth int) ([]byte, error) {
			var err error
			for i := range n {
				if b, err = e.enc(s, b, unsafe.Add(ptr, uintptr(i)*es), depth); err != nil {
					return b, err
				}
			}
			return b, nil
		}
		p.dec = func(d *decoder, ptr unsafe.Pointer) error {
			for i := range n {
				if err := e.dec(d, unsafe.Add(ptr, uintptr(i)*es)); err != nil {
					return err
				}
			}
			return nil
		}
		return true
	case reflect.Struct:
		type field struct {
			off uintptr
			p   *plan
		}
		var fs []field
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			fp := compile(f.Type, c)
			if fp == nil {
				return false
			}
			fs = append(fs, field{f.Offset, fp})
			p.min += fp.min
		}
		p.enc = func(s *encoder, b []byte, ptr unsafe.Pointer, depth int) ([]byte, error) {
			var err error
			for _, f := range fs {
				if b, err = f.p.enc(s, b, unsafe.Add(ptr, f.off), depth); err != nil {
					return b, err
				}
			}
			return b, nil
		}
		p.dec = func(d *decoder, ptr unsafe.Pointer) error {
			for _, f := range fs {
				if err := f.p.dec(d, unsafe.Add(ptr, f.off)); err != nil {
					return err
				}
			}
			return nil
		}
		return true
	case reflect.Pointer:
		e := compile(t.Elem(), c)
		if e == nil {
			return false
		}
		et := t.Elem()
		p.min = 1
		p.enc = func(s *encoder, b []byte, ptr unsafe.Pointer, depth int) ([]byte, error) {
			q := *(*unsafe.Pointer)(ptr)
			if q == nil {
				return append(b, 0), nil
			}
			if depth++; depth > cycleCheckAfter {
				if err := s.enter(t, q, 0, depth); err != nil {
					return b, err
				}
				b, err := e.enc(s, append(b, 1), q, depth)
				s.leave(t, q, 0)
				return b, err
			}
			return e.enc(s, append(b, 1), q, depth)
		}
		p.dec = func(d *decoder, ptr unsafe.Pointer) error {
			flag, err := d.take(1)
			if err != nil {
				return err
			}
			switch flag[0] {
			case 0:
				*(*unsafe.Pointer)(ptr) = nil
				return nil
			case 1:
				if d.depth++; d.depth > MaxDepth {
					return errTooDeep
				}
				q := reflect.New(et).UnsafePointer()
				if err := e.dec(d, q); err != nil {
					return err
				}
				d.depth--
				*(*unsafe.Pointer)(ptr) = q
				return nil
			}
			return fmt.Errorf("bad pointer flag %d", flag[0])
		}
		return true
	case reflect.Map:
		return fillMap(p, t, c)
	}
	return false // interfaces (and what refusal refuses)
}

func fillSlice(p *plan, t reflect.Type, c *compiler) bool {
	et := t.Elem()
	es := int(et.Size())
	p.min = 1
	id := c.newSlabID()
	if plain(et) && es > 0 {
		check := boolCheck(et)
		p.enc = func(s *encoder, b []byte, ptr unsafe.Pointer, depth int) ([]byte, error) {
			h := (*sliceHeader)(ptr)
			if h.data == nil {
				return append(b, 0), nil
			}
			b = binary.AppendUvarint(b, uint64(h.len)+1)
			return append(b, unsafe.Slice((*byte)(h.data), h.len*es)...), nil
		}
		p.dec = func(d *decoder, ptr unsafe.Pointer) error {
			n, err := d.count(es)
			if err != nil || n < 0 {
				*(*sliceHeader)(ptr) = sliceHeader{}
				return err
			}
			src, err := d.take(n * es)
			if err != nil {
				return err
			}
			if check != nil {
				for i := 0; i < len(src); i += es {
					if !check(src[i : i+es]) {
						return fmt.Errorf("a bool of element %d of %v is neither 0 nor 1", i/es, t)
					}
				}
			}
			if n == 0 {
				*(*sliceHeader)(ptr) = sliceHeader{data: unsafe.Pointer(&zeroBase)}
				return nil
			}
			s := d.alloc(id, t, n, es)
			copy(unsafe.Slice((*byte)(s), len(src)), src)
			*(*sliceHeader)(ptr) = sliceHeader{s, n, n}
			return nil
		}
		return true
	}
	e := compile(et, c)
	if e == nil {
		return false
	}
	p.enc = func(s *encoder, b []byte, ptr unsafe.Pointer, depth int) ([]byte, error) {
		h := (*sliceHeader)(ptr)
		if h.data == nil {
			return append(b, 0), nil
		}
		b = binary.AppendUvarint(b, uint64(h.len)+1)
		// An error ends the Encode: what enter recorded need not be undone.
		deep := false
		if depth++; depth > cycleCheckAfter && h.len > 0 {
			if err := s.enter(t, h.data, h.len, depth); err != nil {
				return b, err
			}
			deep = true
		}
		var err error
		for i := range h.len {
			if b, err = e.enc(s, b, unsafe.Add(h.data, i*es), depth); err != nil {
				return b, err
			}
		}
		if deep {
			s.leave(t, h.data, h.len)
		}
		return b, nil
	}
	p.dec = func(d *decoder, ptr unsafe.Pointer) error {
		n, err := d.count(e.min)
		if err != nil || n < 0 {
			*(*sliceHeader)(ptr) = sliceHeader{}
			return err
		}
		if n == 0 {
			*(*sliceHeader)(ptr) = sliceHeader{data: unsafe.Pointer(&zeroBase)}
			return nil
		}
		if d.depth++; d.depth > MaxDepth {
			return errTooDeep
		}
		s := d.alloc(id, t, n, es)
		for i := range n {
			if err := e.dec(d, unsafe.Add(s, i*es)); err != nil {
				return err
			}
		}
		d.depth--
		*(*sliceHeader)(ptr) = sliceHeader{s, n, n}
		return nil
	}
	return true
}

func fillMap(p *plan, t reflect.Type, c *compiler) bool {
	if f := fastMap(t); f != nil {
		*p = *f
		return true
	}
	kp, vp := compile(t.Key(), c), compile(t.Elem(), c)
	if kp == nil || vp == nil {
		return false
	}
	kt, vt := t.Key(), t.Elem()
	p.min = 1
	p.enc = func(s *encoder, b []byte, ptr unsafe.Pointer, depth int) ([]byte, error) {
		m := reflect.NewAt(t, ptr).Elem()
		if m.IsNil() {
			return append(b, 0), nil
		}
		b = binary.AppendUvarint(b, uint64(m.Len())+1)
		// The map itself; an error ends the Encode: what enter recorded
		// need not be undone.
		q := *(*unsafe.Pointer)(ptr)
		deep := false
		if depth++; depth > cycleCheckAfter {
			if err := s.enter(t, q, 0, depth); err != nil {
				return b, err
			}
			deep = true
		}
		k, v := reflect.New(kt).Elem(), reflect.New(vt).Elem()
		it := m.MapRange()
		var err error
		for it.Next() {
			k.SetIterKey(it)
			v.SetIterValue(it)
			if b, err = kp.enc(s, b, k.Addr().UnsafePointer(), depth); err != nil {
				return b, err
			}
			if b, err = vp.enc(s, b, v.Addr().UnsafePointer(), depth); err != nil {
				return b, err
			}
		}
		if deep {
			s.leave(t, q, 0)
		}
		return b, nil
	}
	p.dec = func(d *decoder, ptr unsafe.Pointer) error {
		n, err := d.count(kp.min + vp.min)
		m := reflect.NewAt(t, ptr).Elem()
		if err != nil || n < 0 {
			m.SetZero()
			return err
		}
		if d.depth++; d.depth > MaxDepth {
			return errTooDeep
		}
		out := reflect.MakeMapWithSize(t, n)
		k, v := reflect.New(kt).Elem(), reflect.New(vt).Elem()
		for range n {
			k.SetZero()
			v.SetZero()
			if err := kp.dec(d, k.Addr().UnsafePointer()); err != nil {
				return err
			}
			if err := vp.dec(d, v.Addr().UnsafePointer()); err != nil {
				return err
			}
			out.SetMapIndex(k, v)
		}
		d.depth--
		m.Set(out)
		return nil
	}
	return true
}

// fillMarshal plans a type that marshals itself, as gob would: through
// GobEncode, else MarshalBinary, else MarshalText, with the matching
// unmarshal method of its pointer.
func fillMarshal(p *plan, t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	var marshal func(v reflect.Value) ([]byte, error)
	var unmarshal func(v reflect.Value, b []byte) error
	switch {
	case (t.Implements(gobEncoder) || pt.Implements(gobEncoder)) && pt.Implements(gobDecoder):
		marshal = func(v reflect.Value) ([]byte, error) { return v.Interface().(gob.GobEncoder).GobEncode() }
		unmarshal = func(v reflect.Value, b []byte) error { return v.Interface().(gob.GobDecoder).GobDecode(b) }
	case (t.Implements(binaryMarshaler) || pt.Implements(binaryMarshaler)) && pt.Implements(binaryUnmarshaler):
		marshal = func(v reflect.Value) ([]byte, error) { return v.Interface().(encoding.BinaryMarshaler).MarshalBinary() }
		unmarshal = func(v reflect.Value, b []byte) error {
			return v.Interface().(encoding.BinaryUnmarshaler).UnmarshalBinary(b)
		}
	case (t.Implements(textMarshaler) || pt.Implements(textMarshaler)) && pt.Implements(textUnmarshaler):
		marshal = func(v reflect.Value) ([]byte, error) { return v.Interface().(encoding.TextMarshaler).MarshalText() }
		unmarshal = func(v reflect.Value, b []byte) error {
			return v.Interface().(encoding.TextUnmarshaler).UnmarshalText(b)
		}
	default:
		return false
	}
	p.min = 1
	p.enc = func(s *encoder, b []byte, ptr unsafe.Pointer, depth int) ([]byte, error) {
		data, err := marshal(reflect.NewAt(t, ptr))
		if err != nil {
			return b, fmt.Errorf("%v: %w", t, err)
		}
		b = binary.AppendUvarint(b, uint64(len(data)))
		return append(b, data...), nil
	}
	p.dec = func(d *decoder, ptr unsafe.Pointer) error {
		n, err := d.uvarint()
		if err != nil {
			return err
		}
		if n > uint64(len(d.b)-d.off) {
			return errShort
		}
		data, _ := d.take(int(n))
		return unmarshal(reflect.NewAt(t, ptr), data)
	}
	return true
}
