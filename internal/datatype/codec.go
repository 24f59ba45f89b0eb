package datatype

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"reflect"
)

// Errors of the codec; every error wraps one of them and names the type.
var (
	ErrEncode = errors.New("cannot encode")
	ErrDecode = errors.New("cannot decode")
)

// The codec. Strings and []string, the commonest non-plain shapes, have a
// hand-written format (a []string is a uvarint count, then a uvarint length
// and the bytes of each string); everything else goes through
// encoding/gob. A later measurement may replace gob; the type signature
// that travels with every message keeps the formats from being confused.

var (
	stringType  = reflect.TypeFor[string]()
	stringsType = reflect.TypeFor[[]string]()
)

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

// Check reports an error naming t if values of t can never be encoded.
func Check(t reflect.Type) error {
	return check(t, t, map[reflect.Type]bool{})
}

func check(top, t reflect.Type, seen map[reflect.Type]bool) error {
	if seen[t] {
		return nil
	}
	seen[t] = true
	bad := func(why string) error {
		if t == top {
			return fmt.Errorf("%w %v: %s", ErrEncode, top, why)
		}
		return fmt.Errorf("%w %v: it contains %v, and %s", ErrEncode, top, t, why)
	}
	switch t.Kind() {
	case reflect.Chan:
		return bad("channels cannot be sent")
	case reflect.Func:
		return bad("functions cannot be sent")
	case reflect.UnsafePointer, reflect.Uintptr:
		return bad("raw pointers mean nothing on another rank")
	case reflect.Array, reflect.Slice, reflect.Pointer:
		return check(top, t.Elem(), seen)
	case reflect.Map:
		if err := check(top, t.Key(), seen); err != nil {
			return err
		}
		return check(top, t.Elem(), seen)
	case reflect.Struct:
		exported := 0
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			exported++
			if err := check(top, f.Type, seen); err != nil {
				return err
			}
		}
		if exported == 0 && t.NumField() > 0 {
			return bad("it has no exported fields, and only exported fields are encoded")
		}
	}
	return nil
}

// Encode appends the encoding of *v to dst. v must be a non-nil pointer.
func Encode(dst []byte, v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil, fmt.Errorf("%w: Encode needs a non-nil pointer, got %T", ErrEncode, v)
	}
	switch p := v.(type) {
	case *string:
		return append(dst, *p...), nil
	case *[]string:
		dst = binary.AppendUvarint(dst, uint64(len(*p)))
		for _, s := range *p {
			dst = binary.AppendUvarint(dst, uint64(len(s)))
			dst = append(dst, s...)
		}
		return dst, nil
	}
	t := rv.Type().Elem()
	if err := Check(t); err != nil {
		return nil, err
	}
	buf := bytes.NewBuffer(dst)
	// gob wants a struct around the value so that any type can travel.
	wrapped := reflect.New(reflect.StructOf([]reflect.StructField{{Name: "V", Type: t}}))
	wrapped.Elem().Field(0).Set(rv.Elem())
	if err := gob.NewEncoder(buf).EncodeValue(wrapped); err != nil {
		return nil, fmt.Errorf("%w %v: %v", ErrEncode, t, err)
	}
	return buf.Bytes(), nil
}

// Decode decodes b into *v. v must be a non-nil pointer. Malformed input
// and trailing bytes are errors, never panics.
func Decode(b []byte, v any) (err error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("%w: Decode needs a non-nil pointer, got %T", ErrDecode, v)
	}
	switch p := v.(type) {
	case *string:
		*p = string(b)
		return nil
	case *[]string:
		return decodeStrings(b, p)
	}
	t := rv.Type().Elem()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w %v: malformed input (%v)", ErrDecode, t, r)
		}
	}()
	r := bytes.NewReader(b)
	wrapped := reflect.New(reflect.StructOf([]reflect.StructField{{Name: "V", Type: t}}))
	if err := gob.NewDecoder(r).DecodeValue(wrapped); err != nil {
		return fmt.Errorf("%w %v: %v", ErrDecode, t, err)
	}
	if r.Len() != 0 {
		return fmt.Errorf("%w %v: %d trailing bytes", ErrDecode, t, r.Len())
	}
	rv.Elem().Set(wrapped.Elem().Field(0))
	return nil
}

func decodeStrings(b []byte, p *[]string) error {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return fmt.Errorf("%w []string: bad count", ErrDecode)
	}
	b = b[k:]
	out := make([]string, n)
	for i := range out {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return fmt.Errorf("%w []string: bad length of element %d", ErrDecode, i)
		}
		out[i] = string(b[k : k+int(l)])
		b = b[k+int(l):]
	}
	if len(b) != 0 {
		return fmt.Errorf("%w []string: %d trailing bytes", ErrDecode, len(b))
	}
	*p = out
	return nil
}
