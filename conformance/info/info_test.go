package info_test

import (
	"fmt"
	"testing"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/conformance"
)

// Info objects keep keys in order of insertion, duplicate deeply and
// delete (MPICH info/infodup, infodel, infoorder, infovallen).
func TestInfo(t *testing.T) {
	in := mpi.NewInfo()
	for i, k := range []string{"c", "a", "b"} {
		if err := in.Set(k, fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(in.Keys()) != "[c a b]" {
		t.Fatalf("Keys: %v", in.Keys())
	}
	d := in.Dup()
	if err := in.Set("a", "changed"); err != nil {
		t.Fatal(err)
	}
	if v, ok := d.Get("a"); !ok || v != "1" {
		t.Fatalf("Dup shares values: %q %v", v, ok)
	}
	if err := d.Delete("c"); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Get("c"); ok || len(d.Keys()) != 2 {
		t.Fatalf("Delete: %v", d.Keys())
	}
	if err := d.Delete("nope"); err == nil {
		t.Fatal("deleting a missing key succeeded")
	}
}

// Hints set on a communicator are returned by its Info, and Dup with an
// Info gives the new communicator those hints (info/comm_info).
func TestCommInfo(t *testing.T) {
	conformance.Run(t, 2, func(c *mpi.Comm) error {
		in := mpi.NewInfo()
		if err := in.Set("mpi_assert_no_any_tag", "true"); err != nil {
			return err
		}
		d, err := c.DupWithInfo(in)
		if err != nil {
			return err
		}
		if v, ok := d.Info().Get("mpi_assert_no_any_tag"); !ok || v != "true" {
			return fmt.Errorf("DupWithInfo hint: %q %v", v, ok)
		}
		if err := c.SetInfo(in); err != nil {
			return err
		}
		if v, ok := c.Info().Get("mpi_assert_no_any_tag"); !ok || v != "true" {
			return fmt.Errorf("SetInfo hint: %q %v", v, ok)
		}
		return nil
	})
}
