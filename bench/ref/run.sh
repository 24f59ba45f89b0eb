#!/usr/bin/env bash
# Build bench/ref/osu_like.c with mpicc and run it under Open MPI's
# shared-memory BTL: the reference side for `mpigo bench` comparisons.
#
#   bench/ref/run.sh [-n N] TEST [osu_like args...]     TEST: latency sendrecv bw bibw allreduce bcast barrier allgather alltoall reduce reduce_scatter scan
#   bench/ref/run.sh [-n N] TEST [osu_rma args...]      TEST: put_latency get_latency acc_latency fop_latency cas_latency put_bw get_bw
#   bench/ref/run.sh [-n N] netpipe [NPmpi args...]     NetPIPE cross-check (2 ranks)
#   bench/ref/run.sh windows [ITERS]                    windows.c (bench/windows.sh)
#
# Environment: BTL=... to force the BTL list (default: self,vader, or self,sm
# on Open MPI 5+ where vader was renamed); MPIRUN_EXTRA="..." extra mpirun args.
# Open MPI's tools are called by their explicit names (mpirun.openmpi,
# mpicc.openmpi) because with MPICH installed too, plain mpirun/mpicc may
# be MPICH's; MPIRUN=... and MPICC=... override them.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
n=2
if [[ ${1:-} == -n ]]; then
	n=${2:?-n needs a number}
	shift 2
elif [[ ${1:-} == -n* ]]; then
	n=${1#-n}
	shift
fi
test=${1:?usage: run.sh [-n N] latency|bw|bibw|allreduce|bcast|barrier|netpipe [args...]}
shift

# Debian names Open MPI's tools mpirun.openmpi and mpicc.openmpi; elsewhere
# (Open MPI alone) they are plain mpirun and mpicc.
pick() { command -v "$1" >/dev/null && echo "$1" || echo "$2"; }
MPIRUN=${MPIRUN:-$(pick mpirun.openmpi mpirun)}
MPICC=${MPICC:-$(pick mpicc.openmpi mpicc)}
for tool in "$MPICC" "$MPIRUN" ompi_info; do
	command -v "$tool" >/dev/null || {
		echo "run.sh: $tool not found; install with: apt-get install -y openmpi-bin libopenmpi-dev netpipe-openmpi" >&2
		exit 1
	}
done

# Pick the shared-memory BTL: "vader" up to Open MPI 4.x, "sm" from 5.0 on.
if [[ -z ${BTL:-} ]]; then
	btls=$(ompi_info --parsable 2>/dev/null | sed -n 's/^mca:btl:\([a-z0-9_]*\):version:.*/\1/p' | sort -u)
	if grep -qx vader <<<"$btls"; then
		BTL=self,vader
	elif grep -qx sm <<<"$btls"; then
		BTL=self,sm
	else
		echo "run.sh: no shared-memory BTL (vader or sm) in this Open MPI; BTLs: $(echo $btls)" >&2
		exit 1
	fi
fi

# Running as root needs both the flag and (for some versions) these variables;
# oversubscription (more ranks than cores) is allowed either way.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1          # Open MPI 4.x
export PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe   # Open MPI 5.x (PRRTE)
root_flag=()
[[ $(id -u) == 0 ]] && root_flag=(--allow-run-as-root)

run() {
	echo "# cmd: $MPIRUN ${root_flag[*]} --oversubscribe -np $n --mca btl $BTL ${MPIRUN_EXTRA:-} $*" >&2
	# shellcheck disable=SC2086
	"$MPIRUN" "${root_flag[@]}" --oversubscribe -np "$n" --mca btl "$BTL" ${MPIRUN_EXTRA:-} "$@"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [[ $test == netpipe ]]; then
	# Debian's netpipe-openmpi installs NPmpi as NPopenmpi.
	np=$(command -v NPmpi || command -v NPopenmpi || true)
	[[ -n $np ]] || { echo "run.sh: NetPIPE not found (apt-get install -y netpipe-openmpi)" >&2; exit 1; }
	n=2
	cd "$tmp" # NetPIPE writes np.out into the working directory
	run "$np" "$@"
	exit
fi

case $test in
put_latency | get_latency | acc_latency | fop_latency | cas_latency | put_bw | get_bw)
	# One-sided tests: osu_rma.c. Open MPI picks osc/sm on one node; with
	# BTL=self,tcp, add MPIRUN_EXTRA="--mca osc pt2pt" for its message path.
	"$MPICC" -O2 -Wall -o "$tmp/osu_rma" "$here/osu_rma.c"
	cd "$tmp"
	run ./osu_rma "$test" "$@"
	exit
	;;
windows)
	# How the windows of the 8-byte message rate spread: windows.c (see
	# bench/windows.sh).
	"$MPICC" -O2 -Wall -o "$tmp/windows" "$here/windows.c"
	cd "$tmp"
	run ./windows "$@"
	exit
	;;
esac

"$MPICC" -O2 -Wall -o "$tmp/osu_like" "$here/osu_like.c"
cd "$tmp"
run ./osu_like "$test" "$@"
