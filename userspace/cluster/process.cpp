#include "cluster/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace sluice::cluster {
namespace {

constexpr const char* kNotFound = "program not found (is it installed and on PATH?)";

struct Fd {
    int fd = -1;
    Fd() = default;
    explicit Fd(int f) : fd(f) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() { reset(); }
    void reset() {
        if (fd >= 0) close(fd);
        fd = -1;
    }
};

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
    std::vector<char*> out;
    out.reserve(argv.size() + 1);
    for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
    out.push_back(nullptr);
    return out;
}

int decode_status(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

// Reports exec's errno through a close-on-exec pipe: nothing read = exec worked.
Error exec_error(const std::string& program, int err) {
    if (err == ENOENT) {
        Error e = make_error(ErrorCode::NotFound, program + ": " + kNotFound);
        e.sys_errno = err;
        return e;
    }
    return errno_error("cannot run " + program, err);
}

}  // namespace

bool is_not_found(const Error& error) { return error.code == ErrorCode::NotFound; }

Result<CommandResult> run_local(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
    if (argv.empty()) return make_error("run_local: empty command");
    int out_pipe[2], err_pipe[2], exec_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0) return errno_error("pipe", errno);
    Fd out_r(out_pipe[0]), out_w(out_pipe[1]);
    if (pipe2(err_pipe, O_CLOEXEC) != 0) return errno_error("pipe", errno);
    Fd err_r(err_pipe[0]), err_w(err_pipe[1]);
    if (pipe2(exec_pipe, O_CLOEXEC) != 0) return errno_error("pipe", errno);
    Fd exec_r(exec_pipe[0]), exec_w(exec_pipe[1]);
    auto args = c_argv(argv);

    pid_t pid = fork();
    if (pid < 0) return errno_error("fork", errno);
    if (pid == 0) {
        // Own process group, so a timeout can kill everything the command started.
        setpgid(0, 0);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        dup2(out_w.fd, 1);
        dup2(err_w.fd, 2);
        signal(SIGPIPE, SIG_DFL);
        execvp(args[0], args.data());
        int e = errno;
        (void)!write(exec_w.fd, &e, sizeof e);
        _exit(127);
    }
    setpgid(pid, pid);  // also here: whichever runs first
    out_w.reset();
    err_w.reset();
    exec_w.reset();
    int exec_errno = 0;
    if (read(exec_r.fd, &exec_errno, sizeof exec_errno) == static_cast<ssize_t>(sizeof exec_errno)) {
        int st = 0;
        waitpid(pid, &st, 0);
        return exec_error(argv[0], exec_errno);
    }

    CommandResult result;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    bool exited = false;
    int status = 0;
    std::chrono::steady_clock::time_point exited_at;
    char buf[16384];
    while (out_r.fd >= 0 || err_r.fd >= 0) {
        auto now = std::chrono::steady_clock::now();
        if (now >= deadline) {
            kill(-pid, SIGKILL);
            result.timed_out = true;
            break;
        }
        // A grandchild may keep the pipes open after the command exited; give
        // it a moment to finish writing, then stop reading.
        if (exited && now - exited_at > std::chrono::seconds(2)) break;
        pollfd fds[2];
        int n = 0;
        if (out_r.fd >= 0) fds[n++] = {out_r.fd, POLLIN, 0};
        if (err_r.fd >= 0) fds[n++] = {err_r.fd, POLLIN, 0};
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
        int rc = poll(fds, n, static_cast<int>(std::min<long long>(left, 100)));
        if (rc < 0 && errno != EINTR) break;
        for (int i = 0; i < n; ++i) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t got = read(fds[i].fd, buf, sizeof buf);
            bool is_out = fds[i].fd == out_r.fd;
            if (got > 0) {
                (is_out ? result.out : result.err).append(buf, static_cast<size_t>(got));
            } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
                (is_out ? out_r : err_r).reset();
            }
        }
        if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
            exited = true;
            exited_at = std::chrono::steady_clock::now();
        }
    }
    if (!exited) {
        if (result.timed_out) kill(-pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    if (result.timed_out) kill(-pid, SIGKILL);  // stragglers in the group
    result.exit_status = decode_status(status);
    return result;
}

CommandRunner local_runner() {
    return [](const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
        return run_local(argv, timeout);
    };
}

Result<int> spawn_detached(const std::vector<std::string>& argv, const std::string& log_path) {
    if (argv.empty()) return make_error("spawn_detached: empty command");
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return errno_error("pipe", errno);
    Fd report_r(report[0]), report_w(report[1]);
    auto args = c_argv(argv);
    pid_t child = fork();
    if (child < 0) return errno_error("fork", errno);
    if (child == 0) {
        setsid();
        pid_t grandchild = fork();
        if (grandchild == 0) {
            int devnull = open("/dev/null", O_RDONLY);
            if (devnull >= 0) dup2(devnull, 0);
            int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (log >= 0) {
                dup2(log, 1);
                dup2(log, 2);
            }
            signal(SIGPIPE, SIG_DFL);
            execvp(args[0], args.data());
            int e = errno;
            (void)!write(report_w.fd, &e, sizeof e);
            _exit(127);
        }
        int p = grandchild;
        (void)!write(report_w.fd, &p, sizeof p);
        _exit(grandchild > 0 ? 0 : 1);
    }
    report_w.reset();
    int st = 0;
    while (waitpid(child, &st, 0) < 0 && errno == EINTR) {
    }
    int pid = 0;
    if (read(report_r.fd, &pid, sizeof pid) != static_cast<ssize_t>(sizeof pid) || pid <= 0)
        return make_error("cannot start " + argv[0] + ": fork failed");
    int exec_errno = 0;
    if (read(report_r.fd, &exec_errno, sizeof exec_errno) == static_cast<ssize_t>(sizeof exec_errno))
        return exec_error(argv[0], exec_errno);
    return pid;
}

bool pid_running(int pid) {
    if (pid <= 0) return false;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return false;
    auto close_paren = line.rfind(')');
    if (close_paren == std::string::npos || close_paren + 2 >= line.size()) return false;
    char state = line[close_paren + 2];
    return state != 'Z' && state != 'X';
}

Status stop_local_pid(int pid, std::chrono::milliseconds grace) {
    if (!pid_running(pid)) return {};
    kill(pid, SIGTERM);
    auto wait_gone = [pid](std::chrono::milliseconds limit) {
        auto deadline = std::chrono::steady_clock::now() + limit;
        while (std::chrono::steady_clock::now() < deadline) {
            // Reap it if it is our own child; otherwise its parent does.
            waitpid(pid, nullptr, WNOHANG);
            if (!pid_running(pid)) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        waitpid(pid, nullptr, WNOHANG);
        return !pid_running(pid);
    };
    if (wait_gone(grace)) return {};
    kill(pid, SIGKILL);
    if (wait_gone(std::chrono::seconds(5))) return {};
    return make_error("process " + std::to_string(pid) + " is still there 5s after SIGKILL");
}

std::string shell_quote(const std::string& word) {
    if (!word.empty() &&
        word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-") ==
            std::string::npos)
        return word;
    std::string out = "'";
    for (char c : word) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

std::string shell_join(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) {
        if (!out.empty()) out += ' ';
        out += shell_quote(a);
    }
    return out;
}

}  // namespace sluice::cluster
