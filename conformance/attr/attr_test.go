package attr_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/conformance"
)

// Attributes are copied by Dup through the key's copy callback, deleted
// through its delete callback, and the predefined ones are there (MPICH
// attr/attrt, attric, attrorder, baseattrcomm).
func TestCommAttrs(t *testing.T) {
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		deleted := 0
		del := func(*mpi.Comm, *mpi.Keyval, any) error { deleted++; return nil }
		kdup, err := mpi.CreateKeyval(mpi.DupFn, del)
		if err != nil {
			return err
		}
		knull, err := mpi.CreateKeyval(mpi.NullCopyFn, del)
		if err != nil {
			return err
		}
		kdouble, err := mpi.CreateKeyval(func(_ *mpi.Comm, _ *mpi.Keyval, v any) (any, bool, error) {
			return v.(int) * 2, true, nil
		}, nil)
		if err != nil {
			return err
		}
		for k, v := range map[*mpi.Keyval]int{kdup: 1, knull: 2, kdouble: 3} {
			if err := c.SetAttr(k, v); err != nil {
				return err
			}
		}
		d, err := c.Dup()
		if err != nil {
			return err
		}
		if v, ok, err := d.GetAttr(kdup); err != nil || !ok || v != 1 {
			return fmt.Errorf("DupFn attribute: %v %v %v", v, ok, err)
		}
		if _, ok, err := d.GetAttr(knull); err != nil || ok {
			return fmt.Errorf("NullCopyFn attribute copied: %v %v", ok, err)
		}
		if v, ok, err := d.GetAttr(kdouble); err != nil || !ok || v != 6 {
			return fmt.Errorf("doubling copy: %v %v %v", v, ok, err)
		}
		if err := c.SetAttr(kdup, 10); err != nil { // replacing deletes the old value
			return err
		}
		if deleted != 1 {
			return fmt.Errorf("replacing an attribute called delete %d times", deleted)
		}
		if err := d.Free(); err != nil { // deletes d's kdup
			return err
		}
		if deleted != 2 {
			return fmt.Errorf("Free called delete %d times in all, want 2", deleted)
		}
		if err := c.DeleteAttr(knull); err != nil || deleted != 3 {
			return fmt.Errorf("DeleteAttr: %v, %d deletes", err, deleted)
		}
		if err := mpi.FreeKeyval(knull); err != nil {
			return err
		}
		if _, _, err := c.GetAttr(knull); !errors.Is(err, mpi.ErrKeyval) {
			return fmt.Errorf("freed key: %v", err)
		}
		ub, ok, err := c.GetAttr(mpi.AttrTagUB)
		if err != nil || !ok || ub.(int) < 32767 {
			return fmt.Errorf("TagUB: %v %v %v", ub, ok, err)
		}
		return nil
	})
}

// Datatypes carry attributes too (attr/fkeyvaltype).
func TestTypeAttrs(t *testing.T) {
	k, err := mpi.CreateTypeKeyval(mpi.TypeNullCopyFn, nil)
	if err != nil {
		t.Fatal(err)
	}
	dt, err := mpi.NewContiguous(2, mpi.Int32)
	if err != nil {
		t.Fatal(err)
	}
	if err := dt.SetAttr(k, "x"); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := dt.GetAttr(k); err != nil || !ok || v != "x" {
		t.Fatalf("GetAttr: %v %v %v", v, ok, err)
	}
	d2, err := dt.Dup()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := d2.GetAttr(k); ok {
		t.Fatal("TypeNullCopyFn copied the attribute")
	}
}
