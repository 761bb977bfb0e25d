// `perf report --no-children --sort=symbol --stdio` of a real `perf record -a
// -g --freq=997` taken here while iperf3 ran through sluice
// (tests/data/perftest/capture.sh), and the BPF symbol -> program mapping.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "perftest/perf_report.h"

using namespace sluice::perftest;
namespace {
std::string fixture(const std::string& name) {
    std::ifstream in(std::string(SLUICE_TEST_DATA_DIR "/perftest/") + name);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}
}  // namespace

TEST(PerftestBpfName, MapsTagAndNameToTheProgramName) {
    EXPECT_EQ(bpf_program_name("bpf_prog_a93e68f9090f5e98_xdp_main_prog"), "xdp_main_prog");
    EXPECT_EQ(bpf_program_name("bpf_prog_0f164dd275f48594_tc_egress_prog"), "tc_egress_prog");
    // Names keep their own underscores.
    EXPECT_EQ(bpf_program_name("bpf_prog_1f6c7c8e8fa31f8c_xdp_forward_prog"), "xdp_forward_prog");
}

TEST(PerftestBpfName, RejectsWhatIsNotAProgramSymbol) {
    EXPECT_EQ(bpf_program_name("bpf_prog_run_generic_xdp"), std::nullopt);        // a kernel function
    EXPECT_EQ(bpf_program_name("bpf_prog_a93e68f9090f5e9_xdp_main_prog"), std::nullopt);  // 15-digit tag
    EXPECT_EQ(bpf_program_name("bpf_prog_a93e68f9090f5e98_"), std::nullopt);      // no name
    EXPECT_EQ(bpf_program_name("bpf_prog_zz3e68f9090f5e98_x"), std::nullopt);     // not hex
    EXPECT_EQ(bpf_program_name("__htab_map_lookup_and_delete_batch"), std::nullopt);
    EXPECT_EQ(bpf_program_name("bpf_printk"), std::nullopt);
}

TEST(PerftestReport, CapturedReportParses) {
    auto r = parse_perf_report(fixture("perf_report_ipv4.txt"));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->samples, 19000);
    EXPECT_EQ(r->event, "cpu-clock");
    ASSERT_GT(r->entries.size(), 100u);
    // Highest first; the first line of the report.
    EXPECT_EQ(r->entries[0].symbol, "__pi_memcpy");
    EXPECT_DOUBLE_EQ(r->entries[0].percent, 7.77);
    EXPECT_EQ(r->entries[0].space, 'k');
    for (size_t i = 1; i < r->entries.size(); ++i) EXPECT_GE(r->entries[i - 1].percent, r->entries[i].percent);
}

TEST(PerftestReport, IpcColumnsAreNotPartOfTheSymbol) {
    auto r = parse_perf_report(fixture("perf_report_ipv4.txt"));
    ASSERT_TRUE(r);
    const ProfileEntry* e = r->find("_raw_spin_unlock_irqrestore");
    ASSERT_NE(e, nullptr);
    EXPECT_DOUBLE_EQ(e->percent, 4.55);
    // C++ symbols with spaces survive whole.
    const ProfileEntry* cpp = r->find("hash_table<named_decl_hash, false, xcallocator>::find_slot_with_hash");
    ASSERT_NE(cpp, nullptr);
    EXPECT_EQ(cpp->space, '.');
    for (const auto& entry : r->entries) EXPECT_EQ(entry.symbol.find("  "), std::string::npos) << entry.symbol;
}

TEST(PerftestReport, BpfProgramsShownByName) {
    auto r = parse_perf_report(fixture("perf_report_ipv4.txt"));
    ASSERT_TRUE(r);
    for (const char* name : {"xdp_main_prog", "xdp_zone_prog", "xdp_forward_prog", "tc_egress_prog"}) {
        const ProfileEntry* e = r->find(name);
        ASSERT_NE(e, nullptr) << name;
        EXPECT_TRUE(e->bpf);
        EXPECT_GT(e->percent, 0);
        EXPECT_EQ(e->raw.rfind("bpf_prog_", 0), 0u);
    }
    EXPECT_EQ(r->find("bpf_printk"), nullptr);
    EXPECT_EQ(r->percent("bpf_printk"), 0.0);
    // Kernel helpers named bpf_prog_* are not programs.
    const ProfileEntry* helper = r->find("bpf_prog_run_generic_xdp");
    ASSERT_NE(helper, nullptr);
    EXPECT_FALSE(helper->bpf);
}

TEST(PerftestReport, SameProgramTwiceIsAddedUp) {
    // sluice on fw0 and fw1 loads the same program twice: one tag, or two
    // after a rebuild.
    const std::string text =
        "# Samples: 1K of event 'cpu-clock:ppp'\n"
        "# Overhead  Symbol\n"
        "# ........  ......................................\n"
        "#\n"
        "    10.00%  [k] bpf_prog_a93e68f9090f5e98_xdp_main_prog\n"
        "            |\n"
        "            ---bpf_prog_run_generic_xdp\n"
        "     4.00%  [k] _raw_spin_lock\n"
        "     2.50%  [k] bpf_prog_b93e68f9090f5e98_xdp_main_prog\n";
    auto r = parse_perf_report(text);
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->entries.size(), 2u);
    EXPECT_EQ(r->entries[0].symbol, "xdp_main_prog");
    EXPECT_DOUBLE_EQ(r->entries[0].percent, 12.5);
    EXPECT_EQ(r->samples, 1000);
}

TEST(PerftestReport, WithoutHeaderLines) {
    auto r = parse_perf_report("  3.10%  [k] read_tsc   -   -\n  1.00%  [.] main\n");
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->entries.size(), 2u);
    EXPECT_EQ(r->entries[0].symbol, "read_tsc");
    EXPECT_EQ(r->entries[1].symbol, "main");
}

TEST(PerftestReport, NoSamplesIsAnError) {
    auto r = parse_perf_report("Error:\nThe perf.data data has no samples!\n");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("no symbol lines"), std::string::npos);
}
