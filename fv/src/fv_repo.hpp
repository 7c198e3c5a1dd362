// fv_repo.hpp — the repository's in-memory layout, shared by fv_repo.cpp (writers) and fv_search.cpp.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <vector>

#include "kestrel/fv.h"

namespace kes {
namespace fv {

// 64-byte aligned growable bytes: whole cache lines for the scan and aligned AVX-512 loads. Raw
// malloc'd memory (not a std::vector<uint8_t>) so that reading it as float/uint16_t/int8_t is fine.
class AlignedBuffer {
public:
    uint8_t* data() noexcept { return ptr_.get(); }
    const uint8_t* data() const noexcept { return ptr_.get(); }
    size_t size() const noexcept { return size_; }
    size_t capacity() const noexcept { return cap_; }

    // Strong guarantee: on std::bad_alloc the contents are unchanged.
    void reserve(size_t bytes) {
        if (bytes <= cap_) return;
        const size_t cap = (bytes + 63) / 64 * 64;
        void* p = std::aligned_alloc(64, cap);
        if (!p) throw std::bad_alloc();
        if (size_) std::memcpy(p, ptr_.get(), size_);
        ptr_.reset(static_cast<uint8_t*>(p));
        cap_ = cap;
    }
    // Geometric growth so that many small adds stay linear overall.
    void grow_for(size_t extra) {
        const size_t need = size_ + extra;
        if (need > cap_) reserve(need > cap_ + cap_ / 2 ? need : cap_ + cap_ / 2);
    }
    // Caller has made room: the next `bytes` bytes become part of the buffer, to be filled by the caller.
    uint8_t* extend_unchecked(size_t bytes) noexcept {
        uint8_t* p = ptr_.get() + size_;
        size_ += bytes;
        return p;
    }
    // Caller has made room with grow_for/reserve.
    void append_unchecked(const uint8_t* src, size_t bytes) noexcept {
        if (bytes) std::memcpy(ptr_.get() + size_, src, bytes);
        size_ += bytes;
    }

private:
    struct Free {
        void operator()(uint8_t* p) const noexcept { std::free(p); }
    };
    std::unique_ptr<uint8_t[], Free> ptr_;
    size_t size_ = 0;
    size_t cap_ = 0;
};

template <class T>
inline void grow_vector_for(std::vector<T>& v, size_t extra) {
    const size_t need = v.size() + extra;
    if (need > v.capacity()) v.reserve(need > v.capacity() + v.capacity() / 2 ? need : v.capacity() + v.capacity() / 2);
}

// Reader-writer lock on which a waiting writer is not starved. std::shared_mutex on glibc prefers
// readers, so a steady stream of searches kept an add waiting for as long as they ran (measured: 30 s
// in FvConcurrency). A writer holds the turnstile while it waits; new readers pass the turnstile
// first, so they queue behind it. Searches already running finish first.
class RwLock {
public:
    class Read {
    public:
        explicit Read(const RwLock& l) : l_(l) {
            { std::lock_guard<std::mutex> pass(l_.turnstile_); }
            l_.rw_.lock_shared();
        }
        ~Read() { l_.rw_.unlock_shared(); }
        Read(const Read&) = delete;
        Read& operator=(const Read&) = delete;

    private:
        const RwLock& l_;
    };
    class Write {
    public:
        explicit Write(RwLock& l) : l_(l) {
            std::lock_guard<std::mutex> hold(l_.turnstile_);
            l_.rw_.lock();
        }
        ~Write() { l_.rw_.unlock(); }
        Write(const Write&) = delete;
        Write& operator=(const Write&) = delete;

    private:
        RwLock& l_;
    };

private:
    mutable std::mutex turnstile_;
    mutable std::shared_mutex rw_;
};

struct Library {
    AlignedBuffer data;          // size × stride bytes, encoded features
    std::vector<float> scales;   // int8 storage: one per feature
    std::vector<uint8_t> alive;  // 1 = live, 0 = tombstone
    uint32_t size = 0;           // features ever added = next offset
    uint32_t live = 0;
};

// Library key: (id0, id1) packed so that std::map order is (id0, id1) order.
inline uint32_t lib_key(uint32_t id0, uint32_t id1) noexcept {
    return (id0 << 10) | id1;
}
inline uint32_t key_id0(uint32_t key) noexcept {
    return key >> 10;
}
inline uint32_t key_id1(uint32_t key) noexcept {
    return key & 1023u;
}

}  // namespace fv
}  // namespace kes

struct kes_fv_repo {
    kes_fv_config config{};
    size_t stride = 0;         // bytes per stored feature
    size_t feature_bytes = 0;  // bytes per feature passed in
    size_t query_floats = 0;
    bool larger_is_closer = false;

    mutable kes::fv::RwLock lock;  // readers: searches and queries; writer: add/delete/modify
    std::map<uint32_t, std::unique_ptr<kes::fv::Library>> libraries;
    std::unique_ptr<kes::fv::Library> reserved;  // capacity hint, given to the first library created
    uint64_t live_total = 0;
};
