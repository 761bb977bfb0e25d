#include "loader/pin_abi.h"

#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <vector>

extern "C" {
#include "abi.h"
}

namespace sluice {

std::string pin_abi_marker() { return "abi-" + std::to_string(SLUICE_ABI_VERSION); }

Status check_pin_abi(const std::string& pin_dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(pin_dir, ec)) return {};
    std::vector<std::string> markers;
    bool pins = false;
    for (const auto& entry : std::filesystem::directory_iterator(pin_dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("abi-", 0) == 0) markers.push_back(name);
        else pins = true;
    }
    if (ec) return make_error("cannot read pin directory " + pin_dir + ": " + ec.message());
    const std::string mine = pin_abi_marker();
    if (!pins || (markers.size() == 1 && markers[0] == mine)) return {};
    const std::string found = markers.empty() ? "no ABI version (a sluice older than ABI versions)"
                                              : "ABI " + markers[0].substr(4);
    return make_error(ErrorCode::Incompatible,
                      "the maps pinned under " + pin_dir + " were made by a sluice with " + found +
                          "; this sluice uses ABI " + std::to_string(SLUICE_ABI_VERSION) +
                          " and will not read another layout. Stop the old daemon and remove them with "
                          "`sluice [--netns NAME] down [--instance NAME]` (its sessions are lost), then start again");
}

Status record_pin_abi(const std::string& pin_dir) {
    const std::string path = pin_dir + "/" + pin_abi_marker();
    if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) return errno_error("cannot create " + path, errno);
    return {};
}

}  // namespace sluice
