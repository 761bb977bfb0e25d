#include "loader/instance_paths.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

namespace sluice {
namespace {

constexpr const char* kBpffs = "/sys/fs/bpf";

bool is_bpffs(const char* path) {
    struct statfs st {};
    return statfs(path, &st) == 0 && static_cast<unsigned long>(st.f_type) == BPF_FS_MAGIC;
}

ino_t ns_inode(const char* path) {
    struct stat st {};
    return stat(path, &st) == 0 ? st.st_ino : 0;
}

}  // namespace

Status prepare_bpffs() {
    if (is_bpffs(kBpffs)) return {};
    // Under `ip netns exec` the process has its own mount namespace with a
    // fresh /sys, so the host's bpffs is hidden and anything pinned on a bpffs
    // mounted here would vanish with the process. The parent (the shell that
    // ran `ip netns exec`) still sees the host's: join its mount namespace.
    // The network namespace is unaffected. (`sluice --netns NAME` avoids this.)
    std::string parent = "/proc/" + std::to_string(getppid());
    if (ns_inode((parent + "/ns/mnt").c_str()) != ns_inode("/proc/self/ns/mnt") &&
        is_bpffs((parent + "/root/sys/fs/bpf").c_str())) {
        int fd = open((parent + "/ns/mnt").c_str(), O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            int rc = setns(fd, CLONE_NEWNS);
            int err = errno;
            close(fd);
            if (rc != 0)
                return make_error(std::string("cannot join the parent's mount namespace to reach bpffs: ") +
                                  std::strerror(err) + " (run `sluice --netns NAME ...` instead)");
            if (chdir("/") != 0) { /* the working directory does not matter to sluice */ }
            if (is_bpffs(kBpffs)) return {};
        }
    }
    std::error_code ec;
    std::filesystem::create_directories(kBpffs, ec);
    if (mount("bpf", kBpffs, "bpf", 0, "mode=0700") != 0)
        return make_error(std::string("bpffs is not mounted at /sys/fs/bpf and mounting it failed: ") +
                          std::strerror(errno) + " (try: mount -t bpf bpf /sys/fs/bpf)");
    return {};
}

Status enter_netns(const std::string& name) {
    std::string path = "/run/netns/" + name;
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return make_error("network namespace " + name + " not found (" + path + "): " + std::strerror(errno));
    int rc = setns(fd, CLONE_NEWNET);
    int err = errno;
    close(fd);
    if (rc != 0) return make_error("cannot enter network namespace " + name + ": " + std::strerror(err));
    return {};
}

std::string netns_label() {
    ino_t self = ns_inode("/proc/self/ns/net");
    ino_t init = ns_inode("/proc/1/ns/net");
    // Unreadable init namespace (a sandbox): only named namespaces are labelled.
    if (self == init) return "";
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/run/netns", ec)) {
        if (ns_inode(entry.path().c_str()) == self) return "netns/" + entry.path().filename().string();
    }
    return init == 0 ? "" : "netns/" + std::to_string(self);
}

InstancePaths instance_paths(const std::string& instance) {
    std::string label = netns_label();
    std::string middle = label.empty() ? "" : label + "/";
    return InstancePaths{
        .pin_dir = std::string(kBpffs) + "/sluice/" + middle + instance,
        .state_dir = "/run/sluice/" + middle + instance,
    };
}

Status remove_instance_dir(const std::string& dir) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (ec) return make_error("cannot remove " + dir + ": " + ec.message());
    std::filesystem::path parent = std::filesystem::path(dir).parent_path();
    while (parent.has_filename() && parent.filename() != "sluice" && std::filesystem::is_empty(parent, ec) && !ec) {
        std::filesystem::remove(parent, ec);
        parent = parent.parent_path();
    }
    return {};
}

}  // namespace sluice
