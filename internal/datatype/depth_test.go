package datatype

import (
	"errors"
	"strings"
	"testing"
)

// Values that contain themselves, through pointers, slices or maps.
type (
	selfSlice []selfSlice
	selfMap   map[string]selfMap
	ringA     struct {
		Name string
		B    *ringB
	}
	ringB struct{ A *ringA }
	// gobNode goes through encoding/gob (it holds an interface).
	gobNode struct {
		V    any
		Next *gobNode
	}
)

// A value with a cycle is refused with an error naming the cycle; it used
// to recurse until Go's fatal stack overflow killed the process.
func TestEncodeCycle(t *testing.T) {
	l := &list{V: 1}
	l.Next = l
	long := benchList(2500) // the cycle starts deep down
	end := long
	for end.Next != nil {
		end = end.Next
	}
	end.Next = long.Next.Next
	s := selfSlice{nil}
	s[0] = s
	m := selfMap{}
	m["x"] = m
	a := &ringA{Name: "a"}
	a.B = &ringB{A: a}
	g := &gobNode{V: 1}
	g.Next = g
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"list", &l, "a *datatype.list contains itself 1 level of pointers, slices or maps down"},
		{"deep-list", &long, "a *datatype.list contains itself 2498 levels"},
		{"slice", &s, "a datatype.selfSlice contains itself 1 level"},
		{"map", &m, "a datatype.selfMap contains itself 1 level"},
		{"two-types", &a, "contains itself 2 levels"},
		{"gob", &g, "a *datatype.gobNode contains itself 1 level"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Encode(nil, tc.v)
			if !errors.Is(err, ErrEncode) || !strings.Contains(err.Error(), "cycle") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Encode: %v, want ErrEncode naming the cycle (%q)", err, tc.want)
			}
		})
	}
}

// A list of MaxDepth nodes travels; one node more is refused cleanly (not
// a stack overflow), by the compiled codec and by the gob path alike.
func TestEncodeDepthLimit(t *testing.T) {
	ok := benchList(MaxDepth)
	b, err := Encode(nil, &ok)
	if err != nil {
		t.Fatalf("a list of MaxDepth nodes: %v", err)
	}
	var back *list
	if err := Decode(b, &back); err != nil {
		t.Fatalf("decoding a list of MaxDepth nodes: %v", err)
	}
	n := 0
	for p := back; p != nil; p = p.Next {
		n++
	}
	if n != MaxDepth || back.V != MaxDepth-1 {
		t.Fatalf("decoded %d nodes, head %d; want %d, %d", n, back.V, MaxDepth, MaxDepth-1)
	}
	deep := &list{Next: ok}
	if _, err := Encode(nil, &deep); !errors.Is(err, ErrEncode) || !strings.Contains(err.Error(), "nest more than 10000 deep") {
		t.Fatalf("a list of MaxDepth+1 nodes: %v, want ErrEncode naming the limit", err)
	}
	var g *gobNode
	for i := range MaxDepth + 1 {
		g = &gobNode{V: i, Next: g}
	}
	if _, err := Encode(nil, &g); !errors.Is(err, ErrEncode) || !strings.Contains(err.Error(), "nest more than 10000 deep") {
		t.Fatalf("a gob list of MaxDepth+1 nodes: %v, want ErrEncode naming the limit", err)
	}
}

// Shared values that are not cycles (a DAG) encode as they always have:
// once per path to them, arriving as separate copies; also deep down,
// where the encoder watches for cycles.
func TestEncodeShared(t *testing.T) {
	type pair struct{ A, B *list }
	shared := &list{V: 7}
	deepShared := benchList(3000)
	for _, v := range []pair{{shared, shared}, {deepShared, deepShared}} {
		b, err := Encode(nil, &v)
		if err != nil {
			t.Fatalf("a DAG: %v", err)
		}
		var back pair
		if err := Decode(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.A == back.B || back.A.V != v.A.V || back.B.V != v.A.V {
			t.Fatalf("a DAG came back as %p %p (%d %d), want two copies of %d", back.A, back.B, back.A.V, back.B.V, v.A.V)
		}
	}
	// The same slice twice, in a slice of slices, and the same map twice.
	inner := selfSlice{nil, nil}
	ss := selfSlice{inner, inner}
	if _, err := Encode(nil, &ss); err != nil {
		t.Fatalf("a slice holding one slice twice: %v", err)
	}
	g := &gobNode{V: 1}
	gg := []*gobNode{g, g}
	if _, err := Encode(nil, &gg); err != nil {
		t.Fatalf("gob: one value twice: %v", err)
	}
}

// A message nesting deeper than MaxDepth is refused by Decode (it takes
// a few bytes per level: a hostile or corrupt one of a few megabytes
// would otherwise overflow the stack), through pointers, slices and maps.
func TestDecodeDepthLimit(t *testing.T) {
	// A list: flag 1 and V (8 bytes) per node, then flag 0.
	node := append([]byte{1}, make([]byte, 8)...)
	deepList := append(bytesRepeat(node, MaxDepth+1), 0)
	// selfSlice: count 2 (one element) per level, then 0 (nil).
	deepSlice := append(bytesRepeat([]byte{2}, MaxDepth+1), 0)
	// selfMap: count 2 (one entry), key "" per level, then 0 (a nil map).
	deepMap := append(bytesRepeat([]byte{2, 0}, MaxDepth+1), 0)
	for _, tc := range []struct {
		name   string
		b      []byte
		target any
	}{
		{"pointers", deepList, new(*list)},
		{"slices", deepSlice, new(selfSlice)},
		{"maps", deepMap, new(selfMap)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Decode(tc.b, tc.target)
			if !errors.Is(err, ErrDecode) || !strings.Contains(err.Error(), "nest more than 10000 deep") {
				t.Fatalf("Decode of %d levels: %v, want ErrDecode naming the limit", MaxDepth+1, err)
			}
			// One level less decodes.
			var ok []byte
			switch tc.name {
			case "pointers":
				ok = append(bytesRepeat(node, MaxDepth), 0)
			case "slices":
				ok = append(bytesRepeat([]byte{2}, MaxDepth), 0)
			case "maps":
				ok = append(bytesRepeat([]byte{2, 0}, MaxDepth), 0)
			}
			if err := Decode(ok, tc.target); err != nil {
				t.Fatalf("Decode of MaxDepth levels: %v", err)
			}
		})
	}
}

func bytesRepeat(b []byte, n int) []byte {
	out := make([]byte, 0, len(b)*n)
	for range n {
		out = append(out, b...)
	}
	return out
}
