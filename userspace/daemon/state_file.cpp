#include "daemon/state_file.h"

#include <signal.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

namespace sluice {

Status write_state(const std::string& path, const state::PublishedState& state) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp);
        if (!out) return make_error("cannot write " + tmp);
        out << nlohmann::json(state).dump(2) << "\n";
    }
    std::filesystem::rename(tmp, path, ec);  // readers never see a half-written file
    if (ec) return make_error("cannot write " + path + ": " + ec.message());
    return {};
}

Result<state::PublishedState> read_state(const std::string& path) {
    std::ifstream in(path);
    if (!in) return make_error(ErrorCode::NotFound, "no state file " + path);
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded()) return make_error("state file " + path + " is not JSON");
    auto state = state::parse_published_state(j);
    if (!state) return with_context("state file " + path, state.error());
    return state;
}

bool process_alive(int pid) {
    if (pid <= 0 || (kill(pid, 0) != 0 && errno != EPERM)) return false;
    // A killed daemon stays a zombie until its parent reaps it; it holds
    // nothing, so a node restarted at once (kill -9, then run) may start.
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;
    const auto close = line.rfind(')');
    return close == std::string::npos || close + 2 >= line.size() || (line[close + 2] != 'Z' && line[close + 2] != 'X');
}

}  // namespace sluice
