// Save/load: round trips, crash-safe replacement, and every damaged file refused cleanly.
#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "fv_test_util.hpp"

using namespace fvt;

namespace {

const kes_fv_range kAll{0, 1023, 0, 1023};

std::string tmp_path(const char* name) {
    return std::string(KES_TEST_TMPDIR) + "/fv_" + std::to_string(getpid()) + "_" + name;
}

std::vector<uint8_t> read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Saves `r` and returns the file's bytes.
std::vector<uint8_t> saved_bytes(const kes_fv_repo* r, const char* name) {
    const std::string path = tmp_path(name);
    EXPECT_EQ(kes_fv_repo_save(r, path.c_str()), KES_OK) << kes_last_error();
    std::vector<uint8_t> bytes = read_all(path);
    ::unlink(path.c_str());
    return bytes;
}

void expect_same_repo(const kes_fv_repo* a, const kes_fv_repo* b, const Libs& libs) {
    uint64_t la = 0, lb = 0;
    uint32_t na = 0, nb = 0;
    kes_fv_repo_count(a, &la, &na);
    kes_fv_repo_count(b, &lb, &nb);
    EXPECT_EQ(la, lb);
    EXPECT_EQ(na, nb);
    for (const auto& l : libs) {
        uint32_t sa = 0, sb = 0;
        kes_fv_repo_library_size(a, l.first, l.second, &sa);
        kes_fv_repo_library_size(b, l.first, l.second, &sb);
        ASSERT_EQ(sa, sb);
        for (uint32_t off = 0; off < sa; ++off) {
            std::vector<float> va, vb;
            bool da = false, db = false;
            try {
                va = kes::fv::stored_vector(a, l.first, l.second, off);
            } catch (...) {
                da = true;
            }
            try {
                vb = kes::fv::stored_vector(b, l.first, l.second, off);
            } catch (...) {
                db = true;
            }
            ASSERT_EQ(da, db) << "offset " << off;
            ASSERT_EQ(va, vb) << "offset " << off;
        }
    }
}

TEST(FvPersist, SaveThenLoadGivesTheSameRepositoryAndSearches) {
    Repo d = make_dense(20, KES_I8, KES_FV_METRIC_COSINE, 77);
    const Libs libs{{0, 0}, {4, 1023}, {1023, 0}};
    for (const auto& l : libs) add_dense(d.get(), l.first, l.second, random_floats(20 * 150, l.first + l.second), 20);
    ASSERT_EQ(kes_fv_repo_delete(d.get(), 4, 1023, 10), KES_OK);
    const std::string path = tmp_path("dense.kfv");
    ASSERT_EQ(kes_fv_repo_save(d.get(), path.c_str()), KES_OK) << kes_last_error();
    kes_fv_repo* raw = nullptr;
    ASSERT_EQ(kes_fv_repo_load(path.c_str(), &raw), KES_OK) << kes_last_error();
    Repo loaded(raw);
    ::unlink(path.c_str());
    kes_fv_config c;
    c.struct_size = sizeof c;
    ASSERT_EQ(kes_fv_repo_get_config(loaded.get(), &c), KES_OK);
    EXPECT_EQ(c.kind, KES_FV_DENSE);
    EXPECT_EQ(c.dim, 20u);
    EXPECT_EQ(c.storage, KES_I8);
    EXPECT_EQ(c.metric, KES_FV_METRIC_COSINE);
    EXPECT_EQ(c.max_topk, 77u);
    expect_same_repo(d.get(), loaded.get(), libs);
    const auto q = random_floats(20, 5);
    const kes_fv_search_params p = params(30);
    std::vector<kes_fv_result> ra(30), rb(30);
    uint32_t ca = 0, cb = 0;
    ASSERT_EQ(kes_fv_search(d.get(), q.data(), 20, &p, ra.data(), 30, &ca), KES_OK);
    ASSERT_EQ(kes_fv_search(loaded.get(), q.data(), 20, &p, rb.data(), 30, &cb), KES_OK);
    ASSERT_EQ(ca, cb);
    for (uint32_t i = 0; i < ca; ++i) {
        EXPECT_EQ(ra[i].offset, rb[i].offset);
        EXPECT_EQ(ra[i].id1, rb[i].id1);
        EXPECT_EQ(ra[i].distance, rb[i].distance);
    }
    // The loaded repository keeps growing with continuous offsets.
    const auto more = random_floats(20, 9);
    EXPECT_EQ(kes_fv_repo_add(loaded.get(), 4, 1023, 150, more.data(), 1, 80), KES_OK) << kes_last_error();
}

TEST(FvPersist, Pq36AndEmptyRepositoriesRoundTrip) {
    Repo pq = make_pq();
    const Libs libs{{1, 2}, {3, 4}};
    for (const auto& l : libs) add_pq(pq.get(), l.first, l.second, random_pq36(64, l.first));
    ASSERT_EQ(kes_fv_repo_delete(pq.get(), 3, 4, 63), KES_OK);
    const auto bytes = saved_bytes(pq.get(), "pq.kfv");
    kes_fv_repo* raw = nullptr;
    ASSERT_EQ(kes_fv_repo_load_memory(bytes.data(), bytes.size(), &raw), KES_OK) << kes_last_error();
    Repo loaded(raw);
    expect_same_repo(pq.get(), loaded.get(), libs);
    const auto t = random_table(8);
    const kes_fv_search_params p = params(10);
    std::vector<kes_fv_result> res(10);
    uint32_t count = 0;
    ASSERT_EQ(kes_fv_search(loaded.get(), t.data(), t.size(), &p, res.data(), 10, &count), KES_OK);
    expect_same_topk(res.data(), count, brute_force(pq.get(), t.data(), kAll, libs), 10);

    Repo empty = make_dense(3, KES_F16, KES_FV_METRIC_L2);
    const auto eb = saved_bytes(empty.get(), "empty.kfv");
    ASSERT_EQ(kes_fv_repo_load_memory(eb.data(), eb.size(), &raw), KES_OK) << kes_last_error();
    Repo e2(raw);
    uint64_t live = 1;
    kes_fv_repo_count(e2.get(), &live, nullptr);
    EXPECT_EQ(live, 0u);
}

TEST(FvPersist, EveryTruncationIsCorruptData) {
    Repo r = make_dense(4, KES_F32, KES_FV_METRIC_IP);
    add_dense(r.get(), 0, 0, random_floats(4 * 5, 1), 4);
    add_dense(r.get(), 0, 1, random_floats(4 * 3, 2), 4);
    const auto bytes = saved_bytes(r.get(), "trunc.kfv");
    for (size_t n = 0; n < bytes.size(); ++n) {
        kes_fv_repo* raw = reinterpret_cast<kes_fv_repo*>(0x1);
        ASSERT_EQ(kes_fv_repo_load_memory(bytes.data(), n, &raw), KES_ERR_CORRUPT_DATA) << "length " << n;
        ASSERT_EQ(raw, nullptr);
    }
    std::vector<uint8_t> longer = bytes;
    longer.push_back(0);
    kes_fv_repo* raw = nullptr;
    EXPECT_EQ(kes_fv_repo_load_memory(longer.data(), longer.size(), &raw), KES_ERR_CORRUPT_DATA);
    EXPECT_NE(std::string(kes_last_error()).find("after the footer"), std::string::npos) << kes_last_error();
}

TEST(FvPersist, EveryFlippedByteIsCorruptData) {
    Repo r = make_dense(3, KES_I8, KES_FV_METRIC_L2);
    add_dense(r.get(), 2, 3, random_floats(3 * 4, 1), 3);
    ASSERT_EQ(kes_fv_repo_delete(r.get(), 2, 3, 1), KES_OK);
    const auto bytes = saved_bytes(r.get(), "flip.kfv");
    for (size_t i = 0; i < bytes.size(); ++i) {
        std::vector<uint8_t> bad = bytes;
        bad[i] ^= 0x10;
        kes_fv_repo* raw = nullptr;
        ASSERT_EQ(kes_fv_repo_load_memory(bad.data(), bad.size(), &raw), KES_ERR_CORRUPT_DATA) << "byte " << i;
        ASSERT_EQ(raw, nullptr);
    }
}

TEST(FvPersist, SaveReplacesTheFileAndLeavesNoTemporary) {
    Repo r = make_pq();
    add_pq(r.get(), 0, 0, random_pq36(10, 1));
    const std::string path = tmp_path("replace.kfv");
    ASSERT_EQ(kes_fv_repo_save(r.get(), path.c_str()), KES_OK);
    add_pq(r.get(), 0, 0, random_pq36(10, 2));
    ASSERT_EQ(kes_fv_repo_save(r.get(), path.c_str()), KES_OK);
    kes_fv_repo* raw = nullptr;
    ASSERT_EQ(kes_fv_repo_load(path.c_str(), &raw), KES_OK);
    Repo loaded(raw);
    uint32_t size = 0;
    kes_fv_repo_library_size(loaded.get(), 0, 0, &size);
    EXPECT_EQ(size, 20u);
    const std::string stem = path.substr(path.rfind('/') + 1) + ".tmp";
    DIR* dir = opendir(KES_TEST_TMPDIR);
    ASSERT_NE(dir, nullptr);
    while (dirent* e = readdir(dir)) EXPECT_NE(std::string(e->d_name).rfind(stem, 0), 0u) << e->d_name;
    closedir(dir);
    ::unlink(path.c_str());
}

TEST(FvPersist, MissingFilesAndUnwritablePathsAreReported) {
    kes_fv_repo* raw = nullptr;
    EXPECT_EQ(kes_fv_repo_load(tmp_path("does-not-exist").c_str(), &raw), KES_ERR_NOT_FOUND);
    EXPECT_EQ(raw, nullptr);
    Repo r = make_pq();
    EXPECT_EQ(kes_fv_repo_save(r.get(), "/nonexistent-dir/x.kfv"), KES_ERR_IO);
    EXPECT_NE(std::string(kes_last_error()).find("/nonexistent-dir/x.kfv"), std::string::npos) << kes_last_error();
    EXPECT_EQ(kes_fv_repo_save(r.get(), ""), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_fv_repo_load(KES_TEST_TMPDIR, &raw), KES_ERR_IO);  // a directory
    const char junk[] = "definitely not a repository, but long enough to hold a header......";
    EXPECT_EQ(kes_fv_repo_load_memory(junk, sizeof junk, &raw), KES_ERR_CORRUPT_DATA);
    EXPECT_NE(std::string(kes_last_error()).find("bad magic"), std::string::npos) << kes_last_error();
}

}  // namespace

namespace {

TEST(FvPersist, CodebookIsSavedWithThePq36Repository) {
    Repo r = make_pq();
    add_pq(r.get(), 1, 1, random_pq36(8, 1));
    kes_fv_pq* raw_pq = nullptr;
    ASSERT_EQ(kes_fv_pq_create(64, &raw_pq), KES_OK);
    std::unique_ptr<kes_fv_pq, void (*)(kes_fv_pq*)> pq(raw_pq, kes_fv_pq_destroy);
    const auto cb = random_floats(256 * 64, 11);
    ASSERT_EQ(kes_fv_pq_set_codebook(pq.get(), cb.data(), cb.size()), KES_OK);
    ASSERT_EQ(kes_fv_repo_set_pq(r.get(), pq.get()), KES_OK) << kes_last_error();
    const auto bytes = saved_bytes(r.get(), "codebook.kfv");
    kes_fv_repo* raw = nullptr;
    ASSERT_EQ(kes_fv_repo_load_memory(bytes.data(), bytes.size(), &raw), KES_OK) << kes_last_error();
    Repo loaded(raw);
    expect_same_repo(r.get(), loaded.get(), {{1, 1}});
    kes_fv_pq* got = nullptr;
    ASSERT_EQ(kes_fv_repo_get_pq(loaded.get(), &got), KES_OK) << kes_last_error();
    std::unique_ptr<kes_fv_pq, void (*)(kes_fv_pq*)> owned(got, kes_fv_pq_destroy);
    uint32_t dim = 0;
    ASSERT_EQ(kes_fv_pq_dim(got, &dim), KES_OK);
    EXPECT_EQ(dim, 64u);
    std::vector<float> back(cb.size());
    ASSERT_EQ(kes_fv_pq_get_codebook(got, back.data(), back.size()), KES_OK);
    EXPECT_EQ(back, cb);
    // Damage in the codebook section or its record is caught (sampled: the payload is 64 KB).
    for (size_t i = 64; i < bytes.size(); i += (i < 64 + 16 ? 1 : 997)) {
        std::vector<uint8_t> bad = bytes;
        bad[i] ^= 0x04;
        ASSERT_EQ(kes_fv_repo_load_memory(bad.data(), bad.size(), &raw), KES_ERR_CORRUPT_DATA) << "byte " << i;
    }
    for (size_t n = 60; n < 64 + 16 + 256 * 64 * 4 + 8; n += 4099)
        ASSERT_EQ(kes_fv_repo_load_memory(bytes.data(), n, &raw), KES_ERR_CORRUPT_DATA) << "length " << n;
    // Removing it gives a file without the section.
    ASSERT_EQ(kes_fv_repo_set_pq(r.get(), nullptr), KES_OK);
    EXPECT_EQ(saved_bytes(r.get(), "nocodebook.kfv").size(), bytes.size() - 16 - 256 * 64 * 4);
}

TEST(FvPersist, Version1FilesStillLoad) {
    const auto bytes = read_all(std::string(KES_SOURCE_DIR) + "/fv/fuzz/seeds/pq36_two_libraries.kfv");
    ASSERT_GE(bytes.size(), 64u);
    uint32_t version = 0;
    std::memcpy(&version, bytes.data() + 8, 4);
    ASSERT_EQ(version, 1u);
    kes_fv_repo* raw = nullptr;
    ASSERT_EQ(kes_fv_repo_load_memory(bytes.data(), bytes.size(), &raw), KES_OK) << kes_last_error();
    Repo loaded(raw);
    uint64_t live = 0;
    ASSERT_EQ(kes_fv_repo_count(loaded.get(), &live, nullptr), KES_OK);
    EXPECT_GT(live, 0u);
    kes_fv_pq* pq = nullptr;
    EXPECT_EQ(kes_fv_repo_get_pq(loaded.get(), &pq), KES_ERR_NOT_FOUND);
}

}  // namespace
