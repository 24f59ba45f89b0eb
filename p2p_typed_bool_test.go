package mpi

import "testing"

// TestFromBytesRefusesBadBools: received bytes that are not 0 or 1 never
// become Go bools, at any depth of a plain type.
func TestFromBytesRefusesBadBools(t *testing.T) {
	type flagged struct {
		X  int32
		OK [2]bool
	}
	tests := []struct {
		name string
		run  func() error
	}{
		{"bool", func() error { var v bool; return fromBytes(typeOf[bool](), []byte{2}, &v) }},
		{"[]bool", func() error { var v []bool; return fromBytes(typeOf[[]bool](), []byte{0, 1, 9}, &v) }},
		{"struct", func() error {
			var v flagged
			return fromBytes(typeOf[flagged](), []byte{1, 0, 0, 0, 1, 3, 0, 0}, &v)
		}},
		{"[]struct", func() error {
			var v []flagged
			return fromBytes(typeOf[[]flagged](), []byte{1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 5, 0, 0}, &v)
		}},
	}
	for _, tt := range tests {
		if err := tt.run(); err == nil {
			t.Errorf("%s: a bad bool was accepted", tt.name)
		}
	}
	var ok []flagged
	if err := fromBytes(typeOf[[]flagged](), []byte{1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0}, &ok); err != nil || len(ok) != 2 || !ok[0].OK[0] || !ok[1].OK[1] {
		t.Errorf("good bools: %v %v", ok, err)
	}
}

// TestZeroSizeElements: a slice of zero-size elements keeps its length.
func TestZeroSizeElements(t *testing.T) {
	err := Run(2, func(c *Comm) error {
		if c.Rank() == 0 {
			return Send(c, make([]struct{}, 5), 1, 0)
		}
		v, _, err := Recv[[]struct{}](c, 0, 0)
		if err != nil {
			return err
		}
		if len(v) != 5 {
			t.Errorf("got %d elements, want 5", len(v))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
