// fv_export.cpp — FAISS index files from a repository (issue 6 §8; mapping documented in fv.h).
//
// The layout is FAISS's own serialisation (faiss/impl/index_write.cpp of FAISS 1.7.3), every field
// little-endian in its C++ size, no padding:
//   fourcc u32               "IxFI" IndexFlatIP, "IxF2" IndexFlatL2, "IxPq" IndexPQ (chars 0..3 in
//                            bytes 0..3)
//   index header             d i32 | ntotal i64 | two unused i64 (1 << 20) | is_trained u8 |
//                            metric_type i32 (0 = inner product, 1 = L2)
//   IndexFlat body           u64 count of 4-byte words (= ntotal × d) | ntotal × d f32
//   IndexPQ body             ProductQuantizer: d u64 | M u64 | nbits u64 | u64 count | M × 2^nbits ×
//                            (d/M) f32 centroids; codes: u64 count | ntotal × M u8;
//                            search_type i32 (0 = ST_PQ) | encode_signs u8 | polysemous_ht i32
// Written through kes::AtomicFile (kes/file.hpp), so an interrupted export leaves the previous file.
#include <algorithm>
#include <cstring>
#include <vector>

#include "fv_repo.hpp"
#include "kes/error.hpp"
#include "kes/file.hpp"
#include "kestrel/tensor.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "FAISS files are written in the host's byte order, which FAISS readers expect little-endian here"
#endif

namespace kes {
namespace fv {
namespace {

constexpr uint32_t fourcc(const char (&s)[5]) {
    return uint32_t(uint8_t(s[0])) | uint32_t(uint8_t(s[1])) << 8 | uint32_t(uint8_t(s[2])) << 16 |
           uint32_t(uint8_t(s[3])) << 24;
}

// Buffers small writes into ~1 MB blocks for kes::AtomicFile.
class Writer {
public:
    explicit Writer(AtomicFile& f) : f_(f) { buf_.reserve(kBlock); }
    template <class T>
    void put(T v) {
        bytes(&v, sizeof v);
    }
    void bytes(const void* p, size_t n) {
        const uint8_t* b = static_cast<const uint8_t*>(p);
        if (buf_.size() + n > kBlock) flush();
        if (n >= kBlock) {
            f_.write(b, n);
            return;
        }
        buf_.insert(buf_.end(), b, b + n);
    }
    void flush() {
        if (!buf_.empty()) f_.write(buf_.data(), buf_.size());
        buf_.clear();
    }

private:
    static constexpr size_t kBlock = size_t{1} << 20;
    AtomicFile& f_;
    std::vector<uint8_t> buf_;
};

bool in_range(uint32_t key, const kes_fv_range& r) {
    const uint32_t id0 = key_id0(key), id1 = key_id1(key);
    return id0 >= r.id0_min && id0 <= r.id0_max && id1 >= r.id1_min && id1 <= r.id1_max;
}

void check_range(const kes_fv_range& r) {
    KES_REQUIRE(r.id0_min <= r.id0_max && r.id0_max <= KES_FV_ID_MAX,
                "range must have id0_min <= id0_max <= %u (got %u..%u)", KES_FV_ID_MAX, r.id0_min, r.id0_max);
    KES_REQUIRE(r.id1_min <= r.id1_max && r.id1_max <= KES_FV_ID_MAX,
                "range must have id1_min <= id1_max <= %u (got %u..%u)", KES_FV_ID_MAX, r.id1_min, r.id1_max);
}

uint64_t count_live(const kes_fv_repo& repo, const kes_fv_range& r) {
    uint64_t n = 0;
    for (const auto& kv : repo.libraries)
        if (in_range(kv.first, r)) n += kv.second->live;
    return n;
}

void write_header(Writer& w, uint32_t magic, int32_t d, int64_t ntotal, int32_t metric) {
    w.put<uint32_t>(magic);
    w.put<int32_t>(d);
    w.put<int64_t>(ntotal);
    w.put<int64_t>(int64_t{1} << 20);  // unused by FAISS readers; its writer puts 1 << 20
    w.put<int64_t>(int64_t{1} << 20);
    w.put<uint8_t>(1);  // is_trained
    w.put<int32_t>(metric);
}

// The vectors of features [begin, begin + n) of `lib` as float, exactly as the scan kernels widen them.
void widen(const kes_fv_repo& repo, const Library& lib, uint32_t begin, uint32_t n, float* out) {
    const size_t dim = repo.config.dim;
    const uint8_t* p = lib.data.data() + size_t{begin} * repo.stride;
    switch (repo.config.storage) {
        case KES_F32: std::memcpy(out, p, size_t{n} * dim * 4); break;
        case KES_F16: kes_fp16_to_f32(reinterpret_cast<const uint16_t*>(p), out, size_t{n} * dim); break;
        default:
            for (uint32_t j = 0; j < n; ++j) {
                const int8_t* x = reinterpret_cast<const int8_t*>(p) + size_t{j} * dim;
                const float s = lib.scales[begin + j];
                for (size_t i = 0; i < dim; ++i) out[size_t{j} * dim + i] = static_cast<float>(x[i]) * s;
            }
            break;
    }
}

uint64_t export_faiss(const kes_fv_repo& repo, const kes_fv_range& range, const std::string& path,
                      kes_fv_feature_id* ids, uint64_t ids_capacity, uint64_t* out_count) {
    RwLock::Read lock(repo.lock);
    const uint64_t n = count_live(repo, range);
    if (out_count) *out_count = n;
    KES_REQUIRE(!ids || ids_capacity >= n, "ids_capacity must be >= %llu, the live features in range (got %llu)",
                static_cast<unsigned long long>(n), static_cast<unsigned long long>(ids_capacity));
    const bool pq = repo.config.kind == KES_FV_PQ36;
    if (pq && repo.pq_dim == 0)
        KES_FAIL(KES_ERR_NOT_FOUND,
                 "a PQ36 repository exports as a FAISS IndexPQ only with its codebook (kes_fv_repo_set_pq)");
    const uint32_t dim = pq ? repo.pq_dim : repo.config.dim;

    AtomicFile file(path);
    Writer w(file);
    if (pq) {
        write_header(w, fourcc("IxPq"), static_cast<int32_t>(dim), static_cast<int64_t>(n), 1);
        w.put<uint64_t>(dim);
        w.put<uint64_t>(KES_FV_PQ36_SUBSPACES);
        w.put<uint64_t>(8);
        w.put<uint64_t>(repo.pq_codebook.size());
        w.bytes(repo.pq_codebook.data(), repo.pq_codebook.size() * 4);
        w.put<uint64_t>(n * KES_FV_PQ36_SUBSPACES);
    } else {
        const bool l2 = repo.config.metric == KES_FV_METRIC_L2;
        write_header(w, fourcc(l2 ? "IxF2" : "IxFI"), static_cast<int32_t>(dim), static_cast<int64_t>(n), l2 ? 1 : 0);
        w.put<uint64_t>(n * dim);
    }
    constexpr uint32_t kChunk = 1024;
    std::vector<float> rows(pq ? 0 : size_t{kChunk} * dim);
    uint64_t label = 0;
    for (const auto& kv : repo.libraries) {
        if (!in_range(kv.first, range)) continue;
        const Library& lib = *kv.second;
        for (uint32_t b = 0; b < lib.size; b += kChunk) {
            const uint32_t m = std::min(kChunk, lib.size - b);
            const uint8_t* codes = lib.data.data() + size_t{b} * repo.stride;
            if (!pq) widen(repo, lib, b, m, rows.data());
            for (uint32_t j = 0; j < m; ++j) {
                if (!lib.alive[b + j]) continue;
                if (pq)
                    w.bytes(codes + size_t{j} * repo.stride, KES_FV_PQ36_SUBSPACES);
                else
                    w.bytes(rows.data() + size_t{j} * dim, size_t{dim} * 4);
                if (ids) ids[label] = {key_id0(kv.first), key_id1(kv.first), b + j};
                ++label;
            }
        }
    }
    if (pq) {
        w.put<int32_t>(0);                                                    // search_type ST_PQ
        w.put<uint8_t>(0);                                                    // encode_signs
        w.put<int32_t>(static_cast<int32_t>(KES_FV_PQ36_SUBSPACES * 8 + 1));  // polysemous_ht: FAISS's default
    }
    w.flush();
    file.commit();
    return n;
}

}  // namespace
}  // namespace fv
}  // namespace kes

extern "C" {

kes_status kes_fv_repo_count_range(const kes_fv_repo* repo, const kes_fv_range* range, uint64_t* out_live) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(repo);
        KES_REQUIRE_NOT_NULL(range);
        KES_REQUIRE_NOT_NULL(out_live);
        kes::fv::check_range(*range);
        kes::fv::RwLock::Read lock(repo->lock);
        *out_live = kes::fv::count_live(*repo, *range);
        return KES_OK;
    });
}

kes_status kes_fv_repo_export_faiss(const kes_fv_repo* repo, const kes_fv_range* range, const char* path,
                                    kes_fv_feature_id* ids, uint64_t ids_capacity, uint64_t* out_count) {
    if (out_count) *out_count = 0;
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(repo);
        KES_REQUIRE_NOT_NULL(path);
        KES_REQUIRE(path[0] != '\0', "path is empty");
        const kes_fv_range all{0, KES_FV_ID_MAX, 0, KES_FV_ID_MAX};
        if (range) kes::fv::check_range(*range);
        kes::fv::export_faiss(*repo, range ? *range : all, path, ids, ids_capacity, out_count);
        return KES_OK;
    });
}

}  // extern "C"
