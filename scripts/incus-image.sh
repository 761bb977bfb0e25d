#!/usr/bin/env bash
# Builds the Incus image sluice's cluster nodes run, offline from Debian's
# packages (debootstrap), and imports it (docs/cluster.md):
#   scripts/incus-image.sh [--variant node|ci] [--alias NAME] [--force]
#
#   node  (alias sluice/node)  Debian 12 with systemd as PID 1, iproute2,
#         iperf3, nftables, perf, and the shared libraries the sluice package
#         depends on, so `apt-get install ./sluice_*.deb` needs no network.
#   ci    (alias sluice/ci)    node + everything scripts/setup.sh installs and
#         git: the README's test command runs inside without a mirror.
#
# Contained: no NTP client (systemd-timesyncd removed), no resolver
# configured (empty resolv.conf), no network configuration at all — the
# cluster gives each node its benchmarking-range addresses. The image is
# cached under /var/cache/sluice/images/<variant>-<hash of the package list>;
# an image with the alias already imported is kept unless --force.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
VARIANT=node
ALIAS=""
FORCE=0
while [ $# -gt 0 ]; do
    case "$1" in
    --variant) VARIANT=$2; shift 2 ;;
    --alias) ALIAS=$2; shift 2 ;;
    --force) FORCE=1; shift ;;
    *) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
case "$VARIANT" in node | ci) ;; *) echo "incus-image: --variant is node or ci" >&2; exit 2 ;; esac
ALIAS=${ALIAS:-sluice/$VARIANT}
log() { echo "incus-image: $*"; }
[ "$(id -u)" -eq 0 ] || { echo "incus-image: run as root (debootstrap)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "incus-image: debootstrap is missing: run scripts/incus-setup.sh" >&2; exit 1; }

node_packages=(systemd-sysv dbus iproute2 iputils-ping iperf3 nftables procps linux-perf ca-certificates
               python3 libbpf1 libxdp1 libhyperscan5 libyaml-cpp0.7 libnl-3-200 libnl-route-3-200 libelf1
               libldns3 libssl3 libcpp-httplib0.11 libpcap0.8)
packages=("${node_packages[@]}")
if [ "$VARIANT" = ci ]; then
    # Everything scripts/setup.sh installs (its packages=( ... ) list), and git.
    mapfile -t setup_pkgs < <(sed -n '/^packages=(/,/^)/p' "$HERE/setup.sh" | sed 's/#.*//' | tr ' ' '\n' |
                              grep -Ev '^(packages=\(|\)|)$')
    packages+=("${setup_pkgs[@]}" git)
fi
hash=$(printf '%s\n' "${packages[@]}" | sort -u | sha256sum | cut -c1-12)
CACHE=/var/cache/sluice/images/$VARIANT-$hash

# An imported image is reused only if it was built from this package list.
if incus image info "$ALIAS" >/dev/null 2>&1 && [ "$FORCE" = 0 ]; then
    have=$(incus image get-property "$ALIAS" sluice.packages 2>/dev/null || true)
    if [ "$have" = "$hash" ]; then
        log "image $ALIAS is imported already, built from this package list ($hash; --force rebuilds it)"
        exit 0
    fi
    log "image $ALIAS was built from another package list (${have:-unknown}, now $hash): rebuilding"
fi

if [ ! -f "$CACHE/rootfs.tar.gz" ] || [ "$FORCE" = 1 ]; then
    rm -rf "$CACHE"
    mkdir -p "$CACHE"
    root="$CACHE/rootfs"
    log "debootstrap bookworm ($VARIANT, ${#packages[@]} packages) into $root"
    debootstrap --variant=minbase --include="$(IFS=,; echo "${packages[*]}")" bookworm "$root" \
        http://deb.debian.org/debian >"$CACHE/debootstrap.log" 2>&1 ||
        { tail -20 "$CACHE/debootstrap.log" >&2; echo "incus-image: debootstrap failed (log: $CACHE/debootstrap.log)" >&2; exit 1; }
    # Containment: no time sync, no resolver, no network configuration.
    chroot "$root" apt-get purge -y -qq systemd-timesyncd >/dev/null 2>&1 || true
    : >"$root/etc/resolv.conf"
    rm -f "$root"/etc/systemd/network/* "$root"/etc/network/interfaces.d/* 2>/dev/null || true
    echo sluice-node >"$root/etc/hostname"
    chroot "$root" apt-get clean
    log "packing the rootfs"
    tar -C "$root" --numeric-owner -czf "$CACHE/rootfs.tar.gz" .
    rm -rf "$root"
fi

cat >"$CACHE/metadata.yaml" <<YAML
architecture: x86_64
creation_date: $(date +%s)
properties:
  description: sluice $VARIANT image, Debian 12 (debootstrap, no network configuration)
  sluice.packages: "$hash"
  os: debian
  release: bookworm
  variant: $VARIANT
YAML
tar -C "$CACHE" -cJf "$CACHE/metadata.tar.xz" metadata.yaml
incus image delete "$ALIAS" >/dev/null 2>&1 || true
incus image import "$CACHE/metadata.tar.xz" "$CACHE/rootfs.tar.gz" --alias "$ALIAS" >/dev/null
log "imported $ALIAS ($(du -h "$CACHE/rootfs.tar.gz" | cut -f1) rootfs, cache $CACHE)"
