#!/bin/bash
# Stop the one-node cluster started by .ci/slurm-up.sh (slurmctld, slurmd, munged).
# Never fails: whatever is not running is skipped.
set -u

if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then
    exec sudo -n -- "$0" "$@"
fi

pid_of() { [ -s "$1" ] && cat "$1" 2>/dev/null; }
alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

ctld=$(pid_of /run/slurmctld.pid || true)
slurmd=$(pid_of /run/slurmd.pid || true)

# `scontrol shutdown` stops slurmctld and every slurmd.
if alive "$ctld" || alive "$slurmd"; then
    timeout 20 scontrol shutdown >/dev/null 2>&1 || true
    for _ in $(seq 40); do # up to 20 s
        alive "$ctld" || alive "$slurmd" || break
        sleep 0.5
    done
    # Still there (e.g. slurmctld was not answering): TERM, then KILL, by pid.
    for p in $ctld $slurmd; do alive "$p" && kill "$p" 2>/dev/null; done
    sleep 1
    for p in $ctld $slurmd; do alive "$p" && kill -9 "$p" 2>/dev/null; done
fi
# slurmctld runs as the slurm user and cannot remove its pid file in /run.
rm -f /run/slurmctld.pid /run/slurmd.pid

munged --stop >/dev/null 2>&1 || true
echo "slurm-down: stopped"
exit 0
