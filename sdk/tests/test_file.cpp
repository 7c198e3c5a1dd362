// kes/file.hpp: whole-file reads, AtomicFile (the one crash-safe writer) and its fault seam.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "file_faults.hpp"
#include "kes/error.hpp"
#include "kes/file.hpp"

namespace fs = std::filesystem;
using kes_test::Fault;
using kes_test::FileFaults;

namespace {

struct Dir {
    std::string path = std::string(KES_TEST_TMPDIR) + "/sdkfile_" + std::to_string(getpid());
    Dir() {
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~Dir() { fs::remove_all(path); }
    size_t files() const { return static_cast<size_t>(std::distance(fs::directory_iterator(path), {})); }
};

std::string slurp(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void replace(const std::string& target, const std::string& text) {
    kes::AtomicFile f(target);
    f.write(text.data(), text.size() / 2);
    f.write(text.data() + text.size() / 2, text.size() - text.size() / 2);
    f.commit();
}

TEST(AtomicFile, CommitReplacesTheTargetAndLeavesNoTemporary) {
    Dir d;
    const std::string t = d.path + "/a.bin";
    replace(t, "old contents");
    replace(t, "new contents, longer");
    EXPECT_EQ(slurp(t), "new contents, longer");
    EXPECT_EQ(d.files(), 1u);
    EXPECT_EQ(kes::read_file(t.c_str()).size(), 20u);
}

TEST(AtomicFile, AnUncommittedFileIsRemovedAndTheTargetUntouched) {
    Dir d;
    const std::string t = d.path + "/a.bin";
    replace(t, "old");
    {
        kes::AtomicFile f(t);
        f.write("new", 3);
        EXPECT_TRUE(fs::exists(f.temp_path()));
    }
    EXPECT_EQ(slurp(t), "old");
    EXPECT_EQ(d.files(), 1u);
}

// ENOSPC and EIO at every call of a replacement, once or from then on: a clear KES_ERR_IO naming the
// target and the system error, no temporary left, and the target either the old file (before the
// rename) or the new one, whole (only the directory's fsync after it failed).
TEST(AtomicFile, AFaultAtAnyStepLeavesTheOldFileOrTheNewOneWhole) {
    Dir d;
    const std::string t = d.path + "/a.bin";
    for (const Fault f : {Fault::kEnospc, Fault::kEio}) {
        for (const bool sticky : {false, true}) {
            int step = 1;
            for (;; ++step) {
                replace(t, "old");
                bool fired = false, renamed = false;
                std::string msg;
                {
                    FileFaults ff(step, f, sticky);
                    try {
                        replace(t, "the new contents");
                    } catch (const kes::Error& e) {
                        EXPECT_EQ(e.status(), KES_ERR_IO);
                        msg = e.what();
                    }
                    fired = ff.fired();
                    for (const auto& c : ff.trace()) renamed |= c == "rename";
                }
                if (!fired) {
                    EXPECT_EQ(msg, "");
                    break;
                }
                SCOPED_TRACE("step " + std::to_string(step));
                EXPECT_NE(msg.find(t), std::string::npos) << msg;
                EXPECT_NE(msg.find(std::strerror(f == Fault::kEnospc ? ENOSPC : EIO)), std::string::npos) << msg;
                EXPECT_EQ(slurp(t), renamed ? "the new contents" : "old");
                EXPECT_EQ(d.files(), 1u) << "no temporary left";
            }
            // open, 2 writes, fsync, close, rename, directory open + fsync
            EXPECT_EQ(step, 9);
        }
    }
}

TEST(AtomicFile, ShortWritesAreContinued) {
    Dir d;
    const std::string t = d.path + "/a.bin";
    for (int step = 1; step <= 3; ++step) {
        FileFaults ff(step, Fault::kShortWrite, true);
        replace(t, "0123456789abcdef");
        EXPECT_EQ(slurp(t), "0123456789abcdef");
    }
}

TEST(FileOps, TheSystemTableIsBackOnceATestTableIsRemoved) {
    EXPECT_EQ(&kes::file_ops(), &kes::system_file_ops());
    {
        FileFaults ff;
        EXPECT_NE(&kes::file_ops(), &kes::system_file_ops());
    }
    EXPECT_EQ(&kes::file_ops(), &kes::system_file_ops());
}

size_t open_descriptors() {
    return static_cast<size_t>(std::distance(fs::directory_iterator("/proc/self/fd"), {}));
}

TEST(MappedFile, MapsTheWholeFileAndClosesItsDescriptor) {
    Dir d;
    const std::string p = d.path + "/m.bin";
    replace(p, "kestrel mapped");
    const size_t fds = open_descriptors();
    {
        kes::MappedFile m(p);
        ASSERT_EQ(m.size(), 14u);
        EXPECT_EQ(std::string(reinterpret_cast<const char*>(m.data()), m.size()), "kestrel mapped");
        EXPECT_EQ(m.writable_data(), nullptr);  // read-only pages
        EXPECT_EQ(open_descriptors(), fds);
        kes::MappedFile moved(std::move(m));
        EXPECT_EQ(moved.size(), 14u);
        EXPECT_EQ(m.size(), 0u);  // NOLINT(bugprone-use-after-move): a moved-from mapping is empty
    }
    EXPECT_EQ(open_descriptors(), fds);
}

TEST(MappedFile, CopyOnWritePagesNeverReachTheFile) {
    Dir d;
    const std::string p = d.path + "/m.bin";
    replace(p, "abc");
    {
        kes::MappedFile m(p, kes::MappedFile::Access::CopyOnWrite);
        ASSERT_NE(m.writable_data(), nullptr);
        m.writable_data()[0] = 'X';
        EXPECT_EQ(m.data()[0], 'X');
    }
    EXPECT_EQ(slurp(p), "abc");
}

TEST(MappedFile, AnEmptyFileHasNoBytesAndAValidPointer) {
    Dir d;
    const std::string p = d.path + "/empty";
    replace(p, "");
    kes::MappedFile m(p);
    EXPECT_EQ(m.size(), 0u);
    EXPECT_NE(m.data(), nullptr);
}

TEST(MappedFile, FailuresNameThePathAndTheReason) {
    Dir d;
    const size_t fds = open_descriptors();
    const std::string missing = d.path + "/missing.kom";
    try {
        kes::MappedFile m(missing);
        ADD_FAILURE() << "mapped a missing file";
    } catch (const kes::Error& e) {
        EXPECT_EQ(e.status(), KES_ERR_NOT_FOUND);
        EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(std::strerror(ENOENT)), std::string::npos) << e.what();
    }
    try {
        kes::MappedFile m(d.path);  // a directory
        ADD_FAILURE() << "mapped a directory";
    } catch (const kes::Error& e) {
        EXPECT_EQ(e.status(), KES_ERR_IO);
        EXPECT_NE(std::string(e.what()).find(d.path), std::string::npos) << e.what();
    }
    EXPECT_EQ(open_descriptors(), fds);  // no descriptor left behind by a failure
}

}  // namespace
