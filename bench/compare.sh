#!/usr/bin/env bash
# Run one benchmark with mpigo and with Open MPI's shared-memory transport,
# back to back, and print the two columns side by side with their ratio.
#
#   bench/compare.sh [-n N] [-transport inproc|shm|tcp] [-api typed|raw]
#                    [-prio P] [-rounds R] TEST [-sizes LIST|MIN:MAX]
#
# With -transport tcp, mpigo's ranks talk over loopback TCP and Open MPI
# uses its tcp BTL (BTL=self,tcp); otherwise mpigo uses goroutine ranks and
# Open MPI shared memory (vader).
# TEST is latency, bw, bibw, allreduce, bcast, barrier, allgather, alltoall,
# reduce, reduce_scatter or scan. The Open MPI side
# is bench/ref/run.sh (needs openmpi-bin and libopenmpi-dev). For bw and
# bibw both sides use one receive buffer per window slot.
#
# Both sides run under the same scheduling priority: `chrt -f P` (real-time
# FIFO, default P=10) wraps each launcher, and the ranks inherit it. This
# needs root or CAP_SYS_NICE; -prio 0 runs both at normal priority (say so
# when you quote the numbers). With -rounds R (default 5) the two sides
# alternate R times and each column is the median of its R values; the
# ratio is the median of the R per-round ratios. Only ratios from one run
# mean anything on a shared machine. docs/performance.md has the method.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
n=2
transport=inproc
api=typed
prio=10
rounds=5
while [[ ${1:-} == -n || ${1:-} == -transport || ${1:-} == -api || ${1:-} == -prio || ${1:-} == -rounds ]]; do
	case $1 in
	-n) n=$2 ;;
	-transport) transport=$2 ;;
	-api) api=$2 ;;
	-prio) prio=$2 ;;
	-rounds) rounds=$2 ;;
	esac
	shift 2
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: -rounds needs a positive number, not '$rounds'" >&2; exit 2; }
[[ $prio =~ ^[0-9]+$ ]] || { echo "compare.sh: -prio needs a number (0: normal priority), not '$prio'" >&2; exit 2; }
# The same prefix for both sides, so neither runs at a priority the other
# lacks.
sched=()
if ((prio > 0)); then
	command -v chrt >/dev/null || { echo "compare.sh: chrt not found (util-linux); use -prio 0 to run both sides at normal priority" >&2; exit 1; }
	chrt -f "$prio" true 2>/dev/null || { echo "compare.sh: chrt -f $prio is not permitted here (needs root or CAP_SYS_NICE); use -prio 0 to run both sides at normal priority" >&2; exit 1; }
	sched=(chrt -f "$prio")
fi
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

prio_name="priority: chrt -f $prio for both"
((prio > 0)) || prio_name="priority: normal for both"
echo "# $test, $n ranks: mpigo (transport $transport, api $api) vs $theirs_name; $rounds alternating rounds, medians; $prio_name"
: >"$tmp/all"
for ((r = 1; r <= rounds; r++)); do
	"${sched[@]}" "$tmp/mpigo" bench "$test" -n "$n" -transport "$transport" -api "$api" "${sizes[@]}" >"$tmp/ours"
	"${sched[@]}" "$here/ref/run.sh" -n "$n" "$test" "${sizes[@]}" "${extra[@]}" >"$tmp/theirs" 2>/dev/null
	# One line per size and round: SIZE OURS THEIRS.
	awk 'NR==FNR { if (!/^#/ && NF==2) t[$1] = $2; next }
	     !/^#/ && NF==2 { print $1, $2, ($1 in t) ? t[$1] : "nan" }' "$tmp/theirs" "$tmp/ours" >>"$tmp/all"
done
unit=$(grep -m1 -E 'Latency|Bandwidth' "$tmp/ours" | sed 's/^# *Size *//')
better="lower is better"
[[ $unit == Bandwidth* ]] && better="higher is better"
printf "# %-10s %14s %14s %8s   (%s, %s)\n" Size mpigo "Open MPI" ratio "$unit" "$better"
for size in $(awk '{print $1}' "$tmp/all" | awk '!seen[$0]++'); do
	med() { sort -g | awk '{v[NR] = $1} END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2] + v[NR/2+1]) / 2 }'; }
	ours=$(awk -v s="$size" '$1==s {print $2}' "$tmp/all" | med)
	theirs=$(awk -v s="$size" '$1==s && $3 != "nan" {print $3}' "$tmp/all" | med)
	ratio=$(awk -v s="$size" '$1==s && $3+0 > 0 {print $2/$3}' "$tmp/all" | med)
	awk -v s="$size" -v a="$ours" -v b="$theirs" -v r="$ratio" 'BEGIN { printf "%-12s %14.2f %14s %8.2f\n", s, a, b, r }'
done
