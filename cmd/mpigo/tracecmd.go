package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mpigo/mpi/internal/trace"
)

const traceUsage = `Usage: mpigo trace FILE [-html OUT.html]

Summarises a timeline recorded with mpigo run --trace FILE (or
MPIGO_TRACE=FILE): time in MPI per rank and per call, late senders, late
receivers, the largest messages. With -html it also writes one
self-contained page that draws the timeline (no network needed to view it).
The file itself opens in ui.perfetto.dev or chrome://tracing.

Under other launchers each process writes FILE.rankR.part; mpigo trace
FILE merges them into FILE first.

Flags:
`

// traceCmd is mpigo trace.
func traceCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("trace", flag.ContinueOnError)
	fs.SetOutput(stderr)
	html := fs.String("html", "", "write the timeline as a self-contained HTML page to `OUT.html`")
	var files []string
	for len(args) > 0 { // FILE may come before or after the flags
		if isHelp(args[0]) {
			fmt.Fprint(stdout, traceUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		if !strings.HasPrefix(args[0], "-") {
			files = append(files, args[0])
			args = args[1:]
			continue
		}
		if err := fs.Parse(args); err != nil {
			return 2
		}
		args = fs.Args()
	}
	if len(files) != 1 {
		fmt.Fprint(stderr, traceUsage)
		fs.PrintDefaults()
		return 2
	}
	file := files[0]
	if _, err := os.Stat(file); os.IsNotExist(err) {
		if parts, _ := filepath.Glob(file + ".rank*.part"); len(parts) > 0 {
			var ps []*trace.Part
			for _, n := range parts {
				p, err := trace.ReadPart(n)
				if err != nil {
					fmt.Fprintf(stderr, "mpigo trace: %v\n", err)
					return 1
				}
				ps = append(ps, p)
			}
			if err := trace.Merge(ps).WriteFile(file); err != nil {
				fmt.Fprintf(stderr, "mpigo trace: %v\n", err)
				return 1
			}
			fmt.Fprintf(stderr, "mpigo trace: merged %d part(s) into %s\n", len(parts), file)
		}
	}
	f, err := os.Open(file)
	if err != nil {
		fmt.Fprintf(stderr, "mpigo trace: %v\n", err)
		return 1
	}
	tf, err := trace.Read(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(stderr, "mpigo trace: %s: %v\n", file, err)
		return 1
	}
	v, err := trace.NewView(tf)
	if err != nil {
		fmt.Fprintf(stderr, "mpigo trace: %s: %v\n", file, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: ", file)
	v.Summary(stdout)
	if *html != "" {
		out, err := os.Create(*html)
		if err == nil {
			err = v.HTML(out, filepath.Base(file))
			if cerr := out.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "mpigo trace: -html: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "\ntimeline written to %s\n", *html)
	}
	return 0
}
