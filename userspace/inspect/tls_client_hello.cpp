#include "inspect/tls_client_hello.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>

namespace sluice::inspect {

namespace {

// One context for every reader: it only ever reads ClientHellos.
SSL_CTX* reader_context() {
    static SSL_CTX* ctx = [] {
        SSL_CTX* c = SSL_CTX_new(TLS_server_method());
        if (c) SSL_CTX_set_client_hello_cb(c, &ClientHelloReader::on_client_hello, nullptr);
        return c;
    }();
    return ctx;
}

}  // namespace

ClientHelloReader::ClientHelloReader() {
    SSL_CTX* ctx = reader_context();
    if (!ctx) {
        state_ = State::not_tls;
        return;
    }
    ssl_ = SSL_new(ctx);
    input_ = BIO_new(BIO_s_mem());
    BIO* output = BIO_new(BIO_s_mem());  // what a handshake would send: never read, never sent
    if (!ssl_ || !input_ || !output) {
        if (input_) BIO_free(input_);
        if (output) BIO_free(output);
        input_ = nullptr;
        state_ = State::not_tls;
        return;
    }
    SSL_set_bio(ssl_, input_, output);  // the SSL owns both now
    SSL_set_app_data(ssl_, this);
    SSL_set_accept_state(ssl_);
}

ClientHelloReader::~ClientHelloReader() {
    if (ssl_) SSL_free(ssl_);
}

int ClientHelloReader::on_client_hello(SSL* ssl, int* alert, void*) {
    auto* self = static_cast<ClientHelloReader*>(SSL_get_app_data(ssl));
    const unsigned char* ext = nullptr;
    size_t len = 0;
    self->state_ = State::done;
    // server_name (RFC 6066): a 2-byte list length, then entries of a type
    // (0 = host_name), a 2-byte length and the name.
    if (SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_server_name, &ext, &len) == 1 && len >= 2) {
        size_t list = (size_t(ext[0]) << 8) | ext[1];
        size_t at = 2, end = std::min(len, list + 2);
        while (at + 3 <= end) {
            const unsigned type = ext[at];
            const size_t n = (size_t(ext[at + 1]) << 8) | ext[at + 2];
            at += 3;
            if (at + n > end) break;
            if (type == 0) {
                self->sni_.assign(reinterpret_cast<const char*>(ext + at), n);
                break;
            }
            at += n;
        }
    }
    *alert = SSL_AD_INTERNAL_ERROR;
    return SSL_CLIENT_HELLO_ERROR;  // stop here: nothing more is wanted
}

ClientHelloReader::State ClientHelloReader::feed(std::span<const uint8_t> bytes) {
    if (state_ != State::need_more || bytes.empty()) return state_;
    if (fed_ + bytes.size() > kMaxBytes) {
        state_ = State::not_tls;
        return state_;
    }
    fed_ += bytes.size();
    if (BIO_write(input_, bytes.data(), static_cast<int>(bytes.size())) != static_cast<int>(bytes.size())) {
        state_ = State::not_tls;
        return state_;
    }
    const int r = SSL_do_handshake(ssl_);
    if (state_ == State::done) {
        ERR_clear_error();
        return state_;
    }
    if (r <= 0 && SSL_get_error(ssl_, r) == SSL_ERROR_WANT_READ) return state_;
    ERR_clear_error();
    state_ = State::not_tls;
    return state_;
}

}  // namespace sluice::inspect
