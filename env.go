package mpi

import (
	"os"
	"strconv"
)

// envInt reads an integer environment variable.
func envInt(name string) (int, bool) {
	s, ok := os.LookupEnv(name)
	if !ok || s == "" {
		return 0, false
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, false
	}
	return v, true
}
