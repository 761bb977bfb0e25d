#include "netns_fixture.h"

#include "cluster/topology.h"
#include "common/cpu_pin.h"

#include <fcntl.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace sluice::test {

namespace {

std::atomic<int> g_counter{0};

std::string join(const std::vector<std::string>& argv) {
    std::string s;
    for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
    return s;
}

}  // namespace

int run_command(const std::vector<std::string>& argv, std::string* output) {
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(pipefd[1], STDOUT_FILENO);
        dup2(pipefd[1], STDERR_FILENO);
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execvp(args[0], args.data());
        _exit(127);
    }
    close(pipefd[1]);
    std::string out;
    char buf[512];
    ssize_t n;
    while ((n = read(pipefd[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    close(pipefd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (output) *output = out;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool bpf_required() {
    const char* value = std::getenv("SLUICE_REQUIRE_BPF");
    return value && std::string(value) == "1";
}

std::optional<std::string> bpf_unavailable_reason() {
    if (geteuid() != 0) return "needs root (BPF_PROG_TEST_RUN, network namespaces)";
    union bpf_attr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.map_type = BPF_MAP_TYPE_ARRAY;
    attr.key_size = 4;
    attr.value_size = 4;
    attr.max_entries = 1;
    long fd = syscall(__NR_bpf, BPF_MAP_CREATE, &attr, sizeof attr);
    if (fd < 0) return std::string("bpf() is unavailable: ") + std::strerror(errno);
    close(static_cast<int>(fd));
    std::string out;
    if (run_command({"ip", "-V"}, &out) != 0) return "the `ip` command (iproute2) is missing";
    return std::nullopt;
}

Result<std::unique_ptr<NetnsFixture>> NetnsFixture::create() {
    // The datapath keeps per-CPU state (the flow cache, counters), and each
    // BPF_PROG_TEST_RUN runs on the CPU its caller is on. Tests that expect a
    // second packet to find what the first one left need both runs on one
    // CPU; with tests running side by side (ctest -j) a thread moves between
    // CPUs often enough to miss. So the thread stays on the CPU it is on now.
    if (auto s = pin_to_current_cpu(); !s) return s.error();
    std::unique_ptr<NetnsFixture> ns(new NetnsFixture());
    ns->prefix_ = "sluice-bpft-" + std::to_string(getpid()) + "-" + std::to_string(g_counter++);
    ns->name_ = cluster::namespace_name(ns->prefix_, "fw");
    if (Status s = ns->setup(); !s) return s.error();  // ~NetnsFixture undoes the rest
    return ns;
}

Status NetnsFixture::ip(const std::vector<std::string>& args) const {
    std::vector<std::string> argv{"ip", "-n", name_};
    argv.insert(argv.end(), args.begin(), args.end());
    std::string out;
    if (run_command(argv, &out) != 0) return make_error(join(argv) + " failed: " + out);
    return {};
}

Status NetnsFixture::setup() {
    // The namespace is the bpf-test lab topology's one node (cluster/topology.h).
    const auto& topology = cluster::bpf_test_topology();
    // A leftover from a crashed run with the same pid would make the build fail.
    (void)cluster::remove_topology(topology, prefix_);
    created_ = true;
    std::ostringstream log;
    if (Status s = cluster::build_topology(topology, prefix_, log); !s) return s;

    original_netns_fd_ = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (original_netns_fd_ < 0)
        return make_error(std::string("open /proc/thread-self/ns/net: ") + std::strerror(errno));
    std::string path = "/run/netns/" + name_;
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return make_error("open " + path + ": " + std::strerror(errno));
    int rc = setns(fd, CLONE_NEWNET);
    int err = errno;
    close(fd);
    if (rc != 0) return make_error("setns(" + path + "): " + std::strerror(err));
    entered_ = true;

    auto lan = interface("lan0");
    if (!lan) return lan.error();
    lan_ = lan.value();
    auto wan = interface("wan0");
    if (!wan) return wan.error();
    wan_ = wan.value();
    return {};
}

NetnsFixture::~NetnsFixture() {
    if (entered_ && original_netns_fd_ >= 0) setns(original_netns_fd_, CLONE_NEWNET);
    if (original_netns_fd_ >= 0) close(original_netns_fd_);
    if (created_) (void)cluster::remove_topology(cluster::bpf_test_topology(), prefix_);
}

Result<InterfaceInfo> NetnsFixture::interface(const std::string& name) const {
    InterfaceInfo info;
    info.name = name;
    // Both calls use sockets, which are created in this thread's namespace.
    info.ifindex = if_nametoindex(name.c_str());
    if (info.ifindex == 0)
        return make_error("interface " + name + " not found in " + name_ + ": " + std::strerror(errno));
    int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (sock < 0) return make_error(std::string("socket: ") + std::strerror(errno));
    struct ifreq ifr;
    std::memset(&ifr, 0, sizeof ifr);
    std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
    int rc = ioctl(sock, SIOCGIFHWADDR, &ifr);
    int err = errno;
    close(sock);
    if (rc != 0) return make_error("SIOCGIFHWADDR " + name + ": " + std::strerror(err));
    std::memcpy(info.mac.bytes.data(), ifr.ifr_hwaddr.sa_data, 6);
    return info;
}

Result<InterfaceInfo> NetnsFixture::add_vlan(const std::string& parent, uint16_t vid) {
    std::string name = parent + "." + std::to_string(vid);
    if (Status s = ip({"link", "add", "link", parent, "name", name, "type", "vlan", "id", std::to_string(vid)}); !s)
        return s.error();
    if (Status s = ip({"link", "set", name, "up"}); !s) return s.error();
    return interface(name);
}

}  // namespace sluice::test
