#include "bench/synflood_trafgen.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace sluice::bench {

Result<std::array<uint8_t, 6>> parse_mac(const std::string& mac) {
    unsigned b[6];
    char tail = 0;
    if (mac.size() != 17 ||
        std::sscanf(mac.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6)
        return make_error("not a MAC address: '" + mac + "'");
    for (size_t i = 2; i < mac.size(); i += 3)
        if (mac[i] != ':') return make_error("not a MAC address: '" + mac + "'");
    std::array<uint8_t, 6> out{};
    for (int i = 0; i < 6; ++i) out[i] = static_cast<uint8_t>(b[i]);
    return out;
}

namespace {

// "0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff", or an Error.
Result<std::string> mac_bytes(const std::string& mac) {
    auto b = parse_mac(mac);
    if (!b) return b.error();
    std::string out;
    char buf[8];
    for (size_t i = 0; i < b->size(); ++i) {
        std::snprintf(buf, sizeof buf, "0x%02x", (*b)[i]);
        out += (i ? ", " : "") + std::string(buf);
    }
    return out;
}

// waitid without reaping: true when `pid` (our child) has exited.
bool exited_unreaped(pid_t pid) {
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return errno == ECHILD;
    return info.si_pid == pid;
}

// Live (not zombie) processes in process group `pgid`, from /proc.
std::vector<pid_t> live_group_members(pid_t pgid) {
    std::vector<pid_t> out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream stat(entry.path() / "stat");
        std::string line;
        if (!std::getline(stat, line)) continue;
        auto close_paren = line.rfind(')');
        if (close_paren == std::string::npos) continue;
        std::istringstream fields(line.substr(close_paren + 1));
        char state = 0;
        long ppid = 0, pgrp = 0;
        if (!(fields >> state >> ppid >> pgrp)) continue;
        if (pgrp == pgid && state != 'Z' && state != 'X') out.push_back(static_cast<pid_t>(std::stol(name)));
    }
    return out;
}

}  // namespace

Result<std::string> trafgen_syn_config(const SynPacketSpec& spec) {
    auto dst = mac_bytes(spec.destination_mac);
    if (!dst) return dst.error();
    auto src = mac_bytes(spec.source_mac);
    if (!src) return src.error();
    in_addr a{};
    if (inet_pton(AF_INET, spec.destination.c_str(), &a) != 1)
        return make_error("not an IPv4 address: '" + spec.destination + "'");
    const auto* d = reinterpret_cast<const uint8_t*>(&a.s_addr);
    auto n = [](unsigned v) { return std::to_string(v); };
    std::string out = "{\n";
    out += "  " + *dst + ", " + *src + ", c16(0x0800),\n";
    out += "  0x45, 0x00, c16(40), drnd(2), c16(0x4000), 64, 6, csumip(14, 33),\n";
    out += "  " + n(spec.source_net[0]) + ", " + n(spec.source_net[1]) + ", drnd(2),\n";
    out += "  " + n(d[0]) + ", " + n(d[1]) + ", " + n(d[2]) + ", " + n(d[3]) + ",\n";
    out += "  drnd(2), c16(" + n(spec.port) + "), drnd(4), c32(0), 0x50, 0x02, c16(64240), csumtcp(14, 34), c16(0),\n";
    out += "}\n";
    return out;
}

std::vector<std::string> trafgen_argv(const std::string& dev, const std::string& config_path, uint64_t rate_pps) {
    std::vector<std::string> argv{"trafgen",       "--dev",         dev, "--conf", config_path, "--cpus", "1",
                                  "--no-sock-mem", "--notouch-irq", "--no-cpu-stats"};
    if (rate_pps > 0) {
        argv.push_back("--rate");
        argv.push_back(std::to_string(rate_pps) + "pps");
    }
    return argv;
}

Result<std::unique_ptr<TrafgenFlood>> TrafgenFlood::start(const std::string& netns, const std::string& dev,
                                                          const std::string& config_path, const std::string& log_path,
                                                          uint64_t rate_pps) {
    std::vector<std::string> argv{"ip", "netns", "exec", netns};
    for (auto& a : trafgen_argv(dev, config_path, rate_pps)) argv.push_back(std::move(a));
    return start_argv(std::move(argv), log_path);
}

Result<std::unique_ptr<TrafgenFlood>> TrafgenFlood::start_argv(std::vector<std::string> argv,
                                                               const std::string& log_path) {
    if (argv.empty()) return make_error("TrafgenFlood: empty command");
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);

    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return errno_error("pipe", errno);
    pid_t child = fork();
    if (child < 0) {
        int e = errno;
        close(report[0]);
        close(report[1]);
        return errno_error("fork", e);
    }
    if (child == 0) {
        // A session of its own: the child is its process group's leader,
        // and trafgen's sending processes join that group.
        setsid();
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (log >= 0) {
            dup2(log, 1);
            dup2(log, 2);
        }
        signal(SIGPIPE, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        execvp(args[0], args.data());
        int e = errno;
        (void)!write(report[1], &e, sizeof e);
        _exit(127);
    }
    close(report[1]);
    int exec_errno = 0;
    ssize_t got;
    while ((got = read(report[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
    }
    close(report[0]);
    if (got == static_cast<ssize_t>(sizeof exec_errno)) {
        while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
        }
        return errno_error("cannot run " + argv[0], exec_errno);
    }
    std::unique_ptr<TrafgenFlood> flood(new TrafgenFlood());
    flood->pid_ = child;
    flood->log_path_ = log_path;
    return flood;
}

TrafgenFlood::~TrafgenFlood() {
    (void)stop();
}

bool TrafgenFlood::running() {
    if (pid_ <= 0 || reaped_) return false;
    return !exited_unreaped(pid_);
}

Status TrafgenFlood::stop() {
    if (pid_ <= 0 || reaped_) return {};
    // The leader is not reaped before the group is killed: its PID (the
    // group's ID) stays ours until then.
    kill(-pid_, SIGINT);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!exited_unreaped(pid_) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    kill(-pid_, SIGKILL);
    // Done when no process of the group is left running (the leader, not
    // yet reaped, holds the group's ID meanwhile).
    deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    std::vector<pid_t> left;
    while (!(left = live_group_members(pid_)).empty() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    int status = 0;
    pid_t r;
    while ((r = waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    if (!left.empty())
        return make_error("trafgen's process group " + std::to_string(pid_) + " still has " +
                          std::to_string(left.size()) + " process(es) 5 s after SIGKILL");
    if (r != pid_ && errno != ECHILD)
        return errno_error("waiting for trafgen (pid " + std::to_string(pid_) + ")", errno);
    return {};
}

std::string TrafgenFlood::log() const {
    return read_text(log_path_);
}

}  // namespace sluice::bench
