#!/usr/bin/env bash
# Time Spawn of 4 children to their first message, mpigo against Open MPI's
# MPI_Comm_spawn, in alternating rounds, both at normal priority by default
# (-prio P runs both under chrt -f P); prints each round and the medians.
# Not under real-time priority by default: on a 2-core machine Open MPI's
# spawned children busy-poll at that priority and starve their parent, a
# livelock (seen here for an hour); each side is stopped after 60 s.
#
#   bench/spawn.sh [-rounds R] [-prio P]
#
# mpigo's side is cmd/mpigo/testdata/spawnprog (mode spawntime) under
# mpigo run -n 1; Open MPI's is bench/ref/spawn.c under mpirun -n 1 (needs
# openmpi-bin and libopenmpi-dev).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rounds=5
prio=0
while [ $# -gt 0 ]; do
	case "$1" in
	-rounds) rounds=$2; shift 2 ;;
	-prio) prio=$2; shift 2 ;;
	*) echo "usage: bench/spawn.sh [-rounds R] [-prio P]" >&2; exit 2 ;;
	esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$here/.." && go build -o "$tmp/mpigo" ./cmd/mpigo && go build -o "$tmp/spawnprog" ./cmd/mpigo/testdata/spawnprog)
mpicc -O2 -o "$tmp/spawn_ompi" "$here/ref/spawn.c"
rt=()
if [ "$prio" != 0 ]; then rt=(chrt -f "$prio"); fi
root=()
if [ "$(id -u)" = 0 ]; then root=(--allow-run-as-root); fi
ours=() theirs=()
for ((i = 1; i <= rounds; i++)); do
	a=$(timeout -k 2 60 "${rt[@]}" "$tmp/mpigo" run -n 1 "$tmp/spawnprog" spawntime | awk '$1=="spawn"{print $3}' || true)
	b=$(timeout -k 2 60 "${rt[@]}" mpirun "${root[@]}" --oversubscribe -n 1 "$tmp/spawn_ompi" 4 2>/dev/null | awk '$1=="spawn"{print $3}' || true)
	pkill -9 -f "$tmp/spawn_ompi" 2>/dev/null || true
	echo "round $i: mpigo ${a:-?} ms, Open MPI ${b:-?} ms"
	ours+=("${a:-nan}") theirs+=("${b:-nan}")
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
echo "median: mpigo $(median "${ours[@]}") ms, Open MPI $(median "${theirs[@]}") ms (spawn of 4 to their first message)"
