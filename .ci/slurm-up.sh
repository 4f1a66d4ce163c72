#!/usr/bin/env bash
# Start a real one-node SLURM cluster on this (Debian 12) machine, for tests/test_slurm.py.
#
#   .ci/slurm-up.sh        # idempotent: installs what is missing, (re)starts what is not running
#
# Installs Debian's slurmctld, slurmd, slurm-client and munge if missing, writes
# /etc/slurm/slurm.conf (node = `hostname -s`, one partition `debug` (Default=YES),
# select/cons_tres with CR_Core_Memory, accounting off), starts munged, slurmctld and slurmd
# (through systemd when it runs, else directly) and waits until `sinfo` shows the node idle.
# Exits non-zero with a message saying what failed. Needs root, or passwordless sudo.
# Logs: /var/log/slurm/slurmctld.log and /var/log/slurm/slurmd.log.
# Every daemon or service it starts (and that was not running before) is appended to
# $SLURM_UP_STATE (default /run/fedclust-slurm-up.started), so that .ci/slurm-down.sh stops
# exactly those and nothing else.
set -euo pipefail

die() { echo "slurm-up: ERROR: $*" >&2; exit 1; }
log() { echo "slurm-up: $*"; }

if [ "$(id -u)" -ne 0 ]; then
    if ! { command -v sudo >/dev/null && sudo -n true 2>/dev/null; }; then
        die "needs root (or passwordless sudo) to install and start SLURM"
    fi
    exec sudo -n -E bash "$0" "$@"
fi

PACKAGES=(slurmctld slurmd slurm-client munge)
CONF=/etc/slurm/slurm.conf
NODE=$(hostname -s)
PARTITION=debug
WAIT_S=${SLURM_UP_WAIT_S:-60}
STATE=${SLURM_UP_STATE:-/run/fedclust-slurm-up.started}
started() {  # $1 = "daemon <pidfile> <program>" or "service <name>"
    grep -qxF "$1" "$STATE" 2>/dev/null || echo "$1" >>"$STATE"
}

# 1. packages ---------------------------------------------------------------------------------
missing=()
for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    command -v apt-get >/dev/null || die "apt-get not found; install ${missing[*]} by hand"
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt_install() { apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/slurm-up-apt.log 2>&1; }
    apt_install || { apt-get update -q >/tmp/slurm-up-apt-update.log 2>&1 && apt_install; } \
        || { tail -20 /tmp/slurm-up-apt.log >&2; die "apt-get install ${missing[*]} failed"; }
fi
for b in munged slurmctld slurmd sinfo sbatch scontrol; do
    command -v "$b" >/dev/null || [ -x "/usr/sbin/$b" ] || die "$b not found after install"
done

# 2. munge key --------------------------------------------------------------------------------
id munge >/dev/null 2>&1 || die "user munge missing (the munge package creates it)"
if [ ! -s /etc/munge/munge.key ]; then
    log "creating /etc/munge/munge.key"
    install -d -o munge -g munge -m 0700 /etc/munge
    if command -v mungekey >/dev/null; then mungekey --create --keyfile=/etc/munge/munge.key --force
    else dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none; fi
    chown munge:munge /etc/munge/munge.key
    chmod 0400 /etc/munge/munge.key
fi

# 3. slurm.conf -------------------------------------------------------------------------------
id slurm >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin slurm
install -d -o slurm -g slurm /var/lib/slurm/slurmctld /var/log/slurm
install -d /var/lib/slurm/slurmd /etc/slurm
hw=$(/usr/sbin/slurmd -C | head -1) || die "'slurmd -C' failed"
# The node's topology as slurmd sees it (so the node is never drained for a mismatch), with
# 90% of the memory, leaving room for the daemons and for Snakemake itself.
cpus=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$hw")
mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$hw")
if [ -z "$cpus" ] || [ -z "$mem" ]; then die "cannot parse 'slurmd -C': $hw"; fi
topo=$(grep -o 'Boards=[0-9]* SocketsPerBoard=[0-9]* CoresPerSocket=[0-9]* ThreadsPerCore=[0-9]*' \
       <<<"$hw" || true)
new_conf=$(cat <<EOF
# Written by .ci/slurm-up.sh: a one-node test cluster, accounting off.
ClusterName=fedclust-ci
SlurmctldHost=$NODE
AuthType=auth/munge
CredType=cred/munge
SlurmUser=slurm
SlurmdUser=root
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
ReturnToService=2
SlurmdParameters=config_overrides
# finished jobs stay visible to 'squeue --states=all' for 5 minutes (the status command
# snakemake's slurm executor uses when there is no accounting)
MinJobAge=300
SlurmdTimeout=60
NodeName=$NODE NodeHostname=$NODE CPUs=$cpus ${topo} RealMemory=$(( mem * 9 / 10 )) State=UNKNOWN
PartitionName=$PARTITION Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
)
changed=0
if [ ! -f "$CONF" ] || [ "$(cat "$CONF")" != "$new_conf" ]; then
    log "writing $CONF"
    printf '%s\n' "$new_conf" >"$CONF"
    chmod 0644 "$CONF"
    changed=1
fi

# 4. daemons ----------------------------------------------------------------------------------
running() {  # $1 = pid file, $2 = program name: is that program running under that pid?
    [ -s "$1" ] && [ "$(cat "/proc/$(cat "$1")/comm" 2>/dev/null)" = "$2" ]
}
stop() {  # $1 = pid file, $2 = program name
    running "$1" "$2" || return 0
    local pid; pid=$(cat "$1"); kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
    die "process $pid ($1) does not stop"
}
munge_ok() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

if [ -d /run/systemd/system ]; then
    systemctl is-active --quiet munge || started "service munge"
    systemctl start munge >/dev/null 2>&1 || true
    munge_ok || systemctl restart munge
    for svc in slurmctld slurmd; do
        systemctl is-active --quiet "$svc" || started "service $svc"
        if [ "$changed" = 1 ] || ! systemctl is-active --quiet "$svc"; then
            systemctl restart "$svc" || die "systemctl restart $svc failed (journalctl -u $svc)"
        fi
    done
else
    if ! munge_ok; then
        log "starting munged"
        install -d -o munge -g munge -m 0755 /run/munge
        running /run/munge/munged.pid munged || started "daemon /run/munge/munged.pid munged"
        stop /run/munge/munged.pid munged
        runuser -u munge -- /usr/sbin/munged || die "munged does not start"
    fi
    for daemon in slurmctld slurmd; do
        running "/run/$daemon.pid" "$daemon" || started "daemon /run/$daemon.pid $daemon"
    done
    if [ "$changed" = 1 ]; then stop /run/slurmd.pid slurmd; stop /run/slurmctld.pid slurmctld; fi
    if ! running /run/slurmctld.pid slurmctld; then
        log "starting slurmctld"
        /usr/sbin/slurmctld || die "slurmctld does not start (see /var/log/slurm/slurmctld.log)"
    fi
    if ! running /run/slurmd.pid slurmd; then
        log "starting slurmd"
        /usr/sbin/slurmd || die "slurmd does not start (see /var/log/slurm/slurmd.log)"
    fi
fi
munge_ok || die "munge does not work ('munge -n | unmunge' fails)"

# 5. wait for the node ------------------------------------------------------------------------
state=""
for i in $(seq "$WAIT_S"); do
    state=$(sinfo -h -N -n "$NODE" -o '%T' 2>/dev/null | head -1 || true)
    case "$state" in
        idle|mixed|allocated) break ;;
        down*|drain*|fail*)  # left over from an earlier run: bring it back
            if [ $(( i % 5 )) = 1 ]; then
                scontrol update NodeName="$NODE" State=RESUME >/dev/null 2>&1 || true
            fi ;;
    esac
    sleep 1
done
case "$state" in
    idle|mixed|allocated) ;;
    *) tail -5 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 2>/dev/null || true
       die "node $NODE is not up after ${WAIT_S}s (sinfo says '${state:-nothing}')" ;;
esac
log "node $NODE is $state in partition $PARTITION (CPUs=$cpus, RealMemory=$(( mem * 9 / 10 )) MB)"
sinfo
