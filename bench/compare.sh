#!/usr/bin/env bash
# Run one benchmark with mpigo and with Open MPI's shared-memory transport,
# back to back, and print the two columns side by side with their ratio.
#
#   bench/compare.sh [-n N] [-transport inproc|shm|tcp] [-api typed|raw] TEST [-sizes LIST|MIN:MAX]
#
# With -transport tcp, mpigo's ranks talk over loopback TCP and Open MPI
# uses its tcp BTL (BTL=self,tcp); otherwise mpigo uses goroutine ranks and
# Open MPI shared memory (vader).
# TEST is latency, bw, bibw, allreduce, bcast, barrier, allgather, alltoall,
# reduce, reduce_scatter or scan. The Open MPI side
# is bench/ref/run.sh (needs openmpi-bin and libopenmpi-dev). For bw and
# bibw both sides use one receive buffer per window slot. Only ratios from
# one run mean anything on a shared machine.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
n=2
transport=inproc
api=typed
while [[ ${1:-} == -n || ${1:-} == -transport || ${1:-} == -api ]]; do
	case $1 in
	-n) n=$2 ;;
	-transport) transport=$2 ;;
	-api) api=$2 ;;
	esac
	shift 2
done
if [[ $transport == tcp ]]; then
	export BTL=self,tcp
	theirs_name="Open MPI tcp BTL"
else
	theirs_name="Open MPI vader"
fi
test=${1:?usage: compare.sh [-n N] TEST [-sizes SPEC]}
shift
sizes=()
if [[ ${1:-} == -sizes ]]; then sizes=(-sizes "$2"); shift 2; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$here/.." && go build -o "$tmp/mpigo" ./cmd/mpigo)

extra=()
[[ $test == bw || $test == bibw ]] && extra=(-rbuf-per-slot)

echo "# $test, $n ranks: mpigo (transport $transport, api $api) vs $theirs_name, run back to back"
"$tmp/mpigo" bench "$test" -n "$n" -transport "$transport" -api "$api" "${sizes[@]}" >"$tmp/ours"
"$here/ref/run.sh" -n "$n" "$test" "${sizes[@]}" "${extra[@]}" >"$tmp/theirs" 2>/dev/null
unit=$(grep -m1 -E 'Latency|Bandwidth' "$tmp/ours" | sed 's/^# *Size *//')
better="lower is better"
[[ $unit == Bandwidth* ]] && better="higher is better"
printf "# %-10s %14s %14s %8s   (%s, %s)\n" Size mpigo "Open MPI" ratio "$unit" "$better"
awk '!/^#/ && NF==2 {print $1, $2}' "$tmp/theirs" >"$tmp/t2"
awk '!/^#/ && NF==2 {print $1, $2}' "$tmp/ours" | while read -r size ours; do
	theirs=$(awk -v s="$size" '$1==s {print $2}' "$tmp/t2")
	[[ -z $theirs ]] && theirs=nan
	awk -v s="$size" -v a="$ours" -v b="$theirs" 'BEGIN { r = (b+0 > 0) ? a/b : 0; printf "%-12s %14.2f %14s %8.2f\n", s, a, b, r }'
done
