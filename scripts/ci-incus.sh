#!/usr/bin/env bash
# Runs the README's test command inside a fresh Incus instance and exits
# with its status (docs/cluster.md, "CI on Incus"):
#   scripts/ci-incus.sh [--keep]
#
# 1. Incus ready (scripts/incus-setup.sh) and the image sluice/ci
#    (scripts/incus-image.sh --variant ci: Debian 12 with every package
#    scripts/setup.sh installs, so nothing is downloaded inside);
# 2. a clean clone of this checkout's HEAD (`git clone`, no build tree, no
#    uncommitted change) pushed into a new instance "sluice-ci-<pid>":
#    a privileged container (BPF, network namespaces, XDP). (A VM needs a VM
#    image with the same packages; sluice/ci is a container image.)
# 3. inside: `bash scripts/test.sh` (SLUICE_SKIP_INCUS=1: no Incus inside
#    Incus; SLUICE_REQUIRE_BPF=1: a skipped BPF or namespace test fails),
#    its output streamed; ctest's summary is the last thing printed;
# 4. the instance deleted (--keep leaves it for a look), the status returned.
# The instance has no network device at all: the suite runs in its own
# namespaces.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KEEP=0
while [ $# -gt 0 ]; do
    case "$1" in
    --keep) KEEP=1; shift ;;
    *) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
NAME=sluice-ci-$$
log() { echo "ci-incus: $*"; }

bash "$ROOT/scripts/incus-setup.sh" up
bash "$ROOT/scripts/incus-image.sh" --variant ci

work=$(mktemp -d /tmp/sluice-ci.XXXXXX)
cleanup() {
    if [ "$KEEP" = 1 ]; then log "kept instance $NAME (incus delete --force $NAME)"; else incus delete --force "$NAME" >/dev/null 2>&1 || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
git clone -q "$ROOT" "$work/sluice"
log "clean clone of $(git -C "$work/sluice" rev-parse --short HEAD) in $work/sluice"

incus init sluice/ci "$NAME" -c security.privileged=true >/dev/null
incus start "$NAME"
state=""
for _ in $(seq 120); do
    state=$(incus exec "$NAME" -- systemctl is-system-running 2>/dev/null || true)
    [ "$state" = running ] || [ "$state" = degraded ] && break
    sleep 0.5
done
[ "$state" = running ] || [ "$state" = degraded ] || { log "$NAME did not finish booting within 60 s ($state)"; exit 1; }
incus file push -r "$work/sluice" "$NAME/root/" >/dev/null
log "running scripts/test.sh in $NAME"
rc=0
incus exec "$NAME" --env SLUICE_SKIP_INCUS=1 --env SLUICE_REQUIRE_BPF=1 --cwd /root/sluice -- bash scripts/test.sh || rc=$?
log "scripts/test.sh in $NAME exited $rc"
exit "$rc"
