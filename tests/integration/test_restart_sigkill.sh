#!/usr/bin/env bash
# kill -9 the daemon while TCP connections are open, start it again: the same
# connections carry data and their sessions kept their counters. IPv4 and IPv6.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/restart_common.sh"
it_init restart_sigkill rk
restart_scenario KILL
