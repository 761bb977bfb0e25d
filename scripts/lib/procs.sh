#!/usr/bin/env bash
# Background processes of a benchmark script, stopped by PID only (never by
# name). Source this file; the caller owns the array PIDS=() and appends the
# PID of everything it starts in the background.

# stop_pid PID: SIGTERM, wait up to 5 s, then SIGKILL; reaps it.
stop_pid() {
    local pid=$1 _
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null || true
}

# forget_pid PID: drops PID from PIDS (after stop_pid, or when it ended by itself).
forget_pid() {
    local keep=() p
    for p in "${PIDS[@]}"; do [ "$p" != "$1" ] && keep+=("$p"); done
    PIDS=("${keep[@]}")
}
