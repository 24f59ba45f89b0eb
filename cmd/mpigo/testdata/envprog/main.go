// envprog prints what the launcher told it; mpigo run's tests build it.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Printf("rank %s of %s kvs-set=%v args=%v\n", os.Getenv("MPIGO_RANK"), os.Getenv("MPIGO_SIZE"), os.Getenv("MPIGO_KVS") != "", os.Args[1:])
}
