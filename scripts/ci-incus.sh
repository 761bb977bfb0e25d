#!/usr/bin/env bash
# Runs the README's test command inside a fresh Incus instance and exits
# with its status (docs/cluster.md, "CI on Incus"):
#   scripts/ci-incus.sh [--keep] [--vm --image ALIAS]
#
# 1. Incus ready (scripts/incus-setup.sh) and the image sluice/ci
#    (scripts/incus-image.sh --variant ci: Debian 12 with every package
#    scripts/setup.sh installs, so nothing is downloaded inside);
# 2. a clean clone of this checkout's HEAD (`git clone`, no build tree, no
#    uncommitted change) pushed into a new instance "sluice-ci-<pid>":
#    a privileged container (BPF, network namespaces, XDP); with --vm a VM
#    from ALIAS, a VM image with the same packages as sluice/ci (which is a
#    container image): refused with the reason when this Incus cannot run VMs;
# 3. inside: `bash scripts/test.sh` (SLUICE_SKIP_INCUS=1: no Incus inside
#    Incus; SLUICE_REQUIRE_BPF=1: a skipped BPF or namespace test fails),
#    its output streamed; ctest's summary is the last thing printed;
# 4. the instance deleted (--keep leaves it for a look), the status returned.
# The instance has no network device at all: the suite runs in its own
# namespaces. Incus's notice that it has none is dropped.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KEEP=0
VM=0
IMAGE=""
usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
    --keep) KEEP=1; shift ;;
    --vm) VM=1; shift ;;
    --image) [ $# -ge 2 ] || usage; IMAGE=$2; shift 2 ;;
    *) usage ;;
    esac
done
NAME=sluice-ci-$$
log() { echo "ci-incus: $*"; }
die() { echo "ci-incus: $*" >&2; exit 1; }
[ "$VM" = 1 ] || [ -z "$IMAGE" ] || die "--image is for --vm (the container runs sluice/ci, built by scripts/incus-image.sh --variant ci)"

bash "$ROOT/scripts/incus-setup.sh" up

# vm_unsupported: why this host's Incus cannot run a VM, or nothing.
vm_unsupported() {
    local drivers
    drivers=$(incus query /1.0 | python3 -c 'import json,sys; print(json.load(sys.stdin)["environment"].get("driver",""))')
    case " ${drivers//|/ } " in *" qemu "*) ;; *) echo "this Incus has no VM driver (drivers: $drivers; Debian's incus package adds qemu: SLUICE_INCUS_VM=1 scripts/incus-setup.sh)"; return ;; esac
    [ -c /dev/kvm ] || { echo "/dev/kvm is missing"; return; }
    [ -e /dev/vhost-vsock ] || { echo "/dev/vhost-vsock is missing (modprobe vhost_vsock; incus exec reaches a VM's agent over vsock)"; return; }
}
if [ "$VM" = 1 ]; then
    why=$(vm_unsupported)
    [ -z "$why" ] || die "--vm: $why. docs/cluster.md, \"CI on Incus\", says what a VM host needs; without --vm the suite runs in a container."
    [ -n "$IMAGE" ] || die "--vm needs --image ALIAS: a VM image with the packages of sluice/ci (docs/cluster.md, \"CI on Incus\")"
    [ "$(incus image list "$IMAGE" --format json | python3 -c 'import json,sys; print(" ".join(i["type"] for i in json.load(sys.stdin)))')" != "" ] ||
        die "--image $IMAGE: no such image (incus image list)"
else
    bash "$ROOT/scripts/incus-image.sh" --variant ci
    IMAGE=sluice/ci
fi

work=$(mktemp -d /tmp/sluice-ci.XXXXXX)
cleanup() {
    if [ "$KEEP" = 1 ]; then log "kept instance $NAME (incus delete --force $NAME)"; else incus delete --force "$NAME" >/dev/null 2>&1 || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
git clone -q "$ROOT" "$work/sluice"
log "clean clone of $(git -C "$work/sluice" rev-parse --short HEAD) in $work/sluice"

# Incus prints a notice that the instance has no network; it has none on purpose.
quiet_init() { incus init "$@" 2> >(grep -v "doesn't have any network attached\|incus network create\|incus network attach" >&2) >/dev/null; }
if [ "$VM" = 1 ]; then
    quiet_init "$IMAGE" "$NAME" --vm -c limits.cpu="$(nproc)" -c limits.memory=4GiB
else
    quiet_init "$IMAGE" "$NAME" -c security.privileged=true
fi
incus start "$NAME"
state=""
boot_polls=120; [ "$VM" = 1 ] && boot_polls=600   # a VM boots firmware and a kernel first
for _ in $(seq "$boot_polls"); do
    state=$(incus exec "$NAME" -- systemctl is-system-running 2>/dev/null || true)
    [ "$state" = running ] || [ "$state" = degraded ] && break
    sleep 0.5
done
[ "$state" = running ] || [ "$state" = degraded ] || { log "$NAME did not finish booting within $((boot_polls / 2)) s ($state)"; exit 1; }
incus file push -r "$work/sluice" "$NAME/root/" >/dev/null
log "running scripts/test.sh in $NAME"
rc=0
incus exec "$NAME" --env SLUICE_SKIP_INCUS=1 --env SLUICE_REQUIRE_BPF=1 --cwd /root/sluice -- bash scripts/test.sh || rc=$?
log "scripts/test.sh in $NAME exited $rc"
exit "$rc"
