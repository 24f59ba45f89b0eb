#!/usr/bin/env bash
# Run mpigo bench io and Open MPI's MPI-IO (bench/ref/io_like.c) on the
# same patterns, the same file system and the same sizes, alternating
# rounds, and print the two bandwidths side by side with their ratio.
#
#   bench/compare_io.sh [-n N] [-rounds R] [-prio P] [-dir DIR] [-iters N]
#                       [-reps R] [-transport T] [-thread single|multiple]
#                       [TEST] [-sizes LIST]
#
# TEST is io (every pattern, the default) or one of io_seg_write,
# io_seg_read, io_strided_write_coll, io_strided_write_ind,
# io_strided_read_coll, io_strided_read_ind (see mpigo bench -h). Both
# sides write into DIR (default ${TMPDIR:-/tmp}; /dev/shm for memory),
# sync before stopping the clock and remove their files. mpigo runs its
# ranks as goroutines (transport inproc), or as processes with -transport
# shm (or tcp), as Open MPI does; Open MPI runs N processes with
# its default I/O component (OMPIO on 4.x; OMPI_MCA_io=romio321 picks
# ROMIO). Both sides run under chrt -f 10 by default (-prio 0: normal
# priority; say so when you quote such numbers). Each (test, size) shows
# the median over the rounds of each side and their ratio (mpigo / Open
# MPI; higher is better for mpigo). Each run of either side is stopped
# after 900 s (timeout): under chrt on a loaded machine, Open MPI's
# busy-polling ranks can starve each other for minutes. -thread multiple
# starts the Open MPI side with MPI_Init_thread(MPI_THREAD_MULTIPLE), the
# level mpigo always provides; the default (single) with MPI_Init.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
n=2
rounds=3
rt=(chrt -f 10)
dir=${TMPDIR:-/tmp}
iters=()
reps=(-reps 3)
transport=inproc
thread=()
while [[ ${1:-} == -* && ${1:-} != -sizes ]]; do
	case $1 in
	-n) n=$2 ;;
	-rounds) rounds=$2 ;;
	-dir) dir=$2 ;;
	-iters) iters=(-iters "$2") ;;
	-reps) reps=(-reps "$2") ;;
	-transport) transport=$2 ;;
	-thread)
		case $2 in
		single) thread=() ;;
		multiple) thread=(-thread-multiple) ;;
		*) echo "compare_io.sh: -thread wants single or multiple, not '$2'" >&2; exit 2 ;;
		esac ;;
	-prio) if [[ $2 != 0 ]]; then rt=(chrt -f "$2"); else rt=(); fi ;;
	*) echo "compare_io.sh: unknown flag $1" >&2; exit 2 ;;
	esac
	shift 2
done
test=io
if [[ -n ${1:-} && ${1:-} != -sizes ]]; then test=$1; shift; fi
sizes=()
if [[ ${1:-} == -sizes ]]; then sizes=(-sizes "$2"); shift 2; fi
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "compare_io.sh: -rounds wants a positive number, not '$rounds'" >&2; exit 2; }
if [[ ${#rt[@]} -gt 0 ]] && ! "${rt[@]}" true 2>/dev/null; then
	echo "compare_io.sh: ${rt[*]} is not permitted here (needs root or CAP_SYS_NICE); -prio 0 runs both sides at normal priority" >&2
	exit 1
fi
pick() { command -v "$1" >/dev/null && echo "$1" || echo "$2"; }
MPIRUN=${MPIRUN:-$(pick mpirun.openmpi mpirun)}
MPICC=${MPICC:-$(pick mpicc.openmpi mpicc)}
runopts=(--oversubscribe)
[[ $EUID == 0 ]] && runopts+=(--allow-run-as-root)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$here/.." && go build -o "$tmp/mpigo" ./cmd/mpigo)
"$MPICC" -O2 -o "$tmp/io_like" "$here/ref/io_like.c"

echo "# $test, $n ranks, files in $dir ($(df -PT "$dir" | awk 'NR==2 {print $2}')): mpigo ($([[ $transport == inproc ]] && echo "goroutine ranks" || echo "processes over $transport")) vs Open MPI $("$MPIRUN" --version | awk 'NR==1 {print $NF}') MPI-IO${thread:+ (MPI_THREAD_MULTIPLE)}"
echo "# $rounds rounds each, alternating${rt:+, both under ${rt[*]}}; medians over the rounds"
for ((r = 1; r <= rounds; r++)); do
	timeout 900 "${rt[@]}" "$tmp/mpigo" bench "$test" -n "$n" -transport "$transport" -dir "$dir" -progress off "${sizes[@]}" "${iters[@]}" "${reps[@]}" >"$tmp/ours.$r" || echo "compare_io.sh: mpigo, round $r: failed or timed out" >&2
	timeout 900 "${rt[@]}" "$MPIRUN" "${runopts[@]}" -n "$n" "$tmp/io_like" "$test" -dir "$dir" "${sizes[@]}" "${iters[@]}" "${reps[@]}" "${thread[@]}" >"$tmp/theirs.$r" || echo "compare_io.sh: Open MPI, round $r: failed or timed out (its partial output is kept)" >&2
done

# "TEST SIZE MB/s" of every data line; the test is named by the block's
# first '#' line in both outputs.
rows() { awk '/^# mpigo bench / {t = $4} /^# io_like / {t = $3} !/^#/ && NF >= 2 {print t, $1, $2}' "$@"; }
medians() {
	sort -k1,1 -k2,2n -k3,3g | awk '
		$1 " " $2 != k { if (n) out(); k = $1 " " $2; n = 0 }
		{ v[++n] = $3 }
		END { if (n) out() }
		function out() { printf "%s %s\n", k, (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
}
for ((r = 1; r <= rounds; r++)); do rows "$tmp/ours.$r"; done | medians >"$tmp/ours"
for ((r = 1; r <= rounds; r++)); do rows "$tmp/theirs.$r"; done | medians >"$tmp/theirs"
printf "# %-22s %-10s %12s %12s %7s   (MB/s, higher is better)\n" Test Size mpigo "Open MPI" ratio
while read -r t size ours; do
	theirs=$(awk -v t="$t" -v s="$size" '$1==t && $2==s {print $3}' "$tmp/theirs")
	awk -v t="$t" -v s="$size" -v a="$ours" -v b="${theirs:-0}" 'BEGIN { printf "%-24s %-10s %12.1f %12.1f %7.2f\n", t, s, a, b, (b > 0) ? a / b : 0 }'
done < <(for x in io_seg_write io_seg_read io_strided_write_coll io_strided_write_ind io_strided_read_coll io_strided_read_ind; do awk -v x="$x" '$1==x' "$tmp/ours"; done)
