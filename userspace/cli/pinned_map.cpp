#include "cli/pinned_map.h"

namespace sluice::cli {

Result<std::vector<SessionEntry>> read_pinned_sessions(const std::string& pin_dir) {
    PinnedMap v4(pin_dir + "/" SLUICE_MAP_SESSIONS_V4), v6(pin_dir + "/" SLUICE_MAP_SESSIONS_V6);
    if (v4.fd() < 0 || v6.fd() < 0)
        return make_error("no pinned sessions under " + pin_dir + " (start the instance with `sluice run -c FILE`)");
    return dump_sessions(v4.fd(), v6.fd());
}

}  // namespace sluice::cli
