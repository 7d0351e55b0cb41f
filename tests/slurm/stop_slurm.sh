#!/usr/bin/env bash
# Stop the daemons started by start_slurm.sh for the same directory
# ($1, default /tmp/slurm-test).  Leaves the directory (logs) in place.
set -u

DIR="$(cd "${1:-/tmp/slurm-test}" 2>/dev/null && pwd || echo "${1:-/tmp/slurm-test}")"

# Cancel jobs still queued or running, so that no job outlives the cluster.
if [ -f "$DIR/run/slurmctld.pid" ]; then
    SLURM_CONF="$DIR/etc/slurm.conf" timeout 5 scancel --user="$(id -un)" 2>/dev/null \
        && sleep 1
fi

# Stop in reverse order of starting: slurmd, slurmctld, then munged.
for name in slurmd slurmctld munged; do
    pidfile="$DIR/run/$name.pid"
    [ -f "$pidfile" ] || continue
    pid="$(cat "$pidfile")"
    # Only signal the process if it still is the daemon (pids get reused).
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] && kill "$pid"; then
        # Give it up to 10 s to exit, then force it.
        for _ in $(seq 20); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.5
        done
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
done

# Remove the default-path link to this cluster's config, if start_slurm.sh made one.
if [ "$(readlink /etc/slurm/slurm.conf 2>/dev/null)" = "$DIR/etc/slurm.conf" ]; then
    rm -f /etc/slurm/slurm.conf
fi
