// The store under faults (issue 15 §6): ENOSPC and EIO injected at every I/O call of a snapshot
// save, an append-log append, a checkpoint and a log's opening (kes::FileOps, kes/file.hpp), once or
// from that call on ("sticky": the disk stays full), plus short writes. Whatever the step, the call
// reports KES_ERR_IO naming the file, the operation and the system error; the last committed state
// loads back exactly (counts, every stored vector, search results); no temporary file is left; no
// half-written record is replayed; and the repository works again once the fault clears.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include "file_faults.hpp"
#include "fv_test_util.hpp"
#include "kes/error.hpp"
#include "log_capture.hpp"

using namespace fvt;
using kes_test::Fault;
using kes_test::FileFaults;
namespace fs = std::filesystem;

namespace {

constexpr uint32_t kDim = 8;

// Everything a caller can observe of a repository.
struct State {
    uint64_t live = 0;
    std::vector<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>> libraries;  // id0, id1, size, live
    std::vector<std::vector<float>> vectors;                                    // empty: deleted
    std::vector<std::tuple<uint32_t, uint32_t, uint32_t, float>> hits;          // top 5 of 3 queries
    bool operator==(const State& o) const {
        return live == o.live && libraries == o.libraries && vectors == o.vectors && hits == o.hits;
    }
    bool operator!=(const State& o) const { return !(*this == o); }
};

std::ostream& operator<<(std::ostream& os, const State& s) {
    os << "{live " << s.live << ", libraries";
    for (const auto& l : s.libraries)
        os << " (" << std::get<0>(l) << "," << std::get<1>(l) << "):" << std::get<2>(l) << "/" << std::get<3>(l);
    return os << "}";
}

State state_of(const kes_fv_repo* r) {
    State s;
    EXPECT_EQ(kes_fv_repo_count(r, &s.live, nullptr), KES_OK);
    for (const auto& l : kes::fv::library_list(r)) {
        s.libraries.emplace_back(l.id0, l.id1, l.size, l.live);
        for (uint32_t off = 0; off < l.size; ++off) {
            try {
                s.vectors.push_back(kes::fv::stored_vector(r, l.id0, l.id1, off));
            } catch (const kes::Error&) {
                s.vectors.emplace_back();
            }
        }
    }
    const kes_fv_search_params p = params(5);
    for (uint32_t q = 0; q < 3; ++q) {
        const auto query = random_floats(kDim, 1000 + q);
        kes_fv_result res[5];
        uint32_t n = 0;
        EXPECT_EQ(kes_fv_search(r, query.data(), kDim, &p, res, 5, &n), KES_OK) << kes_last_error();
        for (uint32_t i = 0; i < n; ++i) s.hits.emplace_back(res[i].id0, res[i].id1, res[i].offset, res[i].distance);
    }
    return s;
}

std::vector<uint8_t> read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A directory of its own per test, so "no temporary file left" is a listing.
struct Dir {
    std::string path;
    explicit Dir(const std::string& name)
        : path(std::string(KES_TEST_TMPDIR) + "/fvfault_" + std::to_string(getpid()) + "_" + name) {
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~Dir() { fs::remove_all(path); }
    std::string file(const std::string& name) const { return path + "/" + name; }
    std::vector<std::string> entries() const {
        std::vector<std::string> out;
        for (const auto& e : fs::directory_iterator(path))
            if (e.is_regular_file()) out.push_back(e.path().filename().string());
        std::sort(out.begin(), out.end());
        return out;
    }
};

Repo load(const std::string& path) {
    kes_fv_repo* raw = nullptr;
    EXPECT_EQ(kes_fv_repo_load(path.c_str(), &raw), KES_OK) << kes_last_error();
    return Repo(raw);
}

Repo open_logged(const std::string& snap, const std::string& log) {
    kes_fv_repo* raw = nullptr;
    EXPECT_EQ(kes_fv_repo_open_logged(snap.c_str(), log.c_str(), &raw), KES_OK) << kes_last_error();
    return Repo(raw);
}

// What a crash right now would leave: a copy of the snapshot and log, opened in d/crash.
Repo reopen_copy(const Dir& d, const std::string& snap, const std::string& log) {
    const std::string dir = d.file("crash");
    fs::create_directories(dir);
    fs::copy_file(snap, dir + "/repo.kfv", fs::copy_options::overwrite_existing);
    fs::copy_file(log, dir + "/repo.kfv.log", fs::copy_options::overwrite_existing);
    return open_logged(dir + "/repo.kfv", dir + "/repo.kfv.log");
}

void add(kes_fv_repo* r, uint32_t id0, uint32_t id1, uint32_t n, uint32_t seed) {
    add_dense(r, id0, id1, random_floats(size_t{n} * kDim, seed), kDim);
}

Repo base_repo() {
    Repo r = make_dense(kDim, KES_F32, KES_FV_METRIC_L2);
    add(r.get(), 0, 0, 6, 1);
    add(r.get(), 3, 4, 3, 2);
    return r;
}

// The word the message of a call failing at `call` must contain: the operation.
const char* operation_word(const std::string& call) {
    if (call == "open") return "open|creat";
    if (call == "write" || call == "pwrite") return "writ";
    if (call == "fsync" || call == "fsync(dir)" || call == "fdatasync") return "sync";
    if (call == "ftruncate") return "truncat";
    if (call == "rename") return "renam";
    if (call == "close") return "clos";
    return "?";
}

bool contains_any(const std::string& s, const std::string& alternatives) {
    size_t from = 0;
    for (;;) {
        const size_t bar = alternatives.find('|', from);
        if (s.find(alternatives.substr(from, bar - from)) != std::string::npos) return true;
        if (bar == std::string::npos) return false;
        from = bar + 1;
    }
}

// KES_ERR_IO with a message naming `file`, the operation that failed and the system error.
void expect_clear_error(kes_status st, const FileFaults& ff, Fault f, const std::string& file) {
    EXPECT_EQ(st, KES_ERR_IO);
    const std::string msg = kes_last_error();
    EXPECT_NE(msg.find(file), std::string::npos) << "the message names " << file << ": " << msg;
    EXPECT_NE(msg.find(std::strerror(f == Fault::kEnospc ? ENOSPC : EIO)), std::string::npos) << msg;
    EXPECT_TRUE(contains_any(msg, operation_word(ff.failed_call())))
        << "the message names the failed " << ff.failed_call() << ": " << msg;
}

bool traced(const FileFaults& ff, const char* call) {
    return std::find(ff.trace().begin(), ff.trace().end(), call) != ff.trace().end();
}

std::string trace_of(const FileFaults& ff) {
    std::string s;
    for (const auto& c : ff.trace()) s += c + " ";
    return s;
}

const Fault kFaults[] = {Fault::kEnospc, Fault::kEio};

// ---- snapshot save --------------------------------------------------------------------------------

TEST(FvFaults, SaveUnderFaultsKeepsThePreviousSnapshotWhole) {
    for (const Fault f : kFaults) {
        for (const bool sticky : {false, true}) {
            Dir d("save");
            const std::string snap = d.file("repo.kfv");
            Repo committed = base_repo();
            ASSERT_EQ(kes_fv_repo_save(committed.get(), snap.c_str()), KES_OK) << kes_last_error();
            const State old_state = state_of(committed.get());
            Repo r = base_repo();
            add(r.get(), 0, 0, 2, 3);
            add(r.get(), 7, 7, 4, 4);
            ASSERT_EQ(kes_fv_repo_delete(r.get(), 3, 4, 1), KES_OK);
            const State new_state = state_of(r.get());
            int step = 1;
            for (;; ++step) {
                SCOPED_TRACE(std::string(kes_test::fault_name(f)) + (sticky ? " sticky" : " once") + " at call " +
                             std::to_string(step));
                kes_status st;
                bool renamed;
                {
                    FileFaults ff(step, f, sticky);
                    st = kes_fv_repo_save(r.get(), snap.c_str());
                    if (!ff.fired()) {
                        ASSERT_EQ(st, KES_OK) << kes_last_error();
                        break;
                    }
                    SCOPED_TRACE(trace_of(ff));
                    expect_clear_error(st, ff, f, snap);
                    renamed = traced(ff, "rename");
                }
                EXPECT_EQ(d.entries(), std::vector<std::string>{"repo.kfv"}) << "no temporary file is left";
                EXPECT_EQ(state_of(r.get()), new_state) << "a failed save changes nothing in memory";
                // Before the rename the old file is untouched; after it (the directory's fsync failed) the
                // new one is in place, whole: never a mix.
                Repo back = load(snap);
                ASSERT_TRUE(back);
                EXPECT_EQ(state_of(back.get()), renamed ? new_state : old_state);
                // The fault is gone: the same repository saves.
                ASSERT_EQ(kes_fv_repo_save(r.get(), snap.c_str()), KES_OK) << kes_last_error();
                EXPECT_EQ(state_of(load(snap).get()), new_state);
                ASSERT_EQ(kes_fv_repo_save(committed.get(), snap.c_str()), KES_OK);
            }
            // open, 1 + 3 × (1 record + 2 payload parts) + 1 writes, fsync, close, rename, dir open/fsync/close
            EXPECT_GE(step, 17);
            std::printf("[ matrix ] save x %s %s: %d faulted steps, clean after\n", kes_test::fault_name(f),
                        sticky ? "sticky" : "once", step - 1);
        }
    }
}

// ---- append-log appends ---------------------------------------------------------------------------

struct Op {
    const char* name;
    std::function<kes_status(kes_fv_repo*)> run;  // one logged change; repeatable after prepare
    std::function<void(kes_fv_repo*)> prepare{};  // unarmed, before each run
};

std::vector<Op> ops(uint32_t& next_delete) {
    const auto x = random_floats(kDim * 3, 77);
    return {
        {"add to a new library", [x](kes_fv_repo* r) { return kes_fv_repo_add(r, 9, 1, 0, x.data(), 3, x.size() * 4); },
         [](kes_fv_repo* r) {
             const kes_fv_range range{9, 9, 1, 1};
             ASSERT_EQ(kes_fv_repo_delete_range(r, &range, nullptr), KES_OK) << kes_last_error();
         }},
        {"add",
         [x](kes_fv_repo* r) {
             uint32_t size = 0;
             kes_fv_repo_library_size(r, 0, 0, &size);
             return kes_fv_repo_add(r, 0, 0, size, x.data(), 3, x.size() * 4);
         }},
        {"delete",
         [&next_delete](kes_fv_repo* r) {
             const kes_status st = kes_fv_repo_delete(r, 0, 0, next_delete);
             if (st == KES_OK) ++next_delete;
             return st;
         }},
        {"modify", [x](kes_fv_repo* r) { return kes_fv_repo_modify(r, 3, 4, 2, x.data() + kDim, kDim * 4); }},
        {"delete_range",
         [](kes_fv_repo* r) {
             const kes_fv_range range{3, 3, 4, 4};
             return kes_fv_repo_delete_range(r, &range, nullptr);
         }},
    };
}

TEST(FvFaults, AppendUnderFaultsChangesNothingAndLeavesNoHalfRecord) {
    for (const Fault f : kFaults) {
        for (const bool sticky : {false, true}) {
            Dir d("append");
            const std::string snap = d.file("repo.kfv"), log = d.file("repo.kfv.log");
            ASSERT_EQ(kes_fv_repo_save(base_repo().get(), snap.c_str()), KES_OK);
            Repo r = open_logged(snap, log);
            ASSERT_TRUE(r);
            add(r.get(), 0, 0, 40, 5);  // committed through the log
            uint32_t next_delete = 0;
            for (const Op& op : ops(next_delete)) {
                int step = 1;
                for (;; ++step) {
                    SCOPED_TRACE(std::string(op.name) + ", " + kes_test::fault_name(f) +
                                 (sticky ? " sticky" : " once") + " at call " + std::to_string(step));
                    if (op.prepare) op.prepare(r.get());
                    const State before = state_of(r.get());
                    const auto log_before = read_all(log);
                    kes_status st;
                    {
                        FileFaults ff(step, f, sticky);
                        st = op.run(r.get());
                        if (!ff.fired()) {
                            ASSERT_EQ(st, KES_OK) << kes_last_error();
                            break;
                        }
                        SCOPED_TRACE(trace_of(ff));
                        expect_clear_error(st, ff, f, log);
                    }
                    EXPECT_EQ(state_of(r.get()), before) << "a failed change changes nothing in memory";
                    EXPECT_EQ(d.entries(), (std::vector<std::string>{"repo.kfv", "repo.kfv.log"}));
                    if (!sticky) {
                        EXPECT_EQ(read_all(log), log_before) << "the failed record is cut back off";
                    }
                    {
                        // A crash now loses nothing committed and replays no half record. When the disk
                        // refused even the cut-back (sticky), the record may be whole: replayed, documented.
                        kes_test::LogCapture logs;
                        Repo crash = reopen_copy(d, snap, log);
                        ASSERT_TRUE(crash);
                        const State s = state_of(crash.get());
                        if (!sticky || read_all(d.file("crash/repo.kfv.log")).size() == log_before.size()) {
                            EXPECT_EQ(s, before);
                        }
                        if (read_all(d.file("crash/repo.kfv.log")) != read_all(log)) {
                            const auto w = logs.warnings();
                            ASSERT_EQ(w.size(), 1u) << "a torn tail is cut off with one warning";
                            EXPECT_NE(w[0].find("torn"), std::string::npos) << w[0];
                            EXPECT_NE(w[0].find("crash/repo.kfv.log"), std::string::npos) << w[0];
                        }
                    }
                    // The fault is gone: the repository takes changes again (after a checkpoint when the
                    // log could not be repaired, as the error says), and the log keeps every one. The
                    // repository is as prepared: the retry needs no new preparation.
                    st = op.run(r.get());
                    if (st != KES_OK && sticky) {
                        EXPECT_NE(std::string(kes_last_error()).find("checkpoint"), std::string::npos)
                            << kes_last_error();
                        ASSERT_EQ(kes_fv_repo_checkpoint(r.get(), snap.c_str()), KES_OK) << kes_last_error();
                        st = op.run(r.get());
                    }
                    ASSERT_EQ(st, KES_OK) << kes_last_error();
                    Repo crash = reopen_copy(d, snap, log);
                    ASSERT_TRUE(crash);
                    EXPECT_EQ(state_of(crash.get()), state_of(r.get()));
                }
                EXPECT_GE(step, 3);  // header, (payload,) fdatasync
                std::printf("[ matrix ] append %s x %s %s: %d faulted steps, clean after\n", op.name,
                            kes_test::fault_name(f), sticky ? "sticky" : "once", step - 1);
            }
        }
    }
}

// A record cut short by a failed write that could not be cut back is what a crash mid-append leaves:
// the next open ignores it, cuts it off, and says so.
TEST(FvFaults, ATornAppendIsCutOffOnReopenWithAWarning) {
    Dir d("torn");
    const std::string snap = d.file("repo.kfv"), log = d.file("repo.kfv.log");
    ASSERT_EQ(kes_fv_repo_save(base_repo().get(), snap.c_str()), KES_OK);
    Repo r = open_logged(snap, log);
    add(r.get(), 0, 0, 2, 5);
    const State committed = state_of(r.get());
    const size_t committed_bytes = read_all(log).size();
    const auto x = random_floats(kDim * 4, 6);
    {
        FileFaults ff(2, Fault::kEnospc, true);  // the header is written, the payload and the cut-back fail
        ASSERT_EQ(kes_fv_repo_add(r.get(), 0, 0, 8, x.data(), 4, x.size() * 4), KES_ERR_IO);
        ASSERT_EQ(ff.trace().front(), "pwrite") << trace_of(ff);
    }
    ASSERT_EQ(read_all(log).size(), committed_bytes + 56) << "a header without its payload";
    r.reset();
    kes_test::LogCapture logs;
    Repo back = open_logged(snap, log);
    ASSERT_TRUE(back);
    EXPECT_EQ(state_of(back.get()), committed);
    EXPECT_EQ(read_all(log).size(), committed_bytes);
    const auto w = logs.warnings();
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find(log), std::string::npos) << w[0];
    EXPECT_NE(w[0].find("torn"), std::string::npos) << w[0];
    EXPECT_NE(w[0].find("byte " + std::to_string(committed_bytes)), std::string::npos) << w[0];
}

// ---- checkpoint -----------------------------------------------------------------------------------

TEST(FvFaults, CheckpointUnderFaultsLosesNothing) {
    for (const Fault f : kFaults) {
        for (const bool sticky : {false, true}) {
            int step = 1;
            for (;; ++step) {
                SCOPED_TRACE(std::string(kes_test::fault_name(f)) + (sticky ? " sticky" : " once") + " at call " +
                             std::to_string(step));
                Dir d("checkpoint");
                const std::string snap = d.file("repo.kfv"), log = d.file("repo.kfv.log");
                ASSERT_EQ(kes_fv_repo_save(base_repo().get(), snap.c_str()), KES_OK);
                Repo r = open_logged(snap, log);
                ASSERT_TRUE(r);
                add(r.get(), 0, 0, 3, 5);
                add(r.get(), 8, 8, 2, 6);
                ASSERT_EQ(kes_fv_repo_delete(r.get(), 3, 4, 0), KES_OK);
                const State committed = state_of(r.get());
                const auto log_before = read_all(log);
                kes_status st;
                {
                    FileFaults ff(step, f, sticky);
                    st = kes_fv_repo_checkpoint(r.get(), snap.c_str());
                    if (!ff.fired()) {
                        ASSERT_EQ(st, KES_OK) << kes_last_error();
                        break;
                    }
                    SCOPED_TRACE(trace_of(ff));
                    expect_clear_error(st, ff, f, snap);
                    // The log may only be emptied once the new snapshot is durable, directory included.
                    if (read_all(log) != log_before) {
                        EXPECT_TRUE(traced(ff, "fsync(dir)")) << "the log was emptied before the snapshot was durable";
                    }
                }
                EXPECT_EQ(d.entries(), (std::vector<std::string>{"repo.kfv", "repo.kfv.log"}));
                EXPECT_EQ(state_of(r.get()), committed);
                {
                    Repo crash = reopen_copy(d, snap, log);
                    ASSERT_TRUE(crash);
                    EXPECT_EQ(state_of(crash.get()), committed);
                }
                // The fault is gone: changes are logged where a reopen finds them, checkpoints work.
                add(r.get(), 0, 0, 1, 7);
                {
                    Repo crash = reopen_copy(d, snap, log);
                    ASSERT_TRUE(crash) << "the log stays readable after a failed checkpoint";
                    EXPECT_EQ(state_of(crash.get()), state_of(r.get()));
                }
                ASSERT_EQ(kes_fv_repo_checkpoint(r.get(), snap.c_str()), KES_OK) << kes_last_error();
                EXPECT_TRUE(read_all(log).empty());
                Repo crash = reopen_copy(d, snap, log);
                ASSERT_TRUE(crash);
                EXPECT_EQ(state_of(crash.get()), state_of(r.get()));
            }
            EXPECT_GE(step, 20);  // the save's calls, then the log's ftruncate and fsync
            std::printf("[ matrix ] checkpoint x %s %s: %d faulted steps, clean after\n", kes_test::fault_name(f),
                        sticky ? "sticky" : "once", step - 1);
        }
    }
}

// ---- opening a log ------------------------------------------------------------------------------

TEST(FvFaults, OpeningALogUnderFaultsFailsCleanlyAndARetryWorks) {
    for (const Fault f : kFaults) {
        for (const bool fresh : {false, true}) {
            int step = 1;
            for (;; ++step) {
                SCOPED_TRACE(std::string(kes_test::fault_name(f)) + (fresh ? " new log" : " torn log") + " at call " +
                             std::to_string(step));
                Dir d("open");
                const std::string snap = d.file("repo.kfv"), log = d.file("repo.kfv.log");
                ASSERT_EQ(kes_fv_repo_save(base_repo().get(), snap.c_str()), KES_OK);
                State committed;
                if (fresh) {
                    committed = state_of(load(snap).get());
                } else {
                    Repo r = open_logged(snap, log);
                    add(r.get(), 0, 0, 2, 5);
                    committed = state_of(r.get());
                    std::ofstream(log, std::ios::binary | std::ios::app).write("FVLG\1\0\0\0", 8);  // torn
                }
                kes_fv_repo* raw = reinterpret_cast<kes_fv_repo*>(0x1);
                kes_status st;
                {
                    FileFaults ff(step, f);
                    st = kes_fv_repo_open_logged(snap.c_str(), log.c_str(), &raw);
                    if (!ff.fired()) {
                        ASSERT_EQ(st, KES_OK) << kes_last_error();
                        kes_fv_repo_destroy(raw);
                        break;
                    }
                    SCOPED_TRACE(trace_of(ff));
                    expect_clear_error(st, ff, f, log);
                    EXPECT_EQ(raw, nullptr);
                }
                Repo again = open_logged(snap, log);
                ASSERT_TRUE(again);
                EXPECT_EQ(state_of(again.get()), committed);
            }
            // torn: open, ftruncate, fsync; new: open, fsync(dir) (+ its open and close)
            EXPECT_GE(step, 4);
            std::printf("[ matrix ] open_logged (%s) x %s: %d faulted steps, clean after\n",
                        fresh ? "new log" : "torn tail", kes_test::fault_name(f), step - 1);
        }
    }
}

// A log's records are fdatasync'ed, which does not make a new file's directory entry durable: the
// log created by open_logged must be, or a power loss could take every acknowledged change with it.
TEST(FvFaults, ANewLogIsMadeDurableInItsDirectory) {
    Dir d("newlog");
    const std::string snap = d.file("repo.kfv"), log = d.file("repo.kfv.log");
    ASSERT_EQ(kes_fv_repo_save(base_repo().get(), snap.c_str()), KES_OK);
    FileFaults ff;
    Repo r = open_logged(snap, log);
    ASSERT_TRUE(r);
    EXPECT_TRUE(traced(ff, "fsync(dir)")) << trace_of(ff);
}

// ---- short writes -------------------------------------------------------------------------------

TEST(FvFaults, ShortWritesAreContinuedToTheEnd) {
    for (const bool sticky : {false, true}) {
        Dir d("short");
        const std::string snap = d.file("repo.kfv"), log = d.file("repo.kfv.log");
        Repo r = base_repo();
        add(r.get(), 5, 5, 7, 8);
        const State s = state_of(r.get());
        int save_steps = 0, append_steps = 0;
        for (int step = 1;; ++step) {
            bool fired;
            {
                FileFaults ff(step, Fault::kShortWrite, sticky);
                ASSERT_EQ(kes_fv_repo_save(r.get(), snap.c_str()), KES_OK) << kes_last_error();
                fired = ff.fired();
            }
            if (!fired) break;
            ++save_steps;
            EXPECT_EQ(state_of(load(snap).get()), s);
            EXPECT_EQ(d.entries(), std::vector<std::string>{"repo.kfv"});
        }
        Repo lr = open_logged(snap, log);
        for (int step = 1;; ++step) {
            bool fired;
            {
                FileFaults ff(step, Fault::kShortWrite, sticky);
                add(lr.get(), 5, 5, 3, 100 + step);
                fired = ff.fired();
            }
            Repo crash = reopen_copy(d, snap, log);
            ASSERT_TRUE(crash);
            EXPECT_EQ(state_of(crash.get()), state_of(lr.get()));
            if (!fired) break;
            ++append_steps;
        }
        EXPECT_GE(save_steps, 10);
        EXPECT_GE(append_steps, 3);
        std::printf("[ matrix ] short writes %s: save %d steps, append %d steps\n", sticky ? "sticky" : "once",
                    save_steps, append_steps);
    }
}

}  // namespace
