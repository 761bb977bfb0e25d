// What the screen BPF tests share: a config with the given `screen:` on the
// trust zone (trust -> untrust permitted, everything else denied) and the
// zone's screen counters.
#pragma once

#include <string>

#include "datapath_env.h"
#include "map_readers.h"

extern "C" {
#include "screen.h"
}

namespace sluice::test {

// `extra` is appended to the config (e.g. timeouts).
inline std::string screen_config(const std::string& screen, const std::string& extra = "") {
    return R"yaml(
interfaces:
  lan0: { zone: trust }
  wan0: { zone: untrust }
zones:
  trust: { screen: )yaml" +
           screen + R"yaml( }
  untrust: {}
policies:
  - { name: lan-out, from: trust, to: untrust, action: permit }
default-action: deny
)yaml" + extra;
}

class ScreenTest : public DatapathTest {
protected:
    screen_counter screen(uint16_t zone) {
        return read_screen_counter(env_->map_fd(SLUICE_MAP_SCREEN_HITS), env_->map_fd(SLUICE_MAP_RUNTIME_CONFIG),
                                   zone);
    }
};

}  // namespace sluice::test
