// The daemon's log: one line per event on stderr ("sluice: ..."), which the
// systemd journal or the operator's terminal keeps.
#pragma once

#include <string>

namespace sluice {

void daemon_log(const std::string& message);

}  // namespace sluice
