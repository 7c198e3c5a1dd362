// fv_persist.cpp — saving and loading a repository (issue 6 §5, first slice: snapshots).
//
// File layout, little-endian, every part behind its own CRC-32 (IEEE 802.3, as zlib's crc32):
//   header   64 bytes: "KESFVREP", version 2, header size, kind, dim, storage, metric, max_topk,
//            library count, capacity hint, live features, sections (u32 at 56), CRC of bytes 0..59
//   codebook only when sections bit 0 is set (PQ36 repositories, kes_fv_repo_set_pq): 16-byte record
//            "PQCB", dim, payload CRC, CRC of bytes 0..11; payload 256 × dim f32 = float[32][256][dim/32]
//   sections bit 2: the repository keeps f32 copies (kes_fv_config.keep_f32); each library payload
//            then has size × dim f32 after the int8 scales, before the alive bytes.
//   log seq  only when sections bit 1 is set: 16 bytes "LSEQ", u64 sequence number of the last append-log
//            record the snapshot contains (fv_log.cpp), CRC of bytes 0..11
//   library  32-byte record header: id0, id1, size, live, payload bytes, payload CRC, CRC of 0..27
//            payload: size × stride feature bytes | size × 4 int8 scales (int8 only) | size alive bytes
//   footer   16 bytes: "KESFVEND", library count, CRC of bytes 0..11; nothing may follow.
// Version 1 (the first slice) is version 2 with sections = 0 and no codebook; it still loads.
// Libraries come in (id0, id1) order. A single flipped byte anywhere fails a CRC; a truncation
// misses the footer. The loader checks every size against the bytes actually left before it
// allocates, so a hostile file cannot make it allocate more than the file's own size.
//
// Saving goes through kes::AtomicFile (kes/file.hpp, the one crash-safe writer): a temporary file
// beside the target, fsynced, renamed over the target, the directory fsynced; a crash or a failed
// call at any instant leaves either the old file or the new one, whole.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "fv_repo.hpp"
#include "kes/error.hpp"
#include "kes/file.hpp"
#include "kes/math.hpp"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "fv files are little-endian; a big-endian port needs byte swaps here"
#endif

using kes::fv::Library;
using kes::fv::RwLock;

namespace kes {
namespace fv {
namespace {

constexpr char kMagic[8] = {'K', 'E', 'S', 'F', 'V', 'R', 'E', 'P'};
constexpr char kEndMagic[8] = {'K', 'E', 'S', 'F', 'V', 'E', 'N', 'D'};
constexpr uint32_t kVersion = 2;
constexpr uint32_t kOldestVersion = 1;
constexpr uint32_t kSectionCodebook = 1u;  // header u32 at 56, bit 0
constexpr char kCodebookMagic[4] = {'P', 'Q', 'C', 'B'};
constexpr size_t kCodebookRecordBytes = 16;
constexpr uint32_t kSectionLogSeq = 2u;
constexpr uint32_t kSectionKeepF32 =
    4u;  // bit 2: libraries carry f32 copies  // bit 1: a "LSEQ" record follows the codebook (if any)
constexpr char kLogSeqMagic[4] = {'L', 'S', 'E', 'Q'};
constexpr size_t kLogSeqRecordBytes = 16;
constexpr size_t kHeaderBytes = 64;
constexpr size_t kRecordBytes = 32;
constexpr size_t kFooterBytes = 16;

struct Crc32 {
    uint32_t table[256];
    Crc32() {
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
    }
};

}  // namespace

uint32_t crc32(const void* data, size_t n, uint32_t crc) {
    static const Crc32 t;
    const uint8_t* p = static_cast<const uint8_t*>(data);
    crc = ~crc;
    for (size_t i = 0; i < n; ++i) crc = t.table[(crc ^ p[i]) & 0xFFu] ^ (crc >> 8);
    return ~crc;
}

namespace {

template <class T>
void put(uint8_t* p, size_t at, T v) {
    std::memcpy(p + at, &v, sizeof v);
}
template <class T>
T get(const uint8_t* p, size_t at) {
    T v;
    std::memcpy(&v, p + at, sizeof v);
    return v;
}

}  // namespace

// ---- writing ----------------------------------------------------------------------------------

void save_locked(const kes_fv_repo& repo, const std::string& path) {
    AtomicFile f(path);
    uint8_t h[kHeaderBytes] = {};
    std::memcpy(h, kMagic, 8);
    put<uint32_t>(h, 8, kVersion);
    put<uint32_t>(h, 12, static_cast<uint32_t>(kHeaderBytes));
    put<uint32_t>(h, 16, static_cast<uint32_t>(repo.config.kind));
    put<uint32_t>(h, 20, repo.config.dim);
    put<uint32_t>(h, 24, static_cast<uint32_t>(repo.config.storage));
    put<uint32_t>(h, 28, static_cast<uint32_t>(repo.config.metric));
    put<uint32_t>(h, 32, repo.config.max_topk);
    put<uint32_t>(h, 36, static_cast<uint32_t>(repo.libraries.size()));
    put<uint64_t>(h, 40, repo.config.capacity_hint);
    put<uint64_t>(h, 48, repo.live_total);
    put<uint32_t>(h, 56,
                  (repo.pq_dim ? kSectionCodebook : 0u) | (repo.log_seq ? kSectionLogSeq : 0u) |
                      (repo.config.keep_f32 ? kSectionKeepF32 : 0u));
    put<uint32_t>(h, 60, crc32(h, 60));
    f.write(h, sizeof h);
    if (repo.pq_dim) {
        uint8_t r[kCodebookRecordBytes] = {};
        std::memcpy(r, kCodebookMagic, 4);
        put<uint32_t>(r, 4, repo.pq_dim);
        put<uint32_t>(r, 8, crc32(repo.pq_codebook.data(), repo.pq_codebook.size() * 4));
        put<uint32_t>(r, 12, crc32(r, 12));
        f.write(r, sizeof r);
        f.write(repo.pq_codebook.data(), repo.pq_codebook.size() * 4);
    }
    if (repo.log_seq) {
        uint8_t r[kLogSeqRecordBytes] = {};
        std::memcpy(r, kLogSeqMagic, 4);
        put<uint64_t>(r, 4, repo.log_seq);
        put<uint32_t>(r, 12, crc32(r, 12));
        f.write(r, sizeof r);
    }
    const bool i8 = repo.config.kind == KES_FV_DENSE && repo.config.storage == KES_I8;
    for (const auto& kv : repo.libraries) {
        const Library& lib = *kv.second;
        const size_t data_bytes = size_t{lib.size} * repo.stride;
        const size_t scale_bytes = i8 ? size_t{lib.size} * 4 : 0;
        const size_t f32_bytes = repo.config.keep_f32 ? size_t{lib.size} * repo.config.dim * 4 : 0;
        uint32_t crc = crc32(lib.data.data(), data_bytes);
        if (i8) crc = crc32(lib.scales.data(), scale_bytes, crc);
        if (f32_bytes) crc = crc32(lib.f32.data(), f32_bytes, crc);
        crc = crc32(lib.alive.data(), lib.size, crc);
        uint8_t r[kRecordBytes] = {};
        put<uint32_t>(r, 0, key_id0(kv.first));
        put<uint32_t>(r, 4, key_id1(kv.first));
        put<uint32_t>(r, 8, lib.size);
        put<uint32_t>(r, 12, lib.live);
        put<uint64_t>(r, 16, data_bytes + scale_bytes + f32_bytes + lib.size);
        put<uint32_t>(r, 24, crc);
        put<uint32_t>(r, 28, crc32(r, 28));
        f.write(r, sizeof r);
        f.write(lib.data.data(), data_bytes);
        if (i8) f.write(lib.scales.data(), scale_bytes);
        if (f32_bytes) f.write(lib.f32.data(), f32_bytes);
        f.write(lib.alive.data(), lib.size);
    }
    uint8_t e[kFooterBytes] = {};
    std::memcpy(e, kEndMagic, 8);
    put<uint32_t>(e, 8, static_cast<uint32_t>(repo.libraries.size()));
    put<uint32_t>(e, 12, crc32(e, 12));
    f.write(e, sizeof e);
    f.commit();
}

namespace {

void save(const kes_fv_repo& repo, const std::string& path) {
    RwLock::Read lock(repo.lock);
    save_locked(repo, path);
}

// ---- reading ----------------------------------------------------------------------------------

class Source {
public:
    virtual ~Source() = default;
    virtual uint64_t remaining() const = 0;
    // Reads exactly n bytes; the caller has checked n ≤ remaining().
    virtual void read(void* dst, size_t n) = 0;
    // The next n bytes in place (consumed), when the source is a private mapping and they start at a
    // multiple of `align`; nullptr (nothing consumed) otherwise. The caller has checked n ≤ remaining().
    virtual uint8_t* borrow(size_t /*n*/, size_t /*align*/) { return nullptr; }
    // What keeps borrowed bytes valid.
    virtual std::shared_ptr<void> mapping() const { return nullptr; }
};

class MemorySource : public Source {
public:
    MemorySource(const uint8_t* p, size_t n) : p_(p), left_(n) {}
    uint64_t remaining() const override { return left_; }
    void read(void* dst, size_t n) override {
        if (n) std::memcpy(dst, p_, n);
        p_ += n;
        left_ -= n;
    }

private:
    const uint8_t* p_;
    size_t left_;
};

class FileSource : public Source {
public:
    explicit FileSource(const std::string& path) : path_(path) {
        fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd_ < 0)
            KES_FAIL(errno == ENOENT ? KES_ERR_NOT_FOUND : KES_ERR_IO, "cannot open %s: %s", path.c_str(),
                     std::strerror(errno));
        struct stat st;
        if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(fd_);
            KES_FAIL(KES_ERR_IO, "%s is not a regular file", path.c_str());
        }
        left_ = static_cast<uint64_t>(st.st_size);
    }
    ~FileSource() override { ::close(fd_); }
    FileSource(const FileSource&) = delete;
    FileSource& operator=(const FileSource&) = delete;
    uint64_t remaining() const override { return left_; }
    void read(void* dst, size_t n) override {
        uint8_t* p = static_cast<uint8_t*>(dst);
        while (n > 0) {
            const ssize_t r = ::read(fd_, p, n);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) KES_FAIL(KES_ERR_IO, "reading %s: %s", path_.c_str(), std::strerror(errno));
            if (r == 0) KES_FAIL(KES_ERR_CORRUPT_DATA, "%s: file shrank while being read", path_.c_str());
            p += r;
            n -= static_cast<size_t>(r);
            left_ -= static_cast<uint64_t>(r);
        }
    }

private:
    std::string path_;
    int fd_ = -1;
    uint64_t left_ = 0;
};

// The whole file mapped copy-on-write (kes::MappedFile): libraries borrow their feature bytes from
// it instead of copying them, and a later modify writes to private copy-on-write pages, never to the
// file. nullptr when the file cannot be mapped or is empty (the caller then reads it with FileSource,
// which also reports why it cannot be opened, or that it is truncated).
class MappedSource : public Source {
public:
    static std::unique_ptr<MappedSource> open(const std::string& path) {
        std::shared_ptr<MappedFile> file;
        try {
            file = std::make_shared<MappedFile>(path, MappedFile::Access::CopyOnWrite);
        } catch (const Error&) {
            return nullptr;
        }
        if (file->size() == 0) return nullptr;
        const size_t size = file->size();
        std::shared_ptr<void> map(file, file->writable_data());  // owns the mapping, points at its bytes
        return std::unique_ptr<MappedSource>(new MappedSource(std::move(map), size));
    }
    uint64_t remaining() const override { return left_; }
    void read(void* dst, size_t n) override {
        if (n) std::memcpy(dst, base() + at_, n);
        at_ += n;
        left_ -= n;
    }
    uint8_t* borrow(size_t n, size_t align) override {
        if (at_ % align != 0) return nullptr;  // the mapping itself is page-aligned
        uint8_t* p = base() + at_;
        at_ += n;
        left_ -= n;
        return p;
    }
    std::shared_ptr<void> mapping() const override { return map_; }

private:
    MappedSource(std::shared_ptr<void> map, size_t size) : map_(std::move(map)), left_(size) {}
    uint8_t* base() const { return static_cast<uint8_t*>(map_.get()); }
    std::shared_ptr<void> map_;
    size_t at_ = 0;
    size_t left_;
};

#define KES_CORRUPT_IF(cond, ...)                                 \
    do {                                                          \
        if (cond) ::kes::fail(KES_ERR_CORRUPT_DATA, __VA_ARGS__); \
    } while (0)

void take(Source& s, void* dst, size_t n, const char* what) {
    KES_CORRUPT_IF(s.remaining() < n, "truncated: %s needs %zu bytes, %llu left", what, n,
                   static_cast<unsigned long long>(s.remaining()));
    s.read(dst, n);
}

std::unique_ptr<kes_fv_repo> load(Source& s) {
    uint8_t h[kHeaderBytes];
    take(s, h, sizeof h, "header");
    KES_CORRUPT_IF(std::memcmp(h, kMagic, 8) != 0, "not a Kestrel fv repository (bad magic)");
    KES_CORRUPT_IF(get<uint32_t>(h, 60) != crc32(h, 60), "header checksum mismatch");
    const uint32_t version = get<uint32_t>(h, 8);
    KES_CORRUPT_IF(version < kOldestVersion || version > kVersion, "unsupported version %u (this build reads %u..%u)",
                   version, kOldestVersion, kVersion);
    const uint32_t sections = get<uint32_t>(h, 56);
    KES_CORRUPT_IF(sections & ~(version >= 2 ? kSectionCodebook | kSectionLogSeq | kSectionKeepF32 : 0u),
                   "version %u header has unknown sections 0x%x", version, sections);
    KES_CORRUPT_IF(get<uint32_t>(h, 12) != kHeaderBytes, "header size %u, expected %zu", get<uint32_t>(h, 12),
                   kHeaderBytes);
    kes_fv_config c;
    kes_fv_config_init(&c);
    const uint32_t kind = get<uint32_t>(h, 16), storage = get<uint32_t>(h, 24), metric = get<uint32_t>(h, 28);
    KES_CORRUPT_IF(kind > KES_FV_DENSE || storage > 255 || metric > KES_FV_METRIC_L2,
                   "header has kind %u, storage %u, metric %u", kind, storage, metric);
    c.kind = static_cast<kes_fv_kind>(kind);
    c.dim = get<uint32_t>(h, 20);
    c.storage = static_cast<kes_dtype>(storage);
    c.metric = static_cast<kes_fv_metric>(metric);
    c.max_topk = get<uint32_t>(h, 32);
    c.keep_f32 = (sections & kSectionKeepF32) ? 1u : 0u;
    if (c.kind == KES_FV_PQ36) {
        c.storage = KES_F32;  // stored as KES_U8; create wants a dense-valid default it ignores
        c.metric = KES_FV_METRIC_IP;
    }
    kes_fv_repo* raw = nullptr;
    // capacity_hint is recorded, not reserved: a file must not make the loader allocate at will.
    if (kes_fv_repo_create(&c, &raw) != KES_OK)
        KES_FAIL(KES_ERR_CORRUPT_DATA, "header describes an invalid repository: %s", kes_last_error());
    std::unique_ptr<kes_fv_repo> repo(raw);
    repo->config.capacity_hint = get<uint64_t>(h, 40);
    const uint32_t libraries = get<uint32_t>(h, 36);
    const uint64_t live_total = get<uint64_t>(h, 48);
    const bool i8 = repo->config.kind == KES_FV_DENSE && repo->config.storage == KES_I8;

    if (sections & kSectionCodebook) {
        KES_CORRUPT_IF(repo->config.kind != KES_FV_PQ36, "a dense repository has a PQ codebook section");
        uint8_t r[kCodebookRecordBytes];
        take(s, r, sizeof r, "codebook record");
        KES_CORRUPT_IF(std::memcmp(r, kCodebookMagic, 4) != 0 || get<uint32_t>(r, 12) != crc32(r, 12),
                       "codebook record: bad magic or checksum");
        const uint32_t dim = get<uint32_t>(r, 4);
        KES_CORRUPT_IF(dim % KES_FV_PQ36_SUBSPACES != 0 || dim == 0 || dim > KES_FV_DIM_MAX,
                       "codebook dimension %u is not a multiple of 32 in [32, %u]", dim, KES_FV_DIM_MAX);
        const uint64_t bytes = uint64_t{KES_FV_PQ36_CENTROIDS} * dim * 4;
        KES_CORRUPT_IF(bytes > s.remaining(), "truncated: codebook needs %llu bytes, %llu left",
                       static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(s.remaining()));
        repo->pq_codebook.resize(static_cast<size_t>(bytes / 4));
        s.read(repo->pq_codebook.data(), static_cast<size_t>(bytes));
        KES_CORRUPT_IF(crc32(repo->pq_codebook.data(), static_cast<size_t>(bytes)) != get<uint32_t>(r, 8),
                       "codebook: payload checksum mismatch");
        for (size_t i = 0; i < repo->pq_codebook.size(); ++i)
            KES_CORRUPT_IF(!std::isfinite(repo->pq_codebook[i]), "codebook value %zu is not finite", i);
        repo->pq_dim = dim;
    }
    if (sections & kSectionLogSeq) {
        uint8_t r[kLogSeqRecordBytes];
        take(s, r, sizeof r, "log sequence record");
        KES_CORRUPT_IF(std::memcmp(r, kLogSeqMagic, 4) != 0 || get<uint32_t>(r, 12) != crc32(r, 12),
                       "log sequence record: bad magic or checksum");
        repo->log_seq = get<uint64_t>(r, 4);
        KES_CORRUPT_IF(repo->log_seq == 0, "log sequence record holds 0");
    }

    int64_t prev_key = -1;
    for (uint32_t l = 0; l < libraries; ++l) {
        uint8_t r[kRecordBytes];
        take(s, r, sizeof r, "library record");
        KES_CORRUPT_IF(get<uint32_t>(r, 28) != crc32(r, 28), "library record %u: checksum mismatch", l);
        const uint32_t id0 = get<uint32_t>(r, 0), id1 = get<uint32_t>(r, 4);
        const uint32_t size = get<uint32_t>(r, 8), live = get<uint32_t>(r, 12);
        KES_CORRUPT_IF(id0 > KES_FV_ID_MAX || id1 > KES_FV_ID_MAX, "library record %u: id (%u, %u) out of range", l,
                       id0, id1);
        const uint32_t key = lib_key(id0, id1);
        KES_CORRUPT_IF(static_cast<int64_t>(key) <= prev_key, "library record %u: (%u, %u) out of order or repeated", l,
                       id0, id1);
        prev_key = key;
        KES_CORRUPT_IF(live > size || size == 0, "library record %u: size %u, live %u", l, size, live);
        uint64_t data_bytes = 0, payload = 0, f32_bytes = 0;
        const bool ok =
            checked_mul<uint64_t>(size, repo->stride, &data_bytes) &&
            checked_add<uint64_t>(data_bytes, uint64_t{size} * (i8 ? 5 : 1), &payload) &&
            checked_mul<uint64_t>(size, repo->config.keep_f32 ? uint64_t{repo->config.dim} * 4 : 0, &f32_bytes) &&
            checked_add<uint64_t>(payload, f32_bytes, &payload);
        KES_CORRUPT_IF(!ok || payload != get<uint64_t>(r, 16),
                       "library record %u: payload of %llu bytes, expected %llu", l,
                       static_cast<unsigned long long>(get<uint64_t>(r, 16)), static_cast<unsigned long long>(payload));
        KES_CORRUPT_IF(payload > s.remaining(), "truncated: library (%u, %u) needs %llu bytes, %llu left", id0, id1,
                       static_cast<unsigned long long>(payload), static_cast<unsigned long long>(s.remaining()));
        auto lib = std::make_unique<Library>();
        // Borrowed from a mapping when aligned for the element type (floats, f16 bits); else copied.
        const size_t align = repo->config.kind == KES_FV_PQ36 || i8 ? 1 : repo->config.storage == KES_F16 ? 2 : 4;
        uint8_t* dst = s.borrow(static_cast<size_t>(data_bytes), align);
        if (dst) {
            lib->data.borrow(dst, static_cast<size_t>(data_bytes));
            if (!repo->mapping) repo->mapping = s.mapping();
        } else {
            lib->data.reserve(static_cast<size_t>(data_bytes));
            dst = lib->data.extend_unchecked(static_cast<size_t>(data_bytes));
            s.read(dst, static_cast<size_t>(data_bytes));
        }
        uint32_t crc = crc32(dst, static_cast<size_t>(data_bytes));
        if (i8) {
            lib->scales.resize(size);
            s.read(lib->scales.data(), size_t{size} * 4);
            crc = crc32(lib->scales.data(), size_t{size} * 4, crc);
        }
        if (f32_bytes) {
            lib->f32.resize(static_cast<size_t>(f32_bytes / 4));
            s.read(lib->f32.data(), static_cast<size_t>(f32_bytes));
            crc = crc32(lib->f32.data(), static_cast<size_t>(f32_bytes), crc);
        }
        lib->alive.resize(size);
        s.read(lib->alive.data(), size);
        crc = crc32(lib->alive.data(), size, crc);
        KES_CORRUPT_IF(crc != get<uint32_t>(r, 24), "library (%u, %u): payload checksum mismatch", id0, id1);
        // A checksum only proves the bytes are the ones written; the values must also be ones a
        // writer could have produced, or a search could meet NaNs.
        uint32_t counted = 0;
        for (uint32_t i = 0; i < size; ++i) {
            KES_CORRUPT_IF(lib->alive[i] > 1, "library (%u, %u): alive flag %u of feature %u", id0, id1, lib->alive[i],
                           i);
            counted += lib->alive[i];
        }
        KES_CORRUPT_IF(counted != live, "library (%u, %u): %u live flags, record says %u", id0, id1, counted, live);
        if (i8)
            for (uint32_t i = 0; i < size; ++i)
                KES_CORRUPT_IF(!(std::isfinite(lib->scales[i]) && lib->scales[i] >= 0.f),
                               "library (%u, %u): int8 scale of feature %u is %g", id0, id1, i,
                               static_cast<double>(lib->scales[i]));
        for (size_t i = 0; i < lib->f32.size(); ++i)
            KES_CORRUPT_IF(!std::isfinite(lib->f32[i]), "library (%u, %u): f32 copy value %zu is not finite", id0, id1,
                           i);
        if (repo->config.kind == KES_FV_DENSE && repo->config.storage == KES_F32) {
            const float* x = reinterpret_cast<const float*>(lib->data.data());
            for (uint64_t i = 0; i < uint64_t{size} * repo->config.dim; ++i)
                KES_CORRUPT_IF(!std::isfinite(x[i]), "library (%u, %u): value %llu is not finite", id0, id1,
                               static_cast<unsigned long long>(i));
        }
        if (repo->config.kind == KES_FV_DENSE && repo->config.storage == KES_F16) {
            const uint16_t* x = reinterpret_cast<const uint16_t*>(lib->data.data());
            for (uint64_t i = 0; i < uint64_t{size} * repo->config.dim; ++i)
                KES_CORRUPT_IF((x[i] & 0x7C00u) == 0x7C00u, "library (%u, %u): f16 value %llu is not finite", id0, id1,
                               static_cast<unsigned long long>(i));
        }
        lib->size = size;
        lib->live = live;
        repo->live_total += live;
        repo->libraries.emplace(key, std::move(lib));
    }
    KES_CORRUPT_IF(repo->live_total != live_total, "header says %llu live features, libraries hold %llu",
                   static_cast<unsigned long long>(live_total), static_cast<unsigned long long>(repo->live_total));
    uint8_t e[kFooterBytes];
    take(s, e, sizeof e, "footer");
    KES_CORRUPT_IF(
        std::memcmp(e, kEndMagic, 8) != 0 || get<uint32_t>(e, 12) != crc32(e, 12) || get<uint32_t>(e, 8) != libraries,
        "bad footer");
    KES_CORRUPT_IF(s.remaining() != 0, "%llu unexpected bytes after the footer",
                   static_cast<unsigned long long>(s.remaining()));
    return repo;
}

}  // namespace

bool library_is_mapped(const kes_fv_repo* repo, uint32_t id0, uint32_t id1) {
    RwLock::Read lock(repo->lock);
    const auto it = repo->libraries.find(lib_key(id0, id1));
    return it != repo->libraries.end() && it->second->data.borrowed();
}

}  // namespace fv
}  // namespace kes

extern "C" {

kes_status kes_fv_repo_save(const kes_fv_repo* repo, const char* path) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(repo);
        KES_REQUIRE_NOT_NULL(path);
        KES_REQUIRE(path[0] != '\0', "path is empty");
        kes::fv::save(*repo, path);
        return KES_OK;
    });
}

kes_status kes_fv_repo_load(const char* path, kes_fv_repo** out_repo) {
    if (out_repo) *out_repo = nullptr;
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(path);
        KES_REQUIRE_NOT_NULL(out_repo);
        std::unique_ptr<kes::fv::Source> src = kes::fv::MappedSource::open(path);
        if (!src) src = std::make_unique<kes::fv::FileSource>(path);
        try {
            *out_repo = kes::fv::load(*src).release();
        } catch (const kes::Error& e) {
            if (e.status() != KES_ERR_CORRUPT_DATA) throw;
            KES_FAIL(KES_ERR_CORRUPT_DATA, "%s: %s", path, e.what());
        }
        return KES_OK;
    });
}

kes_status kes_fv_repo_load_memory(const void* data, size_t size, kes_fv_repo** out_repo) {
    if (out_repo) *out_repo = nullptr;
    return kes::guard(__func__, [&] {
        KES_REQUIRE(data != nullptr || size == 0, "data is NULL with size %zu", size);
        KES_REQUIRE_NOT_NULL(out_repo);
        kes::fv::MemorySource src(static_cast<const uint8_t*>(data), size);
        *out_repo = kes::fv::load(src).release();
        return KES_OK;
    });
}

}  // extern "C"
