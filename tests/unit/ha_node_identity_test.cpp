// Which node a process is: --node, else /etc/sluice/node, checked against
// ha.nodes, with errors that say how to give it.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "config/load_config.h"
#include "ha/node_identity.h"

using namespace sluice;

namespace {

config::Ha pair() {
    auto loaded = config::read_config_file(SLUICE_TEST_DATA_DIR "/configs/good-ha.yaml");
    EXPECT_TRUE(loaded.ok());
    return loaded.ok() ? loaded.config->ha : config::Ha{};
}

std::string node_file(const std::string& text) {
    char name[] = "/tmp/sluice-node-XXXXXX";
    const int fd = mkstemp(name);
    EXPECT_GE(fd, 0);
    std::ofstream(name) << text;
    return name;
}

}  // namespace

TEST(HaNodeIdentity, TheCommandLineWins) {
    const std::string file = node_file("fw1\n");
    auto r = ha::resolve_node(pair(), "fw0", file);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r.value(), "fw0");
    std::remove(file.c_str());
}

TEST(HaNodeIdentity, TheNodeFileGivesTheNameTrimmed) {
    const std::string file = node_file("  fw1 \n# ignored\n");
    auto r = ha::resolve_node(pair(), "", file);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r.value(), "fw1");
    std::remove(file.c_str());
}

TEST(HaNodeIdentity, MistakesSayHowToGiveTheName) {
    auto r = ha::resolve_node(pair(), "", "/nonexistent/sluice-node");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message,
              "the config's ha: section needs this node's name: pass --node fw0|fw1 or write it to "
              "/nonexistent/sluice-node");
    r = ha::resolve_node(pair(), "fw2", "/nonexistent/sluice-node");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "--node: \"fw2\" is not a node of ha.nodes (fw0|fw1)");
    const std::string empty = node_file("\n");
    r = ha::resolve_node(pair(), "", empty);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, empty + " is empty: write this node's name (fw0|fw1)");
    std::remove(empty.c_str());
}

TEST(HaNodeIdentity, WithoutHaThereIsNoNodeAndNoNodeOption) {
    auto r = ha::resolve_node(config::Ha{}, "", "/nonexistent");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value(), "");
    r = ha::resolve_node(config::Ha{}, "fw0", "/nonexistent");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("no ha: section"), std::string::npos);
}
