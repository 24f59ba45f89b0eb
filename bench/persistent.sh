#!/usr/bin/env bash
# Time a persistent collective (set up once, then Start+Wait per
# iteration) against its plain form, in mpigo and in Open MPI, and print
# the medians side by side.
#
#   bench/persistent.sh [-n N] [-transport inproc|shm|tcp] [-rounds R] [-prio P] [TEST [-sizes SPEC]]
#
# TEST is allreduce (the default) or bcast; sizes default to 8:1048576.
# Each round runs four programs in turn (mpigo plain, mpigo -persistent,
# Open MPI plain, Open MPI -persistent), so that a machine drifting
# between fast and slow states moves all four; each column is the median
# over the rounds. All four run under chrt -f 10 (-prio P for another, 0
# for normal priority; say so when you quote such numbers). The Open MPI
# side is bench/ref/run.sh with osu_like -persistent, which uses
# MPI_Allreduce_init, or MPIX_Allreduce_init in Open MPI 4.1.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
n=2
transport=inproc
rounds=3
rt=(chrt -f 10)
while [[ ${1:-} == -n || ${1:-} == -transport || ${1:-} == -rounds || ${1:-} == -prio ]]; do
	case $1 in
	-n) n=$2 ;;
	-transport) transport=$2 ;;
	-rounds) rounds=$2 ;;
	-prio) if [[ $2 != 0 ]]; then rt=(chrt -f "$2"); else rt=(); fi ;;
	esac
	shift 2
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "persistent.sh: -rounds wants a positive number, not '$rounds'" >&2; exit 2; }
if [[ ${#rt[@]} -gt 0 ]] && ! "${rt[@]}" true 2>/dev/null; then
	echo "persistent.sh: ${rt[*]} is not permitted here (needs root or CAP_SYS_NICE); -prio 0 runs at normal priority" >&2
	exit 1
fi
test=${1:-allreduce}
[[ $test == allreduce || $test == bcast ]] || { echo "persistent.sh: TEST is allreduce or bcast, not '$test'" >&2; exit 2; }
shift || true
sizes=(-sizes 8:1048576)
if [[ ${1:-} == -sizes ]]; then sizes=(-sizes "$2"); shift 2; fi
[[ $transport == tcp ]] && export BTL=self,tcp

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$here/.." && go build -o "$tmp/mpigo" ./cmd/mpigo)

echo "# $test, $n ranks, mpigo transport $transport; $rounds rounds of 4 runs, alternating${rt:+, all under ${rt[*]}}; medians over the rounds (us)"
for ((r = 1; r <= rounds; r++)); do
	"${rt[@]}" "$tmp/mpigo" bench "$test" -n "$n" -transport "$transport" -progress off "${sizes[@]}" >"$tmp/plain.$r"
	"${rt[@]}" "$tmp/mpigo" bench "$test" -n "$n" -transport "$transport" -progress off -persistent "${sizes[@]}" >"$tmp/pers.$r"
	"${rt[@]}" "$here/ref/run.sh" -n "$n" "$test" "${sizes[@]}" >"$tmp/oplain.$r" 2>/dev/null
	"${rt[@]}" "$here/ref/run.sh" -n "$n" "$test" "${sizes[@]}" -persistent >"$tmp/opers.$r" 2>/dev/null
done
grep -m1 '^# persistent' "$tmp/opers.1" || true

values() { awk '!/^#/ && NF >= 2 {print $1, $2}' "$@"; }
medians() {
	sort -k1,1n -k2,2g | awk '
		$1 != s { if (n) out(); s = $1; n = 0 }
		{ v[++n] = $2 }
		END { if (n) out() }
		function out() { printf "%s %s\n", s, (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
}
for k in plain pers oplain opers; do
	for ((r = 1; r <= rounds; r++)); do values "$tmp/$k.$r"; done | medians >"$tmp/$k"
done
printf "# %-10s %12s %12s %7s %12s %12s %7s\n" Size "mpigo plain" "persistent" ratio "OMPI plain" "persistent" ratio
awk '
	FILENAME != last { k++; last = FILENAME }
	{ v[$1, k] = $2; if (!($1 in seen)) { seen[$1] = 1; order[++m] = $1 } }
	END {
		for (i = 1; i <= m; i++) {
			s = order[i]; a = v[s, 1]; b = v[s, 2]; c = v[s, 3]; d = v[s, 4]
			printf "%-12s %12.2f %12.2f %7.2f %12.2f %12.2f %7.2f\n", s, a, b, (a > 0) ? b / a : 0, c, d, (c > 0) ? d / c : 0
		}
	}' "$tmp/plain" "$tmp/pers" "$tmp/oplain" "$tmp/opers"
