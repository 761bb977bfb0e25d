#!/usr/bin/env bash
# The pinned layout's version (maps/abi.h SLUICE_ABI_VERSION, docs/operations.md
# "Pins and the ABI version"): the daemon marks its pins abi-<N>; a restart
# over pins of another version, or of none, is refused with a message that
# names both versions and `sluice down`, and attaches nothing; after
# `sluice down` it starts.
source "$(dirname "$0")/lib.sh"
it_init pin_abi pa
it_need_root_and_bpf
it_topology_up
cfg="$IT_TMP/fw.yaml"
it_write_config "$cfg"
pins="/sys/fs/bpf/sluice/netns/$P-fw/default"
# This build's version, from the one place that declares it.
abi=$(sed -n 's/^#define SLUICE_ABI_VERSION \([0-9]*\).*/\1/p' "$IT_DIR/../../maps/abi.h")
[ -n "$abi" ] || it_fail "cannot read SLUICE_ABI_VERSION from maps/abi.h"

it_sluice_start "$cfg"
it_server wan accept-server "$WAN4" 8080
it_check "the pins carry the ABI marker abi-$abi" test -d "$pins/abi-$abi"
it_expect_eq "IPv4 tcp/8080 connects" connected "$(probe lan "$WAN4" 8080)"
it_stop "$SLUICE_PID"
it_forget_pid "$SLUICE_PID"

it_log "pins of another ABI: the marker says abi-999"
rmdir "$pins/abi-$abi" && mkdir "$pins/abi-999"
timeout 60 "$SLUICE" --netns "$P-fw" run -c "$cfg" >"$IT_TMP/run2.log" 2>&1
it_expect_eq "sluice run exits 1" 1 "$?"
it_log "run said: $(cat "$IT_TMP/run2.log")"
it_check "it names the pins' ABI and its own" grep -qF "made by a sluice with ABI 999; this sluice uses ABI $abi" "$IT_TMP/run2.log"
it_check "it says how to remove them" grep -qF "sluice [--netns NAME] down" "$IT_TMP/run2.log"
it_check "the old pins are left as they were" test -d "$pins/abi-999"

it_log "pins without a marker (a sluice from before ABI versions)"
rmdir "$pins/abi-999"
timeout 60 "$SLUICE" --netns "$P-fw" run -c "$cfg" >"$IT_TMP/run3.log" 2>&1
it_expect_eq "sluice run exits 1" 1 "$?"
it_check "it says the pins have no ABI version" grep -qF "with no ABI version" "$IT_TMP/run3.log"

it_log "sluice down, then run"
it_check "sluice down" sluice_fw down
it_check "the pins are gone" test ! -e "$pins"
it_sluice_start "$cfg"
it_check "the new pins carry abi-$abi" test -d "$pins/abi-$abi"
it_expect_eq "IPv4 tcp/8080 connects again" connected "$(probe lan "$WAN4" 8080)"
it_finish
