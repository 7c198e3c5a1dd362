// Loading by mmap (fv.h "Persistence"): kes_fv_repo_load reads feature bytes in place from a private
// mapping of the snapshot; changes are copy-on-write (the file never changes), an add copies the
// library into memory, and a file replaced while mapped leaves the loaded repository intact.
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "fv_test_util.hpp"

using namespace fvt;

namespace {

const kes_fv_range kAll{0, 1023, 0, 1023};

std::string tmp_path(const char* name) {
    return std::string(KES_TEST_TMPDIR) + "/fvm_" + std::to_string(getpid()) + "_" + name;
}

std::vector<uint8_t> read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Repo load(const std::string& path) {
    kes_fv_repo* r = nullptr;
    EXPECT_EQ(kes_fv_repo_load(path.c_str(), &r), KES_OK) << kes_last_error();
    return Repo(r);
}

void expect_search_matches_reference(const kes_fv_repo* r, const Libs& libs, uint32_t dim, uint32_t seed) {
    const std::vector<float> q = random_floats(dim, seed);
    const kes_fv_search_params p = params(8);
    kes_fv_result res[8];
    uint32_t n = 0;
    ASSERT_EQ(kes_fv_search(r, q.data(), q.size(), &p, res, 8, &n), KES_OK) << kes_last_error();
    expect_same_topk(res, n, brute_force(r, q.data(), kAll, libs), 8);
}

TEST(FvMmap, LoadedLibrariesAreMappedAndSearchLikeTheOriginal) {
    for (kes_dtype storage : {KES_F32, KES_F16, KES_I8}) {
        SCOPED_TRACE(storage);
        const uint32_t dim = 24;
        Repo r = make_dense(dim, storage, KES_FV_METRIC_IP);
        add_dense(r.get(), 0, 0, random_floats(300 * dim, 1), dim);
        add_dense(r.get(), 4, 9, random_floats(77 * dim, 2), dim);
        const std::string path = tmp_path("a.kfv");
        ASSERT_EQ(kes_fv_repo_save(r.get(), path.c_str()), KES_OK) << kes_last_error();
        Repo m = load(path);
        ASSERT_TRUE(m);
        // The first library's bytes start at an offset aligned for every element type.
        EXPECT_TRUE(kes::fv::library_is_mapped(m.get(), 0, 0));
        const Libs libs{{0, 0}, {4, 9}};
        for (const auto& l : libs)
            for (uint32_t off = 0; off < 77; off += 7)
                EXPECT_EQ(kes::fv::stored_vector(m.get(), l.first, l.second, off),
                          kes::fv::stored_vector(r.get(), l.first, l.second, off));
        expect_search_matches_reference(m.get(), libs, dim, 3);
        ::unlink(path.c_str());
    }
}

TEST(FvMmap, ModifyIsCopyOnWriteAndAddCopiesTheLibrary) {
    const uint32_t dim = 16;
    Repo r = make_dense(dim, KES_F32, KES_FV_METRIC_L2);
    add_dense(r.get(), 1, 2, random_floats(200 * dim, 1), dim);
    const std::string path = tmp_path("b.kfv");
    ASSERT_EQ(kes_fv_repo_save(r.get(), path.c_str()), KES_OK);
    const std::vector<uint8_t> before = read_all(path);
    Repo m = load(path);
    ASSERT_TRUE(kes::fv::library_is_mapped(m.get(), 1, 2));

    const std::vector<float> v = random_floats(dim, 9, 5.f, 6.f);
    ASSERT_EQ(kes_fv_repo_modify(m.get(), 1, 2, 17, v.data(), v.size() * 4), KES_OK) << kes_last_error();
    ASSERT_EQ(kes_fv_repo_delete(m.get(), 1, 2, 18), KES_OK);
    EXPECT_TRUE(kes::fv::library_is_mapped(m.get(), 1, 2)) << "a modify must not copy the library";
    EXPECT_EQ(kes::fv::stored_vector(m.get(), 1, 2, 17), v);
    EXPECT_EQ(read_all(path), before) << "a change reached the file";
    // The modified vector is the nearest to itself; the deleted one is gone.
    const kes_fv_search_params p = params(3);
    kes_fv_result res[3];
    uint32_t n = 0;
    ASSERT_EQ(kes_fv_search(m.get(), v.data(), v.size(), &p, res, 3, &n), KES_OK);
    ASSERT_EQ(n, 3u);
    EXPECT_EQ(res[0].offset, 17u);
    EXPECT_EQ(res[0].distance, 0.f);
    expect_search_matches_reference(m.get(), {{1, 2}}, dim, 4);

    // An add moves the library into memory with every earlier feature intact.
    const std::vector<float> first = kes::fv::stored_vector(m.get(), 1, 2, 0);
    add_dense(m.get(), 1, 2, random_floats(5 * dim, 5), dim);
    EXPECT_FALSE(kes::fv::library_is_mapped(m.get(), 1, 2));
    EXPECT_EQ(kes::fv::stored_vector(m.get(), 1, 2, 0), first);
    EXPECT_EQ(kes::fv::stored_vector(m.get(), 1, 2, 17), v);
    expect_search_matches_reference(m.get(), {{1, 2}}, dim, 6);
    EXPECT_EQ(read_all(path), before);

    // A second load of the untouched file sees none of it.
    Repo again = load(path);
    EXPECT_EQ(kes::fv::stored_vector(again.get(), 1, 2, 17), kes::fv::stored_vector(r.get(), 1, 2, 17));
    ::unlink(path.c_str());
}

TEST(FvMmap, ReplacingTheFileLeavesTheLoadedRepositoryIntact) {
    const uint32_t dim = 8;
    Repo r = make_pq();
    add_pq(r.get(), 0, 0, random_pq36(150, 1));
    const std::string path = tmp_path("c.kfv");
    ASSERT_EQ(kes_fv_repo_save(r.get(), path.c_str()), KES_OK);
    Repo m = load(path);
    ASSERT_TRUE(kes::fv::library_is_mapped(m.get(), 0, 0));
    // Save something else over the same path (temporary file + rename, as every Kestrel writer).
    Repo other = make_dense(dim, KES_F32, KES_FV_METRIC_IP);
    add_dense(other.get(), 0, 0, random_floats(10 * dim, 2), dim);
    ASSERT_EQ(kes_fv_repo_save(other.get(), path.c_str()), KES_OK);
    // ... and the mapped repository saves itself over it again: it still reads its own old bytes.
    ASSERT_EQ(kes_fv_repo_save(m.get(), path.c_str()), KES_OK) << kes_last_error();
    const std::vector<float> t = random_table(3);
    const kes_fv_search_params p = params(10);
    kes_fv_result res[10];
    uint32_t n = 0;
    ASSERT_EQ(kes_fv_search(m.get(), t.data(), t.size(), &p, res, 10, &n), KES_OK);
    expect_same_topk(res, n, brute_force(r.get(), t.data(), kAll, {{0, 0}}), 10);
    Repo back = load(path);
    ASSERT_EQ(kes_fv_search(back.get(), t.data(), t.size(), &p, res, 10, &n), KES_OK);
    expect_same_topk(res, n, brute_force(r.get(), t.data(), kAll, {{0, 0}}), 10);
    // Deleting mapped libraries and destroying the repository release the mapping cleanly (ASan).
    uint32_t deleted = 0;
    ASSERT_EQ(kes_fv_repo_delete_range(back.get(), &kAll, &deleted), KES_OK);
    EXPECT_EQ(deleted, 1u);
    ::unlink(path.c_str());
}

TEST(FvMmap, MisalignedLibrariesAreCopiedAndStillCorrect) {
    // After a first library of 3 features (3 alive bytes), the second library's f32 data starts at
    // an offset that is not a multiple of 4: it must be copied, not borrowed.
    const uint32_t dim = 4;
    Repo r = make_dense(dim, KES_F32, KES_FV_METRIC_IP);
    add_dense(r.get(), 0, 0, random_floats(3 * dim, 1), dim);
    add_dense(r.get(), 0, 1, random_floats(50 * dim, 2), dim);
    const std::string path = tmp_path("d.kfv");
    ASSERT_EQ(kes_fv_repo_save(r.get(), path.c_str()), KES_OK);
    Repo m = load(path);
    EXPECT_TRUE(kes::fv::library_is_mapped(m.get(), 0, 0));
    EXPECT_FALSE(kes::fv::library_is_mapped(m.get(), 0, 1));
    expect_search_matches_reference(m.get(), {{0, 0}, {0, 1}}, dim, 3);
    ::unlink(path.c_str());
}

TEST(FvMmap, DamagedMappedFilesAreStillCorruptData) {
    const uint32_t dim = 8;
    Repo r = make_dense(dim, KES_I8, KES_FV_METRIC_COSINE);
    add_dense(r.get(), 3, 3, random_floats(40 * dim, 1), dim);
    const std::string path = tmp_path("e.kfv");
    ASSERT_EQ(kes_fv_repo_save(r.get(), path.c_str()), KES_OK);
    std::vector<uint8_t> bytes = read_all(path);
    bytes[64 + 32 + 5] ^= 0x10;  // a feature byte of the first library, read in place
    { std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size()); }
    kes_fv_repo* out = reinterpret_cast<kes_fv_repo*>(1);
    EXPECT_EQ(kes_fv_repo_load(path.c_str(), &out), KES_ERR_CORRUPT_DATA);
    EXPECT_EQ(out, nullptr);
    EXPECT_NE(std::string(kes_last_error()).find("checksum"), std::string::npos) << kes_last_error();
    // An empty file cannot be mapped; it is read and refused the same way.
    { std::ofstream(path, std::ios::binary | std::ios::trunc); }
    EXPECT_EQ(kes_fv_repo_load(path.c_str(), &out), KES_ERR_CORRUPT_DATA);
    ::unlink(path.c_str());
}

}  // namespace
