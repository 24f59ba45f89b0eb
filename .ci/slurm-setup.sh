#!/usr/bin/env bash
# Start a one-node Slurm cluster on this machine for mpigo's srun tests:
# munged, slurmctld and slurmd on localhost, one node named after
# `hostname -s` with 8 CPUs (so 4 ranks fit even on a 2-core machine) in a
# default partition. Needs root and the packages slurm-wlm and munge.
#
# Idempotent and fast: if `srun -n1 true` already works it does nothing;
# it writes /etc/slurm/slurm.conf only if there is none or it is one this
# script wrote. Prints "slurm ready" on success.
set -euo pipefail

node=$(hostname -s)
conf=/etc/slurm/slurm.conf
marker="# written by mpigo .ci/slurm-setup.sh"

ok() { timeout 20 srun -N1 -n1 --mpi=pmi2 true >/dev/null 2>&1; }

if ok; then
	echo "slurm ready (already running)"
	exit 0
fi

# munge: Slurm's authentication.
mkdir -p /run/munge /var/log/munge /var/lib/munge /etc/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge /etc/munge 2>/dev/null || true
if [ ! -s /etc/munge/munge.key ]; then
	dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chown munge:munge /etc/munge/munge.key
chmod 400 /etc/munge/munge.key
if ! munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
	runuser -u munge -- /usr/sbin/munged
	for _ in $(seq 50); do munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
fi

mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
if [ ! -f "$conf" ] || grep -qF "$marker" "$conf"; then
	cat >"$conf" <<EOF
$marker
ClusterName=mpigo-ci
SlurmctldHost=$node
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=2
InactiveLimit=0
NodeName=$node CPUs=8 State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOF
fi

if ! pgrep -x slurmctld >/dev/null; then
	/usr/sbin/slurmctld
fi
if ! pgrep -x slurmd >/dev/null; then
	/usr/sbin/slurmd
fi
# The node may start DOWN (e.g. after an unclean stop): bring it back.
for i in $(seq 100); do
	if ok; then
		echo "slurm ready"
		exit 0
	fi
	if [ $((i % 10)) = 0 ]; then
		scontrol update NodeName="$node" State=RESUME >/dev/null 2>&1 || true
	fi
	sleep 0.2
done
echo "slurm did not come up; logs:" >&2
tail -20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
sinfo >&2 || true
exit 1
