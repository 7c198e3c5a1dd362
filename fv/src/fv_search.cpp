// fv_search.cpp — 1:N and M:N top-k search over a library range.
//
// The libraries of the range are cut into chunks of contiguous features (segments). 1:N spreads
// the segments over kes_thread_pool_default(), each worker keeping a bounded top-k heap, and merges
// the heaps at the end. M:N with enough queries spreads the queries instead (each task scans every
// segment for a small block of queries, so a segment is read from memory once per block). Candidates
// are ordered by a strict total order (score, then id0, id1, offset), so the result does not depend
// on how the work was split.
// An f32 re-rank (params.rerank) runs the same search for a shortlist of `rerank` candidates by the
// stored f16/int8 scores, then re-scores only those from the f32 copies.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <exception>
#include <limits>
#include <mutex>

#include "fv_kernels.hpp"
#include "fv_repo.hpp"
#include "kes/error.hpp"
#include "kes/math.hpp"
#include "kes/struct_size.hpp"
#include "kestrel/thread_pool.h"
#include "kestrel/trace.h"

using kes::fv::Library;

namespace kes {
namespace fv {
namespace {

constexpr size_t kParamsV1Size = offsetof(kes_fv_search_params, rerank);
constexpr uint32_t kMaxChunk = 4096;        // features per segment = score buffer size
constexpr size_t kChunkBytes = 256 * 1024;  // about an L2 share, so M:N blocks re-read it from cache
constexpr uint32_t kQueryBlock = 8;         // M:N queries scored together (dot8_f32; f16/int8: two dot4)

struct Cand {
    float score;
    uint32_t key;
    uint32_t offset;
};

struct Better {
    bool larger;
    bool operator()(const Cand& a, const Cand& b) const noexcept {
        if (a.score != b.score) return larger ? a.score > b.score : a.score < b.score;
        if (a.key != b.key) return a.key < b.key;
        return a.offset < b.offset;
    }
};

// Bounded heap whose front is the worst kept candidate.
class TopK {
public:
    TopK(uint32_t k, Better better) : k_(k), better_(better) {}
    void reserve() { heap_.reserve(k_); }
    void push(const Cand& c) {
        if (heap_.size() < k_) {
            heap_.push_back(c);
            std::push_heap(heap_.begin(), heap_.end(), better_);
        } else if (better_(c, heap_.front())) {
            std::pop_heap(heap_.begin(), heap_.end(), better_);
            heap_.back() = c;
            std::push_heap(heap_.begin(), heap_.end(), better_);
        }
    }
    std::vector<Cand>& items() { return heap_; }
    // A score strictly worse than the worst kept one cannot enter a full heap: the common case of a
    // long scan, decided by one float compare instead of the full (score, id) order.
    bool rejects(float score) const noexcept {
        return heap_.size() == k_ && (better_.larger ? score < heap_.front().score : score > heap_.front().score);
    }

private:
    uint32_t k_;
    Better better_;
    std::vector<Cand> heap_;
};

struct Segment {
    const Library* lib;
    uint32_t key;
    uint32_t begin;
    uint32_t count;
};

struct Query {
    const kes_fv_repo* repo;
    const Kernels* kernels;
    uint32_t k;
    bool larger;
    bool use_threshold;
    float threshold;
    float worst;  // what a NaN score becomes: never better than a real score
};

// Validated, normalised parameters.
struct Params {
    kes_fv_range range;
    uint32_t k;
    bool use_threshold;
    float threshold;
    uint32_t rerank;  // 0 or the shortlist length
};

Params check_params(const kes_fv_repo& repo, const kes_fv_search_params* p) {
    kes_fv_search_params full;
    kes_fv_search_params_init(&full);
    kes::read_struct(p, kParamsV1Size, "params", "kes_fv_search_params", &full);
    Params out{full.range, full.k, full.use_threshold != 0, full.threshold, full.rerank};
    const kes_fv_range& r = out.range;
    KES_REQUIRE(r.id0_min <= r.id0_max && r.id0_max <= KES_FV_ID_MAX,
                "params->range must have id0_min <= id0_max <= %u (got %u..%u)", KES_FV_ID_MAX, r.id0_min, r.id0_max);
    KES_REQUIRE(r.id1_min <= r.id1_max && r.id1_max <= KES_FV_ID_MAX,
                "params->range must have id1_min <= id1_max <= %u (got %u..%u)", KES_FV_ID_MAX, r.id1_min, r.id1_max);
    KES_REQUIRE(out.k >= 1 && out.k <= repo.config.max_topk,
                "params->k must be in [1, %u] (the repository's max_topk) (got %u)", repo.config.max_topk, out.k);
    KES_REQUIRE(!out.use_threshold || !std::isnan(out.threshold), "params->threshold is NaN");
    if (out.rerank) {
        KES_REQUIRE(repo.config.keep_f32, "params->rerank needs a repository created with keep_f32 = 1");
        KES_REQUIRE(out.rerank >= out.k && out.rerank <= KES_FV_TOPK_LIMIT,
                    "params->rerank must be in [k = %u, %u] (got %u)", out.k, KES_FV_TOPK_LIMIT, out.rerank);
    }
    return out;
}

void check_query(const kes_fv_repo& repo, const float* q, uint32_t index) {
    for (size_t i = 0; i < repo.query_floats; ++i)
        KES_REQUIRE(std::isfinite(q[i]), "query %u value %zu is not finite (%g)", index, i, static_cast<double>(q[i]));
}

// Cosine compares unit vectors; the caller's query is normalised in a copy.
const float* prepare_query(const kes_fv_repo& repo, const float* q, std::vector<float>& scratch) {
    if (repo.config.kind != KES_FV_DENSE || repo.config.metric != KES_FV_METRIC_COSINE) return q;
    double n2 = 0.0;
    for (size_t i = 0; i < repo.query_floats; ++i) n2 += static_cast<double>(q[i]) * q[i];
    const double inv = n2 > 0.0 ? 1.0 / std::sqrt(n2) : 0.0;
    scratch.resize(repo.query_floats);
    for (size_t i = 0; i < repo.query_floats; ++i) scratch[i] = static_cast<float>(q[i] * inv);
    return scratch.data();
}

// A query ready for the kernels: floats (normalised for cosine) and, for int8 inner products, the
// integer form (fv_kernels.hpp I8Query). Not copyable: i8 points into ibuf.
struct Prepared {
    const float* f = nullptr;
    I8Query i8;
    std::vector<float> fbuf;
    std::vector<int8_t> ibuf;
    Prepared() = default;
    Prepared(const Prepared&) = delete;
    Prepared& operator=(const Prepared&) = delete;
};

bool int8_dot(const kes_fv_repo& repo) {
    return repo.config.kind == KES_FV_DENSE && repo.config.storage == KES_I8 && repo.config.metric != KES_FV_METRIC_L2;
}

void prepare(const kes_fv_repo& repo, const float* q, Prepared& out) {
    out.f = prepare_query(repo, q, out.fbuf);
    if (int8_dot(repo)) quantize_query_i8(out.f, repo.config.dim, out.ibuf, out.i8);
}

std::vector<Segment> segments_of(const kes_fv_repo& repo, const kes_fv_range& r) {
    std::vector<Segment> segs;
    const uint32_t per = static_cast<uint32_t>(std::clamp<size_t>(kChunkBytes / repo.stride, 64, kMaxChunk));
    auto it = repo.libraries.lower_bound(lib_key(r.id0_min, r.id1_min));
    const auto end = repo.libraries.upper_bound(lib_key(r.id0_max, r.id1_max));
    for (; it != end; ++it) {
        const uint32_t id1 = key_id1(it->first);
        const Library* lib = it->second.get();
        if (id1 < r.id1_min || id1 > r.id1_max || lib->live == 0) continue;
        for (uint32_t b = 0; b < lib->size; b += per) segs.push_back({lib, it->first, b, std::min(per, lib->size - b)});
    }
    return segs;
}

void score(const Query& q, const Prepared& query, const Segment& s, float* out) {
    const kes_fv_repo& repo = *q.repo;
    const Kernels& K = *q.kernels;
    const uint8_t* base = s.lib->data.data() + size_t{s.begin} * repo.stride;
    if (repo.config.kind == KES_FV_PQ36) {
        K.adc_pq32(query.f, base, s.count, out);
        return;
    }
    const size_t dim = repo.config.dim;
    const bool l2 = repo.config.metric == KES_FV_METRIC_L2;
    switch (repo.config.storage) {
        case KES_F32: {
            const float* x = reinterpret_cast<const float*>(base);
            (l2 ? K.l2_f32 : K.dot_f32)(query.f, x, dim, s.count, out);
            break;
        }
        case KES_F16: {
            const uint16_t* x = reinterpret_cast<const uint16_t*>(base);
            (l2 ? K.l2_f16 : K.dot_f16)(query.f, x, dim, s.count, out);
            break;
        }
        default: {
            const int8_t* x = reinterpret_cast<const int8_t*>(base);
            const float* scale = s.lib->scales.data() + s.begin;
            if (l2)
                K.l2_i8(query.f, x, scale, dim, s.count, out);
            else
                K.dot_i8(query.i8, x, scale, dim, s.count, out);
            break;
        }
    }
}

void filter(const Query& q, const Segment& s, const float* scores, TopK& heap) {
    const bool all_live = s.lib->live == s.lib->size;
    const uint8_t* alive = s.lib->alive.data() + s.begin;
    for (uint32_t i = 0; i < s.count; ++i) {
        if (!all_live && !alive[i]) continue;
        float v = scores[i];
        if (std::isnan(v)) v = q.worst;  // overflowing sums (inf − inf) must not break the ordering
        if (heap.rejects(v)) continue;
        if (q.use_threshold && (q.larger ? !(v >= q.threshold) : !(v <= q.threshold))) continue;
        heap.push({v, s.key, s.begin + i});
    }
}

void scan(const Query& q, const Prepared& query, const Segment& s, float* scores, TopK& heap) {
    score(q, query, s, scores);
    filter(q, s, scores, heap);
}

// Four or eight queries at once (nq = 4 or 8) where multi-query kernels exist (dense inner products);
// false when the caller must score them one by one.
bool score_block(const Query& q, const Prepared* const* queries, uint32_t nq, const Segment& s, float* const* out) {
    const kes_fv_repo& repo = *q.repo;
    if (repo.config.kind != KES_FV_DENSE || repo.config.metric == KES_FV_METRIC_L2) return false;
    const Kernels& K = *q.kernels;
    const uint8_t* base = s.lib->data.data() + size_t{s.begin} * repo.stride;
    const size_t dim = repo.config.dim;
    const float* f[8];
    const I8Query* i8[8];
    for (uint32_t j = 0; j < nq; ++j) {
        f[j] = queries[j]->f;
        i8[j] = &queries[j]->i8;
    }
    if (repo.config.storage == KES_F32 && nq == 8) {
        K.dot8_f32(f, reinterpret_cast<const float*>(base), dim, s.count, out);
        return true;
    }
    for (uint32_t j = 0; j < nq; j += 4) {
        switch (repo.config.storage) {
            case KES_F32: K.dot4_f32(f + j, reinterpret_cast<const float*>(base), dim, s.count, out + j); break;
            case KES_F16: K.dot4_f16(f + j, reinterpret_cast<const uint16_t*>(base), dim, s.count, out + j); break;
            default:
                K.dot4_i8(i8 + j, reinterpret_cast<const int8_t*>(base), s.lib->scales.data() + s.begin, dim, s.count,
                          out + j);
                break;
        }
    }
    return true;
}

// Best first into out; returns the count.
uint32_t finish(std::vector<Cand>& all, const Query& q, kes_fv_result* out) {
    const size_t n = std::min<size_t>(all.size(), q.k);
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(), Better{q.larger});
    for (size_t i = 0; i < n; ++i) out[i] = {key_id0(all[i].key), key_id1(all[i].key), all[i].offset, all[i].score};
    return static_cast<uint32_t>(n);
}

// parallel_for over a C++ callable; the first exception thrown by any range is rethrown here.
template <class F>
void parallel_for(uint64_t count, uint64_t grain, F&& fn) {
    struct Ctx {
        F* fn;
        std::mutex mutex;
        std::exception_ptr error;
    } ctx{&fn, {}, nullptr};
    auto tramp = [](void* ud, uint64_t b, uint64_t e, uint32_t w) {
        Ctx* c = static_cast<Ctx*>(ud);
        try {
            (*c->fn)(b, e, w);
        } catch (...) {
            std::lock_guard<std::mutex> lock(c->mutex);
            if (!c->error) c->error = std::current_exception();
        }
    };
    kes_thread_pool* pool = kes_thread_pool_default();
    if (!pool) {
        fn(0, count, 0);
        return;
    }
    const kes_status st = kes_thread_pool_parallel_for(pool, count, grain, tramp, &ctx);
    if (ctx.error) std::rethrow_exception(ctx.error);
    if (st != KES_OK) KES_FAIL(st, "thread pool: %s", kes_last_error());
}

uint32_t pool_threads() {
    kes_thread_pool* pool = kes_thread_pool_default();
    return pool ? std::max<uint32_t>(1, kes_thread_pool_size(pool)) : 1;
}

// One query, segments spread over the pool.
uint32_t search_one(const Query& q, const Prepared& query, const std::vector<Segment>& segs, kes_fv_result* out) {
    const uint32_t threads = pool_threads();
    std::vector<TopK> heaps(threads, TopK(q.k, Better{q.larger}));
    std::vector<std::vector<float>> scores(threads);
    parallel_for(segs.size(), 1, [&](uint64_t b, uint64_t e, uint32_t w) {
        std::vector<float>& buf = scores[w];
        if (buf.empty()) buf.resize(kMaxChunk);
        for (uint64_t i = b; i < e; ++i) scan(q, query, segs[static_cast<size_t>(i)], buf.data(), heaps[w]);
    });
    std::vector<Cand> all;
    for (TopK& h : heaps) all.insert(all.end(), h.items().begin(), h.items().end());
    return finish(all, q, out);
}

Query make_query(const kes_fv_repo& repo, const Params& p) {
    Query q;
    q.repo = &repo;
    q.kernels = &kernels_active();
    q.k = p.rerank ? p.rerank : p.k;
    q.larger = repo.larger_is_closer;
    q.use_threshold = p.use_threshold && !p.rerank;  // a re-rank thresholds the exact scores
    q.threshold = p.threshold;
    q.worst = q.larger ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
    return q;
}

// Re-scores a shortlist from the f32 copies (in double) and writes the best p.k to out; returns the
// count. The caller holds the reader lock; `query` is prepared (normalised for cosine).
uint32_t rerank(const kes_fv_repo& repo, const Params& p, const float* query, const kes_fv_result* list, uint32_t n,
                kes_fv_result* out) {
    const bool larger = repo.larger_is_closer;
    const bool l2 = repo.config.metric == KES_FV_METRIC_L2;
    const size_t dim = repo.config.dim;
    std::vector<Cand> cands;
    cands.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t key = lib_key(list[i].id0, list[i].id1);
        const float* x = repo.libraries.at(key)->f32.data() + size_t{list[i].offset} * dim;
        double s = 0.0;
        for (size_t j = 0; j < dim; ++j) {
            const double t = l2 ? double(query[j]) - x[j] : double(query[j]) * x[j];
            s += l2 ? t * t : t;
        }
        const float v = static_cast<float>(s);
        if (p.use_threshold && (larger ? !(v >= p.threshold) : !(v <= p.threshold))) continue;
        cands.push_back({v, key, list[i].offset});
    }
    Query q{};
    q.k = p.k;
    q.larger = larger;
    return finish(cands, q, out);
}

}  // namespace
}  // namespace fv
}  // namespace kes

using namespace kes::fv;

extern "C" {

const char* kes_fv_kernels_name(void) {
    return kes::fv::kernels_active().name;
}

void kes_fv_search_params_init(kes_fv_search_params* params) {
    if (!params) return;
    *params = kes_fv_search_params{};
    params->struct_size = sizeof(kes_fv_search_params);
    params->range = {0, KES_FV_ID_MAX, 0, KES_FV_ID_MAX};
    params->k = 10;
}

kes_status kes_fv_search_result_entries(uint32_t query_count, uint32_t k, size_t* out_entries) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_entries);
        KES_REQUIRE(k >= 1, "k must be >= 1 (got 0)");
        size_t n = 0;
        KES_REQUIRE(kes::checked_mul<size_t>(query_count, k, &n), "query_count %u × k %u overflows size_t", query_count,
                    k);
        *out_entries = n;
        return KES_OK;
    });
}

kes_status kes_fv_search(const kes_fv_repo* repo, const float* query, size_t query_floats,
                         const kes_fv_search_params* params, kes_fv_result* results, size_t results_capacity,
                         uint32_t* out_count) {
    if (out_count) *out_count = 0;
    return kes::guard(__func__, [&] {
        kes::TraceScope span("fv", "search");
        KES_REQUIRE_NOT_NULL(repo);
        KES_REQUIRE_NOT_NULL(query);
        KES_REQUIRE_NOT_NULL(results);
        KES_REQUIRE_NOT_NULL(out_count);
        const Params p = check_params(*repo, params);
        KES_REQUIRE(query_floats == repo->query_floats, "query_floats must be %zu for this repository (got %zu)",
                    repo->query_floats, query_floats);
        KES_REQUIRE(results_capacity >= p.k, "results_capacity must be >= k = %u (got %zu)", p.k, results_capacity);
        check_query(*repo, query, 0);
        Prepared q;
        prepare(*repo, query, q);
        const Query qq = make_query(*repo, p);

        RwLock::Read lock(repo->lock);
        const std::vector<Segment> segs = segments_of(*repo, p.range);
        if (!p.rerank) {
            *out_count = segs.empty() ? 0 : search_one(qq, q, segs, results);
        } else {
            std::vector<kes_fv_result> shortlist(qq.k);
            const uint32_t n = segs.empty() ? 0 : search_one(qq, q, segs, shortlist.data());
            *out_count = rerank(*repo, p, q.f, shortlist.data(), n, results);
        }
        return KES_OK;
    });
}

kes_status kes_fv_search_batch(const kes_fv_repo* repo, const float* queries, uint32_t query_count,
                               size_t queries_floats, const kes_fv_search_params* params, kes_fv_result* results,
                               size_t results_capacity, uint32_t* out_counts) {
    return kes::guard(__func__, [&] {
        kes::TraceScope span("fv", "search_batch");
        KES_REQUIRE_NOT_NULL(repo);
        const Params p = check_params(*repo, params);
        if (query_count == 0) return KES_OK;
        KES_REQUIRE_NOT_NULL(queries);
        KES_REQUIRE_NOT_NULL(results);
        KES_REQUIRE_NOT_NULL(out_counts);
        size_t want = 0;
        KES_REQUIRE(kes::checked_mul<size_t>(query_count, repo->query_floats, &want) && want == queries_floats,
                    "queries_floats must be query_count %u × %zu = %zu (got %zu)", query_count, repo->query_floats,
                    want, queries_floats);
        size_t entries = 0;
        KES_REQUIRE(kes::checked_mul<size_t>(query_count, p.k, &entries) && results_capacity >= entries,
                    "results_capacity must be >= query_count %u × k %u = %zu (got %zu)", query_count, p.k, entries,
                    results_capacity);
        for (uint32_t i = 0; i < query_count; ++i) check_query(*repo, queries + size_t{i} * repo->query_floats, i);
        std::fill(out_counts, out_counts + query_count, 0u);
        const Query qq = make_query(*repo, p);
        const size_t qf = repo->query_floats;

        RwLock::Read lock(repo->lock);
        const std::vector<Segment> segs = segments_of(*repo, p.range);
        if (segs.empty()) return KES_OK;
        // With a re-rank, the shortlists go to `dst` first (qq.k = rerank per query).
        std::vector<kes_fv_result> shortlists;
        std::vector<uint32_t> shortlist_counts;
        kes_fv_result* dst = results;
        uint32_t* counts = out_counts;
        const size_t stride = qq.k;
        if (p.rerank) {
            shortlists.resize(size_t{query_count} * qq.k);
            shortlist_counts.assign(query_count, 0);
            dst = shortlists.data();
            counts = shortlist_counts.data();
        }
        auto finish_rerank = [&] {
            if (!p.rerank) return;
            std::vector<float> qbuf;
            for (uint32_t i = 0; i < query_count; ++i) {
                const float* q = prepare_query(*repo, queries + i * qf, qbuf);
                out_counts[i] = rerank(*repo, p, q, dst + i * stride, counts[i], results + size_t{i} * p.k);
            }
        };
        const uint32_t threads = pool_threads();
        if (query_count < 2 * threads) {
            // Too few queries to keep every thread busy: split each query's scan instead.
            for (uint32_t i = 0; i < query_count; ++i) {
                Prepared q;
                prepare(*repo, queries + i * qf, q);
                counts[i] = search_one(qq, q, segs, dst + i * stride);
            }
            finish_rerank();
            return KES_OK;
        }
        // One range of query blocks per thread, segments in the outer loop: each segment comes from
        // memory once per thread and serves all of that thread's queries from cache (block-first
        // order re-read the whole repository from DRAM for every 4 queries).
        const uint64_t blocks = (query_count + kQueryBlock - 1) / kQueryBlock;
        const uint64_t grain = (blocks + threads - 1) / threads;
        parallel_for(blocks, grain, [&](uint64_t b, uint64_t e, uint32_t) {
            const uint32_t q0 = static_cast<uint32_t>(b * kQueryBlock);
            const uint32_t q1 = static_cast<uint32_t>(std::min<uint64_t>(e * kQueryBlock, query_count));
            std::vector<float> scores(size_t{kMaxChunk} * kQueryBlock);
            float* outs[kQueryBlock];
            for (uint32_t j = 0; j < kQueryBlock; ++j) outs[j] = scores.data() + size_t{j} * kMaxChunk;
            std::vector<Prepared> preps(q1 - q0);
            std::vector<const Prepared*> qs(q1 - q0);
            std::vector<TopK> heaps;
            heaps.reserve(q1 - q0);
            for (uint32_t j = q0; j < q1; ++j) {
                prepare(*repo, queries + size_t{j} * qf, preps[j - q0]);
                qs[j - q0] = &preps[j - q0];
                heaps.emplace_back(qq.k, Better{qq.larger});
            }
            for (const Segment& s : segs) {
                // Blocks of 8, then 4, then single queries.
                for (uint32_t j0 = 0, left = q1 - q0; left > 0;) {
                    const uint32_t qn = left >= 8 ? 8 : left >= 4 ? 4 : 1;
                    if (qn > 1 && score_block(qq, &qs[j0], qn, s, outs)) {
                        for (uint32_t j = 0; j < qn; ++j) filter(qq, s, outs[j], heaps[j0 + j]);
                    } else {
                        for (uint32_t j = 0; j < qn; ++j) scan(qq, *qs[j0 + j], s, scores.data(), heaps[j0 + j]);
                    }
                    j0 += qn;
                    left -= qn;
                }
            }
            for (uint32_t j = q0; j < q1; ++j) counts[j] = finish(heaps[j - q0].items(), qq, dst + j * stride);
        });
        finish_rerank();
        return KES_OK;
    });
}

}  // extern "C"
