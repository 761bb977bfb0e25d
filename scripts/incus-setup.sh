#!/usr/bin/env bash
# Installs Incus from Debian's bookworm-backports and starts it for sluice's
# lab, contained (docs/cluster.md, "Incus on this machine"):
#   1. apt source bookworm-backports (a file of its own), then incus,
#      debootstrap and the tools the image build needs;
#   2. lxcfs and incusd started by hand when PID 1 is not systemd (PIDs in
#      /run/sluice/incus/), else the systemd units;
#   3. a preseed: storage pool "sluice" (dir) and the default profile's root
#      disk in it. No network is created here and none is picked by Incus:
#      the cluster creates its bridges with benchmarking-range addresses or
#      none, NAT off;
#   4. the host guard: an nftables table that drops forwarding between the
#      lab's bridges (sluice-*) and every other interface, both ways.
# Idempotent. `scripts/incus-setup.sh guard` installs only step 4 (a host
# whose Incus you run yourself); `stop` stops what step 2 started (by PID)
# and removes the guard; `status` says what is in place.
set -euo pipefail

STATE=/run/sluice/incus
GUARD_TABLE=sluice_lab_guard
BACKPORTS=/etc/apt/sources.list.d/sluice-bookworm-backports.sources

log() { echo "incus-setup: $*"; }
die() { echo "incus-setup: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (it installs packages and starts incusd)"

install_packages() {
    if [ ! -f "$BACKPORTS" ] && ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
        log "adding bookworm-backports ($BACKPORTS)"
        cat >"$BACKPORTS" <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
        apt-get update -qq
    fi
    local want=(debootstrap xz-utils nftables) missing=() p
    for p in "${want[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    export DEBIAN_FRONTEND=noninteractive
    # incus-base runs containers; the `incus` package adds VMs (qemu, ~1 GB),
    # which this kind of machine cannot run: SLUICE_INCUS_VM=1 asks for it.
    local incus_pkg=incus-base
    [ "${SLUICE_INCUS_VM:-0}" = 1 ] && incus_pkg=incus
    if ! dpkg-query -W -f='${Status}' "$incus_pkg" 2>/dev/null | grep -q 'install ok installed'; then
        log "installing $incus_pkg from bookworm-backports"
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends -t bookworm-backports "$incus_pkg" dnsmasq-base
    fi
    if [ ${#missing[@]} -gt 0 ]; then
        log "installing ${missing[*]}"
        apt-get install -y -qq --no-install-recommends "${missing[@]}"
    fi
}

daemon_ready() { incus admin waitready --timeout 1 >/dev/null 2>&1; }

# pid_alive NAME: the PID recorded for NAME is running and is still NAME
# (a PID file can outlive its process and the PID be reused).
pid_alive() {
    local pid
    [ -f "$STATE/$1.pid" ] || return 1
    pid=$(cat "$STATE/$1.pid")
    kill -0 "$pid" 2>/dev/null && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$1" ]
}

# lxcfs_mounted: /var/lib/lxcfs is in the mount table. `mountpoint` cannot
# tell: when lxcfs died without unmounting (a killed run), the FUSE mount
# stays and every stat of it fails with "Transport endpoint is not connected".
lxcfs_mounted() { awk '$2 == "/var/lib/lxcfs" { found = 1 } END { exit !found }' /proc/self/mounts; }

# A FUSE mount whose lxcfs is gone is detached (lazily: a container that
# held it open keeps its view) so a new lxcfs can mount there.
clear_stale_lxcfs() {
    if lxcfs_mounted && ! pid_alive lxcfs && ! stat /var/lib/lxcfs >/dev/null 2>&1; then
        log "lxcfs mount at /var/lib/lxcfs is stale (its lxcfs is gone): unmounting it"
        umount -l /var/lib/lxcfs || die "cannot unmount the stale lxcfs mount at /var/lib/lxcfs"
    fi
}

start_daemon() {
    mkdir -p "$STATE"
    if [ "$(cat /proc/1/comm)" = systemd ]; then
        systemctl start lxcfs incus.socket incus.service
    else
        clear_stale_lxcfs
        if ! lxcfs_mounted && ! pid_alive lxcfs; then
            mkdir -p /var/lib/lxcfs
            setsid lxcfs /var/lib/lxcfs >"$STATE/lxcfs.log" 2>&1 </dev/null &
            echo $! >"$STATE/lxcfs.pid"
            log "lxcfs started (pid $(cat "$STATE/lxcfs.pid"))"
        fi
        if ! daemon_ready && ! pid_alive incusd; then
            getent group incus-admin >/dev/null || groupadd --system incus-admin
            # As Debian's unit starts it: incusd and its helpers live in
            # /usr/libexec/incus, which must be first on its PATH.
            PATH=/usr/libexec/incus:$PATH setsid /usr/libexec/incus/incusd --group incus-admin \
                --logfile "$STATE/incusd.log" >"$STATE/incusd.out" 2>&1 </dev/null &
            echo $! >"$STATE/incusd.pid"
            log "incusd started (pid $(cat "$STATE/incusd.pid"), log $STATE/incusd.log)"
        fi
    fi
    incus admin waitready --timeout 60 || die "incusd did not become ready; see $STATE/incusd.log"
}

preseed() {
    if incus storage show sluice >/dev/null 2>&1; then
        log "storage pool sluice exists"
    else
        log "preseeding: storage pool sluice (dir), default profile root disk; no network"
        incus admin init --preseed <<'YAML'
storage_pools:
  - name: sluice
    driver: dir
profiles:
  - name: default
    devices:
      root: { type: disk, path: /, pool: sluice }
YAML
    fi
}

guard() {
    nft -f - <<NFT
table inet $GUARD_TABLE
delete table inet $GUARD_TABLE
table inet $GUARD_TABLE {
    # The lab's bridges are sluice-*: nothing crosses between them and any
    # other interface (the host forwards, and instances must not reach out).
    chain forward {
        type filter hook forward priority filter - 10; policy accept;
        iifname "sluice-*" oifname != "sluice-*" counter drop
        oifname "sluice-*" iifname != "sluice-*" counter drop
    }
}
NFT
    log "guard in place: nft table inet $GUARD_TABLE"
}

stop_all() {
    nft delete table inet "$GUARD_TABLE" 2>/dev/null && log "guard removed" || true
    local name pid
    for name in incusd lxcfs; do
        if pid_alive "$name"; then
            pid=$(cat "$STATE/$name.pid")
            if [ "$name" = incusd ]; then incus admin shutdown --timeout 60 2>/dev/null || kill "$pid"; else kill "$pid"; fi
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
            log "$name stopped (pid $pid)"
        fi
        rm -f "$STATE/$name.pid"
    done
    if lxcfs_mounted; then umount /var/lib/lxcfs 2>/dev/null || umount -l /var/lib/lxcfs || true; fi
}

status() {
    local rc=0
    command -v incus >/dev/null && log "incus: $(incus --version)" || { log "incus: not installed"; rc=1; }
    daemon_ready && log "incusd: ready" || { log "incusd: not running"; rc=1; }
    incus storage show sluice >/dev/null 2>&1 && log "storage pool sluice: present" || { log "storage pool sluice: absent"; rc=1; }
    nft list table inet "$GUARD_TABLE" >/dev/null 2>&1 && log "guard: in place" || { log "guard: absent"; rc=1; }
    return $rc
}

case "${1:-up}" in
up)
    install_packages
    start_daemon
    preseed
    guard
    log "ready: $(incus --version)"
    ;;
guard)
    # Only the guard: for a host whose Incus you installed and run yourself.
    command -v nft >/dev/null || die "nft is missing (apt-get install nftables)"
    guard
    ;;
stop) stop_all ;;
status) status ;;
*) die "usage: scripts/incus-setup.sh [up|guard|stop|status]" ;;
esac
