#include "loader/punt_tables.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <cstring>
#include <string>

extern "C" {
#include "sluice_maps.h"
}

namespace sluice {

Status write_punt_rulesets(int fd, const std::vector<config::Ruleset>& rulesets) {
    if (rulesets.size() >= SLUICE_MAX_RULESETS)
        return make_error("too many inspect rulesets: " + std::to_string(rulesets.size()) + " (at most " +
                          std::to_string(SLUICE_MAX_RULESETS - 1) + ")");
    for (uint32_t id = 1; id < SLUICE_MAX_RULESETS; ++id) {
        punt_ruleset value{};
        if (id <= rulesets.size()) {
            value.configured = 1;
            value.fail_closed = rulesets[id - 1].fail_closed ? 1 : 0;
        }
        if (bpf_map_update_elem(fd, &id, &value, BPF_ANY) != 0)
            return make_error(std::string("cannot write punt_rulesets: ") + std::strerror(errno));
    }
    return {};
}

}  // namespace sluice
