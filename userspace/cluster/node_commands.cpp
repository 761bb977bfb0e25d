#include "cluster/node_commands.h"

#include "cluster/process.h"

namespace sluice::cluster::node_commands {

std::vector<std::string> background(const std::vector<std::string>& argv, const std::string& log_path) {
    return {"sh", "-c", shell_join(argv) + " </dev/null >" + shell_quote(log_path) + " 2>&1 & echo $!"};
}

Result<int> parse_pid(const CommandResult& result, const std::string& node) {
    if (result.exit_status != 0)
        return make_error("starting a background command on " + node + " failed (exit " +
                          std::to_string(result.exit_status) + "): " + result.err);
    std::string text = result.out;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    auto nl = text.rfind('\n');
    std::string last = nl == std::string::npos ? text : text.substr(nl + 1);
    try {
        size_t used = 0;
        int pid = std::stoi(last, &used);
        if (used == last.size() && pid > 0) return pid;
    } catch (...) {
    }
    return make_error("starting a background command on " + node + ": expected its PID, got '" + result.out + "'");
}

namespace {
// `alive`: PID $p runs. A zombie counts as gone: the instance's init reaps
// it, not us.
constexpr const char* kAlive =
    R"(alive() { [ -r /proc/$p/stat ] || return 1; s=$(sed 's/.*) //' /proc/$p/stat 2>/dev/null | cut -c1); [ -n "$s" ] && [ "$s" != Z ] && [ "$s" != X ]; }
)";
}  // namespace

std::vector<std::string> wait_gone(int pid, int seconds) {
    const std::string script = std::string("p=$1; t=$2\n") + kAlive + R"(i=0; while alive && [ $i -lt $((t * 10)) ]; do sleep 0.1; i=$((i + 1)); done
alive && exit 1
exit 0)";
    return {"sh", "-c", script, "sh", std::to_string(pid), std::to_string(seconds)};
}

std::vector<std::string> stop(int pid, int grace_seconds) {
    const std::string script = std::string("p=$1; g=$2\n") + kAlive + R"(alive || exit 0
kill -TERM "$p" 2>/dev/null
i=0; while alive && [ $i -lt $((g * 10)) ]; do sleep 0.1; i=$((i + 1)); done
alive || exit 0
kill -KILL "$p" 2>/dev/null
i=0; while alive && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
if alive; then echo "process $p is still there 5s after SIGKILL" >&2; exit 1; fi
exit 0)";
    return {"sh", "-c", script, "sh", std::to_string(pid), std::to_string(grace_seconds)};
}

}  // namespace sluice::cluster::node_commands
