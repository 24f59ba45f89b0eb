package mpi_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/mpigo/mpi"
)

func TestTypeAttributes(t *testing.T) {
	var deleted []string
	del := func(dt *mpi.Datatype, k *mpi.TypeKeyval, v any) error {
		if v == "stuck" {
			return errors.New("refused")
		}
		deleted = append(deleted, fmt.Sprint(v))
		return nil
	}
	keep, err := mpi.CreateTypeKeyval(mpi.TypeDupFn, del)
	if err != nil {
		t.Fatal(err)
	}
	drop, _ := mpi.CreateTypeKeyval(nil, del)
	twice, _ := mpi.CreateTypeKeyval(func(old *mpi.Datatype, k *mpi.TypeKeyval, v any) (any, bool, error) {
		return v.(int) * 2, true, nil
	}, nil)

	vec, _ := mpi.NewVector(2, 1, 3, mpi.Int32)
	if v, ok, err := vec.GetAttr(keep); v != nil || ok || err != nil {
		t.Fatalf("unset: %v %v %v", v, ok, err)
	}
	if err := vec.SetAttr(keep, "a"); err != nil {
		t.Fatal(err)
	}
	if err := vec.SetAttr(keep, "b"); err != nil { // deletes "a"
		t.Fatal(err)
	}
	_ = vec.SetAttr(drop, "c")
	_ = vec.SetAttr(twice, 21)
	if v, ok, _ := vec.GetAttr(keep); v != "b" || !ok || fmt.Sprint(deleted) != "[a]" {
		t.Fatalf("after overwrite: %v %v, deleted %v", v, ok, deleted)
	}

	// Dup keeps what the copy callbacks keep.
	d, err := vec.Dup()
	if err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := d.GetAttr(keep); v != "b" || !ok {
		t.Errorf("Dup with TypeDupFn: %v %v", v, ok)
	}
	if _, ok, _ := d.GetAttr(drop); ok {
		t.Error("Dup with a nil copy callback copied")
	}
	if v, _, _ := d.GetAttr(twice); v != 42 {
		t.Errorf("Dup with a computing copy callback: %v", v)
	}
	// The copy has its own table.
	_ = d.SetAttr(keep, "d-only")
	if v, _, _ := vec.GetAttr(keep); v != "b" {
		t.Errorf("setting on the Dup changed the original: %v", v)
	}

	// DeleteAttr, and a key without a value.
	deleted = nil
	if err := vec.DeleteAttr(drop); err != nil || fmt.Sprint(deleted) != "[c]" {
		t.Fatalf("DeleteAttr: %v %v", err, deleted)
	}
	if err := vec.DeleteAttr(drop); !errors.Is(err, mpi.ErrKeyval) {
		t.Errorf("DeleteAttr of nothing: %v", err)
	}

	// A delete callback that fails leaves the attribute and the datatype.
	_ = vec.SetAttr(drop, "stuck")
	if err := vec.Free(); !errors.Is(err, mpi.ErrOther) {
		t.Fatalf("Free with a refusing callback: %v", err)
	}
	if v, ok, _ := vec.GetAttr(drop); v != "stuck" || !ok {
		t.Fatalf("after a refused Free: %v %v", v, ok)
	}
	_ = vec.SetAttr(drop, "x") // the old value refuses: stays
	if v, _, _ := vec.GetAttr(drop); v != "stuck" {
		t.Fatalf("overwrite of a refusing value: %v", v)
	}
	if _, err := vec.Dup(); err != nil { // not freed: still usable
		t.Fatal(err)
	}
	if err := mpi.FreeTypeKeyval(drop); err != nil {
		t.Fatal(err)
	}
	if _, _, err := vec.GetAttr(drop); !errors.Is(err, mpi.ErrKeyval) {
		t.Errorf("GetAttr with a freed key: %v", err)
	}
	if err := mpi.FreeTypeKeyval(drop); !errors.Is(err, mpi.ErrKeyval) {
		t.Errorf("FreeTypeKeyval twice: %v", err)
	}

	// Predefined datatypes take attributes; their F90 twins do not share them.
	k, _ := mpi.CreateTypeKeyval(nil, nil)
	if err := mpi.Int32.SetAttr(k, 1); err != nil {
		t.Fatal(err)
	}
	defer mpi.Int32.DeleteAttr(k)
	f, _ := mpi.TypeCreateF90Integer(9)
	if _, ok, _ := f.GetAttr(k); ok {
		t.Error("an F90 datatype shares its base's attributes")
	}
	var nilType *mpi.Datatype
	if err := nilType.SetAttr(k, 1); !errors.Is(err, mpi.ErrType) {
		t.Errorf("SetAttr on nil: %v", err)
	}
	if err := mpi.Int32.SetAttr(nil, 1); !errors.Is(err, mpi.ErrKeyval) {
		t.Errorf("SetAttr with nil key: %v", err)
	}

	// Attribute calls and Dup from many goroutines at once.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 100 {
				_ = d.SetAttr(twice, i*1000+j)
				_, _, _ = d.GetAttr(twice)
				if n, err := d.Dup(); err != nil || n == nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
}

func TestTypeAttributesFreed(t *testing.T) {
	var deleted []any
	k, _ := mpi.CreateTypeKeyval(nil, func(_ *mpi.Datatype, _ *mpi.TypeKeyval, v any) error {
		deleted = append(deleted, v)
		return nil
	})
	k2, _ := mpi.CreateTypeKeyval(nil, func(_ *mpi.Datatype, _ *mpi.TypeKeyval, v any) error {
		deleted = append(deleted, v)
		return nil
	})
	c, _ := mpi.NewContiguous(4, mpi.Float64)
	_ = c.SetAttr(k, 1)
	_ = c.SetAttr(k2, 2)
	if err := c.Free(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(deleted) != "[2 1]" {
		t.Errorf("Free deleted %v, want the last set first", deleted)
	}
}
