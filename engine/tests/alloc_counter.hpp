// alloc_counter.hpp — counts global operator new calls made by this thread while a scope is open.
#pragma once

#include <cstdint>

namespace kes_test {

// Number of operator new / new[] calls on this thread since start_counting().
void start_counting();
uint64_t stop_counting();

}  // namespace kes_test
