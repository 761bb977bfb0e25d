#include "daemon/session_size_change.h"

#include <string>

namespace sluice {

Status check_session_size_unchanged(const config::Config& config, uint32_t running) {
    const uint32_t wanted = config.limits.sessions;
    if (wanted == running) return {};
    config::Diagnostic d{config.file, config.limits.sessions_location.value_or(config::Location{}), "limits.sessions",
                         ""};
    d.message = (config.limits.sessions_location ? std::to_string(wanted) + " sessions"
                                                 : "absent (the default, " + std::to_string(wanted) + " sessions)") +
                ", but the running session table holds " + std::to_string(running) +
                " sessions per family and cannot be resized while it exists; the running config stays in force. "
                "To resize: `sluice down` (drops every session), then `sluice run`";
    return make_error(config::format_diagnostic(d));
}

}  // namespace sluice
