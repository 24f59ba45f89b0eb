package main

import (
	"testing"

	"github.com/mpigo/mpi"
)

func TestHello(t *testing.T) {
	if err := mpi.Run(2, hello); err != nil {
		t.Fatal(err)
	}
	if err := mpi.Run(1, hello); err != nil {
		t.Fatal(err)
	}
}
