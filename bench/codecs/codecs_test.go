// Package codecs compares the codec of mpigo's typed layer (the compiled
// plans of internal/datatype) with encoding/gob, CBOR
// (github.com/fxamacker/cbor/v2) and MessagePack
// (github.com/vmihailenco/msgpack/v5) on the values the typed layer
// encodes. It is a module of its own so that the mpi module does not
// depend on the alternatives; run it with
//
//	cd bench/codecs && go test -bench . -benchmem
//
// Each benchmark encodes and decodes one message, as a Send and a Recv do:
// every message must stand alone, so gob pays for its type description in
// every message (a gob stream would send it once, but messages to
// different ranks, or to the same rank on different tags, are not one
// stream).
package codecs

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"reflect"
	"testing"

	"github.com/fxamacker/cbor/v2"
	"github.com/mpigo/mpi/internal/datatype"
	"github.com/vmihailenco/msgpack/v5"
)

// Record is the bench's struct holding strings (the same shape as
// mpigo bench -api object).
type Record struct {
	ID     int64
	Name   string
	Email  string
	Tags   []string
	Score  float64
	Pos    [3]float32
	Active bool
}

func records(n int) []Record {
	rs := make([]Record, n)
	for i := range rs {
		rs[i] = Record{
			ID: int64(i), Name: fmt.Sprintf("record-%d", i), Email: fmt.Sprintf("user%d@example.org", i),
			Tags: []string{"alpha", "beta"}, Score: float64(i) * 1.5, Pos: [3]float32{1, 2, 3}, Active: i%2 == 0,
		}
	}
	return rs
}

type codec struct {
	name string
	enc  func(v any) ([]byte, error)
	dec  func(b []byte, v any) error
}

var codecs = []codec{
	{"mpigo", func(v any) ([]byte, error) { return datatype.Encode(nil, v) }, datatype.DecodeOwned},
	{"gob", func(v any) ([]byte, error) {
		var buf bytes.Buffer
		err := gob.NewEncoder(&buf).Encode(v)
		return buf.Bytes(), err
	}, func(b []byte, v any) error { return gob.NewDecoder(bytes.NewReader(b)).Decode(v) }},
	{"cbor", cbor.Marshal, cbor.Unmarshal},
	{"msgpack", msgpack.Marshal, msgpack.Unmarshal},
}

// values are the shapes measured: the struct slice, and the shapes the
// codec has hand-specialised paths for.
func values() []struct {
	name string
	v    any
} {
	m := map[string]float64{}
	for i := range 100 {
		m[fmt.Sprintf("key-%d", i)] = float64(i)
	}
	ss := make([]string, 100)
	for i := range ss {
		ss[i] = fmt.Sprintf("string number %d", i)
	}
	return []struct {
		name string
		v    any
	}{
		{"records-1", records(1)},
		{"records-100", records(100)},
		{"records-1000", records(1000)},
		{"strings-100", ss},
		{"map-string-float64-100", m},
	}
}

func TestCodecsAgree(t *testing.T) {
	for _, v := range values() {
		for _, c := range codecs {
			p := reflect.New(reflect.TypeOf(v.v))
			p.Elem().Set(reflect.ValueOf(v.v))
			b, err := c.enc(p.Interface())
			if err != nil {
				t.Fatalf("%s %s: %v", c.name, v.name, err)
			}
			out := reflect.New(reflect.TypeOf(v.v))
			if err := c.dec(b, out.Interface()); err != nil {
				t.Fatalf("%s %s: %v", c.name, v.name, err)
			}
			if !reflect.DeepEqual(out.Elem().Interface(), v.v) {
				t.Fatalf("%s %s: round trip differs", c.name, v.name)
			}
		}
	}
}

// BenchmarkRoundTrip encodes and decodes each value with each codec;
// SetBytes is the in-memory size of the data (string and slice contents
// included), so MB/s compare across codecs.
func BenchmarkRoundTrip(b *testing.B) {
	for _, v := range values() {
		for _, c := range codecs {
			b.Run(v.name+"/"+c.name, func(b *testing.B) {
				p := reflect.New(reflect.TypeOf(v.v))
				p.Elem().Set(reflect.ValueOf(v.v))
				enc, _ := c.enc(p.Interface())
				b.SetBytes(int64(dataSize(reflect.ValueOf(v.v))))
				b.ReportAllocs()
				for b.Loop() {
					enc, _ = c.enc(p.Interface())
					out := reflect.New(reflect.TypeOf(v.v))
					if err := c.dec(enc, out.Interface()); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(enc)), "wire-bytes")
			})
		}
	}
}

// dataSize is the bytes of data in v: fixed-size parts plus string and
// slice contents.
func dataSize(v reflect.Value) int {
	switch v.Kind() {
	case reflect.String:
		return v.Len()
	case reflect.Slice:
		n := 0
		for i := range v.Len() {
			n += dataSize(v.Index(i))
		}
		return n
	case reflect.Map:
		n := 0
		for it := v.MapRange(); it.Next(); {
			n += dataSize(it.Key()) + dataSize(it.Value())
		}
		return n
	case reflect.Struct:
		n := 0
		for i := range v.NumField() {
			n += dataSize(v.Field(i))
		}
		return n
	case reflect.Array:
		return v.Len() * int(v.Type().Elem().Size())
	}
	return int(v.Type().Size())
}
