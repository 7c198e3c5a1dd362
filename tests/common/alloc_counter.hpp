// alloc_counter.hpp — counts global operator new calls, so a test can prove a call allocates nothing.
// Linking alloc_counter.cpp replaces the test binary's operator new/delete.
#pragma once

#include <cstdint>

namespace kes_test {

// operator new / new[] calls on THIS thread since start_counting().
void start_counting();
uint64_t stop_counting();

// operator new / new[] calls on ANY thread since start_counting_all_threads() (for code that hands
// work to a thread pool).
void start_counting_all_threads();
uint64_t stop_counting_all_threads();

}  // namespace kes_test
