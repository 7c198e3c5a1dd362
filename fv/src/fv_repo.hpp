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
#include <string>
#include <vector>

#include "kestrel/fv.h"

namespace kes {
namespace fv {

// 64-byte aligned growable bytes: whole cache lines for the scan. Raw malloc'd memory (not a
// std::vector<uint8_t>) so that reading it as float/uint16_t/int8_t is fine.
// A buffer may instead borrow bytes it does not own (a loaded snapshot's private file mapping,
// fv_persist.cpp): they are read and written in place (the mapping is copy-on-write, so a write
// never reaches the file), and the first growth copies them into owned memory.
class AlignedBuffer {
public:
    uint8_t* data() noexcept { return borrowed_ ? borrowed_ : ptr_.get(); }
    const uint8_t* data() const noexcept { return borrowed_ ? borrowed_ : ptr_.get(); }
    size_t size() const noexcept { return size_; }
    size_t capacity() const noexcept { return cap_; }
    bool borrowed() const noexcept { return borrowed_ != nullptr; }

    // Strong guarantee: on std::bad_alloc the contents are unchanged.
    void reserve(size_t bytes) {
        if (bytes <= cap_) return;
        const size_t cap = (bytes + 63) / 64 * 64;
        void* p = std::aligned_alloc(64, cap);
        if (!p) throw std::bad_alloc();
        if (size_) std::memcpy(p, data(), size_);
        ptr_.reset(static_cast<uint8_t*>(p));
        borrowed_ = nullptr;
        cap_ = cap;
    }
    // Uses `bytes` bytes at p (which outlive this buffer) as the contents; capacity = size.
    void borrow(uint8_t* p, size_t bytes) noexcept {
        ptr_.reset();
        borrowed_ = p;
        size_ = cap_ = bytes;
    }
    // Geometric growth so that many small adds stay linear overall.
    void grow_for(size_t extra) {
        const size_t need = size_ + extra;
        if (need > cap_) reserve(need > cap_ + cap_ / 2 ? need : cap_ + cap_ / 2);
    }
    // Caller has made room: the next `bytes` bytes become part of the buffer, to be filled by the caller.
    uint8_t* extend_unchecked(size_t bytes) noexcept {
        uint8_t* p = data() + size_;
        size_ += bytes;
        return p;
    }
    // Caller has made room with grow_for/reserve.
    void append_unchecked(const uint8_t* src, size_t bytes) noexcept {
        if (bytes) std::memcpy(data() + size_, src, bytes);
        size_ += bytes;
    }

private:
    struct Free {
        void operator()(uint8_t* p) const noexcept { std::free(p); }
    };
    std::unique_ptr<uint8_t[], Free> ptr_;
    uint8_t* borrowed_ = nullptr;
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
    std::vector<float> f32;      // keep_f32: size × dim floats (cosine: normalised), for re-ranking
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

// CRC-32 (IEEE 802.3, as zlib's crc32), fv_persist.cpp.
uint32_t crc32(const void* data, size_t n, uint32_t crc = 0);

// The append log (fv_log.cpp). Writers call log_append under the writer lock, after every check
// that can fail and before changing anything, so a record exists exactly for each change made.
class Log;
struct LogDeleter {
    void operator()(Log* log) const noexcept;
};
enum class LogOp : uint32_t { kAdd = 1, kDelete = 2, kModify = 3, kDeleteRange = 4 };
// Appends and syncs one record if `repo` has a log; throws kes::Error(KES_ERR_IO) with the log as it
// was on failure. a..d: id0, id1, offset (add/delete/modify) or the range bounds (delete_range).
void log_append(kes_fv_repo& repo, LogOp op, uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint64_t count,
                const void* payload, size_t payload_bytes);
// Saves the snapshot; the caller holds repo.lock (reader or writer).
void save_locked(const kes_fv_repo& repo, const std::string& path);
// Empties repo's log (if any) after a checkpoint; caller holds repo.lock.
void log_truncate(const kes_fv_repo& repo);

}  // namespace fv
}  // namespace kes

struct kes_fv_repo {
    kes_fv_config config{};
    size_t stride = 0;         // bytes per stored feature
    size_t feature_bytes = 0;  // bytes per feature passed in
    size_t query_floats = 0;
    bool larger_is_closer = false;

    mutable kes::fv::RwLock lock;  // readers: searches and queries; writer: add/delete/modify
    // kes_fv_repo_load: the snapshot's private mapping that libraries' data may borrow (fv_persist.cpp);
    // declared before `libraries` so that it is unmapped after them.
    std::shared_ptr<void> mapping;
    std::map<uint32_t, std::unique_ptr<kes::fv::Library>> libraries;
    std::unique_ptr<kes::fv::Library> reserved;  // capacity hint, given to the first library created
    uint64_t live_total = 0;
    // PQ36 only, optional (kes_fv_repo_set_pq): float[32][256][pq_dim / 32], empty when pq_dim is 0.
    uint32_t pq_dim = 0;
    std::vector<float> pq_codebook;
    // Append log (kes_fv_repo_open_logged): sequence number of the last change recorded in it (or
    // in the snapshot it was loaded from); 0 = none.
    std::unique_ptr<kes::fv::Log, kes::fv::LogDeleter> log;
    uint64_t log_seq = 0;
};

// A product quantiser (fv_pq.cpp). codebook is float[32][256][dsub], empty until trained.
struct kes_fv_pq {
    uint32_t dim = 0;
    uint32_t dsub = 0;
    std::vector<float> codebook;
};
