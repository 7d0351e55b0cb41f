#!/usr/bin/env bash
# Start a throw-away single-node Slurm cluster (munged, slurmctld, slurmd)
# for tests.  Everything it writes lives under one directory, given as $1
# (default /tmp/slurm-test).  Needs the Debian packages slurm-wlm and munge;
# installs nothing itself.  Runs without systemd and without cgroups.
#
# On success the last lines on stdout are shell assignments, e.g.
#   eval "$(tests/slurm/start_slurm.sh /tmp/slurm-test | grep '^export ')"
# Running it again while the cluster is up only prints them again.
set -euo pipefail

DIR="$(mkdir -p "${1:-/tmp/slurm-test}" && cd "${1:-/tmp/slurm-test}" && pwd)"
NODE="$(hostname -s)"
PARTITION="${SLURM_TEST_PARTITION:-debug}"
TIMEOUT="${SLURM_TEST_TIMEOUT:-60}"    # seconds to wait for the node
GPUS="${SLURM_TEST_GPUS:-0}"           # fake GPUs to advertise (count only, no devices)
CONF="$DIR/etc/slurm.conf"
# Unix socket paths are limited to 108 bytes; the longest one is a job
# step's, $DIR/spool/<node>_<jobid>.<stepid>.
if ((${#DIR} + ${#NODE} > 80)); then
    echo "start_slurm.sh: directory path too long for Unix sockets (max 80 chars with the host name): $DIR" >&2
    exit 1
fi
SOCK="$DIR/munge/munge.socket.2"

print_env() {
    echo "export SLURM_CONF=$CONF"
    echo "export SLURM_TEST_PARTITION=$PARTITION"
    echo "export SLURM_TEST_NODE=$NODE"
}

fail() {
    echo "start_slurm.sh: $*" >&2
    for f in "$DIR"/log/*.log; do
        [ -f "$f" ] && { echo "--- $f" >&2; tail -n 15 "$f" >&2; }
    done
    exit 1
}

node_idle() {
    [ "$(SLURM_CONF="$CONF" timeout 5 sinfo -h -n "$NODE" -o %T 2>/dev/null)" = idle ]
}

ctld_running() {
    local pid
    pid="$(cat "$DIR/run/slurmctld.pid" 2>/dev/null)" || return 1
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = slurmctld ]
}

# Also make the config visible at Slurm's default path.  The Snakemake job
# step plugin (snakemake-executor-plugin-slurm-jobstep >= 0.6.1) drops
# SLURM_CONF before it calls srun inside a job, so srun only finds the
# default file.  An existing real file there is left alone.
link_default_conf() {
    local default=/etc/slurm/slurm.conf
    if [ -e "$default" ] && [ ! -L "$default" ]; then
        echo "start_slurm.sh: warning: $default exists and is not ours; srun inside jobs will use it" >&2
    elif ! { mkdir -p /etc/slurm && ln -sfn "$CONF" "$default"; } 2>/dev/null; then
        echo "start_slurm.sh: warning: cannot link $default; srun inside jobs may not find the config" >&2
    fi
}

# Already up (second call in the same test session): nothing to do.
# To change a setting such as SLURM_TEST_GPUS, run stop_slurm.sh first.
if [ -f "$CONF" ] && ctld_running && node_idle; then
    link_default_conf
    print_env
    exit 0
fi

# Otherwise clear out anything half-started by an earlier run.
"$(dirname "$0")/stop_slurm.sh" "$DIR" >/dev/null 2>&1 || true

mkdir -p "$DIR"/{etc,munge,log,run,state,spool}
chmod 755 "$DIR/munge"  # clients need to reach the socket; the key stays 0600

# munge: private key and socket, so the system's munged (if any) is untouched.
if [ ! -s "$DIR/munge/munge.key" ]; then
    dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
fi
chmod 600 "$DIR/munge/munge.key"
munged --force \
    --key-file="$DIR/munge/munge.key" --socket="$SOCK" \
    --pid-file="$DIR/run/munged.pid" --seed-file="$DIR/munge/munged.seed" \
    --log-file="$DIR/log/munged.log" \
    || fail "munged did not start"

# Node size as slurmd itself measures it, so the node is not drained
# for "low RealMemory" or a CPU count mismatch.
HW="$(slurmd -C | head -n 1)"
CPUS="$(sed -n 's/.* CPUs=\([0-9]*\).*/\1/p' <<<"$HW")"
MEM="$(sed -n 's/.* RealMemory=\([0-9]*\).*/\1/p' <<<"$HW")"
: "${CPUS:=$(nproc)}"
: "${MEM:=$(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo)}"
NODE_GRES=""
[ "$GPUS" -gt 0 ] && NODE_GRES=" Gres=gpu:$GPUS"

# Everything runs as the current user (root in CI).  proctrack/linuxproc and
# task/none need no cgroups; accounting is off, so job status comes from
# squeue, which keeps finished jobs for MinJobAge seconds.
cat >"$CONF" <<EOF
ClusterName=testcluster
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCK
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MinJobAge=300
MpiDefault=none
MailProg=/bin/true
GresTypes=gpu
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM$NODE_GRES State=UNKNOWN
PartitionName=$PARTITION Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
# Fake GPUs: each is a link to /dev/null, so jobs that ask for GPUs get
# scheduled (and see no real device).  With 0, sbatch rejects GPU requests.
mkdir -p "$DIR/dev" && rm -f "$DIR"/dev/gpu*
: >"$DIR/etc/gres.conf"
for ((i = 0; i < GPUS; i++)); do
    ln -s /dev/null "$DIR/dev/gpu$i"
    echo "NodeName=$NODE Name=gpu File=$DIR/dev/gpu$i" >>"$DIR/etc/gres.conf"
done

link_default_conf
export SLURM_CONF="$CONF"
slurmctld -c || fail "slurmctld did not start"
slurmd || fail "slurmd did not start"

# Wait for the node to register and turn idle.
while ((SECONDS < TIMEOUT)); do
    node_idle && { print_env; exit 0; }
    sleep 1
done
fail "node $NODE not idle after ${TIMEOUT}s (state: $(sinfo -h -n "$NODE" -o %T 2>&1 | head -n 1))"
