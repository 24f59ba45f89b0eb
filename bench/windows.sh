#!/usr/bin/env bash
# Time every window of the 8-byte message-rate test, over shared memory
# between two processes, with mpigo (bench/windows) and with Open MPI
# (bench/ref/windows.c), alternating, both under chrt -f 10, and print how
# each side's window times spread: the median window, p90, p99, the mean,
# and the share of windows over twice the median with the share of the
# time they take. `mpigo bench bw` reports the mean alone, which hides
# whether a gap is every window being slower or some windows being much
# slower (docs/performance.md, "Where the message rate goes"). mpigo runs
# twice per round: with Isend and IrecvInto, and with the windows posted
# in an mpi.Requests set, which allocates no Request per message.
#
#   bench/windows.sh [-rounds R] [-iters N]      (default 3 rounds of 20000 windows)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rounds=3
iters=20000
while [[ ${1:-} == -rounds || ${1:-} == -iters ]]; do
	case $1 in
	-rounds) rounds=$2 ;;
	-iters) iters=$2 ;;
	esac
	shift 2
done
[[ $rounds =~ ^[1-9][0-9]*$ && $iters =~ ^[1-9][0-9]*$ ]] || { echo "windows.sh: -rounds and -iters want positive numbers" >&2; exit 2; }
rt=(chrt -f 10)
"${rt[@]}" true 2>/dev/null || { echo "windows.sh: chrt -f 10 is not permitted here (needs root or CAP_SYS_NICE)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$here/.." && go build -o "$tmp/mpigo" ./cmd/mpigo && go build -o "$tmp/windows" ./bench/windows)
for r in $(seq "$rounds"); do
	"${rt[@]}" "$tmp/mpigo" run -n 2 "$tmp/windows" -iters "$iters"
	"${rt[@]}" "$tmp/mpigo" run -n 2 "$tmp/windows" -iters "$iters" -set
	"${rt[@]}" "$here/ref/run.sh" windows "$iters" 2>/dev/null
done
