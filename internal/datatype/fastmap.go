package datatype

import (
	"encoding/binary"
	"reflect"
	"unsafe"
)

// Hand-specialised plans for maps with string keys and values of a basic
// type (map[string]float64, map[string]int, map[string]string, ... and
// named types with those underlying types): Go code over the concrete map
// type, no reflection per entry. Same format as the general map plan.

// fastMap returns the plan of t if t has a specialised one.
func fastMap(t reflect.Type) *plan {
	if t.Kind() != reflect.Map || t.Key() != reflect.TypeFor[string]() {
		return nil
	}
	switch t.Elem() {
	case reflect.TypeFor[float64]():
		return stringMapPlan[float64]()
	case reflect.TypeFor[float32]():
		return stringMapPlan[float32]()
	case reflect.TypeFor[int]():
		return stringMapPlan[int]()
	case reflect.TypeFor[int64]():
		return stringMapPlan[int64]()
	case reflect.TypeFor[int32]():
		return stringMapPlan[int32]()
	case reflect.TypeFor[uint64]():
		return stringMapPlan[uint64]()
	case reflect.TypeFor[uint32]():
		return stringMapPlan[uint32]()
	case reflect.TypeFor[uint8]():
		return stringMapPlan[uint8]()
	case reflect.TypeFor[string]():
		return stringStringPlan()
	}
	return nil
}

type fixedNumber interface {
	~float64 | ~float32 | ~int | ~int64 | ~int32 | ~uint64 | ~uint32 | ~uint8
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func (d *decoder) string() (string, error) {
	n, err := d.uvarint()
	if err != nil {
		return "", err
	}
	if n > uint64(len(d.b)-d.off) {
		return "", errShort
	}
	return d.str(int(n))
}

func stringMapPlan[V fixedNumber]() *plan {
	size := int(unsafe.Sizeof(*new(V)))
	return &plan{min: 1,
		enc: func(_ *encoder, b []byte, ptr unsafe.Pointer, _ int) ([]byte, error) {
			m := *(*map[string]V)(ptr)
			if m == nil {
				return append(b, 0), nil
			}
			b = binary.AppendUvarint(b, uint64(len(m))+1)
			for k, v := range m {
				b = appendString(b, k)
				b = append(b, unsafe.Slice((*byte)(unsafe.Pointer(&v)), size)...)
			}
			return b, nil
		},
		dec: func(d *decoder, ptr unsafe.Pointer) error {
			n, err := d.count(1 + size)
			if err != nil || n < 0 {
				*(*map[string]V)(ptr) = nil
				return err
			}
			m := make(map[string]V, n)
			for range n {
				k, err := d.string()
				if err != nil {
					return err
				}
				vb, err := d.take(size)
				if err != nil {
					return err
				}
				var v V
				copy(unsafe.Slice((*byte)(unsafe.Pointer(&v)), size), vb)
				m[k] = v
			}
			*(*map[string]V)(ptr) = m
			return nil
		},
	}
}

func stringStringPlan() *plan {
	return &plan{min: 1,
		enc: func(_ *encoder, b []byte, ptr unsafe.Pointer, _ int) ([]byte, error) {
			m := *(*map[string]string)(ptr)
			if m == nil {
				return append(b, 0), nil
			}
			b = binary.AppendUvarint(b, uint64(len(m))+1)
			for k, v := range m {
				b = appendString(appendString(b, k), v)
			}
			return b, nil
		},
		dec: func(d *decoder, ptr unsafe.Pointer) error {
			n, err := d.count(2)
			if err != nil || n < 0 {
				*(*map[string]string)(ptr) = nil
				return err
			}
			m := make(map[string]string, n)
			for range n {
				k, err := d.string()
				if err != nil {
					return err
				}
				v, err := d.string()
				if err != nil {
					return err
				}
				m[k] = v
			}
			*(*map[string]string)(ptr) = m
			return nil
		},
	}
}
