#!/usr/bin/env bash
# Builds sluice's two-node test cluster on a real Incus host (local or a
# remote such as "loss:"), the same topology as `sluice cluster up` builds from
# namespaces (docs/cluster.md):
#
#   cluster-lan-host ── sluice-lan ──┬── bpfrx-fw0 ──┬── sluice-wan ── cluster-wan-host
#                                    └── bpfrx-fw1 ──┘
#                    bpfrx-fw0 ── sluice-fabric ── bpfrx-fw1
#
#   LAN 198.18.1.0/24  2001:2:0:1::/64    lan-host .10  fw0 .1  fw1 .2
#   WAN 198.18.100.0/24 2001:2:0:100::/64 wan-host .200 fw0 .1  fw1 .2
#   fabric 198.18.2.0/30 2001:2:0:2::/64  fw0 .1  fw1 .2
#
# The firewalls are VMs (so sluice gets a real kernel and NIC driver); the
# hosts are containers. Every sluice network is an Incus bridge without
# addresses or NAT of its own: the firewalls route, nothing else does.
#
# Usage:
#   cluster/incus/setup.sh up     [--remote R] [--image IMG] [--sriov-parent PF] [--standalone [--pci-wan ADDR]] [--dry-run]
#   cluster/incus/setup.sh down   [--remote R] [--standalone] [--dry-run]
#   cluster/incus/setup.sh status [--remote R] [--standalone]
#
#   --remote R          Incus remote (e.g. loss); default: the local daemon
#   --image IMG         image for all instances (default images:debian/12/cloud)
#   --sriov-parent PF   firewalls' lan0/wan0 become SR-IOV VFs of PF (mlx5, i40e, ice)
#   --standalone        one firewall VM "bpfrx-fw", no hosts, no fabric
#   --pci-wan ADDR      standalone: pass PCI device ADDR (e.g. 0000:41:00.0) through as wan0
#   --dry-run           print the incus commands instead of running them
#
# `up` is idempotent: what exists is kept, what is missing is created. `down`
# deletes only the instances, profiles and networks named here.
#
# NOTE: this cannot run on sluice's development VM (Incus is not packaged
# there); the namespace backend (`sluice cluster up`) is what runs there. Read
# it before running it on your host. Incus calls that fail with a permission
# error are retried through `sg incus-admin -c` (and then always used).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ACTION=${1:-}
[ $# -gt 0 ] && shift
REMOTE=""
IMAGE="images:debian/12/cloud"
SRIOV_PARENT=""
STANDALONE=0
PCI_WAN=""
DRY=0
USE_SG=0

usage() { sed -n '/^# Usage:/,/^# `up` is/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
    --remote) REMOTE=${2%:}; shift 2 ;;
    --image) IMAGE=$2; shift 2 ;;
    --sriov-parent) SRIOV_PARENT=$2; shift 2 ;;
    --standalone) STANDALONE=1; shift ;;
    --pci-wan) PCI_WAN=$2; shift 2 ;;
    --dry-run) DRY=1; shift ;;
    *) usage ;;
    esac
done
case "$ACTION" in up | down | status) ;; *) usage ;; esac

R=${REMOTE:+$REMOTE:}   # "loss:" or ""
if [ "$STANDALONE" = 1 ]; then
    FIREWALLS=(bpfrx-fw)
    HOSTS=()
    NETWORKS=(sluice-lan sluice-wan)
else
    FIREWALLS=(bpfrx-fw0 bpfrx-fw1)
    HOSTS=(cluster-lan-host cluster-wan-host)
    NETWORKS=(sluice-lan sluice-wan sluice-fabric)
fi
PROFILES=(sluice-fw sluice-lan-host sluice-wan-host)

# incus ARGS...: with the sg incus-admin retry the seed asks for.
inc() {
    if [ "$DRY" = 1 ]; then
        echo "incus $*"
        return 0
    fi
    if [ "$USE_SG" = 1 ]; then
        sg incus-admin -c "incus $(printf '%q ' "$@")"
        return
    fi
    local err rc=0
    err=$(mktemp)
    incus "$@" 2>"$err" || rc=$?
    if [ "$rc" -ne 0 ] && grep -qiE 'permission denied|not authorized' "$err"; then
        echo "setup.sh: permission denied; using sg incus-admin -c from now on" >&2
        USE_SG=1
        rm -f "$err"
        sg incus-admin -c "incus $(printf '%q ' "$@")"
        return
    fi
    cat "$err" >&2
    rm -f "$err"
    return "$rc"
}

# exists KIND NAME: a quiet existence check (network, profile, instance).
exists() {
    [ "$DRY" = 1 ] && return 1
    case "$1" in
    instance) inc info "$R$2" >/dev/null 2>&1 ;;
    *) inc "$1" show "$R$2" >/dev/null 2>&1 ;;
    esac
}

command -v incus >/dev/null || [ "$DRY" = 1 ] || {
    echo "setup.sh: incus is not installed here; on this machine use \`sluice cluster up\` (network namespaces)" >&2
    exit 1
}

# Fixed, locally administered MACs, so the guests' cloud-init can name their NICs.
mac() {  # mac NODE NIC
    local node nic
    case "$1" in bpfrx-fw0 | bpfrx-fw) node=10 ;; bpfrx-fw1) node=11 ;; cluster-lan-host) node=20 ;; cluster-wan-host) node=30 ;; esac
    case "$2" in eth0) nic=00 ;; lan0 | eth1) nic=01 ;; wan0) nic=02 ;; fab0) nic=03 ;; esac
    echo "02:5c:00:$node:$nic:00"
}

# wan0 is matched by our MAC, or by driver when a whole PCI port is passed
# through (it keeps its own MAC; set PCI_WAN_DRIVER if it is not i40e).
wan_match() {
    if [ -n "$PCI_WAN" ]; then echo "driver: ${PCI_WAN_DRIVER:-i40e}"; else echo "macaddress: \"$(mac "$1" wan0)\""; fi
}

# network-config NAME: cloud-init v2 network config with sluice's addresses.
network_config() {
    local n=$1
    cat <<EOT
version: 2
ethernets:
  eth0: { match: { macaddress: "$(mac "$n" eth0)" }, set-name: eth0, dhcp4: true }
EOT
    case "$n" in
    bpfrx-fw0 | bpfrx-fw | bpfrx-fw1)
        local last=1
        [ "$n" = bpfrx-fw1 ] && last=2
        cat <<EOT
  lan0: { match: { macaddress: "$(mac "$n" lan0)" }, set-name: lan0, addresses: [198.18.1.$last/24, "2001:2:0:1::$last/64"], accept-ra: false }
  wan0: { match: { $(wan_match "$n") }, set-name: wan0, addresses: [198.18.100.$last/24, "2001:2:0:100::$last/64"], accept-ra: false }
EOT
        [ "$STANDALONE" = 0 ] && cat <<EOT
  fab0: { match: { macaddress: "$(mac "$n" fab0)" }, set-name: fab0, addresses: [198.18.2.$last/30, "2001:2:0:2::$last/64"], accept-ra: false }
EOT
        ;;
    cluster-lan-host)
        cat <<EOT
  eth1:
    match: { macaddress: "$(mac "$n" eth1)" }
    set-name: eth1
    addresses: [198.18.1.10/24, "2001:2:0:1::10/64"]
    accept-ra: false
    routes:
      - { to: 198.18.0.0/15, via: 198.18.1.1 }
      - { to: "2001:2::/48", via: "2001:2:0:1::1" }
EOT
        ;;
    cluster-wan-host)
        cat <<EOT
  eth1:
    match: { macaddress: "$(mac "$n" eth1)" }
    set-name: eth1
    addresses: [198.18.100.200/24, "2001:2:0:100::200/64"]
    accept-ra: false
    routes:
      - { to: 198.18.1.0/24, via: 198.18.100.1 }
      - { to: "2001:2:0:1::/64", via: "2001:2:0:100::1" }
EOT
        ;;
    esac
}

create_instance() {  # create_instance NAME PROFILE VM(0|1) NICS...
    local name=$1 profile=$2 vm=$3 nic
    shift 3
    if exists instance "$name"; then
        echo "setup.sh: instance $R$name exists; keeping it"
        return 0
    fi
    local args=(init "$IMAGE" "$R$name" -p default -p "$profile")
    [ "$vm" = 1 ] && args+=(--vm)
    inc "${args[@]}"
    # Profile NICs get fixed MACs (override); an instance device of the same
    # name replaces the profile's entirely (SR-IOV VF, PCI passthrough, none).
    for nic in eth0 "$@"; do
        if [ "$vm" = 1 ] && [ -n "$SRIOV_PARENT" ] && { [ "$nic" = lan0 ] || [ "$nic" = wan0 ]; }; then
            inc config device add "$R$name" "$nic" nic nictype=sriov "parent=$SRIOV_PARENT" "hwaddr=$(mac "$name" "$nic")"
        elif [ "$vm" = 1 ] && [ -n "$PCI_WAN" ] && [ "$nic" = wan0 ]; then
            inc config device add "$R$name" wan0 pci "address=$PCI_WAN"
        elif [ "$STANDALONE" = 1 ] && [ "$nic" = fab0 ]; then
            inc config device add "$R$name" fab0 none
        else
            inc config device override "$R$name" "$nic" "hwaddr=$(mac "$name" "$nic")"
        fi
    done
    inc config set "$R$name" cloud-init.network-config "$(network_config "$name")"
    inc start "$R$name"
}

up() {
    local net profile fw
    for net in "${NETWORKS[@]}"; do
        if exists network "$net"; then
            echo "setup.sh: network $R$net exists; keeping it"
        else
            # A plain L2 segment: no host address, no DHCP, no NAT.
            inc network create "$R$net" ipv4.address=none ipv6.address=none
        fi
    done
    for profile in "${PROFILES[@]}"; do
        exists profile "$profile" || inc profile create "$R$profile"
        if [ "$DRY" = 1 ]; then
            echo "incus profile edit $R$profile < $HERE/profiles/$profile.yaml"
        else
            inc profile edit "$R$profile" <"$HERE/profiles/$profile.yaml"
        fi
    done
    for fw in "${FIREWALLS[@]}"; do
        create_instance "$fw" sluice-fw 1 lan0 wan0 fab0
    done
    if [ "$STANDALONE" = 0 ]; then
        create_instance cluster-lan-host sluice-lan-host 0 eth1
        create_instance cluster-wan-host sluice-wan-host 0 eth1
    fi
    echo "setup.sh: done. Next: install sluice on ${FIREWALLS[*]} and run it there with the same config"
    echo "          (lan0 trust, wan0 untrust, fab0 fabric), then: sluice perf-test --env auto"
}

down() {
    local name net profile
    for name in "${HOSTS[@]}" "${FIREWALLS[@]}"; do
        if exists instance "$name" || [ "$DRY" = 1 ]; then inc delete --force "$R$name"; fi
    done
    for profile in "${PROFILES[@]}"; do
        if exists profile "$profile" || [ "$DRY" = 1 ]; then inc profile delete "$R$profile" || true; fi
    done
    for net in "${NETWORKS[@]}"; do
        if exists network "$net" || [ "$DRY" = 1 ]; then inc network delete "$R$net" || true; fi
    done
}

status() {
    local name s
    for name in "${FIREWALLS[@]}" "${HOSTS[@]}"; do
        s=$(inc info "$R$name" 2>/dev/null | awk '/^Status:/ {print $2}') || true
        echo "$R$name: ${s:-ABSENT}"
    done
}

"$ACTION"
