// fv_repo.cpp — repository creation and the writers: add, delete, modify, delete_range (BOARD-RULES §aclfv).
//
// Writers validate and encode their input before taking the writer lock, so searches wait only for
// the copy into the store, and a refused call leaves the repository untouched.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <mutex>

#include "fv_internal.hpp"
#include "fv_repo.hpp"
#include "kes/error.hpp"
#include "kes/math.hpp"
#include "kes/struct_size.hpp"

using kes::fv::Library;

namespace kes {
namespace fv {
namespace {

constexpr size_t kConfigV1Size = offsetof(kes_fv_config, keep_f32);

void check_ids(uint32_t id0, uint32_t id1) {
    KES_REQUIRE(id0 <= KES_FV_ID_MAX, "id0 must be in [0, %u] (got %u)", KES_FV_ID_MAX, id0);
    KES_REQUIRE(id1 <= KES_FV_ID_MAX, "id1 must be in [0, %u] (got %u)", KES_FV_ID_MAX, id1);
}

// Encodes `count` caller records into the stored layout, checking every one first. `record0` is the
// index of the first record in the caller's batch, for messages.
struct Encoded {
    std::vector<uint8_t> bytes;
    std::vector<float> scales;
    std::vector<float> f32;  // keep_f32: the vectors as stored for re-ranking
};

void encode_dense(const kes_fv_repo& r, const float* x, uint8_t* dst, float* scale, float* f32, uint64_t record) {
    const uint32_t dim = r.config.dim;
    double norm2 = 0.0;
    for (uint32_t i = 0; i < dim; ++i) {
        KES_REQUIRE(std::isfinite(x[i]), "feature %llu value %u is not finite (%g)",
                    static_cast<unsigned long long>(record), i, static_cast<double>(x[i]));
        norm2 += static_cast<double>(x[i]) * x[i];
    }
    // Cosine stores the unit vector so a search is a plain inner product.
    std::vector<float> unit;
    if (r.config.metric == KES_FV_METRIC_COSINE) {
        unit.resize(dim);
        const double inv = norm2 > 0.0 ? 1.0 / std::sqrt(norm2) : 0.0;
        for (uint32_t i = 0; i < dim; ++i) unit[i] = static_cast<float>(x[i] * inv);
        x = unit.data();
    }
    if (f32) std::memcpy(f32, x, size_t{dim} * 4);
    switch (r.config.storage) {
        case KES_F32: std::memcpy(dst, x, size_t{dim} * 4); break;
        case KES_F16: {
            for (uint32_t i = 0; i < dim; ++i)
                KES_REQUIRE(std::fabs(x[i]) <= 65504.f,
                            "feature %llu value %u = %g is outside the f16 range ±65504 of this repository",
                            static_cast<unsigned long long>(record), i, static_cast<double>(x[i]));
            std::vector<uint16_t> h(dim);
            kes_fp16_from_f32(x, h.data(), dim);
            std::memcpy(dst, h.data(), size_t{dim} * 2);
            break;
        }
        case KES_I8: {
            // Symmetric per-vector scale (fv.h "Storage"): max|x| maps to ±127.
            float maxabs = 0.f;
            for (uint32_t i = 0; i < dim; ++i) maxabs = std::fmax(maxabs, std::fabs(x[i]));
            const float s = maxabs / 127.f;
            for (uint32_t i = 0; i < dim; ++i) {
                float c = s > 0.f ? std::nearbyint(x[i] / s) : 0.f;
                c = c > 127.f ? 127.f : c < -127.f ? -127.f : c;
                dst[i] = static_cast<uint8_t>(static_cast<int8_t>(c));
            }
            *scale = s;
            break;
        }
        default: KES_FAIL(KES_ERR_INTERNAL, "unexpected storage %d", static_cast<int>(r.config.storage));
    }
}

Encoded encode(const kes_fv_repo& r, const void* features, uint64_t count, uint64_t record0) {
    Encoded e;
    uint64_t total = 0;
    if (!checked_mul<uint64_t>(count, r.stride, &total) || total > SIZE_MAX / 2)
        KES_FAIL(KES_ERR_INVALID_ARGUMENT, "count %llu is too large", static_cast<unsigned long long>(count));
    e.bytes.resize(static_cast<size_t>(total));
    const uint8_t* src = static_cast<const uint8_t*>(features);
    if (r.config.kind == KES_FV_PQ36) {
        for (uint64_t j = 0; j < count; ++j) {
            const uint8_t* f = src + j * KES_FV_PQ36_BYTES;
            KES_REQUIRE(f[0] == 0 && f[1] == 0 && f[2] == 0 && f[3] == 0,
                        "feature %llu: the first %u bytes of a PQ36 feature must be 0 (got %02x %02x %02x %02x)",
                        static_cast<unsigned long long>(record0 + j), KES_FV_PQ36_HEADER_BYTES, f[0], f[1], f[2], f[3]);
            std::memcpy(e.bytes.data() + j * 32, f + KES_FV_PQ36_HEADER_BYTES, 32);
        }
        return e;
    }
    if (r.config.storage == KES_I8) e.scales.resize(static_cast<size_t>(count));
    if (r.config.keep_f32) e.f32.resize(static_cast<size_t>(count) * r.config.dim);
    // The caller's floats may be unaligned (any byte buffer); copy one record at a time.
    std::vector<float> rec(r.config.dim);
    for (uint64_t j = 0; j < count; ++j) {
        std::memcpy(rec.data(), src + j * r.feature_bytes, r.feature_bytes);
        encode_dense(r, rec.data(), e.bytes.data() + j * r.stride,
                     e.scales.empty() ? nullptr : &e.scales[static_cast<size_t>(j)],
                     e.f32.empty() ? nullptr : &e.f32[static_cast<size_t>(j) * r.config.dim], record0 + j);
    }
    return e;
}

Library* find_library(const kes_fv_repo& r, uint32_t id0, uint32_t id1) {
    const auto it = r.libraries.find(lib_key(id0, id1));
    return it == r.libraries.end() ? nullptr : it->second.get();
}

Library& existing_feature(const kes_fv_repo& r, uint32_t id0, uint32_t id1, uint32_t offset) {
    Library* lib = find_library(r, id0, id1);
    if (!lib) KES_FAIL(KES_ERR_NOT_FOUND, "library (id0 %u, id1 %u) does not exist", id0, id1);
    if (offset >= lib->size)
        KES_FAIL(KES_ERR_NOT_FOUND, "offset %u is past the end of library (id0 %u, id1 %u) of size %u", offset, id0,
                 id1, lib->size);
    if (!lib->alive[offset])
        KES_FAIL(KES_ERR_NOT_FOUND, "feature (id0 %u, id1 %u, offset %u) was deleted", id0, id1, offset);
    return *lib;
}

}  // namespace

std::vector<float> stored_vector(const kes_fv_repo* repo, uint32_t id0, uint32_t id1, uint32_t offset) {
    RwLock::Read lock(repo->lock);
    const Library& lib = existing_feature(*repo, id0, id1, offset);
    const uint8_t* p = lib.data.data() + size_t{offset} * repo->stride;
    std::vector<float> v;
    if (repo->config.kind == KES_FV_PQ36) {
        for (size_t m = 0; m < 32; ++m) v.push_back(p[m]);
        return v;
    }
    const uint32_t dim = repo->config.dim;
    v.resize(dim);
    switch (repo->config.storage) {
        case KES_F32: std::memcpy(v.data(), p, size_t{dim} * 4); break;
        case KES_F16: {
            std::vector<uint16_t> h(dim);
            std::memcpy(h.data(), p, size_t{dim} * 2);
            kes_fp16_to_f32(h.data(), v.data(), dim);
            break;
        }
        default:
            for (uint32_t i = 0; i < dim; ++i)
                v[i] = static_cast<float>(static_cast<int8_t>(p[i])) * lib.scales[offset];
            break;
    }
    return v;
}

std::vector<LibraryInfo> library_list(const kes_fv_repo* repo) {
    RwLock::Read lock(repo->lock);
    std::vector<LibraryInfo> out;
    out.reserve(repo->libraries.size());
    for (const auto& kv : repo->libraries)
        out.push_back({key_id0(kv.first), key_id1(kv.first), kv.second->size, kv.second->live});
    return out;
}

}  // namespace fv
}  // namespace kes

using namespace kes::fv;

extern "C" {

void kes_fv_config_init(kes_fv_config* config) {
    if (!config) return;
    *config = kes_fv_config{};
    config->struct_size = sizeof(kes_fv_config);
    config->kind = KES_FV_PQ36;
    config->storage = KES_F32;
    config->metric = KES_FV_METRIC_IP;
    config->max_topk = KES_FV_TOPK_DEFAULT_MAX;
}

kes_status kes_fv_repo_create(const kes_fv_config* config, kes_fv_repo** out_repo) {
    if (out_repo) *out_repo = nullptr;
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(config);
        KES_REQUIRE_NOT_NULL(out_repo);
        auto repo = std::make_unique<kes_fv_repo>();
        kes_fv_config c;
        kes_fv_config_init(&c);
        kes::read_struct(config, kConfigV1Size, "config", "kes_fv_config", &c);
        const int64_t kind = kes::enum_value(c.kind);
        KES_REQUIRE(kind == KES_FV_PQ36 || kind == KES_FV_DENSE,
                    "config->kind must be KES_FV_PQ36 (0) or KES_FV_DENSE (1) (got %lld)",
                    static_cast<long long>(kind));
        KES_REQUIRE(c.max_topk >= 1 && c.max_topk <= KES_FV_TOPK_LIMIT, "config->max_topk must be in [1, %u] (got %u)",
                    KES_FV_TOPK_LIMIT, c.max_topk);
        if (kind == KES_FV_PQ36) {
            repo->stride = 32;
            repo->feature_bytes = KES_FV_PQ36_BYTES;
            repo->query_floats = KES_FV_PQ36_TABLE_FLOATS;
            repo->larger_is_closer = false;  // ADC distance, ascending (BOARD-RULES §aclfv)
            KES_REQUIRE(c.keep_f32 == 0, "config->keep_f32 is for dense f16/int8 repositories, not PQ36");
            c.dim = 0;
            c.storage = KES_U8;
        } else {
            const int64_t metric = kes::enum_value(c.metric);
            const int64_t storage = kes::enum_value(c.storage);
            KES_REQUIRE(c.dim >= 1 && c.dim <= KES_FV_DIM_MAX,
                        "config->dim must be in [1, %u] for dense features (got %u)", KES_FV_DIM_MAX, c.dim);
            KES_REQUIRE(metric == KES_FV_METRIC_IP || metric == KES_FV_METRIC_COSINE || metric == KES_FV_METRIC_L2,
                        "config->metric must be KES_FV_METRIC_IP, _COSINE or _L2 (got %lld)",
                        static_cast<long long>(metric));
            KES_REQUIRE(storage == KES_F32 || storage == KES_F16 || storage == KES_I8,
                        "config->storage must be KES_F32, KES_F16 or KES_I8 for dense features (got %lld)",
                        static_cast<long long>(storage));
            KES_REQUIRE(c.keep_f32 <= 1, "config->keep_f32 must be 0 or 1 (got %u)", c.keep_f32);
            KES_REQUIRE(!c.keep_f32 || storage == KES_F16 || storage == KES_I8,
                        "config->keep_f32 is for f16 or int8 storage (f32 storage is exact already)");
            repo->stride = size_t{c.dim} * kes_dtype_size(c.storage);
            repo->feature_bytes = size_t{c.dim} * 4;
            repo->query_floats = c.dim;
            repo->larger_is_closer = metric != KES_FV_METRIC_L2;
        }
        repo->config = c;
        if (c.capacity_hint > 0) {
            const uint64_t n = c.capacity_hint < UINT32_MAX ? c.capacity_hint : UINT32_MAX;
            uint64_t bytes = 0;
            if (!kes::checked_mul<uint64_t>(n, repo->stride, &bytes) || bytes > SIZE_MAX / 2)
                KES_FAIL(KES_ERR_OUT_OF_MEMORY, "capacity_hint %llu features cannot be reserved",
                         static_cast<unsigned long long>(c.capacity_hint));
            auto lib = std::make_unique<Library>();
            lib->data.reserve(static_cast<size_t>(bytes));
            lib->alive.reserve(static_cast<size_t>(n));
            if (c.storage == KES_I8) lib->scales.reserve(static_cast<size_t>(n));
            repo->reserved = std::move(lib);
        }
        *out_repo = repo.release();
        return KES_OK;
    });
}

void kes_fv_repo_destroy(kes_fv_repo* repo) {
    std::unique_ptr<kes_fv_repo> owned(repo);
}

kes_status kes_fv_repo_get_config(const kes_fv_repo* repo, kes_fv_config* out_config) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(repo);
        KES_REQUIRE_NOT_NULL(out_config);
        if (out_config->struct_size == 0) out_config->struct_size = sizeof(kes_fv_config);  // fv.h: "else sizeof"
        kes::check_out_struct(out_config, kConfigV1Size, "out_config", "kes_fv_config");
        kes::write_struct(repo->config, out_config);
        return KES_OK;
    });
}

kes_status kes_fv_repo_feature_bytes(const kes_fv_repo* repo, size_t* out_bytes) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(repo);
        KES_REQUIRE_NOT_NULL(out_bytes);
        *out_bytes = repo->feature_bytes;
        return KES_OK;
    });
}

kes_status kes_fv_repo_query_floats(const kes_fv_repo* repo, size_t* out_floats) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(repo);
        KES_REQUIRE_NOT_NULL(out_floats);
        *out_floats = repo->query_floats;
        return KES_OK;
    });
}

kes_status kes_fv_repo_larger_is_closer(const kes_fv_repo* repo, int* out_larger_is_closer) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(repo);
        KES_REQUIRE_NOT_NULL(out_larger_is_closer);
        *out_larger_is_closer = repo->larger_is_closer ? 1 : 0;
        return KES_OK;
    });
}

kes_status kes_fv_repo_add(kes_fv_repo* repo, uint32_t id0, uint32_t id1, uint32_t offset, const void* features,
                           uint64_t count, size_t features_bytes) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(repo);
        check_ids(id0, id1);
        KES_REQUIRE(count == 0 || features != nullptr, "features is NULL with count %llu",
                    static_cast<unsigned long long>(count));
        uint64_t expect = 0;
        KES_REQUIRE(kes::checked_mul<uint64_t>(count, repo->feature_bytes, &expect) && expect == features_bytes,
                    "features_bytes must be count × %zu = %llu (got %zu)", repo->feature_bytes,
                    static_cast<unsigned long long>(expect), features_bytes);
        KES_REQUIRE(count <= UINT32_MAX, "count %llu exceeds the library limit of %u features",
                    static_cast<unsigned long long>(count), UINT32_MAX);
        if (count == 0) {
            RwLock::Read lock(repo->lock);
            const Library* lib = find_library(*repo, id0, id1);
            const uint32_t size = lib ? lib->size : 0;
            KES_REQUIRE(offset == size, "offset must equal the size of library (id0 %u, id1 %u): expected %u, got %u",
                        id0, id1, size, offset);
            return KES_OK;
        }
        Encoded e = encode(*repo, features, count, 0);

        RwLock::Write lock(repo->lock);
        Library* lib = find_library(*repo, id0, id1);
        const uint32_t size = lib ? lib->size : 0;
        KES_REQUIRE(offset == size, "offset must equal the size of library (id0 %u, id1 %u): expected %u, got %u", id0,
                    id1, size, offset);
        KES_REQUIRE(uint64_t{size} + count <= UINT32_MAX,
                    "library (id0 %u, id1 %u) would grow past %u features (size %u + count %llu)", id0, id1, UINT32_MAX,
                    size, static_cast<unsigned long long>(count));
        std::unique_ptr<Library> fresh;
        if (!lib) {
            fresh = repo->reserved ? std::move(repo->reserved) : std::make_unique<Library>();
            lib = fresh.get();
        }
        // Make all room first: a std::bad_alloc here leaves the library as it was.
        const size_t n = static_cast<size_t>(count);
        try {
            lib->data.grow_for(e.bytes.size());
            grow_vector_for(lib->alive, n);
            if (!e.scales.empty()) grow_vector_for(lib->scales, n);
            if (!e.f32.empty()) grow_vector_for(lib->f32, e.f32.size());
            if (fresh) repo->libraries.emplace(lib_key(id0, id1), nullptr);
            // Last step that can fail: from here on the add cannot, so the log holds exactly the adds made.
            log_append(*repo, LogOp::kAdd, id0, id1, offset, 0, count, features, features_bytes);
        } catch (...) {
            if (fresh) {
                const auto it = repo->libraries.find(lib_key(id0, id1));
                if (it != repo->libraries.end() && !it->second) repo->libraries.erase(it);
                if (!repo->reserved) repo->reserved = std::move(fresh);
            }
            throw;
        }
        lib->data.append_unchecked(e.bytes.data(), e.bytes.size());
        lib->alive.insert(lib->alive.end(), n, uint8_t{1});
        if (!e.scales.empty()) lib->scales.insert(lib->scales.end(), e.scales.begin(), e.scales.end());
        if (!e.f32.empty()) lib->f32.insert(lib->f32.end(), e.f32.begin(), e.f32.end());
        lib->size += static_cast<uint32_t>(count);
        lib->live += static_cast<uint32_t>(count);
        repo->live_total += count;
        if (fresh) repo->libraries[lib_key(id0, id1)] = std::move(fresh);
        return KES_OK;
    });
}

kes_status kes_fv_repo_delete(kes_fv_repo* repo, uint32_t id0, uint32_t id1, uint32_t offset) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(repo);
        check_ids(id0, id1);
        RwLock::Write lock(repo->lock);
        Library& lib = existing_feature(*repo, id0, id1, offset);
        log_append(*repo, LogOp::kDelete, id0, id1, offset, 0, 0, nullptr, 0);
        lib.alive[offset] = 0;
        lib.live -= 1;
        repo->live_total -= 1;
        return KES_OK;
    });
}

kes_status kes_fv_repo_modify(kes_fv_repo* repo, uint32_t id0, uint32_t id1, uint32_t offset, const void* feature,
                              size_t feature_bytes) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(repo);
        check_ids(id0, id1);
        KES_REQUIRE_NOT_NULL(feature);
        KES_REQUIRE(feature_bytes == repo->feature_bytes, "feature_bytes must be %zu for this repository (got %zu)",
                    repo->feature_bytes, feature_bytes);
        Encoded e = encode(*repo, feature, 1, 0);
        RwLock::Write lock(repo->lock);
        Library& lib = existing_feature(*repo, id0, id1, offset);
        log_append(*repo, LogOp::kModify, id0, id1, offset, 0, 1, feature, feature_bytes);
        std::memcpy(lib.data.data() + size_t{offset} * repo->stride, e.bytes.data(), repo->stride);
        if (!e.scales.empty()) lib.scales[offset] = e.scales[0];
        if (!e.f32.empty()) std::copy(e.f32.begin(), e.f32.end(), lib.f32.begin() + size_t{offset} * repo->config.dim);
        return KES_OK;
    });
}

kes_status kes_fv_repo_delete_range(kes_fv_repo* repo, const kes_fv_range* range, uint32_t* out_deleted) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(repo);
        KES_REQUIRE_NOT_NULL(range);
        KES_REQUIRE(range->id0_min <= range->id0_max && range->id0_max <= KES_FV_ID_MAX,
                    "range must have id0_min <= id0_max <= %u (got %u..%u)", KES_FV_ID_MAX, range->id0_min,
                    range->id0_max);
        KES_REQUIRE(range->id1_min <= range->id1_max && range->id1_max <= KES_FV_ID_MAX,
                    "range must have id1_min <= id1_max <= %u (got %u..%u)", KES_FV_ID_MAX, range->id1_min,
                    range->id1_max);
        RwLock::Write lock(repo->lock);
        log_append(*repo, LogOp::kDeleteRange, range->id0_min, range->id0_max, range->id1_min, range->id1_max, 0,
                   nullptr, 0);
        uint32_t deleted = 0;
        auto it = repo->libraries.lower_bound(lib_key(range->id0_min, range->id1_min));
        const auto end = repo->libraries.upper_bound(lib_key(range->id0_max, range->id1_max));
        while (it != end) {
            const uint32_t id1 = key_id1(it->first);
            if (id1 < range->id1_min || id1 > range->id1_max) {
                ++it;
                continue;
            }
            repo->live_total -= it->second->live;
            it = repo->libraries.erase(it);
            ++deleted;
        }
        if (out_deleted) *out_deleted = deleted;
        return KES_OK;
    });
}

kes_status kes_fv_repo_library_size(const kes_fv_repo* repo, uint32_t id0, uint32_t id1, uint32_t* out_size) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(repo);
        check_ids(id0, id1);
        KES_REQUIRE_NOT_NULL(out_size);
        RwLock::Read lock(repo->lock);
        const Library* lib = find_library(*repo, id0, id1);
        *out_size = lib ? lib->size : 0;
        return KES_OK;
    });
}

kes_status kes_fv_repo_count(const kes_fv_repo* repo, uint64_t* out_live_features, uint32_t* out_libraries) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(repo);
        RwLock::Read lock(repo->lock);
        if (out_live_features) *out_live_features = repo->live_total;
        if (out_libraries) *out_libraries = static_cast<uint32_t>(repo->libraries.size());
        return KES_OK;
    });
}

}  // extern "C"
