#!/bin/bash
# Start a one-node Slurm cluster on localhost (munge + slurmctld + slurmd) for the tests in
# tests/it/slurm.rs, following a single-node recipe tested on Debian 12 without systemd (Slurm
# 22.05.8, munge 0.5.15, OpenMPI 4.1.4 / PMIx 4.2.2).
# Needs root (re-runs itself with `sudo -n` otherwise) and the packages slurm-wlm and munge.
#
# Idempotent: if the node already answers `idle` (or is busy with jobs), nothing is changed.
# Otherwise it starts whatever is missing, waits up to 60 s for the node to become idle, and
# on failure prints the daemons' logs and exits 1. Stop the cluster with .ci/slurm-down.sh.
set -euo pipefail

if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then exec sudo -n -- "$0" "$@"; fi
    echo "slurm-up: must run as root (or with passwordless sudo)" >&2
    exit 1
fi
for cmd in munged mungekey slurmctld slurmd sinfo scontrol; do
    command -v "$cmd" >/dev/null 2>&1 || {
        echo "slurm-up: '$cmd' not found; install the packages slurm-wlm and munge" >&2
        exit 1
    }
done

H=$(hostname -s)
CONF=/etc/slurm/slurm.conf
LOGS=(/var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log /var/log/munge/munged.log)

node_state() { sinfo -h -N -o %T 2>/dev/null | head -n1 || true; }
fail() {
    echo "slurm-up: $*" >&2
    for f in "${LOGS[@]}"; do
        [ -f "$f" ] && { echo "---- tail $f" >&2; tail -n 30 "$f" >&2; }
    done
    exit 1
}
# Is the daemon whose pid file is $1 running? (pid files of daemons that died are ignored)
running() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# Already up? (munge must work too: every Slurm RPC is authenticated with it)
if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    case "$(node_state)" in
    idle)
        echo "slurm-up: cluster already up, node $H idle"
        exit 0
        ;;
    mixed | allocated | completing)
        echo "slurm-up: cluster already up, node $H busy ($(node_state))"
        exit 0
        ;;
    esac
fi

# 1. munge (the packages create the key, users and log dir, but not /run/munge).
[ -s /etc/munge/munge.key ] || {
    install -d -o munge -g munge -m 0700 /etc/munge
    mungekey --create
}
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key
install -d -o munge -g munge -m 0755 /run/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged || fail "munged did not start"
fi
munge -n | unmunge >/dev/null || fail "munge does not work"

# 2. slurm.conf (only while no Slurm daemon runs, so that a running cluster is never
#    reconfigured under its feet). The node line comes from `slurmd -C`, so it fits the runner.
install -d -o slurm -g slurm /var/spool/slurmctld /var/log/slurm
install -d /var/spool/slurmd /etc/slurm
if ! running /run/slurmctld.pid && ! running /run/slurmd.pid; then
    NODE=$(slurmd -C | head -n1)
    case "$NODE" in NodeName=*) ;; *) fail "slurmd -C printed no node line: $NODE" ;; esac
    NEW=$(
        cat <<EOF
# Written by .ci/slurm-up.sh: a one-node CI cluster on localhost.
ClusterName=ci
SlurmctldHost=${H}(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
CryptoType=crypto/munge
MpiDefault=pmix
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
# sbatch --wait polls every 2 s only while its sleep is < MinJobAge/2; do not go below 5.
MinJobAge=5
MailProg=/bin/true
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
# Jobs may ask for more tasks than CPUs with --overcommit (nothing here limits tasks per node).
${NODE} NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    )
    if [ -f "$CONF" ] && ! grep -q '^# Written by .ci/slurm-up.sh' "$CONF"; then
        cp -p "$CONF" "$CONF.before-ci"
        echo "slurm-up: saved the existing $CONF as $CONF.before-ci"
    fi
    printf '%s\n' "$NEW" >"$CONF"
fi

# 3. Daemons (both daemonize and write their pid files). `-c`: start from a clean state, so
#    that jobs left over from an earlier cluster are not recovered.
if ! running /run/slurmctld.pid; then
    rm -f /run/slurmctld.pid
    slurmctld -c || fail "slurmctld did not start"
fi
if ! running /run/slurmd.pid; then
    rm -f /run/slurmd.pid
    slurmd || fail "slurmd did not start"
fi

st=
for _ in $(seq 120); do # up to 60 s
    st=$(node_state)
    [ "$st" = idle ] && break
    case "$st" in down* | drain*) scontrol update nodename="$H" state=resume >/dev/null 2>&1 || true ;; esac
    sleep 0.5
done
[ "$st" = idle ] || fail "node $H is not idle after 60 s (state: '${st:-no answer from slurmctld}')"
echo "slurm-up: cluster up, node $H idle: $(sinfo -h -N -o '%N %c CPUs %m MB %T')"
