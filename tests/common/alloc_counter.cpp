// Replaces the global operator new/delete of the test binary so a test can prove that a call allocates
// nothing. All plain variants are replaced together (new → malloc, delete → free), so sanitizer
// runtimes never see a mismatched pair; the aligned variants are left to the runtime (they allocate
// and free consistently among themselves).
#include "alloc_counter.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
thread_local bool counting = false;
thread_local uint64_t count = 0;
std::atomic<bool> counting_all{false};
std::atomic<uint64_t> count_all{0};

void* counted_alloc(std::size_t size) {
    if (counting) ++count;
    if (counting_all.load(std::memory_order_relaxed)) count_all.fetch_add(1, std::memory_order_relaxed);
    void* p = std::malloc(size ? size : 1);
    if (!p) throw std::bad_alloc();
    return p;
}
}  // namespace

namespace kes_test {
void start_counting() {
    count = 0;
    counting = true;
}
uint64_t stop_counting() {
    counting = false;
    return count;
}
void start_counting_all_threads() {
    count_all = 0;
    counting_all = true;
}
uint64_t stop_counting_all_threads() {
    counting_all = false;
    return count_all.load();
}
}  // namespace kes_test

void* operator new(std::size_t size) {
    return counted_alloc(size);
}
void* operator new[](std::size_t size) {
    return counted_alloc(size);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
    try {
        return counted_alloc(size);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
    try {
        return counted_alloc(size);
    } catch (...) {
        return nullptr;
    }
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
    std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
    std::free(p);
}
