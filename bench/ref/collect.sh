#!/usr/bin/env bash
# Run the full Open MPI reference set and write bench/ref/results-<date>.txt.
#   bench/ref/collect.sh [OUTFILE]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:-$here/results-$(date +%Y-%m-%d).txt}
run=$here/run.sh

{
	echo "# Open MPI shared-memory reference for mpigo bench"
	echo "# date:     $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "# machine:  nproc=$(nproc), CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), kernel $(uname -r), $(. /etc/os-release; echo "$PRETTY_NAME")"
	echo "# Open MPI: $(ompi_info --version 2>/dev/null | head -1) ($(dpkg-query -W -f='${Package} ${Version}' openmpi-bin 2>/dev/null || true))"
	echo "# mpicc:    $( (command -v mpicc.openmpi >/dev/null && mpicc.openmpi --version || mpicc --version) | head -1)"
	echo "# vader:    $(ompi_info --param btl vader --level 9 --parsable | grep -E 'single_copy_mechanism:value|btl_vader_eager_limit:value|max_send_size:value' | sed 's/mca:btl:vader:param://' | tr '\n' ' ')"
	echo "# build:    mpicc.openmpi -O2 -Wall -o osu_like bench/ref/osu_like.c (by run.sh)"
	echo "# Each section below starts with the exact mpirun command (from run.sh), then the raw output."
} >"$out"

# Idle CPU percent over one second (from /proc/stat). This machine has only
# 2 cores: anything else running (go test, a build) skews every number.
idle_pct() {
	local a b
	read -r -a a < <(grep '^cpu ' /proc/stat)
	sleep 1
	read -r -a b < <(grep '^cpu ' /proc/stat)
	local tot=0 i
	for i in 1 2 3 4 5 6 7 8; do tot=$((tot + b[i] - a[i])); done
	echo $(((b[4] - a[4] + b[5] - a[5]) * 100 / (tot > 0 ? tot : 1)))
}

# Wait (up to QUIET_WAIT seconds, default 300) for the machine to be >= 90% idle.
wait_quiet() {
	local deadline=$((SECONDS + ${QUIET_WAIT:-300})) idle
	while :; do
		idle=$(idle_pct)
		((idle >= 90 || SECONDS >= deadline)) && break
	done
	echo "$idle"
}

section() {
	local idle
	idle=$(wait_quiet)
	echo >>"$out"
	echo "## bench/ref/run.sh $*" >>"$out"
	echo "# machine idle before run: ${idle}%$( ((idle < 90)) && echo ' (BUSY: other load present, numbers suspect)')" >>"$out"
	"$run" "$@" >>"$out" 2>&1
}

section latency
section bw
section bw -rbuf-per-slot
section bibw
section bibw -rbuf-per-slot
for n in 2 4; do
	section -n "$n" allreduce
	section -n "$n" bcast
	section -n "$n" barrier
done
section netpipe -p 0 -u 4194304

# Repeatability: the key sizes three more times each (runs vary by ~10-20%).
echo >>"$out"
echo "# ---- repeats of key sizes (3 runs each) ----" >>"$out"
for rep in 1 2 3; do
	section latency -sizes 8,4194304
	section bw -sizes 4194304:4194304
	section bw -sizes 4194304:4194304 -rbuf-per-slot
	section bibw -sizes 4194304:4194304
	section bibw -sizes 4194304:4194304 -rbuf-per-slot
	for n in 2 4; do
		section -n "$n" allreduce -sizes 8,1048576
		section -n "$n" bcast -sizes 8,1048576
		section -n "$n" barrier
	done
done
echo "wrote $out"
