// f32 re-rank of f16/int8 shortlists: with a long enough shortlist the result is the exact f32 top-k.
#include <unistd.h>
#include <string>

#include "fv_test_util.hpp"

using namespace fvt;

namespace {

Repo make_kept(uint32_t dim, kes_dtype storage, kes_fv_metric metric) {
    kes_fv_config c;
    kes_fv_config_init(&c);
    c.kind = KES_FV_DENSE;
    c.dim = dim;
    c.storage = storage;
    c.metric = metric;
    c.keep_f32 = 1;
    kes_fv_repo* r = nullptr;
    EXPECT_EQ(kes_fv_repo_create(&c, &r), KES_OK) << kes_last_error();
    return Repo(r);
}

// Exact reference over the caller's f32 vectors (one library (2, 3)), in double.
std::vector<Ref> exact(const std::vector<float>& x, uint32_t dim, const float* query, kes_fv_metric metric) {
    const size_t n = x.size() / dim;
    auto unit = [&](const float* v) {
        std::vector<double> u(v, v + dim);
        double n2 = 0;
        for (double t : u) n2 += t * t;
        for (double& t : u) t = n2 > 0 ? t / std::sqrt(n2) : 0;
        return u;
    };
    std::vector<double> q(query, query + dim);
    if (metric == KES_FV_METRIC_COSINE) q = unit(query);
    std::vector<Ref> out;
    for (size_t i = 0; i < n; ++i) {
        std::vector<double> v(x.begin() + i * dim, x.begin() + (i + 1) * dim);
        if (metric == KES_FV_METRIC_COSINE) {
            // The stored copy is the float-rounded unit vector, as the repository normalises in float.
            std::vector<double> u = unit(&x[i * dim]);
            for (uint32_t j = 0; j < dim; ++j) v[j] = static_cast<float>(u[j]);
        }
        double s = 0;
        for (uint32_t j = 0; j < dim; ++j)
            s += metric == KES_FV_METRIC_L2 ? (q[j] - v[j]) * (q[j] - v[j]) : q[j] * v[j];
        out.push_back({s, 2, 3, static_cast<uint32_t>(i)});
    }
    const bool larger = metric != KES_FV_METRIC_L2;
    std::sort(out.begin(), out.end(), [&](const Ref& a, const Ref& b) {
        if (a.score != b.score) return larger ? a.score > b.score : a.score < b.score;
        return a.offset < b.offset;
    });
    return out;
}

TEST(FvRerank, ShortlistRerankGivesTheExactF32TopK) {
    const uint32_t dim = 48, n = 3000, k = 10;
    for (kes_dtype storage : {KES_I8, KES_F16})
        for (kes_fv_metric metric : {KES_FV_METRIC_IP, KES_FV_METRIC_COSINE, KES_FV_METRIC_L2}) {
            SCOPED_TRACE(std::to_string(storage) + "/" + std::to_string(metric));
            Repo r = make_kept(dim, storage, metric);
            const auto x = random_floats(size_t{n} * dim, 11);
            add_dense(r.get(), 2, 3, x, dim);
            ASSERT_EQ(kes_fv_repo_delete(r.get(), 2, 3, 17), KES_OK);
            // modify: the f32 copy follows
            const auto y = random_floats(dim, 12);
            ASSERT_EQ(kes_fv_repo_modify(r.get(), 2, 3, 18, y.data(), dim * 4), KES_OK);
            std::vector<float> xs = x;
            std::copy(y.begin(), y.end(), xs.begin() + 18 * dim);
            const uint32_t queries = 9;  // ≥ 2 × threads on this machine: the M:N block path too
            const auto qs = random_floats(size_t{queries} * dim, 13);
            kes_fv_search_params p = params(k);
            p.rerank = 200;
            std::vector<kes_fv_result> batch(size_t{queries} * k);
            std::vector<uint32_t> counts(queries);
            ASSERT_EQ(kes_fv_search_batch(r.get(), qs.data(), queries, qs.size(), &p, batch.data(), batch.size(),
                                          counts.data()),
                      KES_OK)
                << kes_last_error();
            for (uint32_t qi = 0; qi < queries; ++qi) {
                std::vector<Ref> ref = exact(xs, dim, &qs[qi * dim], metric);
                ref.erase(std::remove_if(ref.begin(), ref.end(), [](const Ref& e) { return e.offset == 17; }),
                          ref.end());
                std::vector<kes_fv_result> one(k);
                uint32_t count = 0;
                ASSERT_EQ(kes_fv_search(r.get(), &qs[qi * dim], dim, &p, one.data(), k, &count), KES_OK);
                expect_same_topk(one.data(), count, ref, k, 1e-6);
                expect_same_topk(&batch[qi * k], counts[qi], ref, k, 1e-6);
            }
        }
}

TEST(FvRerank, ThresholdAppliesToTheExactScores) {
    const uint32_t dim = 16;
    Repo r = make_kept(dim, KES_I8, KES_FV_METRIC_L2);
    const auto x = random_floats(size_t{500} * dim, 3);
    add_dense(r.get(), 2, 3, x, dim);
    const auto q = random_floats(dim, 4);
    const auto ref = exact(x, dim, q.data(), KES_FV_METRIC_L2);
    kes_fv_search_params p = params(20);
    p.rerank = 100;
    p.use_threshold = 1;
    p.threshold = static_cast<float>((ref[4].score + ref[5].score) / 2);  // exactly 5 pass
    std::vector<kes_fv_result> res(20);
    uint32_t count = 0;
    ASSERT_EQ(kes_fv_search(r.get(), q.data(), dim, &p, res.data(), 20, &count), KES_OK) << kes_last_error();
    expect_same_topk(res.data(), count, std::vector<Ref>(ref.begin(), ref.begin() + 5), 20, 1e-6);
}

TEST(FvRerank, F32CopiesAreSavedAndOnlyAllowedWhereTheyHelp) {
    Repo r = make_kept(8, KES_F16, KES_FV_METRIC_IP);
    add_dense(r.get(), 2, 3, random_floats(8 * 40, 1), 8);
    const std::string path = std::string(KES_TEST_TMPDIR) + "/fv_rerank_" + std::to_string(getpid()) + ".kfv";
    ASSERT_EQ(kes_fv_repo_save(r.get(), path.c_str()), KES_OK);
    kes_fv_repo* raw = nullptr;
    ASSERT_EQ(kes_fv_repo_load(path.c_str(), &raw), KES_OK) << kes_last_error();
    ::unlink(path.c_str());
    Repo loaded(raw);
    kes_fv_config c;
    c.struct_size = sizeof c;
    ASSERT_EQ(kes_fv_repo_get_config(loaded.get(), &c), KES_OK);
    EXPECT_EQ(c.keep_f32, 1u);
    const auto q = random_floats(8, 2);
    kes_fv_search_params p = params(5);
    p.rerank = 20;
    std::vector<kes_fv_result> a(5), b(5);
    uint32_t ca = 0, cb = 0;
    ASSERT_EQ(kes_fv_search(r.get(), q.data(), 8, &p, a.data(), 5, &ca), KES_OK);
    ASSERT_EQ(kes_fv_search(loaded.get(), q.data(), 8, &p, b.data(), 5, &cb), KES_OK);
    ASSERT_EQ(ca, cb);
    for (uint32_t i = 0; i < ca; ++i) {
        EXPECT_EQ(a[i].offset, b[i].offset);
        EXPECT_EQ(a[i].distance, b[i].distance);
    }
    p.rerank = 4;  // < k
    EXPECT_EQ(kes_fv_search(r.get(), q.data(), 8, &p, a.data(), 5, &ca), KES_ERR_INVALID_ARGUMENT);
    Repo plain = make_dense(8, KES_I8, KES_FV_METRIC_IP);
    p.rerank = 20;
    EXPECT_EQ(kes_fv_search(plain.get(), q.data(), 8, &p, a.data(), 5, &ca), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("keep_f32"), std::string::npos) << kes_last_error();
    kes_fv_config bad;
    kes_fv_config_init(&bad);
    bad.keep_f32 = 1;  // PQ36
    EXPECT_EQ(kes_fv_repo_create(&bad, &raw), KES_ERR_INVALID_ARGUMENT);
    bad.kind = KES_FV_DENSE;
    bad.dim = 4;  // f32 storage
    EXPECT_EQ(kes_fv_repo_create(&bad, &raw), KES_ERR_INVALID_ARGUMENT);
    // An app compiled against the first version of the structs gets no copies and no re-rank.
    bad.storage = KES_I8;
    bad.struct_size = static_cast<uint32_t>(offsetof(kes_fv_config, keep_f32));
    ASSERT_EQ(kes_fv_repo_create(&bad, &raw), KES_OK) << kes_last_error();
    Repo old(raw);
    c.struct_size = sizeof c;
    kes_fv_repo_get_config(old.get(), &c);
    EXPECT_EQ(c.keep_f32, 0u);
    p.struct_size = static_cast<uint32_t>(offsetof(kes_fv_search_params, rerank));
    p.rerank = 999;  // beyond struct_size: ignored
    add_dense(old.get(), 0, 0, random_floats(4 * 3, 1), 4);
    const auto q4 = random_floats(4, 5);
    EXPECT_EQ(kes_fv_search(old.get(), q4.data(), 4, &p, a.data(), 5, &ca), KES_OK) << kes_last_error();
}

}  // namespace
