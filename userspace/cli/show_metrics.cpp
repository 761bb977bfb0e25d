#include "cli/show_metrics.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "cli/control.h"

namespace sluice::cli {

int show_metrics(const std::string& instance, bool json_out, std::ostream& out, std::ostream& err) {
    control::Request request;
    request.command = control::Command::metrics;
    auto reply = ask_daemon_request(instance, request, std::chrono::seconds(30), err);
    if (!reply) return 1;
    if (!reply->ok) {
        err << "sluice: " << reply->message << "\n";
        return 1;
    }
    if (json_out) out << nlohmann::json::parse(reply->state, nullptr, false).dump(2) << "\n";
    else out << reply->message;
    return 0;
}

}  // namespace sluice::cli
