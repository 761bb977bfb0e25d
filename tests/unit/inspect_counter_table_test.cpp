// Inspection counters in a shared file: the stage writes, `sluice show
// inspect` reads from another handle (another process in production).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "inspect/counter_table.h"

using namespace sluice::inspect;
namespace fs = std::filesystem;

namespace {

class InspectCounterTable : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("sluice-inspect-counters-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
        path_ = (dir_ / "inspect-counters").string();
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::unique_ptr<CounterTable> create(uint32_t capacity = kDefaultCounterSlots) {
        auto table = CounterTable::create(path_, capacity);
        if (!table.ok()) {
            ADD_FAILURE() << table.error().message;
            return nullptr;
        }
        return std::move(table).value();
    }
    CounterSnapshot read() {
        auto snapshot = read_counter_table(path_);
        if (!snapshot.ok()) ADD_FAILURE() << snapshot.error().message;
        return snapshot.ok() ? std::move(snapshot).value() : CounterSnapshot{};
    }
    static const SlotSnapshot* find(const CounterSnapshot& snapshot, const std::string& ruleset,
                                    const std::string& pattern = "") {
        for (const auto& slot : snapshot.slots)
            if (!slot.overflow && slot.ruleset == ruleset && slot.pattern == pattern) return &slot;
        return nullptr;
    }

    fs::path dir_;
    std::string path_;
};

}  // namespace

TEST_F(InspectCounterTable, WriterAndReaderSeeTheSameNumbers) {
    auto table = create();
    ASSERT_TRUE(table);
    CounterSlotRef ctf = table->slot("ctf");
    CounterSlotRef flag = table->slot("ctf", "flag-out");
    ctf.add(Counter::connections, 3);
    ctf.add(Counter::bytes_client_to_server, 1500);
    ctf.add(Counter::bytes_server_to_client, 64000);
    ctf.add(Counter::matches);
    ctf.add(Counter::resets);
    flag.add(Counter::matches);

    CounterSnapshot snapshot = read();
    EXPECT_EQ(snapshot.owner_pid, ::getpid());
    EXPECT_EQ(snapshot.capacity, kDefaultCounterSlots);
    EXPECT_EQ(snapshot.overflow_names, 0u);
    const SlotSnapshot* ruleset = find(snapshot, "ctf");
    ASSERT_NE(ruleset, nullptr);
    EXPECT_EQ((*ruleset)[Counter::connections], 3u);
    EXPECT_EQ((*ruleset)[Counter::bytes_client_to_server], 1500u);
    EXPECT_EQ((*ruleset)[Counter::bytes_server_to_client], 64000u);
    EXPECT_EQ((*ruleset)[Counter::matches], 1u);
    EXPECT_EQ((*ruleset)[Counter::resets], 1u);
    EXPECT_EQ((*ruleset)[Counter::drops], 0u);
    const SlotSnapshot* pattern = find(snapshot, "ctf", "flag-out");
    ASSERT_NE(pattern, nullptr);
    EXPECT_EQ((*pattern)[Counter::matches], 1u);

    // Live: the reader sees later increments without the writer doing anything else.
    flag.add(Counter::matches, 41);
    CounterSnapshot later = read();
    EXPECT_EQ((*find(later, "ctf", "flag-out"))[Counter::matches], 42u);
    EXPECT_EQ(flag.get(Counter::matches), 42u);
}

TEST_F(InspectCounterTable, ASlotIsFoundAgainByNameAfterAReload) {
    auto table = create();
    ASSERT_TRUE(table);
    table->slot("ctf", "flag-out").add(Counter::matches, 5);
    table->slot("ctf").add(Counter::connections, 7);
    // The reload asks for its slots again: unchanged names continue, new names start at zero.
    table->slot("ctf", "flag-out").add(Counter::matches);
    table->slot("ctf").add(Counter::connections);
    table->slot("ctf", "new-pattern").add(Counter::matches);
    // The same pattern name in another ruleset is another slot.
    table->slot("web", "flag-out").add(Counter::matches, 100);

    CounterSnapshot snapshot = read();
    EXPECT_EQ((*find(snapshot, "ctf", "flag-out"))[Counter::matches], 6u);
    EXPECT_EQ((*find(snapshot, "ctf"))[Counter::connections], 8u);
    EXPECT_EQ((*find(snapshot, "ctf", "new-pattern"))[Counter::matches], 1u);
    EXPECT_EQ((*find(snapshot, "web", "flag-out"))[Counter::matches], 100u);
    EXPECT_EQ(snapshot.slots.size(), 5u) << "overflow slot + 4 names";
    EXPECT_EQ(snapshot.overflow_names, 0u);
}

TEST_F(InspectCounterTable, NamesBeyondCapacityShareTheOverflowSlotAndAreCounted) {
    auto table = create(2);
    ASSERT_TRUE(table);
    table->slot("ctf").add(Counter::connections);
    table->slot("ctf", "a").add(Counter::matches);
    table->slot("ctf", "b").add(Counter::matches, 2);   // no room
    table->slot("ctf", "c").add(Counter::matches, 3);   // no room
    table->slot("ctf", "a").add(Counter::matches);      // existing names still have theirs
    table->slot(std::string(kRulesetNameSize + 1, 'r')).add(Counter::connections);  // name too long

    CounterSnapshot snapshot = read();
    EXPECT_EQ(snapshot.capacity, 2u);
    EXPECT_EQ(snapshot.overflow_names, 3u);
    ASSERT_EQ(snapshot.slots.size(), 3u);
    EXPECT_TRUE(snapshot.slots[0].overflow);
    EXPECT_EQ(snapshot.slots[0][Counter::matches], 5u);
    EXPECT_EQ(snapshot.slots[0][Counter::connections], 1u);
    EXPECT_EQ((*find(snapshot, "ctf", "a"))[Counter::matches], 2u);
    EXPECT_EQ(find(snapshot, "ctf", "b"), nullptr);
}

TEST_F(InspectCounterTable, NamesFillingTheirFieldExactlyAreKept) {
    auto table = create();
    ASSERT_TRUE(table);
    const std::string ruleset(kRulesetNameSize, 'r'), pattern(kPatternNameSize, 'p');
    table->slot(ruleset, pattern).add(Counter::matches);
    CounterSnapshot snapshot = read();
    const SlotSnapshot* slot = find(snapshot, ruleset, pattern);
    ASSERT_NE(slot, nullptr);
    EXPECT_EQ((*slot)[Counter::matches], 1u);
}

TEST_F(InspectCounterTable, IncrementsFromManyThreadsAreAllCounted) {
    auto table = create();
    ASSERT_TRUE(table);
    constexpr int kThreads = 4, kIncrements = 100000;
    std::vector<std::thread> workers;
    for (int t = 0; t < kThreads; ++t)
        workers.emplace_back([&] {
            CounterSlotRef slot = table->slot("ctf");  // concurrent find-or-create too
            for (int i = 0; i < kIncrements; ++i) slot.add(Counter::bytes_client_to_server, 2);
        });
    for (auto& worker : workers) worker.join();
    CounterSnapshot snapshot = read();
    EXPECT_EQ((*find(snapshot, "ctf"))[Counter::bytes_client_to_server], 2u * kThreads * kIncrements);
    EXPECT_EQ(snapshot.slots.size(), 2u);
}

TEST_F(InspectCounterTable, ARestartedStageStartsFromZero) {
    auto first = create();
    ASSERT_TRUE(first);
    first->slot("ctf").add(Counter::connections, 9);
    first.reset();
    auto second = create();
    ASSERT_TRUE(second);
    CounterSnapshot snapshot = read();
    EXPECT_EQ(find(snapshot, "ctf"), nullptr);
    EXPECT_FALSE(fs::exists(path_ + ".tmp." + std::to_string(::getpid())));
}

TEST_F(InspectCounterTable, AMissingFileMeansTheStageIsNotRunning) {
    auto snapshot = read_counter_table(path_);
    ASSERT_FALSE(snapshot.ok());
    EXPECT_EQ(snapshot.error().message, path_ + ": no inspection counters: the inspection stage is not running");
}

TEST_F(InspectCounterTable, AnotherFileIsRefused) {
    std::ofstream(path_) << std::string(4096, 'x');
    auto snapshot = read_counter_table(path_);
    ASSERT_FALSE(snapshot.ok());
    EXPECT_EQ(snapshot.error().message, path_ + ": not an inspection counters file");
}

TEST_F(InspectCounterTable, CreateInAMissingDirectoryFailsWithTheReason) {
    auto table = CounterTable::create((dir_ / "no-such-dir" / "inspect-counters").string());
    ASSERT_FALSE(table.ok());
    EXPECT_NE(table.error().message.find("No such file or directory"), std::string::npos) << table.error().message;
}
