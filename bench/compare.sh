#!/usr/bin/env bash
# Run one benchmark with mpigo and with Open MPI's shared-memory transport,
# back to back, and print the two columns side by side with their ratio.
#
#   bench/compare.sh [-n N] [-transport inproc|shm|tcp] [-api typed|raw|set]
#                    [-rounds R] [-rt | -prio P] [-iters N] [-thread single|multiple]
#                    [-persistent] [-save DIR] TEST [-sizes LIST|MIN:MAX]
#
# With -transport tcp, mpigo's ranks talk over loopback TCP and Open MPI
# uses its tcp BTL (BTL=self,tcp); otherwise mpigo uses goroutine ranks and
# Open MPI shared memory (vader).
# TEST is latency, sendrecv, bw, bibw, allreduce, bcast, barrier, allgather,
# alltoall, reduce, reduce_scatter or scan. The Open MPI side
# is bench/ref/run.sh (needs openmpi-bin and libopenmpi-dev). For bw and
# bibw both sides use one receive buffer per window slot. Only ratios from
# one run mean anything on a shared machine.
#
# -rounds R (default 5) runs the two sides R times each, alternating (mpigo, Open MPI,
# mpigo, ...), so that a machine drifting between fast and slow states
# moves both; each size then shows the median of our rounds, the median
# of theirs, their ratio and, last, the median of the ratios of the
# rounds taken pairwise. Both sides run under the same real-time
# priority, chrt -f 10 by default (-prio P for another; needs root or
# CAP_SYS_NICE, else the script refuses), which keeps other work on the
# machine from preempting either side; -prio 0 runs both at normal
# priority (say so when you quote such numbers); -rt is the default.
# -iters N gives both sides N timed iterations per repetition (for bw, N
# windows; the default 100 lasts about a millisecond at 8 bytes, short
# enough for start-up transients to decide mpigo's median). -save DIR keeps the medians as OSU-style
# text: DIR/mpigo.txt and DIR/openmpi.txt (for mpigo bench report -ref).
# -thread multiple starts the Open MPI side with
# MPI_Init_thread(MPI_THREAD_MULTIPLE), the level mpigo always provides,
# so that both sides pay for the same thread safety; the default (single)
# is OSU's plain MPI_Init, under which Open MPI takes no locks.
# -persistent (allreduce, bcast) measures both sides' persistent form:
# mpigo bench -persistent and osu_like -persistent (MPI_Allreduce_init,
# or MPIX_Allreduce_init in Open MPI 4.1).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
n=2
transport=inproc
api=typed
rounds=5
rt=(chrt -f 10) # the same priority for both sides; -prio 0: normal for both
save=""
iters=()
thread=()
persistent=()
while [[ ${1:-} == -persistent || ${1:-} == -thread || ${1:-} == -iters || ${1:-} == -n || ${1:-} == -transport || ${1:-} == -api || ${1:-} == -rounds || ${1:-} == -rt || ${1:-} == -prio || ${1:-} == -save ]]; do
	case $1 in
	-n) n=$2 ;;
	-transport) transport=$2 ;;
	-api) api=$2 ;;
	-rounds) rounds=$2 ;;
	-save) save=$2 ;;
	-iters) iters=(-iters "$2") ;;
	-thread)
		case $2 in
		single) thread=() ;;
		multiple) thread=(-thread-multiple) ;;
		*) echo "compare.sh: -thread wants single or multiple, not '$2'" >&2; exit 2 ;;
		esac ;;
	-prio) # -prio P: chrt -f P for both sides (0: normal priority)
		if [[ $2 != 0 ]]; then rt=(chrt -f "$2"); else rt=(); fi ;;
	-rt)
		rt=(chrt -f 10)
		shift
		continue
		;;
	-persistent)
		persistent=(-persistent)
		shift
		continue
		;;
	esac
	shift 2
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: -rounds wants a positive number, not '$rounds'" >&2; exit 2; }
if [[ ${#rt[@]} -gt 0 ]] && ! "${rt[@]}" true 2>/dev/null; then
	echo "compare.sh: ${rt[*]} is not permitted here (needs root or CAP_SYS_NICE); -prio 0 runs both sides at normal priority" >&2
	exit 1
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

[[ ${#thread[@]} -gt 0 ]] && theirs_name="$theirs_name (MPI_THREAD_MULTIPLE)"
[[ ${#persistent[@]} -gt 0 ]] && theirs_name="$theirs_name (persistent)"
echo "# $test${persistent:+ -persistent}, $n ranks: mpigo (transport $transport, api $api) vs $theirs_name, run back to back"
[[ $rounds -gt 1 ]] && echo "# $rounds rounds each, alternating${rt:+, both under ${rt[*]}}; medians over the rounds"
for ((r = 1; r <= rounds; r++)); do
	"${rt[@]}" "$tmp/mpigo" bench "$test" -n "$n" -transport "$transport" -api "$api" -progress off "${sizes[@]}" "${iters[@]}" "${persistent[@]}" >"$tmp/ours.$r"
	"${rt[@]}" "$here/ref/run.sh" -n "$n" "$test" "${sizes[@]}" "${extra[@]}" "${iters[@]}" "${thread[@]}" "${persistent[@]}" >"$tmp/theirs.$r" 2>/dev/null
done
unit=$(grep -m1 -E 'Latency|Bandwidth' "$tmp/ours.1" | sed 's/^# *Size *//; s/  .*//')
better="lower is better"
[[ $unit == Bandwidth* ]] && better="higher is better"

# "SIZE VALUE" of each round's data lines (the value is the second
# column in both outputs), then per size the median over the rounds.
values() { awk '!/^#/ && NF >= 2 {print $1, $2}' "$@"; }
medians() {
	sort -k1,1n -k2,2g | awk '
		!seen || $1 != s { if (n) out(); s = $1; n = 0; seen = 1 } # size 0 (barrier) equals an unset s
		{ v[++n] = $2 }
		END { if (n) out() }
		function out() { printf "%s %s\n", s, (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
}
for ((r = 1; r <= rounds; r++)); do values "$tmp/ours.$r"; done | medians >"$tmp/ours"
for ((r = 1; r <= rounds; r++)); do values "$tmp/theirs.$r"; done | medians >"$tmp/theirs"
# The ratio of each round's pair, per size, and their median.
for ((r = 1; r <= rounds; r++)); do
	values "$tmp/ours.$r" | while read -r size ours; do
		theirs=$(values "$tmp/theirs.$r" | awk -v s="$size" '$1==s {print $2}')
		[[ -n $theirs ]] && awk -v s="$size" -v a="$ours" -v b="$theirs" 'BEGIN { if (b+0 > 0) print s, a/b }'
	done
done | medians >"$tmp/paired"

if [[ -n $save ]]; then
	mkdir -p "$save"
	{ grep '^#' "$tmp/ours.1" | grep -v -e '^# median of' -e '^# Size'; echo "# median over $rounds rounds of bench/compare.sh"; echo "# Size       $unit"; awk '{printf "%-12s %s\n", $1, $2}' "$tmp/ours"; } >"$save/mpigo.txt"
	{ grep '^#' "$tmp/theirs.1" | grep -v '^# Size'; echo "# median over $rounds rounds of bench/compare.sh"; echo "# Size       $unit"; awk '{printf "%-12s %s\n", $1, $2}' "$tmp/theirs"; } >"$save/openmpi.txt"
fi

printf "# %-10s %14s %14s %8s %8s   (%s, %s)\n" Size mpigo "Open MPI" ratio paired "$unit" "$better"
while read -r size ours; do
	theirs=$(awk -v s="$size" '$1==s {print $2}' "$tmp/theirs")
	paired=$(awk -v s="$size" '$1==s {print $2}' "$tmp/paired")
	[[ -z $theirs ]] && theirs=nan
	[[ -z $paired ]] && paired=nan
	awk -v s="$size" -v a="$ours" -v b="$theirs" -v p="$paired" 'BEGIN { r = (b+0 > 0) ? a/b : 0; printf "%-12s %14.2f %14s %8.2f %8s\n", s, a, b, r, (p == "nan") ? p : sprintf("%.2f", p) }'
done <"$tmp/ours"
