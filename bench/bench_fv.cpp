// fv benchmarks (issue 6): Kestrel's feature search beside FAISS 1.7.3 on the same data, 2 threads
// each (Kestrel's default pool — set KES_NUM_THREADS=2 on a larger machine — and omp_set_num_threads
// for FAISS).
//
//   fv_p8_1xN_f32_d512      one query, top-10 inner product, N × 512 f32     vs IndexFlatIP
//   fv_p9_1xN_int8_d512     one query, int8 storage, N × 512                 vs dram_floor: one pass
//                           over the same number of bytes (the scan's lower bound on this machine)
//   fv_p10_256xN_f32_d512   256 queries (M:N), top-10 each                   vs IndexFlatIP
//   fv_p11_pq36_1xN         one float query → ADC table → PQ36 top-10        vs IndexPQ(512, 32, 8)
//                           holding the same codes and codebook (N and the larger N)
//
// N = KES_BENCH_FV_N (default 1000000); the second PQ36 size is KES_BENCH_FV_N_LARGE (default
// 10000000; 0 skips it). Every pair checks before timing that both sides return the same top-10
// (ranks may trade places only between scores equal to float rounding); a mismatch fails the case.
// Counters: GB/s = bytes of stored features scanned per second; P9 also recall@10 of the int8 scan
// (no re-rank) against the exact f32 top-10 of the same vectors. P8/P10 also GFLOP/s (2·M·N·d per
// search) and, when KES_BENCH_FMA_PEAK_GFLOPS gives the measured single-core FMA peak (./kestrel.sh
// bench sets it from kes-fma-peak), peak% = GFLOP/s over the peak of the 2 threads used.
// FAISS's M:N search is one sgemm per block of rows, so it is only as fast as the BLAS it links: the
// first case prints which one that is (bench/fv.cmake links OpenBLAS).
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <faiss/IndexFlat.h>
#include <faiss/IndexPQ.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kestrel/fv.h"
#include "kestrel/thread_pool.h"

namespace {

constexpr uint32_t kDim = 512;
constexpr uint32_t kK = 10;
constexpr uint32_t kBatch = 256;
constexpr int kThreads = 2;

uint64_t env_u64(const char* name, uint64_t def) {
    const char* v = std::getenv(name);
    return v && *v ? std::strtoull(v, nullptr, 10) : def;
}

// SplitMix64 → deterministic data: any chunk of the data set can be regenerated on its own.
struct Rng {
    uint64_t s;
    uint64_t next() {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    float uniform() { return static_cast<float>(next() >> 40) / static_cast<float>(1 << 24) * 2.f - 1.f; }
};

// Row i of the dense data set: a uniform vector in [−1, 1]^512.
void dense_rows(uint64_t first, uint64_t count, float* out) {
    for (uint64_t r = 0; r < count; ++r) {
        Rng rng{(first + r) * 7919u + 1};
        for (uint32_t i = 0; i < kDim; ++i) out[r * kDim + i] = rng.uniform();
    }
}

std::vector<float> queries(uint32_t count, uint64_t seed) {
    std::vector<float> q(size_t{count} * kDim);
    Rng rng{seed};
    for (float& v : q) v = rng.uniform();
    return q;
}

struct RepoDeleter {
    void operator()(kes_fv_repo* r) const { kes_fv_repo_destroy(r); }
};
using Repo = std::unique_ptr<kes_fv_repo, RepoDeleter>;

Repo dense_repo(kes_dtype storage) {
    kes_fv_config c;
    kes_fv_config_init(&c);
    c.kind = KES_FV_DENSE;
    c.dim = kDim;
    c.storage = storage;
    c.metric = KES_FV_METRIC_IP;
    kes_fv_repo* r = nullptr;
    if (kes_fv_repo_create(&c, &r) != KES_OK) std::abort();
    return Repo(r);
}

// The f32 and int8 repositories and the IndexFlatIP, built once from the same rows and shared by the
// cases that need them.
struct Dense {
    uint64_t n = 0;
    Repo f32, i8;
    std::unique_ptr<faiss::IndexFlatIP> flat;
};

Dense& dense(bool want_i8) {
    static Dense d;
    const uint64_t n = env_u64("KES_BENCH_FV_N", 1000000);
    if (!d.f32) {
        d.n = n;
        d.f32 = dense_repo(KES_F32);
        d.flat = std::make_unique<faiss::IndexFlatIP>(kDim);
        const uint64_t chunk = 65536;
        std::vector<float> rows(chunk * kDim);
        for (uint64_t first = 0; first < n; first += chunk) {
            const uint64_t c = std::min(chunk, n - first);
            dense_rows(first, c, rows.data());
            if (kes_fv_repo_add(d.f32.get(), 0, 0, static_cast<uint32_t>(first), rows.data(), c, c * kDim * 4) !=
                KES_OK)
                std::abort();
            d.flat->add(static_cast<faiss::Index::idx_t>(c), rows.data());
        }
    }
    if (want_i8 && !d.i8) {
        d.i8 = dense_repo(KES_I8);
        const uint64_t chunk = 65536;
        std::vector<float> rows(chunk * kDim);
        for (uint64_t first = 0; first < n; first += chunk) {
            const uint64_t c = std::min(chunk, n - first);
            dense_rows(first, c, rows.data());
            if (kes_fv_repo_add(d.i8.get(), 0, 0, static_cast<uint32_t>(first), rows.data(), c, c * kDim * 4) != KES_OK)
                std::abort();
        }
    }
    return d;
}

kes_fv_search_params top(uint32_t k) {
    kes_fv_search_params p;
    kes_fv_search_params_init(&p);
    p.k = k;
    return p;
}

// Kestrel's results (offsets in library (0, 0) = FAISS labels) against FAISS's, query by query:
// the same labels rank by rank, except that two results whose distances agree to float rounding
// may trade places. Returns an empty string or what differs.
std::string compare(const std::vector<kes_fv_result>& ours, const std::vector<float>& dist,
                    const std::vector<faiss::Index::idx_t>& labels, uint32_t nq, uint32_t k) {
    for (uint32_t q = 0; q < nq; ++q)
        for (uint32_t r = 0; r < k; ++r) {
            const kes_fv_result& a = ours[size_t{q} * k + r];
            const float d = dist[size_t{q} * k + r];
            const float tol = 1e-4f * std::max(1.f, std::fabs(d));
            if (std::fabs(a.distance - d) > tol)
                return "query " + std::to_string(q) + " rank " + std::to_string(r) + ": distance " +
                       std::to_string(a.distance) + " vs FAISS " + std::to_string(d);
            if (static_cast<faiss::Index::idx_t>(a.offset) == labels[size_t{q} * k + r]) continue;
            bool near_tie = false;
            for (uint32_t j = 0; j < k; ++j)
                if (labels[size_t{q} * k + j] == static_cast<faiss::Index::idx_t>(a.offset) &&
                    std::fabs(dist[size_t{q} * k + j] - a.distance) <= tol)
                    near_tie = true;
            if (!near_tie)
                return "query " + std::to_string(q) + " rank " + std::to_string(r) + ": offset " +
                       std::to_string(a.offset) + " vs FAISS label " + std::to_string(labels[size_t{q} * k + r]);
        }
    return "";
}

void set_counters(benchmark::State& st, double bytes_per_iter) {
    st.counters["GB/s"] =
        benchmark::Counter(bytes_per_iter * static_cast<double>(st.iterations()) / 1e9, benchmark::Counter::kIsRate);
}

// GFLOP/s of an inner-product search (a multiply and an add per stored element per query), and its
// share of the 2-thread FMA peak when the peak is known.
void set_flop_counters(benchmark::State& st, double flops_per_iter) {
    const double gflops = flops_per_iter * static_cast<double>(st.iterations()) / 1e9;
    st.counters["GFLOP/s"] = benchmark::Counter(gflops, benchmark::Counter::kIsRate);
    const char* peak = std::getenv("KES_BENCH_FMA_PEAK_GFLOPS");
    if (peak && std::atof(peak) > 0)
        st.counters["peak%"] =
            benchmark::Counter(100.0 * gflops / (std::atof(peak) * kThreads), benchmark::Counter::kIsRate);
}

// Which BLAS FAISS runs on: OpenBLAS says so through openblas_get_config; the reference BLAS has no
// such call. Printed once, beside the results it explains.
void say_blas_once() {
    static const bool said = [] {
        using Config = const char* (*)();
        const auto config = reinterpret_cast<Config>(dlsym(RTLD_DEFAULT, "openblas_get_config"));
        std::fprintf(stderr, "bench_fv: FAISS's BLAS: %s\n",
                     config ? config() : "not OpenBLAS (the reference libblas?): M:N figures understate FAISS");
        return true;
    }();
    (void)said;
}

// ---- P8 / P10: f32 inner product vs IndexFlatIP ----------------------------------------------

void check_dense_pair(benchmark::State& st, uint32_t nq) {
    say_blas_once();
    Dense& d = dense(false);
    const std::vector<float> q = queries(nq, 100 + nq);
    std::vector<kes_fv_result> ours(size_t{nq} * kK);
    std::vector<uint32_t> counts(nq);
    const kes_fv_search_params p = top(kK);
    if (kes_fv_search_batch(d.f32.get(), q.data(), nq, q.size(), &p, ours.data(), ours.size(), counts.data()) !=
        KES_OK) {
        st.SkipWithError(kes_last_error());
        return;
    }
    std::vector<float> dist(size_t{nq} * kK);
    std::vector<faiss::Index::idx_t> labels(size_t{nq} * kK);
    omp_set_num_threads(kThreads);
    d.flat->search(nq, q.data(), kK, dist.data(), labels.data());
    const std::string diff = compare(ours, dist, labels, nq, kK);
    if (!diff.empty()) st.SkipWithError(("top-k differs from FAISS: " + diff).c_str());
}

// (No ->Iterations(1) for the slow P10 cases: Google Benchmark stops after one iteration longer than
// its minimum time anyway, and an "iterations:1" suffix would break the "<case>:<impl>" naming.)
void bench_dense_kestrel(benchmark::State& st, uint32_t nq) {
    check_dense_pair(st, nq);
    if (st.error_occurred()) return;
    Dense& d = dense(false);
    const std::vector<float> q = queries(nq, 100 + nq);
    std::vector<kes_fv_result> res(size_t{nq} * kK);
    std::vector<uint32_t> counts(nq);
    const kes_fv_search_params p = top(kK);
    for (auto _ : st)
        kes_fv_search_batch(d.f32.get(), q.data(), nq, q.size(), &p, res.data(), res.size(), counts.data());
    set_counters(st, static_cast<double>(d.n) * kDim * 4);
    set_flop_counters(st, 2.0 * nq * static_cast<double>(d.n) * kDim);
}

void bench_dense_faiss(benchmark::State& st, uint32_t nq) {
    Dense& d = dense(false);
    const std::vector<float> q = queries(nq, 100 + nq);
    std::vector<float> dist(size_t{nq} * kK);
    std::vector<faiss::Index::idx_t> labels(size_t{nq} * kK);
    omp_set_num_threads(kThreads);
    for (auto _ : st) d.flat->search(nq, q.data(), kK, dist.data(), labels.data());
    set_counters(st, static_cast<double>(d.n) * kDim * 4);
    set_flop_counters(st, 2.0 * nq * static_cast<double>(d.n) * kDim);
}

// ---- P9: int8 against the DRAM floor ---------------------------------------------------------

void bench_int8_kestrel(benchmark::State& st) {
    Dense& d = dense(true);
    // recall@10 of the int8 scan (no re-rank) against the exact f32 top-10, over 32 queries.
    const uint32_t nq = 32;
    const std::vector<float> qs = queries(nq, 900);
    std::vector<kes_fv_result> a(size_t{nq} * kK), b(size_t{nq} * kK);
    std::vector<uint32_t> ca(nq), cb(nq);
    const kes_fv_search_params p = top(kK);
    kes_fv_search_batch(d.f32.get(), qs.data(), nq, qs.size(), &p, a.data(), a.size(), ca.data());
    kes_fv_search_batch(d.i8.get(), qs.data(), nq, qs.size(), &p, b.data(), b.size(), cb.data());
    uint32_t hit = 0;
    for (uint32_t q = 0; q < nq; ++q)
        for (uint32_t i = 0; i < kK; ++i)
            for (uint32_t j = 0; j < kK; ++j) hit += a[q * kK + i].offset == b[q * kK + j].offset;
    const std::vector<float> q = queries(1, 101);
    kes_fv_result res[kK];
    uint32_t count = 0;
    for (auto _ : st) kes_fv_search(d.i8.get(), q.data(), kDim, &p, res, kK, &count);
    st.counters["recall@10"] = static_cast<double>(hit) / (nq * kK);
    set_counters(st, static_cast<double>(d.n) * (kDim + 4));
}

// One read of as many bytes as the int8 scan reads (codes + scales), split over the same pool: the
// time no scan of this data can beat on this machine.
void bench_int8_floor(benchmark::State& st) {
    Dense& d = dense(true);
    const size_t bytes = static_cast<size_t>(d.n) * (kDim + 4);
    const size_t words = bytes / 8;
    std::unique_ptr<uint64_t[]> buf(new uint64_t[words]);
    for (size_t i = 0; i < words; ++i) buf[i] = i;
    struct Ctx {
        const uint64_t* p;
        std::atomic<uint64_t> sink{0};
    } ctx{buf.get()};
    const uint64_t blocks = words / 4096;
    auto read = [](void* ud, uint64_t b, uint64_t e, uint32_t) {
        Ctx* c = static_cast<Ctx*>(ud);
        uint64_t s[8] = {};
        for (uint64_t i = b * 4096; i < e * 4096; i += 8)
            for (int j = 0; j < 8; ++j) s[j] += c->p[i + j];
        c->sink += s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
    };
    for (auto _ : st)
        kes_thread_pool_parallel_for(kes_thread_pool_default(), blocks, (blocks + kThreads - 1) / kThreads, read, &ctx);
    benchmark::DoNotOptimize(ctx.sink.load());
    set_counters(st, static_cast<double>(blocks) * 4096 * 8);
}

// ---- P11: PQ36 vs IndexPQ --------------------------------------------------------------------

struct Pq {
    uint64_t n = 0;
    Repo repo;
    kes_fv_pq* pq = nullptr;
    std::unique_ptr<faiss::IndexPQ> index;
};

Pq& pq_data(uint64_t n) {
    static std::map<uint64_t, Pq> cache;
    Pq& d = cache[n];
    if (d.repo) return d;
    d.n = n;
    // A random codebook and random codes: the scan's cost does not depend on what they encode.
    std::vector<float> codebook(size_t{256} * kDim);
    Rng rng{77};
    for (float& v : codebook) v = rng.uniform();
    if (kes_fv_pq_create(kDim, &d.pq) != KES_OK ||
        kes_fv_pq_set_codebook(d.pq, codebook.data(), codebook.size()) != KES_OK)
        std::abort();
    kes_fv_config c;
    kes_fv_config_init(&c);
    c.kind = KES_FV_PQ36;
    kes_fv_repo* r = nullptr;
    if (kes_fv_repo_create(&c, &r) != KES_OK) std::abort();
    d.repo.reset(r);
    d.index = std::make_unique<faiss::IndexPQ>(kDim, 32, 8);
    d.index->pq.centroids = codebook;
    d.index->is_trained = true;
    d.index->codes.resize(static_cast<size_t>(n) * 32);
    const uint64_t chunk = 65536;
    std::vector<uint8_t> rec(chunk * KES_FV_PQ36_BYTES, 0);
    for (uint64_t first = 0; first < n; first += chunk) {
        const uint64_t cnt = std::min(chunk, n - first);
        for (uint64_t j = 0; j < cnt; ++j) {
            uint8_t* p = &rec[j * KES_FV_PQ36_BYTES];
            for (int m = 0; m < 32; m += 8) {
                const uint64_t w = rng.next();
                std::memcpy(p + 4 + m, &w, 8);
            }
            std::memcpy(&d.index->codes[(first + j) * 32], p + 4, 32);
        }
        if (kes_fv_repo_add(d.repo.get(), 0, 0, static_cast<uint32_t>(first), rec.data(), cnt,
                            cnt * KES_FV_PQ36_BYTES) != KES_OK)
            std::abort();
    }
    d.index->ntotal = static_cast<faiss::Index::idx_t>(n);
    return d;
}

// Kestrel's query path for a float query: the ADC table, then the scan (FAISS's search does both too).
kes_status pq_search(Pq& d, const float* q, std::vector<float>& table, kes_fv_result* res, uint32_t* count) {
    const kes_fv_search_params p = top(kK);
    const kes_status st = kes_fv_pq_compute_table(d.pq, q, kDim, table.data(), table.size());
    return st != KES_OK ? st : kes_fv_search(d.repo.get(), table.data(), table.size(), &p, res, kK, count);
}

void bench_pq_kestrel(benchmark::State& st, uint64_t n) {
    Pq& d = pq_data(n);
    const std::vector<float> q = queries(4, 500);
    std::vector<float> table(KES_FV_PQ36_TABLE_FLOATS);
    std::vector<kes_fv_result> ours(4 * kK);
    std::vector<float> dist(4 * kK);
    std::vector<faiss::Index::idx_t> labels(4 * kK);
    uint32_t count = 0;
    for (uint32_t i = 0; i < 4; ++i)
        if (pq_search(d, q.data() + i * kDim, table, ours.data() + i * kK, &count) != KES_OK)
            return st.SkipWithError(kes_last_error());
    omp_set_num_threads(kThreads);
    d.index->search(4, q.data(), kK, dist.data(), labels.data());
    const std::string diff = compare(ours, dist, labels, 4, kK);
    if (!diff.empty()) return st.SkipWithError(("top-k differs from FAISS: " + diff).c_str());
    for (auto _ : st) pq_search(d, q.data(), table, ours.data(), &count);
    set_counters(st, static_cast<double>(n) * 32);
}

void bench_pq_faiss(benchmark::State& st, uint64_t n) {
    Pq& d = pq_data(n);
    const std::vector<float> q = queries(1, 500);
    std::vector<float> dist(kK);
    std::vector<faiss::Index::idx_t> labels(kK);
    omp_set_num_threads(kThreads);
    for (auto _ : st) d.index->search(1, q.data(), kK, dist.data(), labels.data());
    set_counters(st, static_cast<double>(n) * 32);
}

int register_all() {
    using benchmark::RegisterBenchmark;
    const uint64_t n = env_u64("KES_BENCH_FV_N", 1000000);
    const uint64_t large = env_u64("KES_BENCH_FV_N_LARGE", 10000000);
    const std::string ns = "/N=" + std::to_string(n);
    RegisterBenchmark(("fv_p8_1xN_f32_d512:kestrel" + ns).c_str(), bench_dense_kestrel, 1u)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    RegisterBenchmark(("fv_p8_1xN_f32_d512:faiss" + ns).c_str(), bench_dense_faiss, 1u)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    RegisterBenchmark(("fv_p9_1xN_int8_d512:kestrel" + ns).c_str(), bench_int8_kestrel)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    RegisterBenchmark(("fv_p9_1xN_int8_d512:dram_floor" + ns).c_str(), bench_int8_floor)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    RegisterBenchmark(("fv_p10_256xN_f32_d512:kestrel" + ns).c_str(), bench_dense_kestrel, kBatch)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    RegisterBenchmark(("fv_p10_256xN_f32_d512:faiss" + ns).c_str(), bench_dense_faiss, kBatch)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    for (uint64_t size : {n, large}) {
        if (size == 0) continue;
        const std::string s = "/N=" + std::to_string(size);
        RegisterBenchmark(("fv_p11_pq36_1xN:kestrel" + s).c_str(), bench_pq_kestrel, size)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
        RegisterBenchmark(("fv_p11_pq36_1xN:faiss" + s).c_str(), bench_pq_faiss, size)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
    }
    return 0;
}

[[maybe_unused]] const int registered = register_all();

}  // namespace
