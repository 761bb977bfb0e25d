#include "inspect/counter_table.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sluice::inspect {
namespace {

constexpr char kOverflowName[] = "(overflow)";

// Closes a file descriptor on every return path.
struct FileDescriptor {
    int fd;
    ~FileDescriptor() {
        if (fd >= 0) ::close(fd);
    }
};


std::string_view field_text(const char* field, size_t size) { return {field, ::strnlen(field, size)}; }

void set_field(char* field, std::string_view text) { std::memcpy(field, text.data(), text.size()); }

}  // namespace

const char* to_string(Counter counter) {
    switch (counter) {
    case Counter::connections: return "connections";
    case Counter::datagrams: return "datagrams";
    case Counter::bytes_client_to_server: return "bytes_client_to_server";
    case Counter::bytes_server_to_client: return "bytes_server_to_client";
    case Counter::matches: return "matches";
    case Counter::resets: return "resets";
    case Counter::drops: return "drops";
    case Counter::alerts: return "alerts";
    case Counter::offloaded: return "offloaded";
    case Counter::stage_errors: return "stage_errors";
    case Counter::handoffs: return "handoffs";
    case Counter::handoff_refused: return "handoff_refused";
    }
    return "?";
}

Result<std::unique_ptr<CounterTable>> CounterTable::create(const std::string& path, uint32_t capacity) {
    if (capacity == 0 || capacity >= UINT32_MAX) return make_error("inspect counters: capacity must be 1..2^32-2");
    const uint32_t slot_count = capacity + 1;
    const size_t size = counter_file_size(slot_count);
    // Built under a temporary name and renamed into place: readers see the
    // old file or the complete new one.
    const std::string temporary = path + ".tmp." + std::to_string(::getpid());
    auto fail = [&](const std::string& what) {
        Error error = errno_error("cannot create inspect counters " + path + ": " + what, errno);
        ::unlink(temporary.c_str());
        return error;
    };
    FileDescriptor file{::open(temporary.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
    if (file.fd < 0) return fail("open " + temporary);
    if (::ftruncate(file.fd, static_cast<off_t>(size)) != 0) return fail("resize");
    void* mapping = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, file.fd, 0);
    if (mapping == MAP_FAILED) return fail("mmap");
    std::unique_ptr<CounterTable> table(new CounterTable(path, mapping, size));

    CounterHeader& header = table->header();  // the file is zero-filled by ftruncate
    header.magic = kCounterMagic;
    header.version = kCounterVersion;
    header.slot_count = slot_count;
    header.owner_pid = static_cast<int32_t>(::getpid());
    set_field(table->slot_at(0).ruleset, kOverflowName);
    header.slots_used = 1;
    if (::rename(temporary.c_str(), path.c_str()) != 0) return fail("rename " + temporary);
    return table;
}

CounterTable::CounterTable(std::string path, void* mapping, size_t size)
    : path_(std::move(path)), mapping_(mapping), size_(size) {}

CounterTable::~CounterTable() { ::munmap(mapping_, size_); }

CounterSlot& CounterTable::slot_at(uint32_t index) const {
    auto* slots = reinterpret_cast<CounterSlot*>(static_cast<char*>(mapping_) + sizeof(CounterHeader));
    return slots[index];
}

CounterSlotRef CounterTable::slot(std::string_view ruleset, std::string_view pattern) {
    CounterHeader& head = header();
    auto overflow = [&] {
        __atomic_fetch_add(&head.overflow_names, 1, __ATOMIC_RELAXED);
        return CounterSlotRef(&slot_at(0));
    };
    // A truncated name could merge two rules' counters; sharing the overflow
    // slot is at least visible as such.
    if (ruleset.size() > kRulesetNameSize || pattern.size() > kPatternNameSize) return overflow();

    std::string key;
    key.reserve(ruleset.size() + 1 + pattern.size());
    key.append(ruleset).push_back('\0');
    key.append(pattern);
    std::lock_guard lock(create_mutex_);
    if (auto found = index_.find(key); found != index_.end()) return CounterSlotRef(&slot_at(found->second));
    const uint32_t index = head.slots_used;  // only this process, under the mutex, writes it
    if (index >= head.slot_count) return overflow();
    CounterSlot& slot = slot_at(index);
    set_field(slot.ruleset, ruleset);
    set_field(slot.pattern, pattern);
    // Publishes the names before readers count the slot as used.
    __atomic_store_n(&head.slots_used, index + 1, __ATOMIC_RELEASE);
    index_.emplace(std::move(key), index);
    return CounterSlotRef(&slot);
}

uint64_t CounterTable::overflow_names() const { return __atomic_load_n(&header().overflow_names, __ATOMIC_RELAXED); }

Result<CounterSnapshot> read_counter_table(const std::string& path) {
    FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (file.fd < 0) {
        if (errno == ENOENT)
            return make_error(path + ": no inspection counters: the inspection stage is not running");
        return errno_error("cannot open inspection counters " + path, errno);
    }
    struct stat info {};
    if (::fstat(file.fd, &info) != 0) return errno_error("cannot stat " + path, errno);
    const size_t size = static_cast<size_t>(info.st_size);
    if (size < sizeof(CounterHeader)) return make_error(path + ": not an inspection counters file (too short)");
    void* mapping = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, file.fd, 0);
    if (mapping == MAP_FAILED) return errno_error("cannot map " + path, errno);
    struct Unmap {
        void* at;
        size_t size;
        ~Unmap() { ::munmap(at, size); }
    } unmap_on_return{mapping, size};

    const auto& header = *static_cast<const CounterHeader*>(mapping);
    if (header.magic != kCounterMagic) return make_error(path + ": not an inspection counters file");
    if (header.version != kCounterVersion)
        return make_error(path + ": inspection counters layout version " + std::to_string(header.version) +
                          ", this sluice reads version " + std::to_string(kCounterVersion));
    if (size < counter_file_size(header.slot_count)) return make_error(path + ": inspection counters file truncated");

    CounterSnapshot snapshot;
    snapshot.owner_pid = header.owner_pid;
    snapshot.capacity = header.slot_count - 1;
    snapshot.overflow_names = __atomic_load_n(&header.overflow_names, __ATOMIC_RELAXED);
    // Acquire pairs with the writer's release: every slot below `used` has its names.
    const uint32_t used = std::min(__atomic_load_n(&header.slots_used, __ATOMIC_ACQUIRE), header.slot_count);
    const auto* slots = reinterpret_cast<const CounterSlot*>(static_cast<const char*>(mapping) + sizeof(CounterHeader));
    for (uint32_t i = 0; i < used; ++i) {
        SlotSnapshot out;
        out.ruleset = field_text(slots[i].ruleset, kRulesetNameSize);
        out.pattern = field_text(slots[i].pattern, kPatternNameSize);
        out.overflow = i == 0;
        for (size_t c = 0; c < kCounterCount; ++c)
            out.counters[c] = __atomic_load_n(&slots[i].counters[c], __ATOMIC_RELAXED);
        snapshot.slots.push_back(std::move(out));
    }
    return snapshot;
}

}  // namespace sluice::inspect
