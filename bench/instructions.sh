#!/usr/bin/env bash
# Count the instructions one op of a root-package benchmark costs, with
# callgrind: repeatable on a loaded machine, where timings are not.
#
#   bench/instructions.sh [-n N] [-cpu P] BENCH      e.g. MessageRate/shm
#
# Runs BENCH for N and 2N ops (default N=64000) and prints
# (count(2N) - count(N)) / N, which leaves out start-up. -cpu sets
# GOMAXPROCS (default 1: the software path, with little polling in it).
# Needs valgrind. docs/performance.md has the method.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
n=64000
cpu=1
while [[ ${1:-} == -n || ${1:-} == -cpu ]]; do
	case $1 in
	-n) n=$2 ;;
	-cpu) cpu=$2 ;;
	esac
	shift 2
done
bench=${1:?usage: instructions.sh [-n N] [-cpu P] BENCH}
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "instructions.sh: -n needs a positive number" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind not found (apt-get install -y valgrind)" >&2; exit 1; }
re="^Benchmark${bench%%/*}\$"
[[ $bench == */* ]] && re="$re/${bench#*/}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# No cgo; under valgrind 3.19 Go also needs no preemption signals
# (callgrind asserts on them) and no RDTSCP (valgrind cannot decode it).
(cd "$here/.." && CGO_ENABLED=0 go test -c -o "$tmp/mpi.test" .)
count() {
	GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$1" \
		"$tmp/mpi.test" -test.run XXX -test.bench "$re" -test.benchtime="$1x" \
		-test.cpu "$cpu" -test.benchmem >"$tmp/out.$1" 2>"$tmp/err.$1" || { cat "$tmp/err.$1" >&2; exit 1; }
	sed -n 's/.*I *refs: *//p' "$tmp/err.$1" | tr -d ,
}
a=$(count "$n")
b=$(count $((2 * n)))
grep -h '^Benchmark' "$tmp/out.$n"
awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { printf "instructions per op: %.0f  (%d ops: %.0f, %d ops: %.0f)\n", (b - a) / n, n, a, 2 * n, b }'
