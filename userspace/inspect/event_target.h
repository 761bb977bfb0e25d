// Something a worker's epoll loop delivers events to (epoll_event.data.ptr).
#pragma once

#include <cstdint>

namespace sluice::inspect {

class EventTarget {
public:
    virtual ~EventTarget() = default;
    virtual void on_event(uint32_t events) = 0;
};

}  // namespace sluice::inspect
