// The server name a TLS client asks for (the ClientHello's SNI), read with
// OpenSSL rather than a parser of our own: a server-side SSL object on a
// memory BIO takes the client's first bytes, and its ClientHello callback,
// which runs before any certificate or key is needed, copies the
// server_name extension and stops the handshake there. Nothing is ever sent.
#pragma once

#include <cstdint>
#include <span>
#include <string>

// OpenSSL's SSL and BIO, without its headers in ours.
struct ssl_st;
struct bio_st;

namespace sluice::inspect {

class ClientHelloReader {
public:
    enum class State { need_more, done, not_tls };

    ClientHelloReader();
    ~ClientHelloReader();
    ClientHelloReader(const ClientHelloReader&) = delete;
    ClientHelloReader& operator=(const ClientHelloReader&) = delete;

    // The client's next bytes. done: the ClientHello was read (sni() holds
    // its host name, "" when it has none); not_tls: the bytes are not a
    // ClientHello, or none was complete within kMaxBytes.
    State feed(std::span<const uint8_t> bytes);
    State state() const { return state_; }
    const std::string& sni() const { return sni_; }

    static constexpr size_t kMaxBytes = 16384;

    // OpenSSL's ClientHello callback (the shared context's).
    static int on_client_hello(::ssl_st* ssl, int* alert, void* arg);

private:

    ::ssl_st* ssl_ = nullptr;
    ::bio_st* input_ = nullptr;
    size_t fed_ = 0;
    State state_ = State::need_more;
    std::string sni_;
};

}  // namespace sluice::inspect
