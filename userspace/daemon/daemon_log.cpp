#include "daemon/daemon_log.h"

#include <iostream>

namespace sluice {

void daemon_log(const std::string& message) { std::cerr << "sluice: " << message << std::endl; }

}  // namespace sluice
