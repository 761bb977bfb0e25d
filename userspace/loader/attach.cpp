#include "loader/attach.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <xdp/libxdp.h>

#include <array>
#include <cstdlib>
#include <cerrno>
#include <cstring>

extern "C" {
#include "map_names.h"
}

namespace sluice {
namespace {

// Filter handle/priority of our TC filters; fixed so a restart replaces them.
// The pipeline's comes first on ingress (a lower priority runs earlier).
constexpr uint32_t kTcHandle = 0x51c;
constexpr uint32_t kTcPriority = 0x51c;
constexpr uint32_t kTcPipelineHandle = 0x51b;
constexpr uint32_t kTcPipelinePriority = 0x51b;

xdp_attach_mode to_libxdp(XdpMode mode) { return mode == XdpMode::Native ? XDP_MODE_NATIVE : XDP_MODE_SKB; }

uint32_t to_flags(XdpMode mode) { return mode == XdpMode::Native ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE; }

int silent_libxdp_print(enum libxdp_print_level, const char*, va_list) { return 0; }
int silent_libbpf_print(enum libbpf_print_level, const char*, va_list) { return 0; }

// libbpf prints the kernel's extack for an existing clsact qdisc ("Exclusivity
// flag on"), which is expected here; keep it off the operator's terminal.
class QuietLibbpf {
public:
    QuietLibbpf() : old_(libbpf_set_print(silent_libbpf_print)) {}
    ~QuietLibbpf() { libbpf_set_print(old_); }

private:
    libbpf_print_fn_t old_;
};

Status attach_once(uint32_t ifindex, int prog_fd, XdpMode mode) {
    uint32_t old_id = 0;
    std::string old_name = attached_xdp_program(ifindex, &old_id);
    if (old_name == SLUICE_PROG_XDP_MAIN) {
        // Atomic swap of an earlier sluice's program: libxdp has no replace
        // for single-program attachments, so use the kernel's REPLACE flag.
        int old_fd = bpf_prog_get_fd_by_id(old_id);
        if (old_fd < 0) return errno_error("cannot open the attached program", errno);
        LIBBPF_OPTS(bpf_xdp_attach_opts, opts, .old_prog_fd = old_fd);
        int rc = bpf_xdp_attach(static_cast<int>(ifindex), prog_fd, to_flags(mode) | XDP_FLAGS_REPLACE, &opts);
        close(old_fd);
        if (rc != 0) return errno_error("replacing sluice's program", rc);
        return {};
    }
    if (!old_name.empty())
        return make_error(ErrorCode::Busy, "another XDP program (" + old_name + ", id " + std::to_string(old_id) +
                                               ") is attached; detach it first");
    // sluice owns the interface's XDP hook (it swaps its own program
    // atomically on restart), so libxdp's multi-program dispatcher is not used.
    setenv("LIBXDP_SKIP_DISPATCHER", "1", 1);
    libxdp_set_print(silent_libxdp_print);
    xdp_program* prog = xdp_program__from_fd(prog_fd);
    long err = libxdp_get_error(prog);
    if (err) return errno_error("libxdp cannot use the program", static_cast<int>(err));
    int rc = xdp_program__attach(prog, static_cast<int>(ifindex), to_libxdp(mode), 0);
    xdp_program__close(prog);
    if (rc != 0) return errno_error(std::string(mode == XdpMode::Native ? "native" : "generic") + " attach", rc);
    return {};
}

}  // namespace

std::string interface_driver(const std::string& name) {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return "";
    ethtool_drvinfo info{};
    info.cmd = ETHTOOL_GDRVINFO;
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
    ifr.ifr_data = reinterpret_cast<char*>(&info);
    std::string driver;
    if (ioctl(fd, SIOCETHTOOL, &ifr) == 0) driver = info.driver;
    close(fd);
    return driver;
}

bool kernel_allows_xdp_meta() {
    // Loads `bpf_xdp_adjust_meta(ctx, 0); return XDP_PASS;`. Not
    // libbpf_probe_bpf_helper: it takes a refusal it does not recognize
    // ("program of this type cannot use helper") for support.
    const bpf_insn insns[] = {
        {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .src_reg = 0, .off = 0, .imm = 0},
        {.code = BPF_JMP | BPF_CALL, .dst_reg = 0, .src_reg = 0, .off = 0, .imm = BPF_FUNC_xdp_adjust_meta},
        {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .src_reg = 0, .off = 0, .imm = XDP_PASS},
        {.code = BPF_JMP | BPF_EXIT, .dst_reg = 0, .src_reg = 0, .off = 0, .imm = 0},
    };
    const int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "sluice_meta_probe", "GPL", insns, 4, nullptr);
    if (fd < 0) return false;
    close(fd);
    return true;
}

ModeChoice choose_xdp_mode(const std::string& requested, const std::string& driver, bool native_handoff) {
    const std::string what = driver.empty() ? "a device without a driver name" : driver;
    const std::string no_meta = "this kernel refuses bpf_xdp_adjust_meta to XDP programs, which native XDP needs "
                                "to hand inspected and SYN-proxied packets to TC";
    if (requested == "native") {
        if (!native_handoff)
            return {XdpMode::Generic, "xdp-mode: native", "native XDP is not used: " + no_meta + "; using generic XDP"};
        return {XdpMode::Native, "xdp-mode: native", ""};
    }
    if (requested == "generic") return {XdpMode::Generic, "xdp-mode: generic", ""};
    if (requested == "tc") return {XdpMode::Tc, "xdp-mode: tc", ""};
    static constexpr std::array<const char*, 5> kGoodNative = {"mlx5_core", "i40e", "ice", "ixgbe", "virtio_net"};
    for (const char* d : kGoodNative) {
        if (driver != d) continue;
        if (!native_handoff) return {XdpMode::Tc, "auto: " + driver + " has native XDP, but " + no_meta, ""};
        return {XdpMode::Native, "auto: " + driver + " has native XDP", ""};
    }
    if (driver == "veth")
        return {XdpMode::Tc,
                "auto: on veth native XDP turns GRO off and generic XDP cannot redirect GRO aggregates; TC forwards "
                "them whole",
                ""};
    return {XdpMode::Tc, "auto: " + what + " has no native XDP sluice relies on; TC ingress keeps GRO aggregates whole",
            ""};
}

Result<AttachResult> attach_xdp(const std::string& name, uint32_t ifindex, int prog_fd, XdpMode mode,
                                bool generic_fallback) {
    AttachResult result{.mode = mode, .warning = ""};
    if (mode == XdpMode::Tc) return make_error("internal: interface " + name + ": the tc mode attaches no XDP program");
    Status s = attach_once(ifindex, prog_fd, mode);
    if (s) return result;
    // Generic XDP is the fallback for a driver without native support, not
    // for a hook another program holds.
    if (generic_fallback && mode == XdpMode::Native && s.error().code != ErrorCode::Busy) {
        Status g = attach_once(ifindex, prog_fd, XdpMode::Generic);
        if (g) {
            result.mode = XdpMode::Generic;
            result.warning = "interface " + name + ": native XDP attach failed (" + s.error().message +
                             "); using generic XDP";
            return result;
        }
        return make_error("interface " + name + ": XDP attach failed: native: " + s.error().message +
                          "; generic: " + g.error().message);
    }
    return make_error(s.error().code, "interface " + name + ": XDP attach failed: " + s.error().message);
}

std::string attached_xdp_program(uint32_t ifindex, uint32_t* prog_id) {
    LIBBPF_OPTS(bpf_xdp_query_opts, q);
    if (bpf_xdp_query(static_cast<int>(ifindex), 0, &q) != 0 || q.prog_id == 0) return "";
    if (prog_id) *prog_id = q.prog_id;
    int fd = bpf_prog_get_fd_by_id(q.prog_id);
    if (fd < 0) return "?";
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    std::string result = bpf_obj_get_info_by_fd(fd, &info, &len) == 0 ? info.name : "?";
    close(fd);
    return result;
}

Status detach_xdp(const std::string& name, uint32_t ifindex) {
    uint32_t id = 0;
    std::string prog = attached_xdp_program(ifindex, &id);
    if (prog.empty()) return {};
    // Kernel object names are cut to 15 characters; ours fit.
    if (prog != SLUICE_PROG_XDP_MAIN)
        return make_error("interface " + name + " runs another XDP program (" + prog + "); left in place");
    LIBBPF_OPTS(bpf_xdp_query_opts, q);
    bpf_xdp_query(static_cast<int>(ifindex), 0, &q);
    uint32_t flags = q.attach_mode == XDP_ATTACHED_DRV ? XDP_FLAGS_DRV_MODE
                     : q.attach_mode == XDP_ATTACHED_SKB ? XDP_FLAGS_SKB_MODE
                                                        : 0;
    int fd = bpf_prog_get_fd_by_id(id);
    LIBBPF_OPTS(bpf_xdp_attach_opts, opts, .old_prog_fd = fd);
    int rc = bpf_xdp_detach(static_cast<int>(ifindex), flags | (fd >= 0 ? XDP_FLAGS_REPLACE : 0), &opts);
    if (fd >= 0) close(fd);
    if (rc != 0) return errno_error("interface " + name + ": XDP detach failed", rc);
    return {};
}

namespace {

const char* hook_name(TcHook hook) {
    return hook == TcHook::Egress ? "egress" : hook == TcHook::Ingress ? "ingress" : "ingress (pipeline)";
}
bpf_tc_attach_point to_attach_point(TcHook hook) { return hook == TcHook::Egress ? BPF_TC_EGRESS : BPF_TC_INGRESS; }
uint32_t handle_of(TcHook hook) { return hook == TcHook::IngressPipeline ? kTcPipelineHandle : kTcHandle; }
uint32_t priority_of(TcHook hook) { return hook == TcHook::IngressPipeline ? kTcPipelinePriority : kTcPriority; }

}  // namespace

Status attach_tc(const std::string& name, uint32_t ifindex, int prog_fd, TcHook where) {
    LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = static_cast<int>(ifindex), .attach_point = to_attach_point(where));
    int rc;
    {
        QuietLibbpf quiet;
        rc = bpf_tc_hook_create(&hook);
    }
    if (rc != 0 && rc != -EEXIST) return errno_error("interface " + name + ": cannot create clsact qdisc", rc);
    LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = prog_fd, .flags = BPF_TC_F_REPLACE, .handle = handle_of(where),
                .priority = priority_of(where));
    rc = bpf_tc_attach(&hook, &opts);
    if (rc != 0) return errno_error("interface " + name + ": TC " + hook_name(where) + " attach failed", rc);
    return {};
}

Status detach_tc(const std::string& name, uint32_t ifindex, TcHook where) {
    LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = static_cast<int>(ifindex), .attach_point = to_attach_point(where));
    LIBBPF_OPTS(bpf_tc_opts, opts, .handle = handle_of(where), .priority = priority_of(where));
    QuietLibbpf quiet;  // "Cannot find specified filter chain" when already gone
    int rc = bpf_tc_detach(&hook, &opts);
    if (rc != 0 && rc != -ENOENT && rc != -EINVAL && rc != -ENODEV)
        return errno_error("interface " + name + ": TC " + hook_name(where) + " detach failed", rc);
    return {};
}

}  // namespace sluice
