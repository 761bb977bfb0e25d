// The inspection stage's sockets. The stage is a transparent proxy: its
// listeners (loopback, one per worker with SO_REUSEPORT) receive the punted
// flows tc_punt_prog assigns to them, the accepted socket keeps the client's
// original destination as its local address, and the server-side leg binds
// to the client's address (IP_TRANSPARENT) so the server sees the client.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "common/result.h"

namespace sluice::inspect {

// An address and port; IPv4 in addr[0]. Both in network order.
struct Endpoint {
    int family = AF_INET;
    uint32_t addr[4] = {};
    uint16_t port = 0;

    sockaddr_storage sockaddr(socklen_t& len) const;
    static Endpoint from(const sockaddr_storage& ss);
    std::string text() const;
};

// A listener on the loopback address of family for the stage (TCP: listening;
// UDP: receiving with the original destination in a control message).
// port 0 picks one; every worker then binds the same port (SO_REUSEPORT).
Result<int> open_stage_listener(int family, int type, uint16_t port_host_order);
Result<uint16_t> bound_port(int fd);  // host order

// A non-blocking socket bound (IP_TRANSPARENT, SO_REUSEADDR) to local, which
// need not be an address of this host.
Result<int> open_transparent(int type, const Endpoint& local);
Status connect_to(int fd, const Endpoint& remote);  // non-blocking: EINPROGRESS is fine

Endpoint local_endpoint(int fd);
// 127.0.0.1 or ::1 at port (host order): where the stage's and the DNS proxy's listeners are.
Endpoint loopback_endpoint(int family, uint16_t port_host_order);
Endpoint peer_endpoint(int fd);

// Close with RST to the peer (SO_LINGER 0).
void close_with_reset(int fd);
// Close sending nothing at all (TCP_REPAIR first): the peer is left hanging,
// which is what a `drop` verdict means.
void close_silently(int fd);

// recvmsg on a stage UDP listener: the datagram, its sender and the address
// it was sent to (IP_ORIGDSTADDR / IPV6_ORIGDSTADDR). Returns the length, 0
// with errno EAGAIN when nothing is queued, -1 on error.
ssize_t receive_datagram(int fd, char* buf, size_t len, Endpoint& from, Endpoint& original_destination);

}  // namespace sluice::inspect
