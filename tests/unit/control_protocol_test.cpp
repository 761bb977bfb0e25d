// The control socket: the protocol's encoding both ways, and a real Unix
// socket between ControlServer (the daemon's end) and call_daemon (the CLI's).
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "cli/control_client.h"
#include "daemon/control_protocol.h"
#include "daemon/control_server.h"

using namespace sluice;
using namespace sluice::control;

namespace {

TEST(ControlProtocol, RequestRoundTrips) {
    for (Command c : {Command::reload, Command::status, Command::inspect_stop, Command::inspect_start,
                      Command::ha_status, Command::ha_failover}) {
        const std::string line = encode(Request{.command = c, .argument = ""});
        ASSERT_EQ(line.back(), '\n');
        auto back = decode_request(line.substr(0, line.size() - 1));
        ASSERT_TRUE(back.ok()) << back.error().message;
        EXPECT_EQ(back->command, c);
        EXPECT_EQ(back->version, kProtocolVersion);
    }
}

TEST(ControlProtocol, FailoverCarriesItsGroupAndOlderRequestsHaveNoArgument) {
    auto back = decode_request(encode(Request{.command = Command::ha_failover, .argument = "gateway"}));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->command, Command::ha_failover);
    EXPECT_EQ(back->argument, "gateway");
    auto old = decode_request(R"({"version":1,"command":"status"})");
    ASSERT_TRUE(old.ok()) << old.error().message;
    EXPECT_EQ(old->argument, "");
    EXPECT_FALSE(decode_request(R"({"version":1,"command":"ha-failover","argument":7})").ok());
}

TEST(ControlProtocol, ReplyRoundTripsWithProblems) {
    Reply reply;
    reply.ok = false;
    reply.message = "refused";
    reply.config_generation = 7;
    reply.problems.push_back({"fw.yaml", 3, 5, "policies[0]", "unknown zone", "fw.yaml:3:5: policies[0]: unknown zone"});
    const std::string line = encode(reply);
    auto back = decode_reply(line.substr(0, line.size() - 1));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_FALSE(back->ok);
    EXPECT_EQ(back->message, "refused");
    EXPECT_EQ(back->config_generation, 7u);
    ASSERT_EQ(back->problems.size(), 1u);
    EXPECT_EQ(back->problems[0].line, 3);
    EXPECT_EQ(back->problems[0].text, "fw.yaml:3:5: policies[0]: unknown zone");
}

TEST(ControlProtocol, MalformedMessagesAreErrorsNamingWhatIsWrong) {
    EXPECT_FALSE(decode_request("not json").ok());
    auto unknown = decode_request(R"({"version":1,"command":"explode"})");
    ASSERT_FALSE(unknown.ok());
    EXPECT_NE(unknown.error().message.find("explode"), std::string::npos);
    auto missing = decode_reply(R"({"version":1,"ok":true})");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message.find("\"message\""), std::string::npos) << missing.error().message;
}

class ControlSocket : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() / ("sluice-control-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir_);
        path_ = socket_path(dir_.string());
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    // Serves one connection on a thread of its own, as the daemon's loop does.
    std::thread serve(ControlServer& server, std::function<Reply(const Request&)> handler) {
        return std::thread([&server, handler] {
            pollfd p{server.fd(), POLLIN, 0};
            if (::poll(&p, 1, 5000) == 1) (void)server.serve_one(handler);
        });
    }

    std::filesystem::path dir_;
    std::string path_;
};

TEST_F(ControlSocket, TheClientGetsTheHandlersReply) {
    auto server = ControlServer::open(path_);
    ASSERT_TRUE(server.ok()) << server.error().message;
    EXPECT_EQ(std::filesystem::status(path_).permissions() & std::filesystem::perms::all,
              std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    Command seen = Command::status;
    std::thread t = serve(*server.value(), [&](const Request& r) {
        seen = r.command;
        Reply reply;
        reply.ok = true;
        reply.message = "reloaded";
        reply.config_generation = 2;
        return reply;
    });
    auto reply = cli::call_daemon(path_, Request{.command = Command::reload, .argument = ""}, std::chrono::seconds(5));
    t.join();
    ASSERT_TRUE(reply.ok()) << reply.error().message;
    EXPECT_EQ(seen, Command::reload);
    EXPECT_TRUE(reply->ok);
    EXPECT_EQ(reply->config_generation, 2u);
}

TEST_F(ControlSocket, AnotherProtocolVersionIsRefusedWithoutCallingTheHandler) {
    auto server = ControlServer::open(path_);
    ASSERT_TRUE(server.ok()) << server.error().message;
    bool called = false;
    std::thread t = serve(*server.value(), [&](const Request&) {
        called = true;
        return Reply{};
    });
    auto reply = cli::call_daemon(path_, Request{.version = 99, .command = Command::status, .argument = ""}, std::chrono::seconds(5));
    t.join();
    ASSERT_TRUE(reply.ok()) << reply.error().message;
    EXPECT_FALSE(called);
    EXPECT_FALSE(reply->ok);
    EXPECT_NE(reply->message.find("version 99"), std::string::npos) << reply->message;
}

TEST_F(ControlSocket, NoDaemonIsNotFound) {
    auto reply = cli::call_daemon(path_, Request{}, std::chrono::seconds(1));
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().code, ErrorCode::NotFound);
    {
        auto server = ControlServer::open(path_);
        ASSERT_TRUE(server.ok());
    }  // closed and unlinked, as when the daemon stops
    EXPECT_FALSE(std::filesystem::exists(path_));
}

}  // namespace
