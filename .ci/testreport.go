//go:build ignore

// testreport reads `go test -json` on stdin and prints what a person
// reading CI's log needs: each package's result and time as go test
// prints them, the whole output of every failed test, and the slowest
// tests. It exits 1 if anything failed, so that `set -o pipefail` in
// .ci/run stops there.
//
//	go test -json ./... | go run .ci/testreport.go
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

func main() {
	out := map[string]*strings.Builder{} // package/test -> output
	type timing struct {
		name    string
		elapsed float64
	}
	var times []timing
	var failed []string
	bad := false
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil {
			fmt.Println(string(line)) // a build error or other plain text
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "build-output":
			// The compiler's or linker's words for a package that did not
			// build ("no space left on device", a type error): without
			// them the log says only "[build failed]".
			fmt.Print(e.Output)
		case "build-fail":
			bad = true
		case "output":
			if e.Test == "" {
				// Package lines: "ok  pkg 1.2s", "FAIL", build failures.
				if strings.HasPrefix(e.Output, "ok") || strings.HasPrefix(e.Output, "FAIL") ||
					strings.HasPrefix(e.Output, "?") || strings.HasPrefix(e.Output, "panic") {
					fmt.Print(e.Output)
				}
			}
			b := out[key]
			if b == nil {
				b = &strings.Builder{}
				out[key] = b
			}
			if b.Len() < 1<<20 {
				b.WriteString(e.Output)
			}
		case "pass", "skip":
			if e.Test != "" && !strings.Contains(e.Test, "/") {
				times = append(times, timing{e.Package + " " + e.Test, e.Elapsed})
			}
			delete(out, key)
		case "fail":
			bad = true
			if e.Test != "" {
				failed = append(failed, key)
				break
			}
			// A package that failed without its tests ending (a panic,
			// or the -timeout's "panic: test timed out" with every
			// goroutine's stack) leaves that output with the tests that
			// were still running: print theirs too, or a hang in CI
			// shows nothing but the package's FAIL line.
			var running []string
			for k := range out {
				if strings.HasPrefix(k, e.Package+" ") && k != key && !contains(failed, k) {
					running = append(running, k)
				}
			}
			sort.Strings(running)
			failed = append(failed, running...)
			if out[key] != nil {
				failed = append(failed, key)
			}
		}
	}
	for _, k := range failed {
		if b := out[k]; b != nil {
			fmt.Printf("\n=== output of failed %s\n%s", k, b.String())
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i].elapsed > times[j].elapsed })
	fmt.Println("\n== slowest tests")
	for i, t := range times {
		if i == 25 {
			break
		}
		fmt.Printf("%8.1fs  %s\n", t.elapsed, t.name)
	}
	if bad {
		fmt.Println("\nFAIL")
		os.Exit(1)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
