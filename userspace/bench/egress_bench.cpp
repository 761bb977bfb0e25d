// `sluice bench egress` (docs/benchmarks.md, "Egress by name"; issue 20,
// point 3): what egress by name costs a client, in the shape of the
// benchmark issue 20 quotes. On the single lab (LAN host -> firewall
// namespace -> WAN host), 100 HTTPS origins hostNNN.bench.test, one address
// each in both families, all answered by one dual-stack HTTPS server on the
// WAN host (the addresses are the WAN host's own through local routes); an
// authoritative dnsmasq for bench.test and a forwarding dnsmasq (no cache)
// at the address the LAN host's resolv.conf names, both on the WAN host.
// Modes, interleaved (round r starts at the r-th):
//   baseline        sluice with a plain permit policy, no egress section;
//                   the client's lookups go to the forwarding dnsmasq
//   dns             sluice's DNS proxy decides names (allow *.bench.test,
//                   every other name denied) and an address rule allows
//                   every address: names only, nothing enforced per address
//   sluice-enforce  the same names, default deny: only learned addresses
//   dnsmasq-nft     no sluice: kernel forwarding with an nftables
//                   default-deny forward chain, DNS redirected to a dnsmasq
//                   in the firewall namespace whose nftset= fills timeout sets
// Every forwarder (the WAN dnsmasq, sluice's proxy, the firewall's dnsmasq)
// asks the authoritative server directly and caches nothing; the client
// (curl through glibc, no nscd) looks every name up afresh.
// Per mode and round: N concurrent `curl -I` (half IPv4, half IPv6), then a
// few parallel GETs of a large body. Every request must succeed, and each
// mode proves it was in the path (counters moved), or the run fails.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "common/option_checks.h"
#include "bench/benchmark.h"
#include "bench/egress_measure.h"
#include "bench/egress_report.h"
#include "bench/interrupt.h"
#include "bench/lab.h"
#include "bench/nft_firewall.h"
#include "bench/proc_stat.h"
#include "bench/report.h"
#include "bench/schedule.h"
#include "bench/sluice_firewall.h"
#include "cluster/process.h"
#include "cluster/topology.h"

namespace sluice::bench {
namespace {
namespace fs = std::filesystem;

// 0 = not given: the default, or the --quick value.
struct Options {
    int rounds = 0;       // 30; --quick 2
    int concurrency = 0;  // 100; --quick 20
    int download_streams = 0;  // 4; --quick 2
    double download_mib = 0;   // 20; --quick 4
    double quiet_busy = 25;    // the quiet gate: at most this % busy over 5 s
    int quiet_wait = 0;        // seconds the gate waits for it; 300, --quick 60
    std::string modes = "baseline dns sluice-enforce dnsmasq-nft";
};

constexpr int kNames = 100;
constexpr int kCurlMaxTime = 30;
// Addresses: the origins in 198.19.1.0/24 and 2001:2:0:300::/64 (both in
// the lab's ranges), the authoritative server beside the WAN host.
constexpr const char* kOrigins4 = "198.19.1.0/24";
constexpr const char* kOrigins6 = "2001:2:0:300::/64";
constexpr const char* kAuth4 = "198.18.100.199";
constexpr const char* kAuth6 = "2001:2:0:100::199";
const std::vector<std::string> kFirewallInterfaces{"lan0", "wan0"};

std::string origin_name(int i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "host%03d.bench.test", i);
    return buf;
}

std::string sluice_config(const std::string& mode) {
    std::string c = lab_zones_config() + R"(applications:
  https: { protocol: tcp, destination-port: 443 }
  dns-udp: { protocol: udp, destination-port: 53 }
  dns-tcp: { protocol: tcp, destination-port: 53 }
policies:
  - { name: lan-out, from: trust, to: untrust, source: [lan-net], application: [https, dns-udp, dns-tcp], action: permit }
default-action: deny
)";
    if (mode == "baseline") return c;
    c += std::string("egress:\n  upstreams: [") + kAuth4 + "]\n  scopes:\n    lan:\n      from: trust\n      default: deny\n"
         "      rules:\n        - { action: allow, name: \"*.bench.test\" }\n";
    if (mode == "dns") c += "        - { action: allow, address: [0.0.0.0/0, \"::/0\"] }\n";
    return c;
}

// dnsmasq-nft: DNS from the LAN redirected to the firewall's dnsmasq (as
// the sidecar redirects it to itself), a default-deny forward chain, timeout
// sets that dnsmasq fills.
const char* kNftRuleset = R"(table inet sluicebench {
  set allow4 { type ipv4_addr; flags timeout; timeout 5m; }
  set allow6 { type ipv6_addr; flags timeout; timeout 5m; }
  chain prerouting { type nat hook prerouting priority dstnat;
    iifname "lan0" meta l4proto { tcp, udp } th dport 53 counter redirect to :53
  }
  chain forward { type filter hook forward priority 0; policy drop;
    ct state established,related counter accept
    iifname "lan0" oifname "wan0" ip daddr @allow4 tcp dport 443 counter accept
    iifname "lan0" oifname "wan0" ip6 daddr @allow6 tcp dport 443 counter accept
  }
}
)";

// Runs the lines of a list ("URL FAMILY") at once with curl; prints the
// batch's wall time. One JSON file per request in OUTDIR.
const char* kBatchScript = R"SH(#!/bin/sh
list=$1 out=$2 how=$3 max=$4
head=-I
[ "$how" = get ] && head=
start=$(date +%s%N)
i=0
while read -r url fam; do
  i=$((i + 1))
  curl -sk $head -o /dev/null --max-time "$max" -"$fam" -w '%{json}\n' "$url" >"$out/$i.json" 2>"$out/$i.err" &
done <"$list"
wait
end=$(date +%s%N)
echo "wall_ns $((end - start))"
)SH";

// The source tree of a build tree (CMakeCache.txt), "" if unknown.
std::string source_dir(const std::string& build_dir) {
    std::ifstream in(build_dir + "/CMakeCache.txt");
    std::string line;
    const std::string key = "CMAKE_HOME_DIRECTORY:INTERNAL=";
    while (std::getline(in, line))
        if (line.rfind(key, 0) == 0) return line.substr(key.size());
    return "";
}

// /etc/netns/NS/resolv.conf for the LAN host (`ip netns exec` binds it over
// /etc/resolv.conf), removed with the guard.
struct NetnsResolvConf {
    std::string dir;
    ~NetnsResolvConf() {
        if (dir.empty()) return;
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
};

// No caching resolver between curl and the network: glibc asks the
// resolv.conf's server for every lookup unless nscd or systemd-resolved
// (through nss "resolve") answers first.
Status check_no_resolver_cache() {
    std::ifstream ns("/etc/nsswitch.conf");
    for (std::string line; std::getline(ns, line);)
        if (line.rfind("hosts:", 0) == 0 && line.find("resolve") != std::string::npos)
            return make_error("/etc/nsswitch.conf's hosts line uses systemd-resolved (" + line +
                              "): lookups would be cached; take `resolve` out for the run");
    std::error_code ec;
    for (const char* sock : {"/var/run/nscd/socket", "/run/nscd/socket"})
        if (fs::exists(sock, ec))
            return make_error(std::string("nscd is running (") + sock + "): it would cache lookups; stop it for the run");
    if (!fs::exists("/etc/resolv.conf", ec))
        return make_error("no /etc/resolv.conf: `ip netns exec` needs one to bind the LAN host's over");
    return {};
}

Result<CpuShare> busy_over(double seconds) {
    auto a = parse_cpu_sample(read_text("/proc/stat"));
    if (!a) return a.error();
    if (auto s = pause(seconds); !s) return s.error();
    auto b = parse_cpu_sample(read_text("/proc/stat"));
    if (!b) return b.error();
    return cpu_share(*a, *b);
}

// The quiet gate: waits (up to `wait_seconds`) for 5 s in which the whole
// machine was at most `max_busy` % busy; the busy share it saw.
Result<double> wait_quiet(double max_busy, int wait_seconds, std::ostream& log) {
    using Clock = std::chrono::steady_clock;
    auto until = Clock::now() + std::chrono::seconds(wait_seconds);
    double last = 0;
    for (int attempt = 1;; ++attempt) {
        auto share = busy_over(5);
        if (!share) return share.error();
        last = share->busy_percent;
        if (last <= max_busy) {
            log << "quiet gate: the machine was " << fixed(last, 1) << " % busy over 5 s (at most "
                << fixed(max_busy, 0) << " %), load " << load_average() << "\n";
            return last;
        }
        if (Clock::now() >= until)
            return make_error("the machine is not quiet: " + fixed(last, 1) + " % busy over 5 s (at most " +
                              fixed(max_busy, 0) + " % wanted) after waiting " + std::to_string(wait_seconds) +
                              " s; load " + load_average() + ". Run it when nothing else does, or raise --quiet-busy");
        log << "quiet gate: " << fixed(last, 1) << " % busy, waiting (attempt " << attempt << ")\n";
    }
}

Result<std::vector<std::string>> parse_modes(const std::string& text) {
    std::string t = text;
    std::replace(t.begin(), t.end(), ',', ' ');
    std::istringstream in(t);
    std::vector<std::string> out;
    for (std::string m; in >> m;) {
        const auto& known = egress_modes();
        if (std::find(known.begin(), known.end(), m) == known.end())
            return make_error("unknown mode '" + m + "' (baseline dns sluice-enforce dnsmasq-nft)");
        if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
    }
    if (out.empty()) return make_error("no modes");
    if (std::find(out.begin(), out.end(), "baseline") == out.end())
        return make_error("the modes must include baseline (every change is against it)");
    return out;
}

uint64_t json_u64(const nlohmann::json& j, const std::string& a, const std::string& b) {
    if (!j.contains(a) || !j[a].is_object() || !j[a].contains(b) || !j[a][b].is_number()) return 0;
    return j[a][b].get<uint64_t>();
}

struct Bench {
    BenchRun& run;
    Lab& lab;
    SluiceFirewall& fw;
    NftFirewall& nft;
    std::map<std::string, std::string> configs;  // sluice mode -> config path
    std::string batch_script;
    int concurrency = 100, download_streams = 4;
    uint64_t download_bytes = 20u << 20;
    std::optional<cluster::BackgroundProcess> fw_dnsmasq;

    bool is_sluice(const std::string& mode) const { return mode != "dnsmasq-nft"; }

    Status start_mode(const std::string& mode) {
        if (auto s = verify_no_pipeline(lab, "fw", kFirewallInterfaces); !s) return with_context("before " + mode, s.error());
        if (is_sluice(mode)) return fw.start(configs.at(mode));
        if (auto s = nft.load(kNftRuleset); !s) return s;
        auto p = lab.start("fw",
                           {"dnsmasq", "--no-daemon", "--conf-file=/dev/null", "--pid-file=", "--user=root",
                            "--no-resolv", "--no-hosts", "--bind-interfaces",
                            std::string("--listen-address=") + cluster::kFw0Lan4,
                            std::string("--listen-address=") + cluster::kFw0Lan6, std::string("--server=") + kAuth4,
                            "--cache-size=0", "--log-facility=-",
                            "--nftset=/bench.test/4#inet#sluicebench#allow4,6#inet#sluicebench#allow6"},
                           "dnsmasq-fw");
        if (!p) return p.error();
        fw_dnsmasq = *p;
        return {};
    }

    Status stop_mode(const std::string& mode) {
        if (is_sluice(mode)) return fw.stop();
        Status result;
        if (fw_dnsmasq) {
            result = lab.stop(*fw_dnsmasq);
            fw_dnsmasq.reset();
        }
        if (auto s = nft.unload(); !s) return s;
        return result;
    }

    // One request (the warm-up name, outside the batch) until it succeeds:
    // the mode's resolver and path are up. Up to 10 s.
    Status warm_up(const std::string& mode) {
        std::string last;
        for (int i = 0; i < 20; ++i) {
            auto r = lab.run("lan", {"curl", "-sk", "-I", "-o", "/dev/null", "--max-time", "2", "-4", "-w",
                                     "%{http_code}", "https://warmup.bench.test/"},
                             std::chrono::seconds(10));
            if (r && r->exit_status == 0 && r->out == "200") return {};
            last = r ? "exit " + std::to_string(r->exit_status) + " " + r->out + r->err : r.error().message;
            if (auto s = pause(0.5); !s) return s;
        }
        return make_error(mode + ": the warm-up request never succeeded (" + last + ")" +
                          (is_sluice(mode) ? "; sluice's log:\n" + fw.log_tail() : ""));
    }

    // Runs the list's requests at once in the LAN host; their samples and
    // the batch's wall time.
    Result<std::pair<std::vector<CurlSample>, double>> batch(const std::string& tag,
                                                            const std::vector<std::pair<std::string, int>>& list,
                                                            bool get) {
        std::string text;
        for (const auto& [url, fam] : list) text += url + " " + std::to_string(fam) + "\n";
        auto list_path = lab.write_file(tag + ".list", text);
        if (!list_path) return list_path.error();
        const std::string dir = lab.tmp() + "/" + tag;
        std::error_code ec;
        fs::remove_all(dir, ec);
        fs::create_directories(dir, ec);
        auto r = lab.run("lan", {"sh", batch_script, *list_path, dir, get ? "get" : "head", std::to_string(kCurlMaxTime)},
                         std::chrono::seconds(kCurlMaxTime + 120));
        if (!r) return r.error();
        if (r->exit_status != 0) return make_error(tag + ": the batch script failed: " + r->out + r->err);
        double wall = 0;
        if (auto at = r->out.find("wall_ns "); at != std::string::npos) wall = std::stod(r->out.substr(at + 8)) / 1e9;
        if (wall <= 0) return make_error(tag + ": the batch script printed no wall time: " + r->out);
        std::vector<CurlSample> samples;
        for (size_t i = 1; i <= list.size(); ++i) {
            auto s = parse_curl_json(read_text(dir + "/" + std::to_string(i) + ".json"));
            if (s) {
                samples.push_back(*s);
            } else {
                CurlSample bad;
                bad.url = list[i - 1].first;
                bad.error = s.error().message + " " + read_text(dir + "/" + std::to_string(i) + ".err");
                samples.push_back(bad);
            }
        }
        return std::make_pair(std::move(samples), wall);
    }

    struct Reading {
        Counters stats;
        nlohmann::json egress;
        uint64_t nft_packets = 0;
    };

    Result<Reading> read_counters(const std::string& mode) {
        Reading r;
        if (is_sluice(mode)) {
            auto s = fw.stats();
            if (!s) return s.error();
            r.stats = *s;
            auto e = fw.show("egress");
            if (!e) return e.error();
            r.egress = *e;
        } else {
            auto n = nft.counted_packets();
            if (!n) return n.error();
            r.nft_packets = *n;
        }
        return r;
    }

    Result<size_t> nft_set_size(const std::string& set) {
        auto out = lab.output("fw", {"nft", "-j", "list", "set", "inet", "sluicebench", set});
        if (!out) return out.error();
        auto j = nlohmann::json::parse(*out, nullptr, false);
        if (j.is_discarded() || !j.contains("nftables")) return make_error("`nft -j list set` printed no JSON");
        for (const auto& item : j["nftables"])
            if (item.contains("set")) return item["set"].value("elem", nlohmann::json::array()).size();
        return size_t{0};
    }

    // The proof the mode was in the path, as a line for the record; an Error
    // when it was not.
    Result<std::string> prove(const std::string& mode, const Reading& a, const Reading& b, size_t requests) {
        const std::string what = egress_mode_label(mode);
        if (is_sluice(mode)) {
            if (auto s = fw.attached(); !s) return with_context(what, s.error());
            auto d = counter_delta(a.stats, b.stats);
            const uint64_t forwarded = d["forward"], steered = d["egress-dns-steered-to-proxy"];
            const uint64_t queries = json_u64(b.egress, "dns", "queries") - json_u64(a.egress, "dns", "queries");
            const uint64_t learned =
                json_u64(b.egress, "dns", "learned_addresses") - json_u64(a.egress, "dns", "learned_addresses");
            if (forwarded == 0) return make_error(what + ": sluice's forward counter did not move");
            std::string line = "sluice attached, forward +" + std::to_string(forwarded);
            if (mode == "baseline") {
                if (steered != 0 || queries != 0)
                    return make_error(what + ": DNS went to sluice's proxy (steered +" + std::to_string(steered) +
                                      ") although baseline has no egress");
                return line + ", no DNS steered";
            }
            if (steered < requests || queries < requests || learned == 0)
                return make_error(what + ": sluice's proxy was not in the path of every lookup: " +
                                  std::to_string(requests) + " requests, egress-dns-steered-to-proxy +" +
                                  std::to_string(steered) + ", dns.queries +" + std::to_string(queries) +
                                  ", learned +" + std::to_string(learned));
            line += ", egress-dns-steered-to-proxy +" + std::to_string(steered) + ", dns.queries +" +
                    std::to_string(queries) + ", learned +" + std::to_string(learned);
            if (mode == "sluice-enforce")
                line += ", egress-learned-address-passed +" + std::to_string(d["egress-learned-address-passed"]) +
                        ", drop-egress-not-learned +" + std::to_string(d["drop-egress-not-learned"]);
            return line;
        }
        if (auto s = verify_no_pipeline(lab, "fw", kFirewallInterfaces); !s) return with_context(what, s.error());
        auto v4 = nft_set_size("allow4");
        if (!v4) return v4.error();
        auto v6 = nft_set_size("allow6");
        if (!v6) return v6.error();
        const uint64_t counted = b.nft_packets - a.nft_packets;
        if (*v4 == 0 || *v6 == 0 || counted == 0)
            return make_error(what + ": dnsmasq + nftables was not in the path: set elements v4 " + std::to_string(*v4) +
                              ", v6 " + std::to_string(*v6) + ", nft counters +" + std::to_string(counted));
        return "nothing attached; nft sets " + std::to_string(*v4) + " + " + std::to_string(*v6) +
               " elements, nft counters +" + std::to_string(counted);
    }

    nlohmann::json record_of(int pass, const std::string& mode, const std::string& scenario, const BatchSummary& s) {
        return {{"pass", pass},
                {"mode", mode},
                {"scenario", scenario},
                {"requests", s.requests},
                {"failed", s.failed},
                {"wall_seconds", s.wall_seconds},
                {"requests_per_second", s.requests_per_second},
                {"avg_ms", s.avg_ms},
                {"p50_ms", s.p50_ms},
                {"p99_ms", s.p99_ms},
                {"dns_avg_ms", s.dns_avg_ms},
                {"dns_p99_ms", s.dns_p99_ms},
                {"bytes", s.bytes},
                {"mib_per_second", s.mib_per_second}};
    }

    Status measure(int pass, const std::string& mode) {
        if (auto s = start_mode(mode); !s) return s;
        if (auto s = warm_up(mode); !s) return s;
        auto before = read_counters(mode);
        if (!before) return before.error();

        std::vector<std::pair<std::string, int>> list;
        for (int i = 0; i < concurrency; ++i)
            list.emplace_back("https://" + origin_name(i % kNames + 1) + "/", (i + pass) % 2 ? 6 : 4);
        auto reqs = batch(mode + "-" + std::to_string(pass) + "-requests", list, false);
        if (!reqs) return reqs.error();
        if (auto s = check_interrupted(); !s) return s;
        std::vector<std::pair<std::string, int>> dl;
        for (int i = 0; i < download_streams; ++i)
            dl.emplace_back("https://" + origin_name(i % kNames + 1) + "/bytes/" + std::to_string(download_bytes),
                            i % 2 ? 6 : 4);
        std::optional<std::pair<std::vector<CurlSample>, double>> down;
        if (download_streams > 0) {
            auto d = batch(mode + "-" + std::to_string(pass) + "-download", dl, true);
            if (!d) return d.error();
            if (auto s = check_interrupted(); !s) return s;
            down = *d;
        }
        auto after = read_counters(mode);
        if (!after) return after.error();
        auto in_path = prove(mode, *before, *after, list.size());

        const auto sum = summarize(reqs->first, reqs->second);
        auto rec = record_of(pass, mode, "requests", sum);
        // Per family, for a reader who wants the split.
        for (int fam : {4, 6}) {
            std::vector<CurlSample> part;
            for (size_t i = 0; i < list.size(); ++i)
                if (list[i].second == fam) part.push_back(reqs->first[i]);
            auto f = summarize(part, reqs->second);
            const std::string p = "v" + std::to_string(fam) + "_";
            rec[p + "avg_ms"] = f.avg_ms;
            rec[p + "p99_ms"] = f.p99_ms;
            rec[p + "dns_avg_ms"] = f.dns_avg_ms;
            rec[p + "dns_p99_ms"] = f.dns_p99_ms;
        }
        if (in_path) rec["in_path"] = *in_path;
        if (sum.failed) rec["first_failure"] = sum.first_failure;
        run.results->add(rec);
        run.out() << "round " << pass << " " << mode << std::string(15 - std::min<size_t>(mode.size(), 14), ' ')
                  << fixed(sum.requests_per_second, 0) << " req/s, avg " << fixed(sum.avg_ms, 0) << " ms, P50 "
                  << fixed(sum.p50_ms, 0) << ", P99 " << fixed(sum.p99_ms, 0) << "; lookup avg "
                  << fixed(sum.dns_avg_ms, 1) << " ms, P99 " << fixed(sum.dns_p99_ms, 1) << "; failed " << sum.failed;
        BatchSummary dsum;
        if (down) {
            dsum = summarize(down->first, down->second);
            auto drec = record_of(pass, mode, "download", dsum);
            if (dsum.failed) drec["first_failure"] = dsum.first_failure;
            run.results->add(drec);
            run.out() << "; download " << fixed(dsum.mib_per_second, 1) << " MiB/s";
        }
        run.out() << "\n";
        if (sum.failed || dsum.failed)
            return make_error(egress_mode_label(mode) + ", round " + std::to_string(pass) + ": " +
                              std::to_string(sum.failed + dsum.failed) + " request(s) failed; the first: " +
                              (sum.failed ? sum.first_failure : dsum.first_failure));
        if (!in_path) return in_path.error();
        if (down && dsum.bytes != download_bytes * static_cast<uint64_t>(download_streams))
            return make_error(egress_mode_label(mode) + ": the download brought " + std::to_string(dsum.bytes) +
                              " bytes, not " + std::to_string(download_bytes * download_streams));
        return stop_mode(mode);
    }
};

Status run_egress(BenchRun& run, const Options& o) {
    if (auto s = check_machine({"curl", "dnsmasq", "nft", "conntrack", "openssl", "python3", "getent"}); !s) return s;
    if (auto s = check_no_resolver_cache(); !s) return s;
    auto modes = parse_modes(o.modes);
    if (!modes) return with_context("--modes", modes.error());
    const int rounds = o.rounds ? o.rounds : run.quick ? 2 : 30;
    const int concurrency = o.concurrency ? o.concurrency : run.quick ? 20 : 100;
    const int streams = o.download_streams ? o.download_streams : run.quick ? 2 : 4;
    const double mib = o.download_mib > 0 ? o.download_mib : run.quick ? 4 : 20;
    const int quiet_wait = o.quiet_wait ? o.quiet_wait : run.quick ? 60 : 300;
    const std::string src = source_dir(run.build_dir);
    const std::string server = src + "/tests/integration/https_server.py";
    if (src.empty() || !fs::exists(server))
        return make_error("no tests/integration/https_server.py beside the build tree " + run.build_dir +
                          " (give --build DIR of a build of this source tree)");

    auto lab_r = Lab::create("single", run.prefix, run.out());
    if (!lab_r) return lab_r.error();
    Lab& lab = **lab_r;
    NetnsResolvConf resolv;
    {
        const std::string dir = "/etc/netns/" + lab.ns("lan");
        std::error_code ec;
        if (fs::exists(dir, ec)) return make_error(dir + " exists already; not touching it");
        fs::create_directories(dir, ec);
        if (ec) return make_error("cannot create " + dir + ": " + ec.message());
        resolv.dir = dir;
        std::ofstream conf(dir + "/resolv.conf");
        conf << "nameserver " << cluster::kWanHost4 << "\n";
        if (!conf) return make_error("cannot write " + dir + "/resolv.conf");
    }

    // The WAN host: the authoritative server's address, the origins' local
    // routes; the firewall routes them to the WAN host.
    for (const auto& argv : std::vector<std::vector<std::string>>{
             {"ip", "addr", "add", std::string(kAuth4) + "/24", "dev", "eth0"},
             {"ip", "addr", "add", std::string(kAuth6) + "/64", "dev", "eth0", "nodad"},
             {"ip", "route", "add", "local", kOrigins4, "dev", "lo"},
             {"ip", "-6", "route", "add", "local", kOrigins6, "dev", "lo"}})
        if (auto s = lab.must("wan", argv); !s) return s;
    for (const auto& argv : std::vector<std::vector<std::string>>{
             {"ip", "route", "add", kOrigins4, "via", cluster::kWanHost4},
             {"ip", "-6", "route", "add", kOrigins6, "via", cluster::kWanHost6}})
        if (auto s = lab.must("fw", argv); !s) return s;

    // Names: hostNNN -> 198.19.1.NNN, 2001:2:0:300::NNN; warmup -> .200.
    std::string hosts;
    for (int i = 1; i <= kNames; ++i)
        hosts += "198.19.1." + std::to_string(i) + " " + origin_name(i) + "\n2001:2:0:300::" + std::to_string(i) +
                 " " + origin_name(i) + "\n";
    hosts += "198.19.1.200 warmup.bench.test\n2001:2:0:300::200 warmup.bench.test\n";
    auto hosts_path = lab.write_file("bench-hosts", hosts);
    if (!hosts_path) return hosts_path.error();
    auto script = lab.write_file("batch.sh", kBatchScript);
    if (!script) return script.error();

    const std::string cert = lab.tmp() + "/cert.pem", key = lab.tmp() + "/key.pem";
    // An ECDSA P-256 key: the server's handshakes (one thread accepts and
    // shakes hands) cost less than with RSA, so the server is less of the
    // measure.
    if (auto s = lab.must("", {"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                               "-nodes", "-days", "1", "-subj", "/CN=bench.test", "-keyout", key, "-out", cert});
        !s)
        return s;
    // A listen queue for every client at once (socketserver's default of 5
    // would drop the rest's SYNs, and each would wait 1 s to retry).
    auto https = lab.start("wan", {"python3", server, cert, key, "443", "1024"}, "https");
    if (!https) return https.error();
    auto auth = lab.start("wan",
                          {"dnsmasq", "--no-daemon", "--conf-file=/dev/null", "--pid-file=", "--user=root",
                           "--no-resolv", "--no-hosts", "--addn-hosts=" + *hosts_path, "--bind-interfaces",
                           std::string("--listen-address=") + kAuth4, std::string("--listen-address=") + kAuth6,
                           "--local=/test/", "--local-ttl=300", "--cache-size=0", "--log-facility=-"},
                          "dnsmasq-auth");
    if (!auth) return auth.error();
    auto forwarder = lab.start("wan",
                               {"dnsmasq", "--no-daemon", "--conf-file=/dev/null", "--pid-file=", "--user=root",
                                "--no-resolv", "--no-hosts", "--bind-interfaces",
                                std::string("--listen-address=") + cluster::kWanHost4,
                                std::string("--listen-address=") + cluster::kWanHost6,
                                std::string("--server=") + kAuth4, "--cache-size=0", "--log-facility=-"},
                               "dnsmasq-forwarder");
    if (!forwarder) return forwarder.error();
    // Up: the LAN host resolves through the forwarder (kernel forwarding,
    // nothing attached yet) and the HTTPS server answers.
    std::string last;
    bool up = false;
    for (int i = 0; i < 50 && !up; ++i) {
        if (auto s = pause(0.2); !s) return s;
        auto r = lab.run("lan", {"curl", "-sk", "-I", "-o", "/dev/null", "--max-time", "2", "-w", "%{http_code}",
                                 "https://warmup.bench.test/"},
                         std::chrono::seconds(10));
        up = r && r->exit_status == 0 && r->out == "200";
        last = r ? r->out + r->err : r.error().message;
    }
    if (!up)
        return make_error("the lab's DNS and HTTPS servers did not answer within 10 s (" + last + "); logs in " +
                          lab.tmp() + ":\n" + read_text(lab.tmp() + "/dnsmasq-forwarder.log") +
                          read_text(lab.tmp() + "/https.log"));

    SluiceFirewall fw(lab);
    NftFirewall nft(lab, "inet sluicebench");
    Bench bench{run, lab, fw, nft, {}, *script, concurrency, streams,
                static_cast<uint64_t>(mib * 1024 * 1024), std::nullopt};
    for (const auto& mode : *modes) {
        if (!bench.is_sluice(mode)) continue;
        auto path = lab.write_file("sluice-" + mode + ".yaml", sluice_config(mode));
        if (!path) return path.error();
        if (auto s = fw.check(*path); !s) return s;
        bench.configs[mode] = *path;
    }

    // "Dnsmasq version 2.90", "curl 7.88.1": the first line up to `cut`.
    auto version = [&](const std::vector<std::string>& argv, const std::string& cut) {
        auto r = lab.run("", argv, std::chrono::seconds(10));
        if (!r) return std::string("?");
        std::string line = r->out.substr(0, r->out.find('\n'));
        return line.substr(0, line.find(cut));
    };
    const std::string dnsmasq_version = version({"dnsmasq", "--version"}, "  ");
    const std::string curl_version = version({"curl", "--version"}, " (");

    auto quiet = wait_quiet(o.quiet_busy, quiet_wait, run.out());
    if (!quiet) return quiet.error();
    run.results->add({{"event", "setup"},
                      {"rounds", rounds},
                      {"concurrency", concurrency},
                      {"names", kNames},
                      {"modes", *modes},
                      {"download_streams", streams},
                      {"download_bytes", bench.download_bytes},
                      {"quiet_busy_percent", *quiet},
                      {"quiet_max_busy_percent", o.quiet_busy},
                      {"resolver", "glibc (curl), resolv.conf: the WAN host; no nscd, no systemd-resolved"},
                      {"dnsmasq", dnsmasq_version},
                      {"curl", curl_version},
                      {"date", utc_now()},
                      {"machine", machine_line()},
                      {"load_start", load_average()}});
    run.out() << "== egress by name: " << rounds << " round(s) x " << modes->size() << " modes; " << concurrency
              << " concurrent curl -I to " << kNames << " names, then " << streams << " x " << fixed(mib, 1)
              << " MiB GET\n";
    for (int pass = 1; pass <= rounds; ++pass)
        for (const auto& mode : rotated(*modes, pass)) {
            if (auto s = check_interrupted(); !s) return s;
            if (auto s = bench.measure(pass, mode); !s) return s;
        }
    run.results->add({{"event", "end"}, {"load_end", load_average()}});
    return {};
}

}  // namespace

Benchmark egress_benchmark() {
    auto o = std::make_shared<Options>();
    Benchmark b;
    b.name = "egress";
    b.summary =
        "egress by name (issue 20): 100 HTTPS origins behind DNS, concurrent curl -I and a download through "
        "baseline, sluice dns only, sluice dns+enforce and dnsmasq + nftables sets: Req/s, latency, DNS lookup time";
    b.doc = "docs/benchmarks.md";
    b.add_options = [o](CLI::App& app) {
        app.add_option("--rounds", o->rounds, "rounds (default 30, --quick 2); each runs every mode once, rotating")
            ->check(positive_number());
        app.add_option("--concurrency", o->concurrency, "concurrent curl -I per mode and round (default 100, --quick 20)")
            ->check(positive_number());
        app.add_option("--download-streams", o->download_streams,
                       "parallel GETs of the download scenario (default 4, --quick 2)")
            ->check(positive_number());
        app.add_option("--download-mib", o->download_mib, "MiB per download (default 20, --quick 4)")
            ->check(positive_number());
        app.add_option("--modes", o->modes, "the modes, space- or comma-separated: baseline dns sluice-enforce dnsmasq-nft")
            ->capture_default_str();
        app.add_option("--quiet-busy", o->quiet_busy,
                       "the quiet gate: the machine at most this % busy over 5 s before the run")
            ->capture_default_str()
            ->check(CLI::Range(0.0, 100.0));
        app.add_option("--quiet-wait", o->quiet_wait, "seconds the quiet gate waits (default 300, --quick 60)")
            ->check(positive_number());
    };
    b.run = [o](BenchRun& run) -> Status { return run_egress(run, *o); };
    b.report = egress_report;
    return b;
}

}  // namespace sluice::bench
