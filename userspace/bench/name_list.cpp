#include "bench/name_list.h"

#include <algorithm>
#include <sstream>

namespace sluice::bench {

Result<std::vector<std::string>> parse_name_list(const std::string& text, const std::vector<std::string>& known,
                                                 const std::string& what) {
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : " ") + k;
    std::string spaced = text;
    std::replace(spaced.begin(), spaced.end(), ',', ' ');
    std::istringstream words(spaced);
    std::vector<std::string> out;
    for (std::string w; words >> w;) {
        if (std::find(known.begin(), known.end(), w) == known.end())
            return make_error("unknown " + what + " '" + w + "' (" + what + "s: " + list + ")");
        out.push_back(w);
    }
    if (out.empty()) return make_error("no " + what + " to measure (" + what + "s: " + list + ")");
    return out;
}

}  // namespace sluice::bench
