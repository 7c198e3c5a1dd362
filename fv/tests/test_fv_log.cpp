// Append log: changes made after the last snapshot come back after a "crash" (destroying the
// repository without a checkpoint), a torn last record is ignored, other damage is refused.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "fv_test_util.hpp"

using namespace fvt;

namespace {

std::string tmp_path(const char* name) {
    return std::string(KES_TEST_TMPDIR) + "/fvlog_" + std::to_string(getpid()) + "_" + name;
}

std::vector<uint8_t> read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_all(const std::string& path, const std::vector<uint8_t>& b) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

Repo open_logged(const std::string& snap, const std::string& log, kes_status want = KES_OK) {
    kes_fv_repo* raw = nullptr;
    EXPECT_EQ(kes_fv_repo_open_logged(snap.c_str(), log.c_str(), &raw), want) << kes_last_error();
    return Repo(raw);
}

// Every stored vector and tombstone of the listed libraries is equal.
void expect_same(const kes_fv_repo* a, const kes_fv_repo* b, const Libs& libs) {
    uint64_t la = 0, lb = 0;
    kes_fv_repo_count(a, &la, nullptr);
    kes_fv_repo_count(b, &lb, nullptr);
    EXPECT_EQ(la, lb);
    for (const auto& l : libs) {
        uint32_t sa = 0, sb = 0;
        kes_fv_repo_library_size(a, l.first, l.second, &sa);
        kes_fv_repo_library_size(b, l.first, l.second, &sb);
        ASSERT_EQ(sa, sb) << l.first << "," << l.second;
        for (uint32_t off = 0; off < sa; ++off) {
            std::vector<float> va, vb;
            try {
                va = kes::fv::stored_vector(a, l.first, l.second, off);
            } catch (...) {
            }
            try {
                vb = kes::fv::stored_vector(b, l.first, l.second, off);
            } catch (...) {
            }
            ASSERT_EQ(va, vb) << "offset " << off;
        }
    }
}

// The same changes on `r` (logged or not): adds to two libraries, a delete, a modify, a range delete
// and an add after it.
void changes(kes_fv_repo* r, int step_limit = 100) {
    int step = 0;
    auto x = [](uint32_t n, uint32_t seed) { return random_floats(size_t{n} * 8, seed); };
    if (step++ < step_limit) add_dense(r, 0, 0, x(5, 1), 8);
    if (step++ < step_limit) add_dense(r, 9, 9, x(3, 2), 8);
    if (step++ < step_limit) {
        ASSERT_EQ(kes_fv_repo_delete(r, 0, 0, 1), KES_OK) << kes_last_error();
    }
    if (step++ < step_limit) {
        ASSERT_EQ(kes_fv_repo_modify(r, 0, 0, 2, x(1, 3).data(), 32), KES_OK);
    }
    if (step++ < step_limit) {
        const kes_fv_range range{9, 9, 0, 1023};
        ASSERT_EQ(kes_fv_repo_delete_range(r, &range, nullptr), KES_OK);
    }
    if (step++ < step_limit) add_dense(r, 9, 9, x(4, 4), 8);
}

const Libs kLibs{{0, 0}, {9, 9}};

struct Files {
    std::string snap, log;
    explicit Files(const char* name) : snap(tmp_path((std::string(name) + ".kfv").c_str())), log(snap + ".log") {
        ::unlink(snap.c_str());
        ::unlink(log.c_str());
        Repo r = make_dense(8, KES_F32, KES_FV_METRIC_L2);
        add_dense(r.get(), 0, 0, random_floats(8 * 2, 99), 8);  // in the snapshot
        EXPECT_EQ(kes_fv_repo_save(r.get(), snap.c_str()), KES_OK) << kes_last_error();
    }
    ~Files() {
        ::unlink(snap.c_str());
        ::unlink(log.c_str());
    }
    Repo reference(int step_limit = 100) const {
        kes_fv_repo* raw = nullptr;
        EXPECT_EQ(kes_fv_repo_load(snap.c_str(), &raw), KES_OK);
        Repo r(raw);
        changes(r.get(), step_limit);
        return r;
    }
};

TEST(FvLog, ChangesAfterTheSnapshotSurviveACrash) {
    Files f("crash");
    {
        Repo r = open_logged(f.snap, f.log);
        ASSERT_TRUE(r);
        changes(r.get());
    }  // "crash": no checkpoint
    Repo back = open_logged(f.snap, f.log);
    ASSERT_TRUE(back);
    expect_same(back.get(), f.reference().get(), kLibs);
    // The reopened repository keeps logging: one more add survives another crash.
    add_dense(back.get(), 0, 0, random_floats(8, 7), 8);
    back.reset();
    Repo again = open_logged(f.snap, f.log);
    Repo ref = f.reference();
    add_dense(ref.get(), 0, 0, random_floats(8, 7), 8);
    expect_same(again.get(), ref.get(), kLibs);
}

TEST(FvLog, ATornLastRecordIsIgnoredAndCutOff) {
    Files f("torn");
    {
        Repo r = open_logged(f.snap, f.log);
        changes(r.get());
    }
    const auto full = read_all(f.log);
    const size_t last_add = 56 + 4 * 8 * 4;  // header + 4 vectors of 8 floats
    ASSERT_GT(full.size(), last_add);
    for (size_t cut : {size_t{1}, size_t{20}, size_t{56}, last_add - 60, last_add - 1}) {
        write_all(f.log, std::vector<uint8_t>(full.begin(), full.end() - static_cast<std::ptrdiff_t>(cut)));
        Repo back = open_logged(f.snap, f.log);
        ASSERT_TRUE(back) << "cut " << cut;
        expect_same(back.get(), f.reference(5).get(), kLibs);
        EXPECT_EQ(read_all(f.log).size(), full.size() - last_add) << "the torn record is cut off";
    }
    // Space allocated but never written (zeros) after the last record is a torn tail too.
    std::vector<uint8_t> zeros = full;
    zeros.resize(full.size() + 100, 0);
    write_all(f.log, zeros);
    Repo z = open_logged(f.snap, f.log);
    ASSERT_TRUE(z);
    expect_same(z.get(), f.reference().get(), kLibs);
    // The last record complete but with a damaged payload: torn as well.
    std::vector<uint8_t> bad = full;
    bad[bad.size() - 3] ^= 1;
    write_all(f.log, bad);
    Repo p = open_logged(f.snap, f.log);
    ASSERT_TRUE(p);
    expect_same(p.get(), f.reference(5).get(), kLibs);
}

TEST(FvLog, DamageBeforeTheLastRecordIsCorruptData) {
    Files f("damage");
    {
        Repo r = open_logged(f.snap, f.log);
        changes(r.get());
    }
    const auto full = read_all(f.log);
    for (size_t i : {size_t{0}, size_t{9}, size_t{60}, size_t{56 + 160 + 5}}) {
        std::vector<uint8_t> bad = full;
        bad[i] ^= 0x40;
        write_all(f.log, bad);
        kes_fv_repo* raw = reinterpret_cast<kes_fv_repo*>(0x1);
        EXPECT_EQ(kes_fv_repo_open_logged(f.snap.c_str(), f.log.c_str(), &raw), KES_ERR_CORRUPT_DATA) << "byte " << i;
        EXPECT_EQ(raw, nullptr);
        EXPECT_EQ(read_all(f.log), bad) << "a refused log is left as it was";
    }
}

TEST(FvLog, CheckpointEmptiesTheLogAndNothingIsReplayedTwice) {
    Files f("checkpoint");
    Repo r = open_logged(f.snap, f.log);
    changes(r.get(), 3);
    const auto before = read_all(f.log);
    ASSERT_FALSE(before.empty());
    // A crash between the snapshot's rename and the log's truncation: snapshot new, log still full.
    ASSERT_EQ(kes_fv_repo_save(r.get(), f.snap.c_str()), KES_OK);
    {
        Repo back = open_logged(f.snap, f.log);
        ASSERT_TRUE(back);
        expect_same(back.get(), f.reference(0).get(), kLibs);  // reference from the new snapshot, unchanged
        expect_same(back.get(), r.get(), kLibs);
    }
    ASSERT_EQ(kes_fv_repo_checkpoint(r.get(), f.snap.c_str()), KES_OK) << kes_last_error();
    EXPECT_TRUE(read_all(f.log).empty());
    add_dense(r.get(), 0, 0, random_floats(8, 5), 8);  // logged after the checkpoint
    r.reset();
    Repo back = open_logged(f.snap, f.log);
    uint32_t size = 0;
    kes_fv_repo_library_size(back.get(), 0, 0, &size);
    EXPECT_EQ(size, 2u + 5u + 1u);
}

TEST(FvLog, ALogFromAnotherRepositoryIsRefused) {
    Files f("other");
    {
        Repo r = open_logged(f.snap, f.log);
        add_dense(r.get(), 4, 4, random_floats(8 * 3, 1), 8);
    }
    // A different snapshot where library (4, 4) already has features: offsets no longer match.
    Repo other = make_dense(8, KES_F32, KES_FV_METRIC_L2);
    add_dense(other.get(), 4, 4, random_floats(8, 2), 8);
    ASSERT_EQ(kes_fv_repo_save(other.get(), f.snap.c_str()), KES_OK);
    Repo r = open_logged(f.snap, f.log, KES_ERR_CORRUPT_DATA);
    EXPECT_FALSE(r);
    EXPECT_NE(std::string(kes_last_error()).find("does not apply"), std::string::npos) << kes_last_error();
}

TEST(FvLog, AFailedWriteChangesNothingAndIsNotLogged) {
    Files f("failed");
    Repo r = open_logged(f.snap, f.log);
    const auto x = random_floats(8, 3);
    EXPECT_EQ(kes_fv_repo_add(r.get(), 0, 0, 7, x.data(), 1, 32), KES_ERR_INVALID_ARGUMENT);  // wrong offset
    EXPECT_EQ(kes_fv_repo_delete(r.get(), 0, 0, 50), KES_ERR_NOT_FOUND);
    EXPECT_TRUE(read_all(f.log).empty());
}

TEST(FvLog, CheckpointsWhileAddingLoseNothing) {
    Files f("concurrent");
    Repo r = open_logged(f.snap, f.log);
    std::atomic<bool> done{false};
    std::thread writer([&] {
        for (uint32_t i = 0; i < 40; ++i) add_dense(r.get(), 1, 1, random_floats(8, i), 8);
        done = true;
    });
    std::thread searcher([&] {
        const auto q = random_floats(8, 1);
        const kes_fv_search_params p = params(3);
        kes_fv_result res[3];
        uint32_t count = 0;
        while (!done) ASSERT_EQ(kes_fv_search(r.get(), q.data(), 8, &p, res, 3, &count), KES_OK);
    });
    while (!done) ASSERT_EQ(kes_fv_repo_checkpoint(r.get(), f.snap.c_str()), KES_OK) << kes_last_error();
    writer.join();
    searcher.join();
    r.reset();  // crash after the last add: part of it in the snapshot, the rest in the log
    Repo back = open_logged(f.snap, f.log);
    uint32_t size = 0;
    kes_fv_repo_library_size(back.get(), 1, 1, &size);
    EXPECT_EQ(size, 40u);
}

TEST(FvLog, EveryFlippedByteOfACheckpointIsCorruptData) {
    Files f("flip");
    Repo r = open_logged(f.snap, f.log);
    changes(r.get(), 2);
    ASSERT_EQ(kes_fv_repo_checkpoint(r.get(), f.snap.c_str()), KES_OK);
    const auto bytes = read_all(f.snap);
    for (size_t i = 0; i < bytes.size(); ++i) {
        std::vector<uint8_t> bad = bytes;
        bad[i] ^= 0x08;
        kes_fv_repo* raw = nullptr;
        ASSERT_EQ(kes_fv_repo_load_memory(bad.data(), bad.size(), &raw), KES_ERR_CORRUPT_DATA) << "byte " << i;
    }
}

// The real crash: a child process adds one vector per call and acknowledges each on a pipe; it is
// killed (SIGKILL) at a different point each round. Every acknowledged add must be back, in order,
// plus at most the one in flight, whatever the log's last record looked like at the kill.
TEST(FvLog, KilledWhileAddingKeepsEveryAcknowledgedAdd) {
    for (uint32_t round = 0; round < 4; ++round) {
        Files f(("kill" + std::to_string(round)).c_str());
        int fds[2];
        ASSERT_EQ(::pipe(fds), 0);
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            ::close(fds[0]);
            kes_fv_repo* r = nullptr;
            if (kes_fv_repo_open_logged(f.snap.c_str(), f.log.c_str(), &r) != KES_OK) ::_exit(3);
            for (uint32_t i = 0;; ++i) {
                std::vector<float> x(8, static_cast<float>(i));
                if (kes_fv_repo_add(r, 0, 0, 2 + i, x.data(), 1, 32) != KES_OK) ::_exit(4);
                if (::write(fds[1], &i, sizeof i) != sizeof i) ::_exit(5);
            }
        }
        ::close(fds[1]);
        uint32_t acked = 0, i = 0;
        while (acked < 3 + round * 5 && ::read(fds[0], &i, sizeof i) == sizeof i) acked = i + 1;
        ::kill(pid, SIGKILL);
        while (::read(fds[0], &i, sizeof i) == sizeof i) acked = i + 1;  // acknowledged before it died
        ::close(fds[0]);
        int status = 0;
        ::waitpid(pid, &status, 0);
        ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
        Repo back = open_logged(f.snap, f.log);
        ASSERT_TRUE(back);
        uint32_t size = 0;
        kes_fv_repo_library_size(back.get(), 0, 0, &size);
        EXPECT_GE(size, 2 + acked) << "round " << round;
        EXPECT_LE(size, 2 + acked + 1) << "round " << round;
        for (uint32_t off = 2; off < size; ++off)
            EXPECT_EQ(kes::fv::stored_vector(back.get(), 0, 0, off), std::vector<float>(8, float(off - 2)));
    }
}

}  // namespace
