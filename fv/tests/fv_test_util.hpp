// fv_test_util.hpp — shared pieces of the fv tests: RAII repository, seeded data, and the
// double-precision brute-force reference every search is checked against.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <tuple>
#include <vector>

#include "fv_internal.hpp"
#include "fv_kernels.hpp"
#include "kestrel/fv.h"

namespace fvt {

struct RepoDeleter {
    void operator()(kes_fv_repo* r) const { kes_fv_repo_destroy(r); }
};
using Repo = std::unique_ptr<kes_fv_repo, RepoDeleter>;

inline Repo make_dense(uint32_t dim, kes_dtype storage, kes_fv_metric metric, uint32_t max_topk = 0) {
    kes_fv_config c;
    kes_fv_config_init(&c);
    c.kind = KES_FV_DENSE;
    c.dim = dim;
    c.storage = storage;
    c.metric = metric;
    if (max_topk) c.max_topk = max_topk;
    kes_fv_repo* r = nullptr;
    EXPECT_EQ(kes_fv_repo_create(&c, &r), KES_OK) << kes_last_error();
    return Repo(r);
}

inline Repo make_pq(uint32_t max_topk = 0) {
    kes_fv_config c;
    kes_fv_config_init(&c);
    c.kind = KES_FV_PQ36;
    if (max_topk) c.max_topk = max_topk;
    kes_fv_repo* r = nullptr;
    EXPECT_EQ(kes_fv_repo_create(&c, &r), KES_OK) << kes_last_error();
    return Repo(r);
}

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = d(rng);
    return v;
}

// PQ36 records as the aclfv sample makes them: 4 zero bytes, then 32 random codes.
inline std::vector<uint8_t> random_pq36(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> v(n * KES_FV_PQ36_BYTES, 0);
    for (size_t j = 0; j < n; ++j)
        for (size_t m = 0; m < 32; ++m) v[j * 36 + 4 + m] = static_cast<uint8_t>(rng() & 255u);
    return v;
}

// An ADC table in the sample's range [1, 1900)/10000, different per sub-space.
inline std::vector<float> random_table(uint32_t seed) {
    return random_floats(KES_FV_PQ36_TABLE_FLOATS, seed, 1e-4f, 0.19f);
}

inline void add_dense(kes_fv_repo* r, uint32_t id0, uint32_t id1, const std::vector<float>& x, uint32_t dim) {
    uint32_t size = 0;
    ASSERT_EQ(kes_fv_repo_library_size(r, id0, id1, &size), KES_OK);
    ASSERT_EQ(kes_fv_repo_add(r, id0, id1, size, x.data(), x.size() / dim, x.size() * 4), KES_OK) << kes_last_error();
}

inline void add_pq(kes_fv_repo* r, uint32_t id0, uint32_t id1, const std::vector<uint8_t>& x) {
    uint32_t size = 0;
    ASSERT_EQ(kes_fv_repo_library_size(r, id0, id1, &size), KES_OK);
    ASSERT_EQ(kes_fv_repo_add(r, id0, id1, size, x.data(), x.size() / 36, x.size()), KES_OK) << kes_last_error();
}

struct Ref {
    double score;
    uint32_t id0, id1, offset;
};

// Brute force in double over every live feature of `libs` inside the range, using the stored (dequantised)
// vectors; sorted best first with the documented tie order.
using Libs = std::vector<std::pair<uint32_t, uint32_t>>;
inline std::vector<Ref> brute_force(const kes_fv_repo* r, const float* query, const kes_fv_range& range,
                                    const Libs& libs) {
    kes_fv_config c;
    c.struct_size = sizeof c;
    EXPECT_EQ(kes_fv_repo_get_config(r, &c), KES_OK);
    int larger = 0;
    kes_fv_repo_larger_is_closer(r, &larger);
    std::vector<double> q;
    if (c.kind == KES_FV_DENSE) {
        q.assign(query, query + c.dim);
        if (c.metric == KES_FV_METRIC_COSINE) {
            double n2 = 0;
            for (double v : q) n2 += v * v;
            for (double& v : q) v = n2 > 0 ? v / std::sqrt(n2) : 0.0;
        }
        if (c.storage == KES_I8 && c.metric != KES_FV_METRIC_L2) {
            // int8 inner products use the 16-bit fixed-point query (fv.h): the reference does too,
            // exactly, from the float query the search prepares (cosine: normalised in float).
            std::vector<float> qf(q.begin(), q.end());
            std::vector<int8_t> store;
            kes::fv::I8Query qi;
            kes::fv::quantize_query_i8(qf.data(), qf.size(), store, qi);
            for (size_t i = 0; i < q.size(); ++i) q[i] = qi.step * (256.0 * qi.hi[i] + qi.lo[i]);
        }
    }
    std::vector<Ref> out;
    for (const auto& lib : libs) {
        const uint32_t id0 = lib.first, id1 = lib.second;
        if (id0 < range.id0_min || id0 > range.id0_max || id1 < range.id1_min || id1 > range.id1_max) continue;
        uint32_t size = 0;
        kes_fv_repo_library_size(r, id0, id1, &size);
        for (uint32_t off = 0; off < size; ++off) {
            std::vector<float> x;
            try {
                x = kes::fv::stored_vector(r, id0, id1, off);
            } catch (...) {
                continue;  // deleted
            }
            double s = 0;
            if (c.kind == KES_FV_PQ36) {
                for (size_t m = 0; m < 32; ++m) s += query[m * 256 + static_cast<size_t>(x[m])];
            } else if (c.metric == KES_FV_METRIC_L2) {
                for (size_t i = 0; i < x.size(); ++i) s += (q[i] - x[i]) * (q[i] - x[i]);
            } else {
                for (size_t i = 0; i < x.size(); ++i) s += q[i] * x[i];
            }
            out.push_back({s, id0, id1, off});
        }
    }
    std::sort(out.begin(), out.end(), [&](const Ref& a, const Ref& b) {
        if (a.score != b.score) return larger ? a.score > b.score : a.score < b.score;
        return std::tie(a.id0, a.id1, a.offset) < std::tie(b.id0, b.id1, b.offset);
    });
    return out;
}

// The search returned the reference's top-k: same count, same scores rank by rank (to float
// accuracy), every id scored as the reference scores it, and the same id wherever the reference's
// neighbours are not within rounding of each other.
inline void expect_same_topk(const kes_fv_result* res, uint32_t count, const std::vector<Ref>& ref, uint32_t k,
                             double tol = 1e-4) {
    ASSERT_EQ(count, std::min<size_t>(k, ref.size()));
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, double> by_id;
    for (const Ref& r : ref) by_id[std::make_tuple(r.id0, r.id1, r.offset)] = r.score;
    for (uint32_t i = 0; i < count; ++i) {
        const double t = tol * (1.0 + std::fabs(ref[i].score));
        EXPECT_NEAR(res[i].distance, ref[i].score, t) << "rank " << i;
        const auto it = by_id.find(std::make_tuple(res[i].id0, res[i].id1, res[i].offset));
        ASSERT_NE(it, by_id.end()) << "rank " << i << " returned a feature that is not live in the range";
        EXPECT_NEAR(res[i].distance, it->second, t) << "rank " << i;
        const bool apart_before = i == 0 || std::fabs(ref[i - 1].score - ref[i].score) > 2 * t;
        const bool apart_after = i + 1 >= ref.size() || std::fabs(ref[i + 1].score - ref[i].score) > 2 * t;
        if (apart_before && apart_after) {
            EXPECT_EQ(res[i].id0, ref[i].id0) << "rank " << i;
            EXPECT_EQ(res[i].id1, ref[i].id1) << "rank " << i;
            EXPECT_EQ(res[i].offset, ref[i].offset) << "rank " << i;
        }
    }
}

inline kes_fv_search_params params(uint32_t k) {
    kes_fv_search_params p;
    kes_fv_search_params_init(&p);
    p.k = k;
    return p;
}

}  // namespace fvt
