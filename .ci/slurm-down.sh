#!/usr/bin/env bash
# Stop what .ci/slurm-up.sh started, and only that: the daemons or services it recorded in
# $SLURM_UP_STATE (default /run/fedclust-slurm-up.started), last started first stopped. A
# daemon that was already running before slurm-up.sh is left alone. Idempotent; quiet when
# there is nothing to stop.
set -euo pipefail

STATE=${SLURM_UP_STATE:-/run/fedclust-slurm-up.started}
[ -f "$STATE" ] || exit 0
if [ "$(id -u)" -ne 0 ]; then
    exec sudo -n -E bash "$0" "$@"
fi

alive() {  # $1 = pid: running (an exited process waiting to be reaped does not count)
    [ -r "/proc/$1/stat" ] && [ "$(awk '{print $3}' "/proc/$1/stat")" != Z ]
}
stop_daemon() {  # $1 = pid file, $2 = program name
    [ -s "$1" ] || return 0
    local pid; pid=$(cat "$1")
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] || return 0
    kill "$pid"
    for _ in $(seq 50); do alive "$pid" || return 0; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
}

tac "$STATE" | while read -r kind a b; do
    case "$kind" in
        daemon) echo "slurm-down: stopping $b"; stop_daemon "$a" "$b" ;;
        service) echo "slurm-down: stopping service $a"; systemctl stop "$a" || true ;;
    esac
done
rm -f "$STATE"
