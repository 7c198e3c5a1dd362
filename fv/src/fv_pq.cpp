// fv_pq.cpp — PQ tools (issue 6 §4): 32 × 256 product quantiser training, PQ36 encoding, ADC tables.
//
// Reproducibility across runs, thread counts and CPUs (fv.h "PQ tools") rests on three things:
//   - SplitMix64 below, not std::*_distribution, whose outputs differ between standard libraries;
//   - every sum has a fixed sequential order (no reduction is split across threads: the threads own
//     whole sub-spaces or whole vectors);
//   - this file is compiled with -ffp-contract=off (fv/CMakeLists.txt), because GCC fuses a·b + c
//     into an FMA on aarch64 by default and not on baseline x86-64, which changes the last bits.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "fv_repo.hpp"
#include "kes/error.hpp"
#include "kes/math.hpp"
#include "kes/struct_size.hpp"
#include "kestrel/thread_pool.h"

namespace kes {
namespace fv {
namespace {

constexpr uint32_t kM = KES_FV_PQ36_SUBSPACES;
constexpr uint32_t kK = KES_FV_PQ36_CENTROIDS;

class SplitMix64 {
public:
    explicit SplitMix64(uint64_t seed) : s_(seed) {}
    uint64_t next() noexcept {
        uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
    uint64_t below(uint64_t n) noexcept { return next() % n; }                           // bias < n / 2^64

private:
    uint64_t s_;
};

inline float sqdist(const float* a, const float* b, uint32_t d) noexcept {
    float acc = 0.f;
    for (uint32_t j = 0; j < d; ++j) {
        const float t = a[j] - b[j];
        acc += t * t;
    }
    return acc;
}

// Nearest of the 256 centroids (ties: lowest index).
inline uint32_t nearest(const float* x, const float* centroids, uint32_t d, float* out_dist) noexcept {
    uint32_t best = 0;
    float bd = sqdist(x, centroids, d);
    for (uint32_t c = 1; c < kK; ++c) {
        const float dc = sqdist(x, centroids + size_t{c} * d, d);
        if (dc < bd) {
            bd = dc;
            best = c;
        }
    }
    if (out_dist) *out_dist = bd;
    return best;
}

// k-means on n points of d floats (contiguous) into 256 centroids. Allocates nothing that can fail
// after the caller's buffers: all scratch is passed in.
struct KmeansScratch {
    std::vector<float> mind;
    std::vector<uint32_t> assign;
    std::vector<double> sums;
    std::vector<uint32_t> counts;
};

void kmeans(const float* x, size_t n, uint32_t d, uint32_t iterations, uint64_t seed, float* cent,
            KmeansScratch& s) noexcept {
    SplitMix64 rng(seed);
    // k-means++ seeding: each next centroid drawn with probability ∝ squared distance to the nearest one.
    std::memcpy(cent, x + rng.below(n) * d, size_t{d} * 4);
    for (size_t i = 0; i < n; ++i) s.mind[i] = sqdist(x + i * d, cent, d);
    for (uint32_t c = 1; c < kK; ++c) {
        double total = 0.0;
        for (size_t i = 0; i < n; ++i) total += s.mind[i];
        size_t pick = 0;
        if (total > 0.0) {
            const double r = rng.uniform() * total;
            double cum = 0.0;
            pick = n;
            size_t last_positive = 0;
            for (size_t i = 0; i < n; ++i) {
                if (s.mind[i] <= 0.f) continue;
                last_positive = i;
                cum += s.mind[i];
                if (cum > r) {
                    pick = i;
                    break;
                }
            }
            if (pick == n) pick = last_positive;  // r landed past the last partial sum by rounding
        } else {
            pick = rng.below(n);  // fewer distinct points than centroids: duplicates are harmless
        }
        float* cc = cent + size_t{c} * d;
        std::memcpy(cc, x + pick * d, size_t{d} * 4);
        for (size_t i = 0; i < n; ++i) s.mind[i] = std::min(s.mind[i], sqdist(x + i * d, cc, d));
    }
    // Lloyd iterations; s.mind now holds each point's distance to its assigned centroid.
    std::fill(s.assign.begin(), s.assign.end(), UINT32_MAX);
    for (uint32_t it = 0; it < iterations; ++it) {
        size_t changed = 0;
        for (size_t i = 0; i < n; ++i) {
            const uint32_t a = nearest(x + i * d, cent, d, &s.mind[i]);
            changed += a != s.assign[i];
            s.assign[i] = a;
        }
        if (changed == 0) break;  // converged: the centroids would not move
        std::fill(s.sums.begin(), s.sums.end(), 0.0);
        std::fill(s.counts.begin(), s.counts.end(), 0u);
        for (size_t i = 0; i < n; ++i) {
            double* sum = s.sums.data() + size_t{s.assign[i]} * d;
            for (uint32_t j = 0; j < d; ++j) sum[j] += x[i * d + j];
            ++s.counts[s.assign[i]];
        }
        // An empty cluster takes the point worst served by a cluster that can spare one.
        for (uint32_t c = 0; c < kK; ++c) {
            if (s.counts[c] != 0) continue;
            size_t far = n;
            for (size_t i = 0; i < n; ++i)
                if (s.counts[s.assign[i]] > 1 && (far == n || s.mind[i] > s.mind[far])) far = i;
            if (far == n) break;  // every point is alone in its cluster: n ≤ clusters in use
            const uint32_t from = s.assign[far];
            double* fs = s.sums.data() + size_t{from} * d;
            double* ts = s.sums.data() + size_t{c} * d;
            for (uint32_t j = 0; j < d; ++j) {
                fs[j] -= x[far * d + j];
                ts[j] = x[far * d + j];
            }
            --s.counts[from];
            s.counts[c] = 1;
            s.assign[far] = c;
            s.mind[far] = 0.f;
        }
        for (uint32_t c = 0; c < kK; ++c) {
            if (s.counts[c] == 0) continue;  // keeps its seed position
            for (uint32_t j = 0; j < d; ++j)
                cent[size_t{c} * d + j] = static_cast<float>(s.sums[size_t{c} * d + j] / s.counts[c]);
        }
    }
}

struct TrainJob {
    const std::vector<float>* sub;  // kM blocks of n × dsub
    size_t n;
    uint32_t dsub;
    uint32_t iterations;
    uint64_t seed;
    std::vector<float>* codebook;
    std::vector<KmeansScratch>* scratch;  // one per worker
};

void train_range(void* user, uint64_t begin, uint64_t end, uint32_t worker) {
    TrainJob& j = *static_cast<TrainJob*>(user);
    for (uint64_t m = begin; m < end; ++m) {
        // Sub-space seeds are independent of the thread that runs them.
        SplitMix64 mix(j.seed ^ (0xD1B54A32D192ED03ull * (m + 1)));
        kmeans(j.sub->data() + m * j.n * j.dsub, j.n, j.dsub, j.iterations, mix.next(),
               j.codebook->data() + m * kK * j.dsub, (*j.scratch)[worker]);
    }
}

void require_trained(const kes_fv_pq& pq) {
    KES_REQUIRE(!pq.codebook.empty(), "pq is not trained (call kes_fv_pq_train or kes_fv_pq_set_codebook)");
}

void require_finite(const float* x, size_t n, const char* what) {
    for (size_t i = 0; i < n; ++i)
        KES_REQUIRE(std::isfinite(x[i]), "%s value %zu is not finite (%g)", what, i, static_cast<double>(x[i]));
}

size_t checked_floats(uint64_t count, uint32_t dim) {
    uint64_t n = 0;
    KES_REQUIRE(checked_mul<uint64_t>(count, dim, &n) && n <= SIZE_MAX / 8, "count %llu is too large",
                static_cast<unsigned long long>(count));
    return static_cast<size_t>(n);
}

void encode_one(const kes_fv_pq& pq, const float* x, uint8_t* code) noexcept {
    std::memset(code, 0, KES_FV_PQ36_HEADER_BYTES);
    for (uint32_t m = 0; m < kM; ++m)
        code[KES_FV_PQ36_HEADER_BYTES + m] = static_cast<uint8_t>(
            nearest(x + size_t{m} * pq.dsub, pq.codebook.data() + size_t{m} * kK * pq.dsub, pq.dsub, nullptr));
}

struct EncodeJob {
    const kes_fv_pq* pq;
    const float* x;
    uint8_t* codes;
};

void encode_range(void* user, uint64_t begin, uint64_t end, uint32_t) {
    const EncodeJob& j = *static_cast<const EncodeJob*>(user);
    for (uint64_t i = begin; i < end; ++i) encode_one(*j.pq, j.x + i * j.pq->dim, j.codes + i * KES_FV_PQ36_BYTES);
}

}  // namespace
}  // namespace fv
}  // namespace kes

using namespace kes::fv;

extern "C" {

void kes_fv_pq_train_params_init(kes_fv_pq_train_params* params) {
    if (!params) return;
    *params = kes_fv_pq_train_params{};
    params->struct_size = sizeof(kes_fv_pq_train_params);
    params->iterations = 25;
    params->seed = 1;
    params->max_training_vectors = 65536;
}

kes_status kes_fv_pq_create(uint32_t dim, kes_fv_pq** out_pq) {
    if (out_pq) *out_pq = nullptr;
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_pq);
        KES_REQUIRE(dim % kM == 0 && dim >= kM && dim <= KES_FV_DIM_MAX,
                    "dim must be a multiple of 32 in [32, %u] (32 equal sub-spaces, one per PQ36 code) (got %u)",
                    KES_FV_DIM_MAX, dim);
        auto pq = std::make_unique<kes_fv_pq>();
        pq->dim = dim;
        pq->dsub = dim / kM;
        *out_pq = pq.release();
        return KES_OK;
    });
}

void kes_fv_pq_destroy(kes_fv_pq* pq) {
    std::unique_ptr<kes_fv_pq> owned(pq);
}

kes_status kes_fv_pq_train(kes_fv_pq* pq, const float* vectors, uint64_t count, size_t vectors_floats,
                           const kes_fv_pq_train_params* params) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(pq);
        KES_REQUIRE_NOT_NULL(vectors);
        kes_fv_pq_train_params p;
        kes_fv_pq_train_params_init(&p);
        if (params)
            kes::read_struct(params, KES_STRUCT_SIZE_THROUGH(kes_fv_pq_train_params, max_training_vectors), "params",
                             "kes_fv_pq_train_params", &p);
        KES_REQUIRE(p.iterations >= 1 && p.iterations <= 1000, "params->iterations must be in [1, 1000] (got %u)",
                    p.iterations);
        KES_REQUIRE(p.max_training_vectors >= KES_FV_PQ_TRAIN_MIN,
                    "params->max_training_vectors must be at least %u (got %llu)", KES_FV_PQ_TRAIN_MIN,
                    static_cast<unsigned long long>(p.max_training_vectors));
        KES_REQUIRE(count >= KES_FV_PQ_TRAIN_MIN,
                    "needs at least %u training vectors (one per centroid of each sub-space), got %llu",
                    KES_FV_PQ_TRAIN_MIN, static_cast<unsigned long long>(count));
        const size_t total = checked_floats(count, pq->dim);
        KES_REQUIRE(vectors_floats == total, "vectors_floats must be count × dim = %llu × %u = %zu (got %zu)",
                    static_cast<unsigned long long>(count), pq->dim, total, vectors_floats);
        require_finite(vectors, total, "training vector");

        // Subsample with a partial Fisher–Yates shuffle, then restore input order for locality.
        std::vector<uint64_t> rows;
        const size_t n = static_cast<size_t>(std::min<uint64_t>(count, p.max_training_vectors));
        if (n < count) {
            std::vector<uint64_t> all(static_cast<size_t>(count));
            for (size_t i = 0; i < all.size(); ++i) all[i] = i;
            SplitMix64 rng(p.seed ^ 0x5851F42D4C957F2Dull);
            for (size_t i = 0; i < n; ++i) std::swap(all[i], all[i + static_cast<size_t>(rng.below(count - i))]);
            rows.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
            std::sort(rows.begin(), rows.end());
        }
        const uint32_t dsub = pq->dsub;
        std::vector<float> sub(size_t{kM} * n * dsub);
        for (size_t i = 0; i < n; ++i) {
            const float* src = vectors + (rows.empty() ? i : static_cast<size_t>(rows[i])) * pq->dim;
            for (uint32_t m = 0; m < kM; ++m)
                std::memcpy(sub.data() + (size_t{m} * n + i) * dsub, src + size_t{m} * dsub, size_t{dsub} * 4);
        }
        std::vector<float> codebook(size_t{kM} * kK * dsub);
        kes_thread_pool* pool = kes_thread_pool_default();
        const uint32_t workers = pool ? kes_thread_pool_size(pool) : 1;
        std::vector<KmeansScratch> scratch(workers);
        for (KmeansScratch& s : scratch) {
            s.mind.resize(n);
            s.assign.resize(n);
            s.sums.resize(size_t{kK} * dsub);
            s.counts.resize(kK);
        }
        TrainJob job{&sub, n, dsub, p.iterations, p.seed, &codebook, &scratch};
        if (pool) {
            const kes_status st = kes_thread_pool_parallel_for(pool, kM, 1, train_range, &job);
            if (st != KES_OK) KES_FAIL(st, "thread pool: %s", kes_last_error());
        } else {
            train_range(&job, 0, kM, 0);
        }
        pq->codebook.swap(codebook);
        return KES_OK;
    });
}

kes_status kes_fv_pq_dim(const kes_fv_pq* pq, uint32_t* out_dim) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(pq);
        KES_REQUIRE_NOT_NULL(out_dim);
        *out_dim = pq->dim;
        return KES_OK;
    });
}

kes_status kes_fv_pq_is_trained(const kes_fv_pq* pq, int* out_trained) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(pq);
        KES_REQUIRE_NOT_NULL(out_trained);
        *out_trained = pq->codebook.empty() ? 0 : 1;
        return KES_OK;
    });
}

kes_status kes_fv_pq_encode(const kes_fv_pq* pq, const float* vectors, uint64_t count, size_t vectors_floats,
                            uint8_t* codes, size_t codes_bytes) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(pq);
        require_trained(*pq);
        if (count == 0) return KES_OK;
        KES_REQUIRE_NOT_NULL(vectors);
        KES_REQUIRE_NOT_NULL(codes);
        const size_t total = checked_floats(count, pq->dim);
        KES_REQUIRE(vectors_floats == total, "vectors_floats must be count × dim = %zu (got %zu)", total,
                    vectors_floats);
        const size_t bytes = checked_floats(count, KES_FV_PQ36_BYTES);
        KES_REQUIRE(codes_bytes == bytes, "codes_bytes must be count × 36 = %zu (got %zu)", bytes, codes_bytes);
        require_finite(vectors, total, "vector");
        EncodeJob job{pq, vectors, codes};
        kes_thread_pool* pool = kes_thread_pool_default();
        if (pool && count > 256) {
            const kes_status st = kes_thread_pool_parallel_for(pool, count, 256, encode_range, &job);
            if (st != KES_OK) KES_FAIL(st, "thread pool: %s", kes_last_error());
        } else {
            encode_range(&job, 0, count, 0);
        }
        return KES_OK;
    });
}

kes_status kes_fv_pq_decode(const kes_fv_pq* pq, const uint8_t* codes, uint64_t count, size_t codes_bytes,
                            float* vectors, size_t vectors_floats) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(pq);
        require_trained(*pq);
        if (count == 0) return KES_OK;
        KES_REQUIRE_NOT_NULL(codes);
        KES_REQUIRE_NOT_NULL(vectors);
        const size_t total = checked_floats(count, pq->dim);
        KES_REQUIRE(vectors_floats == total, "vectors_floats must be count × dim = %zu (got %zu)", total,
                    vectors_floats);
        const size_t bytes = checked_floats(count, KES_FV_PQ36_BYTES);
        KES_REQUIRE(codes_bytes == bytes, "codes_bytes must be count × 36 = %zu (got %zu)", bytes, codes_bytes);
        for (uint64_t i = 0; i < count; ++i) {
            const uint8_t* c = codes + i * KES_FV_PQ36_BYTES;
            KES_REQUIRE(c[0] == 0 && c[1] == 0 && c[2] == 0 && c[3] == 0,
                        "record %llu: the first 4 bytes of a PQ36 feature must be 0",
                        static_cast<unsigned long long>(i));
            for (uint32_t m = 0; m < kM; ++m)
                std::memcpy(vectors + i * pq->dim + size_t{m} * pq->dsub,
                            pq->codebook.data() + (size_t{m} * kK + c[KES_FV_PQ36_HEADER_BYTES + m]) * pq->dsub,
                            size_t{pq->dsub} * 4);
        }
        return KES_OK;
    });
}

kes_status kes_fv_pq_compute_table(const kes_fv_pq* pq, const float* query, size_t query_floats, float* table,
                                   size_t table_floats) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(pq);
        require_trained(*pq);
        KES_REQUIRE_NOT_NULL(query);
        KES_REQUIRE_NOT_NULL(table);
        KES_REQUIRE(query_floats == pq->dim, "query_floats must be dim = %u (got %zu)", pq->dim, query_floats);
        KES_REQUIRE(table_floats == KES_FV_PQ36_TABLE_FLOATS, "table_floats must be %u (got %zu)",
                    KES_FV_PQ36_TABLE_FLOATS, table_floats);
        require_finite(query, query_floats, "query");
        for (uint32_t m = 0; m < kM; ++m)
            for (uint32_t c = 0; c < kK; ++c)
                table[m * kK + c] = sqdist(query + size_t{m} * pq->dsub,
                                           pq->codebook.data() + (size_t{m} * kK + c) * pq->dsub, pq->dsub);
        return KES_OK;
    });
}

kes_status kes_fv_pq_codebook_floats(const kes_fv_pq* pq, size_t* out_floats) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(pq);
        KES_REQUIRE_NOT_NULL(out_floats);
        *out_floats = size_t{kK} * pq->dim;
        return KES_OK;
    });
}

kes_status kes_fv_pq_get_codebook(const kes_fv_pq* pq, float* codebook, size_t floats) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(pq);
        require_trained(*pq);
        KES_REQUIRE_NOT_NULL(codebook);
        KES_REQUIRE(floats == pq->codebook.size(), "floats must be 256 × dim = %zu (got %zu)", pq->codebook.size(),
                    floats);
        std::memcpy(codebook, pq->codebook.data(), floats * 4);
        return KES_OK;
    });
}

kes_status kes_fv_pq_set_codebook(kes_fv_pq* pq, const float* codebook, size_t floats) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(pq);
        KES_REQUIRE_NOT_NULL(codebook);
        const size_t want = size_t{kK} * pq->dim;
        KES_REQUIRE(floats == want, "floats must be 256 × dim = %zu (got %zu)", want, floats);
        require_finite(codebook, floats, "codebook");
        pq->codebook.assign(codebook, codebook + floats);
        return KES_OK;
    });
}

kes_status kes_fv_repo_set_pq(kes_fv_repo* repo, const kes_fv_pq* pq) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(repo);
        KES_REQUIRE(repo->config.kind == KES_FV_PQ36, "only a PQ36 repository keeps a codebook (this one is dense)");
        std::vector<float> copy;
        if (pq) {
            require_trained(*pq);
            copy = pq->codebook;
        }
        RwLock::Write lock(repo->lock);
        repo->pq_dim = pq ? pq->dim : 0;
        repo->pq_codebook.swap(copy);
        return KES_OK;
    });
}

kes_status kes_fv_repo_get_pq(const kes_fv_repo* repo, kes_fv_pq** out_pq) {
    if (out_pq) *out_pq = nullptr;
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(repo);
        KES_REQUIRE_NOT_NULL(out_pq);
        auto pq = std::make_unique<kes_fv_pq>();
        {
            RwLock::Read lock(repo->lock);
            if (repo->pq_dim == 0) KES_FAIL(KES_ERR_NOT_FOUND, "the repository has no PQ codebook");
            pq->dim = repo->pq_dim;
            pq->codebook = repo->pq_codebook;
        }
        pq->dsub = pq->dim / kM;
        *out_pq = pq.release();
        return KES_OK;
    });
}

}  // extern "C"
