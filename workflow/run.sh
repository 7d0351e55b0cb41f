#!/usr/bin/env bash
# The Makefile's way into Snakemake: `workflow/run.sh SNAKEMAKE ARGS...`. One run at a time in a checkout (an flock,
# which the kernel releases even when a run is killed), and the lock a killed run leaves in .snakemake/ is cleared first,
# so that the next run goes on where it stopped (its unfinished jobs run again).
set -euo pipefail
snakemake="$1"; shift
mkdir -p .snakemake
exec 9>.snakemake/front-door.lock
flock -n 9 || { echo "pipeline: another run is going on in this checkout (.snakemake/front-door.lock)" >&2; exit 1; }
if [ -n "$(ls -A .snakemake/locks 2>/dev/null)" ]; then
  echo "pipeline: clearing the lock of a run that was stopped" >&2
  "$snakemake" "$@" --unlock >/dev/null
fi
exec "$snakemake" "$@"
