package mpi_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mpigo/mpi"
)

type person struct {
	Name string
	Tags []string
	Age  int
}

type employee struct { // the same shape as person, another type
	Name string
	Tags []string
	Age  int
}

type withFunc struct {
	Name string
	Call func()
}

// TestEncodedTypes sends encoded values (structs holding strings, maps of
// plain values, nested slices) over every transport, small and large;
// a receive as another Go type of the same shape fails with ErrType; and
// a value that cannot be encoded fails at Send with its type named.
func TestEncodedTypes(t *testing.T) {
	big := make([]person, 3000) // about 60 KB encoded: rendezvous with a low eager limit
	for i := range big {
		big[i] = person{Name: fmt.Sprint("p", i), Tags: []string{"x", "yz"}, Age: i}
	}
	scores := map[string]float64{"a": 1.5, "b": -2, "": 0}
	nested := map[string][]int32{"one": {1}, "none": nil, "empty": {}}
	matrix(t, 2, func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			for tag, v := range []any{big, scores, nested, person{Name: "solo"}} {
				var err error
				switch v := v.(type) {
				case []person:
					err = mpi.Send(world, v, 1, tag)
				case map[string]float64:
					err = mpi.Send(world, v, 1, tag)
				case map[string][]int32:
					err = mpi.Send(world, v, 1, tag)
				case person:
					err = mpi.Send(world, v, 1, tag)
				}
				if err != nil {
					return err
				}
			}
			err := mpi.Send(world, withFunc{Name: "f"}, 1, 9)
			if !errors.Is(err, mpi.ErrType) || !strings.Contains(err.Error(), "mpi_test.withFunc") || !strings.Contains(err.Error(), ".Call") {
				return fmt.Errorf("sending a func field: %v", err)
			}
			return nil
		}
		got, st, err := mpi.Recv[[]person](world, 0, 0)
		if err != nil || !reflect.DeepEqual(got, big) || st.Count() != st.Bytes() {
			return fmt.Errorf("[]person: %v (%d people)", err, len(got))
		}
		s, _, err := mpi.Recv[map[string]float64](world, 0, 1)
		if err != nil || !reflect.DeepEqual(s, scores) {
			return fmt.Errorf("map: %v %v", s, err)
		}
		n, _, err := mpi.Recv[map[string][]int32](world, 0, 2)
		if err != nil || !reflect.DeepEqual(n, nested) {
			return fmt.Errorf("nested map: %#v %v", n, err)
		}
		if _, _, err := mpi.Recv[employee](world, 0, 3); !errors.Is(err, mpi.ErrType) {
			return fmt.Errorf("person received as employee: %v", err)
		}
		return nil
	})
}

type cyclicNode struct {
	V    int
	Next *cyclicNode
}

// A value whose pointers form a cycle fails at Send with ErrType naming
// the cycle (it used to kill the process with a stack overflow), and so
// does a list too deep for the codec; a shared, acyclic value still goes.
func TestSendCycle(t *testing.T) {
	err := mpi.Run(2, func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			n := &cyclicNode{V: 1}
			n.Next = n
			err := mpi.Send(world, n, 1, 0)
			if !errors.Is(err, mpi.ErrType) || !strings.Contains(err.Error(), "cycle") || !strings.Contains(err.Error(), "*mpi_test.cyclicNode") {
				return fmt.Errorf("sending a cyclic list: %v, want ErrType naming the cycle", err)
			}
			var deep *cyclicNode
			for i := range 20000 {
				deep = &cyclicNode{V: i, Next: deep}
			}
			if err := mpi.Send(world, deep, 1, 0); !errors.Is(err, mpi.ErrType) || !strings.Contains(err.Error(), "deep") {
				return fmt.Errorf("sending a list of 20000 nodes: %v, want ErrType naming the depth limit", err)
			}
			shared := &cyclicNode{V: 5}
			return mpi.Send(world, [2]*cyclicNode{shared, shared}, 1, 1)
		}
		got, _, err := mpi.Recv[[2]*cyclicNode](world, 0, 1)
		if err != nil || got[0].V != 5 || got[1].V != 5 {
			return fmt.Errorf("two pointers to one value: %v %v", got, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
