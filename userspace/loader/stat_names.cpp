#include "loader/stat_names.h"

namespace sluice {

StatInfo stat_info(int reason) {
#define SLUICE_STAT_INFO(e, str, kind) StatInfo{str, #kind},
    static constexpr StatInfo table[] = {SLUICE_STATS(SLUICE_STAT_INFO)};
#undef SLUICE_STAT_INFO
    if (reason < 0 || reason >= STAT_REASON_COUNT) return {"unknown", "info"};
    return table[reason];
}

bool stat_counts_bytes(int reason) { return stat_info(reason).kind != "info" || reason == STAT_FORWARD; }

}  // namespace sluice
