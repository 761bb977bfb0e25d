#include "inspect/time_wait.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <iostream>
#include <mutex>
#include <thread>
#include <vector>

#include "inspect/session_link.h"

namespace sluice::inspect {
namespace {


// A sock_diag netlink socket of the calling thread's network namespace.
class DiagSocket {
public:
    ~DiagSocket() {
        if (fd_ >= 0) close(fd_);
    }

    // The answer to one request: an error number (0: none), else for a
    // SOCK_DIAG_BY_FAMILY look-up the socket found. SOCK_DESTROY asks for an
    // acknowledgement (error 0).
    struct Answer {
        int error = 0;
        inet_diag_msg socket{};
    };

    Result<Answer> exchange(uint16_t type, const inet_diag_req_v2& request) {
        if (fd_ < 0) {
            fd_ = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
            if (fd_ < 0) return errno_error("sock_diag socket", errno);
        }
        struct {
            nlmsghdr header;
            inet_diag_req_v2 request;
        } message{};
        message.header.nlmsg_len = sizeof(message);
        message.header.nlmsg_type = type;
        message.header.nlmsg_flags = NLM_F_REQUEST | (type == SOCK_DESTROY ? NLM_F_ACK : 0);
        message.header.nlmsg_seq = ++sequence_;
        message.request = request;
        sockaddr_nl kernel{};
        kernel.nl_family = AF_NETLINK;
        if (sendto(fd_, &message, sizeof(message), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel)) < 0)
            return errno_error("sock_diag send", errno);
        // The kernel answers within sendto(): the answer is queued by now.
        // Anything left over from an earlier request is skipped.
        alignas(nlmsghdr) char buffer[8192];
        for (;;) {
            ssize_t n = recv(fd_, buffer, sizeof(buffer), MSG_DONTWAIT);
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return make_error("sock_diag: no answer");
            if (n < 0) return errno_error("sock_diag receive", errno);
            int left = static_cast<int>(n);
            for (auto* h = reinterpret_cast<nlmsghdr*>(buffer); NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
                if (h->nlmsg_seq != message.header.nlmsg_seq) continue;
                Answer answer;
                if (h->nlmsg_type == NLMSG_ERROR && h->nlmsg_len >= NLMSG_LENGTH(sizeof(nlmsgerr))) {
                    answer.error = -static_cast<const nlmsgerr*>(NLMSG_DATA(h))->error;
                    return answer;
                }
                if (h->nlmsg_type == type && h->nlmsg_len >= NLMSG_LENGTH(sizeof(inet_diag_msg))) {
                    std::memcpy(&answer.socket, NLMSG_DATA(h), sizeof(answer.socket));
                    return answer;
                }
            }
        }
    }

private:
    int fd_ = -1;
    uint32_t sequence_ = 0;
};

thread_local DiagSocket diag_socket;

std::atomic<uint64_t> failures{0};

bool is_power_of_ten(uint64_t n) {
    while (n >= 10 && n % 10 == 0) n /= 10;
    return n == 1;
}

void count_failure(const std::string& what) {
    uint64_t n = failures.fetch_add(1, std::memory_order_relaxed) + 1;
    // The first failure with its reason, then only at 10, 100, ... failures:
    // an operator learns that it happens and how often; the log is not flooded.
    if (n == 1)
        std::cerr << "sluice: inspect: cannot remove a relay's TIME_WAIT socket (a reconnect from the same client "
                     "port may go unanswered for up to 60 s): "
                  << what << std::endl;
    else if (is_power_of_ten(n))
        std::cerr << "sluice: inspect: " << n << " TIME_WAIT removals failed so far; the latest: " << what << std::endl;
}

// Tuples whose TIME_WAIT is still to come, retried by one background thread.
// It is created on first use and never destroyed (nor joined): a worker may
// still hand it a tuple while the process exits, and the thread holds nothing
// that needs an orderly end. It inherits the network namespace of the worker
// that starts it, which is the stage's (all workers share one).
class Retrier {
public:
    static Retrier& instance() {
        static Retrier* retrier = new Retrier;
        return *retrier;
    }

    void add(const Endpoint& local, const Endpoint& remote) {
        std::lock_guard lock(mutex_);
        if (pending_.size() >= kMaxPending) {
            count_failure(local.text() + " ↔ " + remote.text() + ": too many tuples waiting for TIME_WAIT");
            return;
        }
        auto now = Clock::now();
        pending_.push_back({local, remote, now + kFirstRetry, now + kGiveUp, kFirstRetry});
        if (!started_) {
            std::thread([this] { run(); }).detach();
            started_ = true;
        }
        wake_.notify_one();
    }

private:
    using Clock = std::chrono::steady_clock;
    struct Pending {
        Endpoint local, remote;
        Clock::time_point next_try, give_up;
        Clock::duration wait;
    };
    // The TIME_WAIT appears when the peer acknowledges our FIN: normally one
    // round trip after close(), at worst after the orphaned socket's last FIN
    // retransmission (8 tries, about 100 s with backoff; after that the
    // kernel kills the socket and no TIME_WAIT comes).
    static constexpr auto kFirstRetry = std::chrono::milliseconds(20);
    static constexpr auto kMaxWait = std::chrono::milliseconds(500);
    static constexpr auto kGiveUp = std::chrono::seconds(150);
    static constexpr size_t kMaxPending = 65536;

    void run() {
        std::unique_lock lock(mutex_);
        for (;;) {
            if (pending_.empty()) {
                wake_.wait(lock);
                continue;
            }
            auto next = pending_.front().next_try;
            for (const auto& p : pending_) next = std::min(next, p.next_try);
            if (wake_.wait_until(lock, next) == std::cv_status::no_timeout) continue;
            std::vector<Pending> due;
            auto now = Clock::now();
            std::erase_if(pending_, [&](const Pending& p) {
                if (p.next_try > now) return false;
                due.push_back(p);
                return true;
            });
            lock.unlock();
            std::vector<Pending> again;
            for (auto& p : due) {
                auto outcome = remove_time_wait(p.local, p.remote);
                if (!outcome) {
                    count_failure(outcome.error().message);
                } else if (outcome.value() == TimeWaitOutcome::pending && Clock::now() < p.give_up) {
                    p.wait = std::min<Clock::duration>(p.wait * 2, kMaxWait);
                    p.next_try = Clock::now() + p.wait;
                    again.push_back(p);
                }
            }
            lock.lock();
            pending_.insert(pending_.end(), again.begin(), again.end());
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::vector<Pending> pending_;
    bool started_ = false;
};

}  // namespace

Result<TimeWaitOutcome> remove_time_wait(const Endpoint& local, const Endpoint& remote) {
    inet_diag_req_v2 request{};
    request.sdiag_family = static_cast<uint8_t>(local.family);
    request.sdiag_protocol = IPPROTO_TCP;
    request.idiag_states = ~0u;  // an exact look-up ignores it
    request.id.idiag_sport = local.port;
    request.id.idiag_dport = remote.port;
    std::memcpy(request.id.idiag_src, local.addr, sizeof(request.id.idiag_src));
    std::memcpy(request.id.idiag_dst, remote.addr, sizeof(request.id.idiag_dst));
    request.id.idiag_cookie[0] = request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    const std::string tuple = local.text() + " ↔ " + remote.text();

    auto found = diag_socket.exchange(SOCK_DIAG_BY_FAMILY, request);
    if (!found) return make_error(tuple + ": " + found.error().message);
    if (found->error == ENOENT) return TimeWaitOutcome::none;
    if (found->error != 0) return errno_error(tuple + ": sock_diag look-up", found->error);
    switch (found->socket.idiag_state) {
        case TCP_TIME_WAIT:
            break;
        case TCP_FIN_WAIT1:
        case TCP_FIN_WAIT2:
        case TCP_CLOSING:
            // Our FIN is still unacknowledged (or the peer's FIN still to
            // come): destroying the socket now would end the retransmission
            // of our last bytes and FIN, or send the peer a RST. The
            // TIME_WAIT comes later; the caller may try again.
            return TimeWaitOutcome::pending;
        default:
            // LAST_ACK (the peer closed first: no TIME_WAIT follows; the
            // socket goes when the peer acknowledges our FIN), or a new
            // connection on the tuple: not ours to touch.
            return TimeWaitOutcome::left;
    }
    // The cookie names this very TIME_WAIT socket: should it expire and the
    // tuple be taken by a new connection in between, the kernel refuses
    // (ESTALE) instead of destroying the new one.
    std::memcpy(request.id.idiag_cookie, found->socket.id.idiag_cookie, sizeof(request.id.idiag_cookie));
    auto destroyed = diag_socket.exchange(SOCK_DESTROY, request);
    if (!destroyed) return make_error(tuple + ": " + destroyed.error().message);
    if (destroyed->error == ENOENT || destroyed->error == ESTALE) return TimeWaitOutcome::none;
    if (destroyed->error != 0) return errno_error(tuple + ": sock_diag destroy of a TIME_WAIT socket", destroyed->error);
    return TimeWaitOutcome::removed;
}

void remove_relay_time_waits(const SessionEntry& initiator) {
    ServerLeg server = server_leg(initiator);
    struct {
        Endpoint local, remote;
    } legs[2] = {
        // The accepted socket: its local address is the original destination.
        {endpoint_of(initiator.family, initiator.dst_addr, initiator.dst_port),
         endpoint_of(initiator.family, initiator.src_addr, initiator.src_port)},
        {server.local, server.remote},
    };
    for (const auto& leg : legs) {
        auto outcome = remove_time_wait(leg.local, leg.remote);
        if (!outcome) count_failure(outcome.error().message);
        else if (outcome.value() == TimeWaitOutcome::pending) Retrier::instance().add(leg.local, leg.remote);
    }
}

}  // namespace sluice::inspect
