#include "loader/punt_tables.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <cstring>
#include <string>

extern "C" {
#include "sluice_maps.h"
}

namespace sluice {

Status write_punt_rulesets(int fd, const config::Config& config) {
    std::vector<punt_ruleset> values(SLUICE_MAX_RULESETS);
    for (const auto& r : config.rulesets) {
        uint16_t id = config.ruleset_id(r.name);
        if (id == 0 || id >= SLUICE_MAX_RULESETS)
            return make_error("inspect ruleset " + r.name + ": id " + std::to_string(id) + " out of range (at most " +
                              std::to_string(SLUICE_MAX_RULESETS - 1) + " rulesets)");
        values[id].configured = 1;
        values[id].fail_closed = r.fail_closed ? 1 : 0;
    }
    for (uint32_t id = 1; id < SLUICE_MAX_RULESETS; ++id) {
        if (bpf_map_update_elem(fd, &id, &values[id], BPF_ANY) != 0)
            return make_error(std::string("cannot write punt_rulesets: ") + std::strerror(errno));
    }
    return {};
}

}  // namespace sluice
