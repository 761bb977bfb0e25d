#!/usr/bin/env bash
# `--env auto` at the command line, against the stand-in `incus` and `sg`
# (tests/integration/fake-incus/, first on PATH; not Incus): the seed's order,
# the sg incus-admin retry, Incus status per instance, and the netns fallback.
# Needs no root: nothing is built.
source "$(dirname "$0")/lib.sh"
it_init cluster-env-auto ea
STANDIN="$IT_DIR/fake-incus"
export SLUICE_ENVIRONMENTS="$IT_SRC/cluster/environments.yaml"
export FAKE_INCUS_SCENARIO="$IT_TMP/scenario" FAKE_INCUS_LOG="$IT_TMP/calls.log"
env_of() { "$IT_PY" -c 'import json,sys; print(json.load(sys.stdin)["environment"])'; }

printf 'loss:bpfrx-fw0 STOPPED\nbpfrx-fw0 RUNNING\nbpfrx-fw1 RUNNING\ncluster-lan-host RUNNING\ncluster-wan-host STOPPED\n' >"$FAKE_INCUS_SCENARIO"
PATH="$STANDIN:$PATH" "$SLUICE" cluster status --env auto --json >"$IT_TMP/status.json" 2>"$IT_TMP/status.err"
rc=$?
it_expect_eq "status exits 1 while an instance is not RUNNING" 1 "$rc"
it_expect_eq "auto picks the local cluster when the remote one is stopped" local-cluster "$(env_of <"$IT_TMP/status.json")"
it_check "status lists the stopped WAN host" grep -q '"STOPPED"' "$IT_TMP/status.json"

printf 'loss:bpfrx-fw0 RUNNING\nloss:bpfrx-fw1 RUNNING\nloss:cluster-lan-host RUNNING\nloss:cluster-wan-host RUNNING\n' >"$FAKE_INCUS_SCENARIO"
: >"$FAKE_INCUS_LOG"
PATH="$STANDIN:$PATH" FAKE_INCUS_DENY=1 "$SLUICE" cluster status --env auto --json >"$IT_TMP/status.json" 2>"$IT_TMP/status.err"
it_expect_eq "with permission errors: still the remote cluster, through sg" "loss-cluster" "$(env_of <"$IT_TMP/status.json")"
it_check "incus calls were retried as sg incus-admin -c" grep -q '^sg incus-admin -c incus info loss:bpfrx-fw0' "$FAKE_INCUS_LOG"

PATH="$STANDIN:$PATH" "$SLUICE" cluster up --env auto --dry-run >"$IT_TMP/up.out" 2>&1
rc=$?
it_expect_eq "cluster up --dry-run on the detected Incus environment exits 0" 0 "$rc"
it_check "... and prints the incus commands for remote loss" grep -qx "incus network create loss:sluice-lan ipv4.address=none ipv6.address=none user.sluice.cluster=loss-cluster" "$IT_TMP/up.out"
it_check "... firewall VMs with fixed MACs" grep -qx "incus init images:debian/12/cloud loss:bpfrx-fw0 -c user.sluice.cluster=loss-cluster --vm" "$IT_TMP/up.out"

: >"$FAKE_INCUS_SCENARIO"
PATH="$STANDIN:$PATH" "$SLUICE" cluster status --env auto --prefix "zz$$" >"$IT_TMP/ns.out" 2>&1
it_check "nothing running: falls back to netns" grep -q "detect: netns" "$IT_TMP/ns.out"
it_check "... whose status for an unknown prefix is 'not up'" grep -q "cluster zz$$: not up" "$IT_TMP/ns.out"
it_finish
