// mem_pool.cpp — kes_mem_pool: a two-level segregated fit (TLSF) allocator whose bookkeeping lives
// entirely outside the memory it manages.
//
// Why TLSF: alloc and free are O(1) with a small constant (two bitmap scans, a handful of index
// updates), fragmentation stays low on the mixed frame/tensor sizes of a media pipeline, and the
// worst case is bounded — which matters more on an edge box than the average case.
//
// Why out of band: on the board the managed region is DVPP/NPU memory the CPU may not be able to
// touch (memory.h), so the usual TLSF trick of storing headers in front of each block is not an
// option. Instead:
//   - every block (free or live) has a descriptor in one array, `blocks_`; unused descriptors form an
//     index free list, so descriptors are recycled without allocation;
//   - every chunk has a granule table with one uint32 per 128-byte granule: the entry of a granule
//     where a block starts holds that block's descriptor, every other entry holds kNil. Freeing a
//     pointer is then one table read, and interior or foreign pointers are recognised for free;
//   - physical neighbours are linked by descriptor index (prev_phys/next_phys) for coalescing, and
//     free blocks by prev_free/next_free into the TLSF lists.
// The table costs 4 bytes per 128 (3.1 %) of host memory; a buffer overrun in a block can never
// corrupt the pool.
//
// Units: the pool works in granules of KES_MEM_ALIGNMENT (128) bytes. A request of `size` bytes
// takes ceil(kes_mem_dvpp_size(size) / 128) granules, so every block starts 128-byte aligned
// (BOARD-RULES §Memory) and holds the DVPP size of its request.
#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "device_backend.hpp"
#include "kes/error.hpp"
#include "kes/logging.hpp"
#include "kes/math.hpp"
#include "kes/struct_size.hpp"
#include "kestrel/memory.h"

namespace kes {
namespace {

constexpr unsigned kGranuleShift = 7;
constexpr uint64_t kGranule = uint64_t{1} << kGranuleShift;
static_assert(kGranule == KES_MEM_ALIGNMENT, "the pool's granule is the DVPP alignment");

// Second level: 16 subdivisions per power of two, so a block found by the good-fit search wastes at
// most 1/16 of its size before splitting (and nothing after, since the remainder is split off).
constexpr unsigned kSlShift = 4;
constexpr unsigned kSlCount = 1u << kSlShift;
// Sizes below kSlCount granules share first level 0 with one exact list each. Above, first level
// fl = floor(log2(units)) - kSlShift + 1. Blocks are < 2^64 bytes = 2^57 granules (fl ≤ 53); a search
// rounded up from the largest request may reach fl 54, which simply finds nothing.
constexpr unsigned kFlCount = 64 - kGranuleShift - kSlShift + 2;
static_assert(kFlCount < 64, "first-level bitmap is one uint64");

constexpr uint32_t kNil = UINT32_MAX;

// Leak reports list this many blocks one per line, then a count of the rest.
constexpr uint64_t kLeakLinesMax = 16;

inline unsigned long long ull(uint64_t v) {
    return static_cast<unsigned long long>(v);
}
inline unsigned log2_floor(uint64_t v) {
    return 63u - static_cast<unsigned>(__builtin_clzll(v));
}

struct SizeClass {
    unsigned fl;
    unsigned sl;
};

// The list a free block of `units` granules lives in.
SizeClass class_of(uint64_t units) {
    if (units < kSlCount) return {0, static_cast<unsigned>(units)};
    const unsigned t = log2_floor(units);
    return {t - kSlShift + 1, static_cast<unsigned>((units >> (t - kSlShift)) - kSlCount)};
}

// The first list whose every block has at least `units` granules (TLSF's good-fit rounding).
SizeClass class_at_least(uint64_t units) {
    if (units >= kSlCount) units += (uint64_t{1} << (log2_floor(units) - kSlShift)) - 1;
    return class_of(units);
}

enum class BlockState : uint8_t { kUnused, kFree, kLive };

struct Block {
    uint64_t start = 0;      // first granule, relative to the chunk
    uint64_t units = 0;      // length in granules
    uint64_t requested = 0;  // bytes the caller asked for (live blocks only)
    uint32_t chunk = 0;
    uint32_t prev_phys = kNil;  // physical neighbours within the chunk
    uint32_t next_phys = kNil;
    uint32_t prev_free = kNil;  // TLSF list links (free blocks)
    uint32_t next_free = kNil;  // ... also links unused descriptors
    BlockState state = BlockState::kUnused;
};

// Gives a chunk back to its backend; a null backend means caller-owned memory, never released.
struct ChunkRelease {
    DeviceBackend* backend = nullptr;
    void operator()(void* ptr) const noexcept {
        if (backend != nullptr) backend->release(ptr);
    }
};

struct Chunk {
    std::unique_ptr<void, ChunkRelease> owned;  // empty for external memory
    char* base = nullptr;
    uint64_t units = 0;
    std::vector<uint32_t> block_at;  // granule → descriptor of the block starting there, else kNil

    uintptr_t begin() const { return reinterpret_cast<uintptr_t>(base); }
    uint64_t bytes() const { return units << kGranuleShift; }
};

// Validated kes_mem_pool_config, in bytes that are multiples of the granule.
struct PoolSettings {
    std::string name;
    DeviceBackend* backend = nullptr;  // nullptr: external memory
    void* external = nullptr;
    uint64_t initial_bytes = 0;
    uint64_t grow_bytes = 0;  // 0: fixed size
    uint64_t max_bytes = 0;   // 0: no cap
};

// The allocator proper. Every public member takes the mutex; private members expect it held.
// Failures throw kes::Error (caught by the C entry points) and leave the pool unchanged.
class MemPool {
public:
    explicit MemPool(PoolSettings settings);

    void* allocate(size_t size);
    void release(void* ptr);
    size_t block_size(const void* ptr) const;
    bool contains(const void* ptr) const;
    kes_mem_pool_stats stats() const;
    void reset_peak();
    void check() const;
    void report_leaks() const;

private:
    enum class Purpose { kFree, kQuery };

    void add_chunk(Chunk chunk);
    uint32_t grow(uint64_t units, std::string* why);
    uint32_t find_free(uint64_t units) const;
    void insert_free(uint32_t idx);
    void remove_free(uint32_t idx);
    void absorb_next(uint32_t idx);
    void reserve_descriptors(size_t count);
    uint32_t take_descriptor();
    void drop_descriptor(uint32_t idx);
    uint32_t chunk_containing(uintptr_t addr) const;
    uint32_t locate_live(const void* ptr, Purpose purpose) const;
    uint64_t largest_free_units() const;
    char* address_of(const Block& b) const { return chunks_[b.chunk].base + (b.start << kGranuleShift); }

    const PoolSettings settings_;
    mutable std::mutex mutex_;

    std::vector<Chunk> chunks_;
    std::vector<uint32_t> chunk_order_;  // chunk indices sorted by base address, for pointer lookup
    std::vector<Block> blocks_;
    uint32_t unused_head_ = kNil;
    size_t unused_count_ = 0;

    uint64_t fl_bitmap_ = 0;
    uint32_t sl_bitmap_[kFlCount] = {};
    uint32_t heads_[kFlCount][kSlCount];

    uint64_t capacity_ = 0;
    uint64_t in_use_ = 0;
    uint64_t requested_ = 0;
    uint64_t peak_ = 0;
    uint64_t live_blocks_ = 0;
    uint64_t free_blocks_ = 0;
    uint64_t total_allocs_ = 0;
    uint64_t failed_allocs_ = 0;
};

MemPool::MemPool(PoolSettings settings) : settings_(std::move(settings)) {
    for (auto& row : heads_) std::fill(std::begin(row), std::end(row), kNil);

    Chunk chunk;
    chunk.units = settings_.initial_bytes >> kGranuleShift;
    if (settings_.backend == nullptr) {
        chunk.base = static_cast<char*>(settings_.external);
    } else {
        chunk.owned = std::unique_ptr<void, ChunkRelease>(
            settings_.backend->allocate(static_cast<size_t>(settings_.initial_bytes), KES_MEM_ALIGNMENT),
            ChunkRelease{settings_.backend});
        if (!chunk.owned) {
            // A device backend knows why (an AscendCL error, Ascend required but unavailable): pass it on.
            std::string detail;
            const kes_status why = settings_.backend->failure(&detail);
            KES_FAIL(detail.empty() ? KES_ERR_OUT_OF_MEMORY : why,
                     "pool '%s': the %s backend has no %llu bytes for the first region%s%s", settings_.name.c_str(),
                     settings_.backend->name(), ull(settings_.initial_bytes), detail.empty() ? "" : ": ",
                     detail.c_str());
        }
        chunk.base = static_cast<char*>(chunk.owned.get());
    }
    chunk.block_at.assign(chunk.units, kNil);  // std::bad_alloc → KES_ERR_OUT_OF_MEMORY at the boundary
    reserve_descriptors(1);
    chunks_.reserve(1);
    chunk_order_.reserve(1);
    add_chunk(std::move(chunk));
}

// Commits a chunk whose memory and table exist; needs one spare descriptor, chunks_ and chunk_order_
// capacity for one more entry. Does not throw.
void MemPool::add_chunk(Chunk chunk) {
    const uint32_t c = static_cast<uint32_t>(chunks_.size());
    const uint32_t idx = take_descriptor();
    Block& b = blocks_[idx];
    b = Block{};
    b.start = 0;
    b.units = chunk.units;
    b.chunk = c;
    b.state = BlockState::kFree;
    chunk.block_at[0] = idx;
    capacity_ += chunk.bytes();
    const uintptr_t begin = chunk.begin();
    chunks_.push_back(std::move(chunk));
    auto pos = std::upper_bound(chunk_order_.begin(), chunk_order_.end(), begin,
                                [this](uintptr_t a, uint32_t ci) { return a < chunks_[ci].begin(); });
    chunk_order_.insert(pos, c);
    insert_free(idx);
}

// Adds a chunk that can hold `units` granules and returns its free block, or kNil with the reason in
// *why. Leaves the pool unchanged on failure.
uint32_t MemPool::grow(uint64_t units, std::string* why) {
    if (settings_.backend == nullptr) {
        *why = "external memory, growth disabled";
        return kNil;
    }
    if (settings_.grow_bytes == 0) {
        *why = "growth disabled";
        return kNil;
    }
    const uint64_t need = units << kGranuleShift;
    uint64_t bytes = std::max(settings_.grow_bytes, need);
    if (settings_.max_bytes != 0) {
        const uint64_t room =
            settings_.max_bytes > capacity_ ? align_down(settings_.max_bytes - capacity_, kGranule) : 0;
        if (room < need) {
            *why = format("growth enabled, but max_bytes %llu leaves room for only %llu more bytes",
                          ull(settings_.max_bytes), ull(room));
            return kNil;
        }
        bytes = std::min(bytes, room);  // use the last of the allowance rather than refuse
    }
    uint64_t total = 0;
    if (!checked_add(capacity_, bytes, &total) || bytes > SIZE_MAX || chunks_.size() >= kNil) {
        *why = "growth enabled, but the pool's capacity would overflow";
        return kNil;
    }
    Chunk chunk;
    chunk.units = bytes >> kGranuleShift;
    chunk.owned = std::unique_ptr<void, ChunkRelease>(
        settings_.backend->allocate(static_cast<size_t>(bytes), KES_MEM_ALIGNMENT), ChunkRelease{settings_.backend});
    if (!chunk.owned) {
        std::string detail;
        settings_.backend->failure(&detail);
        *why = format("growth enabled, but the %s backend could not supply a %llu-byte chunk%s%s",
                      settings_.backend->name(), ull(bytes), detail.empty() ? "" : ": ", detail.c_str());
        return kNil;
    }
    chunk.base = static_cast<char*>(chunk.owned.get());
    try {
        chunk.block_at.assign(chunk.units, kNil);
        chunks_.reserve(chunks_.size() + 1);
        chunk_order_.reserve(chunk_order_.size() + 1);
        reserve_descriptors(2);  // the chunk's block and the split remainder in allocate()
    } catch (const std::bad_alloc&) {
        *why =
            format("growth enabled, but there is no host memory for the bookkeeping of a %llu-byte chunk", ull(bytes));
        return kNil;  // `chunk` gives its memory back on the way out
    }
    const uint32_t c = static_cast<uint32_t>(chunks_.size());
    add_chunk(std::move(chunk));
    KES_LOGD("sdk", "pool '%s' grew by %llu bytes to %llu (%u chunks)", settings_.name.c_str(), ull(bytes),
             ull(capacity_), static_cast<unsigned>(chunks_.size()));
    return chunks_[c].block_at[0];
}

uint32_t MemPool::find_free(uint64_t units) const {
    const SizeClass want = class_at_least(units);
    if (want.fl < kFlCount) {
        uint32_t sl_map = sl_bitmap_[want.fl] & (~0u << want.sl);
        unsigned fl = want.fl;
        if (sl_map == 0) {
            const uint64_t fl_map = want.fl + 1 < 64 ? fl_bitmap_ & (~uint64_t{0} << (want.fl + 1)) : 0;
            if (fl_map != 0) {
                fl = static_cast<unsigned>(__builtin_ctzll(fl_map));
                sl_map = sl_bitmap_[fl];
            }
        }
        if (sl_map != 0) return heads_[fl][__builtin_ctz(sl_map)];
    }
    // Good-fit rounding skips the request's own list, which may still hold a block that fits. Look
    // there before giving up, so that any request up to largest_free_block succeeds as the stats
    // promise; this costs a list walk only when the pool is nearly exhausted.
    const SizeClass own = class_of(units);
    for (uint32_t i = heads_[own.fl][own.sl]; i != kNil; i = blocks_[i].next_free) {
        if (blocks_[i].units >= units) return i;
    }
    return kNil;
}

void MemPool::insert_free(uint32_t idx) {
    Block& b = blocks_[idx];
    const SizeClass k = class_of(b.units);
    b.state = BlockState::kFree;
    b.prev_free = kNil;
    b.next_free = heads_[k.fl][k.sl];
    if (b.next_free != kNil) blocks_[b.next_free].prev_free = idx;
    heads_[k.fl][k.sl] = idx;
    sl_bitmap_[k.fl] |= 1u << k.sl;
    fl_bitmap_ |= uint64_t{1} << k.fl;
    ++free_blocks_;
}

void MemPool::remove_free(uint32_t idx) {
    Block& b = blocks_[idx];
    const SizeClass k = class_of(b.units);
    if (b.prev_free != kNil) {
        blocks_[b.prev_free].next_free = b.next_free;
    } else {
        heads_[k.fl][k.sl] = b.next_free;
    }
    if (b.next_free != kNil) blocks_[b.next_free].prev_free = b.prev_free;
    if (heads_[k.fl][k.sl] == kNil) {
        sl_bitmap_[k.fl] &= ~(1u << k.sl);
        if (sl_bitmap_[k.fl] == 0) fl_bitmap_ &= ~(uint64_t{1} << k.fl);
    }
    b.prev_free = b.next_free = kNil;
    --free_blocks_;
}

// Merges the physical successor of idx into idx (neither may be on a free list).
void MemPool::absorb_next(uint32_t idx) {
    Block& b = blocks_[idx];
    const uint32_t n = b.next_phys;
    Block& next = blocks_[n];
    b.units += next.units;
    b.next_phys = next.next_phys;
    if (b.next_phys != kNil) blocks_[b.next_phys].prev_phys = idx;
    chunks_[b.chunk].block_at[next.start] = kNil;
    drop_descriptor(n);
}

// Makes sure `count` descriptors can be taken without allocating. May throw std::bad_alloc, which is
// why callers do it before changing anything.
void MemPool::reserve_descriptors(size_t count) {
    while (unused_count_ < count) {
        if (blocks_.size() >= kNil) throw std::bad_alloc();
        blocks_.emplace_back();
        drop_descriptor(static_cast<uint32_t>(blocks_.size() - 1));
    }
}

uint32_t MemPool::take_descriptor() {
    const uint32_t idx = unused_head_;  // reserve_descriptors() guaranteed one
    unused_head_ = blocks_[idx].next_free;
    --unused_count_;
    blocks_[idx] = Block{};
    return idx;
}

void MemPool::drop_descriptor(uint32_t idx) {
    Block& b = blocks_[idx];
    b = Block{};
    b.next_free = unused_head_;
    unused_head_ = idx;
    ++unused_count_;
}

uint32_t MemPool::chunk_containing(uintptr_t addr) const {
    auto it = std::upper_bound(chunk_order_.begin(), chunk_order_.end(), addr,
                               [this](uintptr_t a, uint32_t ci) { return a < chunks_[ci].begin(); });
    if (it == chunk_order_.begin()) return kNil;
    const Chunk& c = chunks_[*--it];
    return addr - c.begin() < c.bytes() ? *it : kNil;
}

// The descriptor of the live block starting exactly at ptr; otherwise throws
// KES_ERR_INVALID_ARGUMENT saying what ptr is instead.
uint32_t MemPool::locate_live(const void* ptr, Purpose purpose) const {
    const char* pool = settings_.name.c_str();
    const uintptr_t addr = reinterpret_cast<uintptr_t>(ptr);
    const uint32_t c = chunk_containing(addr);
    if (c == kNil) {
        KES_FAIL(KES_ERR_INVALID_ARGUMENT, "%p is not in pool '%s': it was not allocated from this pool", ptr, pool);
    }
    const Chunk& chunk = chunks_[c];
    const uint64_t offset = addr - chunk.begin();
    const uint64_t granule = offset >> kGranuleShift;
    const uint32_t idx = (offset & (kGranule - 1)) == 0 ? chunk.block_at[granule] : kNil;
    if (idx == kNil) {
        // Not a block start. The error path can afford a walk to say which block ptr is inside.
        uint32_t owner = chunk.block_at[0];
        while (blocks_[owner].start + blocks_[owner].units <= granule) owner = blocks_[owner].next_phys;
        const Block& b = blocks_[owner];
        const uint64_t into = offset - (b.start << kGranuleShift);
        if (b.state == BlockState::kFree) {
            KES_FAIL(KES_ERR_INVALID_ARGUMENT,
                     "%p is not the start of a block of pool '%s': it lies %llu bytes into a free range of %llu "
                     "bytes — a double free (of a block since merged with a free neighbour) or a stray pointer",
                     ptr, pool, ull(into), ull(b.units << kGranuleShift));
        }
        KES_FAIL(KES_ERR_INVALID_ARGUMENT,
                 "%p is not the start of a block of pool '%s': it points %llu bytes into the live %llu-byte block "
                 "at %p (interior pointer)",
                 ptr, pool, ull(into), ull(b.units << kGranuleShift), static_cast<const void*>(address_of(b)));
    }
    const Block& b = blocks_[idx];
    if (b.chunk != c || b.start != granule) {
        KES_FAIL(KES_ERR_INTERNAL, "pool '%s': granule table of chunk %u maps granule %llu to a block at %u/%llu", pool,
                 c, ull(granule), b.chunk, ull(b.start));
    }
    if (b.state != BlockState::kLive) {
        if (purpose == Purpose::kFree) {
            KES_FAIL(KES_ERR_INVALID_ARGUMENT, "double free: the %llu-byte block at %p of pool '%s' is already free",
                     ull(b.units << kGranuleShift), ptr, pool);
        }
        KES_FAIL(KES_ERR_INVALID_ARGUMENT, "the block at %p of pool '%s' is free, not allocated", ptr, pool);
    }
    return idx;
}

uint64_t MemPool::largest_free_units() const {
    if (fl_bitmap_ == 0) return 0;
    // The top non-empty list holds the largest blocks, but not sorted: take the maximum over it.
    const unsigned fl = log2_floor(fl_bitmap_);
    const unsigned sl = 31u - static_cast<unsigned>(__builtin_clz(sl_bitmap_[fl]));
    uint64_t best = 0;
    for (uint32_t i = heads_[fl][sl]; i != kNil; i = blocks_[i].next_free) best = std::max(best, blocks_[i].units);
    return best;
}

void* MemPool::allocate(size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    const size_t dvpp = kes_mem_dvpp_size(size);
    if (dvpp == 0 || dvpp > SIZE_MAX - (kGranule - 1)) {
        ++failed_allocs_;
        KES_FAIL(KES_ERR_OUT_OF_MEMORY,
                 "pool '%s': requested %zu bytes is too large (its 128-byte-rounded DVPP size overflows size_t)",
                 settings_.name.c_str(), size);
    }
    const uint64_t units = (static_cast<uint64_t>(dvpp) + kGranule - 1) >> kGranuleShift;

    try {
        reserve_descriptors(1);  // for the split remainder: fail now, before any list changes
    } catch (const std::bad_alloc&) {
        ++failed_allocs_;
        KES_FAIL(KES_ERR_OUT_OF_MEMORY, "pool '%s': no host memory for block descriptors", settings_.name.c_str());
    }
    uint32_t idx = find_free(units);
    if (idx == kNil) {
        std::string why;
        idx = grow(units, &why);
        if (idx == kNil) {
            ++failed_allocs_;
            KES_FAIL(KES_ERR_OUT_OF_MEMORY,
                     "pool '%s' is full: requested %zu bytes (a %llu-byte block), largest free block %llu "
                     "(capacity %llu, %s)",
                     settings_.name.c_str(), size, ull(units << kGranuleShift),
                     ull(largest_free_units() << kGranuleShift), ull(capacity_), why.c_str());
        }
    }

    remove_free(idx);
    if (blocks_[idx].units > units) {
        // Split exactly: the block is round_up(dvpp, 128) bytes and the rest goes back to a list.
        const uint32_t rest = take_descriptor();
        Block& b = blocks_[idx];
        Block& r = blocks_[rest];
        r.start = b.start + units;
        r.units = b.units - units;
        r.chunk = b.chunk;
        r.prev_phys = idx;
        r.next_phys = b.next_phys;
        if (r.next_phys != kNil) blocks_[r.next_phys].prev_phys = rest;
        b.next_phys = rest;
        b.units = units;
        chunks_[r.chunk].block_at[r.start] = rest;
        insert_free(rest);
    }
    Block& b = blocks_[idx];
    b.state = BlockState::kLive;
    b.requested = size;

    in_use_ += units << kGranuleShift;
    requested_ += size;
    peak_ = std::max(peak_, in_use_);
    ++live_blocks_;
    ++total_allocs_;
    return address_of(b);
}

void MemPool::release(void* ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    uint32_t idx = locate_live(ptr, Purpose::kFree);  // throws before any change

    Block& b = blocks_[idx];
    in_use_ -= b.units << kGranuleShift;
    requested_ -= b.requested;
    --live_blocks_;
    b.requested = 0;
    b.state = BlockState::kFree;

    const uint32_t next = b.next_phys;
    if (next != kNil && blocks_[next].state == BlockState::kFree) {
        remove_free(next);
        absorb_next(idx);
    }
    const uint32_t prev = blocks_[idx].prev_phys;
    if (prev != kNil && blocks_[prev].state == BlockState::kFree) {
        remove_free(prev);
        absorb_next(prev);
        idx = prev;
    }
    insert_free(idx);
}

size_t MemPool::block_size(const void* ptr) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<size_t>(blocks_[locate_live(ptr, Purpose::kQuery)].units << kGranuleShift);
}

bool MemPool::contains(const void* ptr) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return chunk_containing(reinterpret_cast<uintptr_t>(ptr)) != kNil;
}

kes_mem_pool_stats MemPool::stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    kes_mem_pool_stats s;
    std::memset(&s, 0, sizeof s);
    s.capacity_bytes = static_cast<size_t>(capacity_);
    s.in_use_bytes = static_cast<size_t>(in_use_);
    s.requested_bytes = static_cast<size_t>(requested_);
    s.peak_in_use_bytes = static_cast<size_t>(peak_);
    s.free_bytes = static_cast<size_t>(capacity_ - in_use_);
    s.largest_free_block = static_cast<size_t>(largest_free_units() << kGranuleShift);
    s.live_blocks = live_blocks_;
    s.free_blocks = free_blocks_;
    s.total_allocs = total_allocs_;
    s.failed_allocs = failed_allocs_;
    s.chunk_count = static_cast<uint32_t>(chunks_.size());
    s.fragmentation =
        s.free_bytes == 0 ? 0.0 : 1.0 - static_cast<double>(s.largest_free_block) / static_cast<double>(s.free_bytes);
    return s;
}

void MemPool::reset_peak() {
    std::lock_guard<std::mutex> lock(mutex_);
    peak_ = in_use_;
}

#define KES_CHECK(cond, ...)                                                                         \
    do {                                                                                             \
        if (!(cond)) {                                                                               \
            ::kes::fail(KES_ERR_INTERNAL, "pool '%s': invariant broken: %s", settings_.name.c_str(), \
                        ::kes::format(__VA_ARGS__).c_str());                                         \
        }                                                                                            \
    } while (0)

void MemPool::check() const {
    std::lock_guard<std::mutex> lock(mutex_);
    const uint64_t n_desc = blocks_.size();
    uint64_t capacity = 0, in_use = 0, requested = 0, live = 0, free = 0;

    // 1. Physical walk: each chunk is tiled by its blocks, in order, without gaps or overlap.
    KES_CHECK(chunk_order_.size() == chunks_.size(), "chunk order lists %zu of %zu chunks", chunk_order_.size(),
              chunks_.size());
    for (size_t i = 0; i < chunk_order_.size(); ++i) {
        KES_CHECK(chunk_order_[i] < chunks_.size(), "chunk order entry %zu is out of range", i);
        if (i > 0) {
            const Chunk& lo = chunks_[chunk_order_[i - 1]];
            KES_CHECK(lo.begin() + lo.bytes() <= chunks_[chunk_order_[i]].begin(),
                      "chunks are not sorted by address or overlap (entry %zu)", i);
        }
    }
    for (uint32_t c = 0; c < chunks_.size(); ++c) {
        const Chunk& chunk = chunks_[c];
        KES_CHECK(chunk.units > 0 && chunk.block_at.size() == chunk.units,
                  "chunk %u has %llu granules but a table of %zu", c, ull(chunk.units), chunk.block_at.size());
        KES_CHECK(chunk.begin() % kGranule == 0, "chunk %u at %p is not 128-byte aligned", c,
                  static_cast<const void*>(chunk.base));
        uint64_t expect_start = 0, n_blocks = 0;
        uint32_t prev = kNil;
        bool prev_free = false;
        for (uint32_t i = chunk.block_at[0]; i != kNil; i = blocks_[i].next_phys) {
            KES_CHECK(i < n_desc, "chunk %u links to descriptor %u of %llu", c, i, ull(n_desc));
            const Block& b = blocks_[i];
            KES_CHECK(b.state != BlockState::kUnused, "chunk %u links to unused descriptor %u", c, i);
            KES_CHECK(b.chunk == c, "block %u in chunk %u's list says chunk %u", i, c, b.chunk);
            KES_CHECK(b.start == expect_start,
                      "blocks do not tile chunk %u: block %u starts at granule %llu, "
                      "expected %llu",
                      c, i, ull(b.start), ull(expect_start));
            KES_CHECK(b.units > 0 && b.units <= chunk.units - b.start,
                      "block %u of chunk %u has %llu granules "
                      "from granule %llu, beyond the chunk's %llu",
                      i, c, ull(b.units), ull(b.start), ull(chunk.units));
            KES_CHECK(b.prev_phys == prev, "block %u's prev_phys is %u, expected %u", i, b.prev_phys, prev);
            KES_CHECK(chunk.block_at[b.start] == i, "granule table of chunk %u maps granule %llu to %u, not block %u",
                      c, ull(b.start), chunk.block_at[b.start], i);
            const bool is_free = b.state == BlockState::kFree;
            KES_CHECK(!(is_free && prev_free), "adjacent free blocks %u and %u in chunk %u were not coalesced", prev, i,
                      c);
            if (is_free) {
                ++free;
            } else {
                ++live;
                in_use += b.units << kGranuleShift;
                requested += b.requested;
                KES_CHECK(b.requested > 0 &&
                              kes_mem_dvpp_size(static_cast<size_t>(b.requested)) <= (b.units << kGranuleShift),
                          "live block %u of %llu bytes is too small for its request of %llu", i,
                          ull(b.units << kGranuleShift), ull(b.requested));
            }
            prev_free = is_free;
            expect_start = b.start + b.units;
            prev = i;
            KES_CHECK(++n_blocks <= chunk.units, "chunk %u's block list has a cycle", c);
        }
        KES_CHECK(expect_start == chunk.units, "blocks of chunk %u cover %llu of its %llu granules", c,
                  ull(expect_start), ull(chunk.units));
        const uint64_t mapped = static_cast<uint64_t>(chunk.units) -
                                static_cast<uint64_t>(std::count(chunk.block_at.begin(), chunk.block_at.end(), kNil));
        KES_CHECK(mapped == n_blocks, "granule table of chunk %u maps %llu block starts for %llu blocks", c,
                  ull(mapped), ull(n_blocks));
        capacity += chunk.bytes();
    }

    // 2. Free lists and bitmaps agree with each other and with the blocks.
    uint64_t listed = 0;
    KES_CHECK((fl_bitmap_ >> kFlCount) == 0, "first-level bitmap has bits beyond level %u", kFlCount);
    for (unsigned fl = 0; fl < kFlCount; ++fl) {
        KES_CHECK((sl_bitmap_[fl] >> kSlCount) == 0, "second-level bitmap %u has bits beyond %u", fl, kSlCount);
        KES_CHECK(((fl_bitmap_ >> fl) & 1) == (sl_bitmap_[fl] != 0 ? 1u : 0u),
                  "first-level bit %u disagrees with its second-level bitmap", fl);
        for (unsigned sl = 0; sl < kSlCount; ++sl) {
            const uint32_t head = heads_[fl][sl];
            KES_CHECK(((sl_bitmap_[fl] >> sl) & 1) == (head != kNil ? 1u : 0u),
                      "bitmap bit (%u,%u) disagrees with its free list", fl, sl);
            uint32_t prev = kNil;
            for (uint32_t i = head; i != kNil; i = blocks_[i].next_free) {
                KES_CHECK(i < n_desc, "free list (%u,%u) links to descriptor %u of %llu", fl, sl, i, ull(n_desc));
                const Block& b = blocks_[i];
                KES_CHECK(b.state == BlockState::kFree, "free list (%u,%u) holds non-free block %u", fl, sl, i);
                const SizeClass k = class_of(b.units);
                KES_CHECK(k.fl == fl && k.sl == sl, "block %u of %llu granules is on list (%u,%u), belongs on (%u,%u)",
                          i, ull(b.units), fl, sl, k.fl, k.sl);
                KES_CHECK(b.prev_free == prev, "free list (%u,%u): block %u's prev_free is %u, expected %u", fl, sl, i,
                          b.prev_free, prev);
                prev = i;
                KES_CHECK(++listed <= n_desc, "free list (%u,%u) has a cycle", fl, sl);
            }
        }
    }
    KES_CHECK(listed == free, "free lists hold %llu blocks, the chunks %llu free blocks", ull(listed), ull(free));

    // 3. Unused descriptors account for the rest.
    uint64_t unused = 0;
    for (uint32_t i = unused_head_; i != kNil; i = blocks_[i].next_free) {
        KES_CHECK(i < n_desc && blocks_[i].state == BlockState::kUnused, "unused-descriptor list holds %u", i);
        KES_CHECK(++unused <= n_desc, "unused-descriptor list has a cycle");
    }
    KES_CHECK(unused == unused_count_, "unused-descriptor list has %llu entries, count says %zu", ull(unused),
              unused_count_);
    KES_CHECK(live + free + unused == n_desc, "%llu live + %llu free + %llu unused descriptors != %llu", ull(live),
              ull(free), ull(unused), ull(n_desc));

    // 4. Statistics add up.
    KES_CHECK(capacity == capacity_, "capacity_bytes %llu, chunks hold %llu", ull(capacity_), ull(capacity));
    KES_CHECK(in_use == in_use_, "in_use_bytes %llu, live blocks hold %llu", ull(in_use_), ull(in_use));
    KES_CHECK(requested == requested_, "requested_bytes %llu, live blocks asked for %llu", ull(requested_),
              ull(requested));
    KES_CHECK(live == live_blocks_, "live_blocks %llu, found %llu", ull(live_blocks_), ull(live));
    KES_CHECK(free == free_blocks_, "free_blocks %llu, found %llu", ull(free_blocks_), ull(free));
    KES_CHECK(peak_ >= in_use_ && peak_ <= capacity_, "peak_in_use_bytes %llu outside [in_use %llu, capacity %llu]",
              ull(peak_), ull(in_use_), ull(capacity_));
    KES_CHECK(total_allocs_ >= live_blocks_, "total_allocs %llu < live_blocks %llu", ull(total_allocs_),
              ull(live_blocks_));
}

#undef KES_CHECK

void MemPool::report_leaks() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (live_blocks_ == 0) return;
    KES_LOGW("sdk", "pool '%s' destroyed with %llu live blocks (%llu bytes in use, %llu requested): leaked",
             settings_.name.c_str(), ull(live_blocks_), ull(in_use_), ull(requested_));
    uint64_t listed = 0;
    for (const Chunk& chunk : chunks_) {
        for (uint32_t i = chunk.block_at[0]; i != kNil; i = blocks_[i].next_phys) {
            const Block& b = blocks_[i];
            if (b.state != BlockState::kLive) continue;
            if (listed++ < kLeakLinesMax) {
                KES_LOGW("sdk", "pool '%s': leaked block %p of %llu bytes (requested %llu)", settings_.name.c_str(),
                         static_cast<const void*>(chunk.base + (b.start << kGranuleShift)),
                         ull(b.units << kGranuleShift), ull(b.requested));
            }
        }
    }
    if (listed > kLeakLinesMax) {
        KES_LOGW("sdk", "pool '%s': ... and %llu more leaked blocks", settings_.name.c_str(),
                 ull(listed - kLeakLinesMax));
    }
}

PoolSettings validate(const kes_mem_pool_config& config) {
    PoolSettings s;
    s.name = config.name != nullptr ? config.name : "pool";
    KES_REQUIRE(config.initial_bytes > 0, "pool '%s': initial_bytes must be > 0", s.name.c_str());
    KES_REQUIRE(config.max_bytes == 0 || config.max_bytes >= config.initial_bytes,
                "pool '%s': max_bytes %zu is less than initial_bytes %zu", s.name.c_str(), config.max_bytes,
                config.initial_bytes);
    if (config.external_memory != nullptr) {
        // The caller's region: never overrun it (round the size down) and never grow past it.
        KES_REQUIRE(reinterpret_cast<uintptr_t>(config.external_memory) % KES_MEM_ALIGNMENT == 0,
                    "pool '%s': external_memory %p is not %u-byte aligned", s.name.c_str(), config.external_memory,
                    KES_MEM_ALIGNMENT);
        KES_REQUIRE(config.initial_bytes >= KES_MEM_ALIGNMENT,
                    "pool '%s': external region of %zu bytes is smaller than one %u-byte block", s.name.c_str(),
                    config.initial_bytes, KES_MEM_ALIGNMENT);
        s.external = config.external_memory;
        s.initial_bytes = align_down(config.initial_bytes, kGranule);
        if (config.grow_bytes != 0) {
            KES_LOGD("sdk", "pool '%s': grow_bytes ignored, a pool over external memory does not grow", s.name.c_str());
        }
        return s;
    }
    s.backend = backend_for(static_cast<int>(enum_value(config.backend)));
    KES_REQUIRE(s.backend != nullptr, "pool '%s': backend %d is not a kes_mem_backend value", s.name.c_str(),
                static_cast<int>(enum_value(config.backend)));
    KES_REQUIRE(config.initial_bytes <= SIZE_MAX - (kGranule - 1),
                "pool '%s': initial_bytes %zu overflows when rounded up to %u", s.name.c_str(), config.initial_bytes,
                KES_MEM_ALIGNMENT);
    KES_REQUIRE(config.grow_bytes <= SIZE_MAX - (kGranule - 1),
                "pool '%s': grow_bytes %zu overflows when rounded up to %u", s.name.c_str(), config.grow_bytes,
                KES_MEM_ALIGNMENT);
    s.initial_bytes = align_up(config.initial_bytes, kGranule);
    s.grow_bytes = align_up(config.grow_bytes, kGranule);
    s.max_bytes = config.max_bytes;
    KES_REQUIRE(s.max_bytes == 0 || s.max_bytes >= s.initial_bytes,
                "pool '%s': max_bytes %zu is less than initial_bytes %zu rounded up to %u (%llu)", s.name.c_str(),
                config.max_bytes, config.initial_bytes, KES_MEM_ALIGNMENT, ull(s.initial_bytes));
    return s;
}

}  // namespace
}  // namespace kes

// The C handle: the allocator behind an opaque pointer.
struct kes_mem_pool {
    kes_mem_pool(kes::PoolSettings settings, kes_mem_backend kind) : pool(std::move(settings)), backend(kind) {}
    kes::MemPool pool;
    kes_mem_backend backend;  // as configured (also for external memory: what the caller said it is)
};

extern "C" {

void kes_mem_pool_config_init(kes_mem_pool_config* config) {
    if (config == nullptr) return;
    std::memset(config, 0, sizeof *config);
    config->struct_size = sizeof(kes_mem_pool_config);
    config->backend = KES_MEM_HOST;
    config->initial_bytes = size_t{64} << 20;
    config->grow_bytes = 0;
    config->max_bytes = 0;
    config->external_memory = nullptr;
    config->name = "pool";
}

kes_status kes_mem_pool_create(const kes_mem_pool_config* config, kes_mem_pool** out_pool) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_pool);
        *out_pool = nullptr;
        KES_REQUIRE_NOT_NULL(config);
        kes_mem_pool_config c;
        kes_mem_pool_config_init(&c);
        kes::read_struct(config, KES_STRUCT_SIZE_THROUGH(kes_mem_pool_config, name), "config", "kes_mem_pool_config",
                         &c);
        // validate() checks the backend of an allocating pool; an external region's declared kind is only
        // reported back, so an out-of-range value reads as host memory.
        const int64_t kind = kes::enum_value(c.backend);
        const kes_mem_backend declared = kind >= KES_MEM_HOST && kind <= KES_MEM_DVPP ? c.backend : KES_MEM_HOST;
        auto pool = std::make_unique<kes_mem_pool>(kes::validate(c), declared);
        *out_pool = pool.release();  // owned by the caller until kes_mem_pool_destroy
        return KES_OK;
    });
}

void kes_mem_pool_destroy(kes_mem_pool* pool) {
    if (pool == nullptr) return;
    kes::guard(__func__, [&] {
        std::unique_ptr<kes_mem_pool> owned(pool);  // frees the chunks on every path
        owned->pool.report_leaks();
        return KES_OK;
    });
}

kes_status kes_mem_pool_alloc(kes_mem_pool* pool, size_t size, void** out_ptr) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_ptr);
        *out_ptr = nullptr;
        KES_REQUIRE_NOT_NULL(pool);
        KES_REQUIRE(size > 0, "size must be > 0");
        *out_ptr = pool->pool.allocate(size);
        return KES_OK;
    });
}

kes_status kes_mem_pool_free(kes_mem_pool* pool, void* ptr) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(pool);
        if (ptr != nullptr) pool->pool.release(ptr);
        return KES_OK;
    });
}

kes_status kes_mem_pool_block_size(const kes_mem_pool* pool, const void* ptr, size_t* out_size) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_size);
        *out_size = 0;
        KES_REQUIRE_NOT_NULL(pool);
        KES_REQUIRE_NOT_NULL(ptr);
        *out_size = pool->pool.block_size(ptr);
        return KES_OK;
    });
}

kes_mem_backend kes_mem_pool_backend(const kes_mem_pool* pool) {
    return pool ? pool->backend : KES_MEM_HOST;
}

int kes_mem_pool_contains(const kes_mem_pool* pool, const void* ptr) {
    if (pool == nullptr || ptr == nullptr) return 0;
    int result = 0;
    kes::guard(__func__, [&] {
        result = pool->pool.contains(ptr) ? 1 : 0;
        return KES_OK;
    });
    return result;
}

kes_status kes_mem_pool_get_stats(const kes_mem_pool* pool, kes_mem_pool_stats* out_stats) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(pool);
        KES_REQUIRE_NOT_NULL(out_stats);
        *out_stats = pool->pool.stats();
        return KES_OK;
    });
}

void kes_mem_pool_reset_peak(kes_mem_pool* pool) {
    if (pool == nullptr) return;
    kes::guard(__func__, [&] {
        pool->pool.reset_peak();
        return KES_OK;
    });
}

kes_status kes_mem_pool_check(const kes_mem_pool* pool) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(pool);
        pool->pool.check();
        return KES_OK;
    });
}

}  // extern "C"
