// kes/file.hpp — Kestrel's one file layer: whole-file reads of outside data (images, configs) for the
// modules' *_file calls, whole-file mappings (models loaded with KES_MODEL_LOAD_MMAP, fv repositories,
// kes-fv's input matrices), the crash-safe file replacement every writer of a store uses (fv snapshots
// and exports), and the table of system calls those writers go through, which tests can swap to
// inject faults (ENOSPC, EIO, short writes) at any step.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kes {

// The whole file at `path`. Throws kes::Error: KES_ERR_NOT_FOUND when it does not exist,
// KES_ERR_IO when it cannot be opened or read; the message names the path and the reason.
std::vector<uint8_t> read_file(const char* path);

// The whole file at `path`, mapped MAP_PRIVATE, for as long as the object lives (the descriptor is
// closed before the constructor returns: the mapping keeps the file alive, even once it is renamed
// over or deleted). Read-only pages, or copy-on-write ones for a reader that patches what it borrows
// (fv's modify): a write then goes to a private copy of the page, never to the file.
// An empty file is not mapped (mmap refuses length 0): size() is 0 and data() a valid pointer to no
// bytes. Throws kes::Error naming the path and the system error: KES_ERR_NOT_FOUND when it does not
// exist, KES_ERR_IO when it cannot be opened, examined or mapped or is not a regular file.
class MappedFile {
public:
    enum class Access { ReadOnly, CopyOnWrite };

    MappedFile() = default;  // nothing mapped
    explicit MappedFile(const std::string& path, Access access = Access::ReadOnly);
    ~MappedFile();
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const uint8_t* data() const noexcept;
    // The copy-on-write pages; nullptr for Access::ReadOnly (writing would fault).
    uint8_t* writable_data() noexcept { return writable_ ? static_cast<uint8_t*>(map_) : nullptr; }
    size_t size() const noexcept { return size_; }

private:
    void* map_ = nullptr;
    size_t size_ = 0;
    bool writable_ = false;
};

// The system calls Kestrel's file writers make (AtomicFile below, fv's append log). Same contracts
// as the POSIX calls: -1 and errno on failure. Writers call them through file_ops() so that a test
// can put a table of its own in front (kes::testing::set_file_ops); otherwise they are the system's.
struct FileOps {
    int (*open)(const char* path, int flags, mode_t mode);
    ssize_t (*write)(int fd, const void* data, size_t n);
    ssize_t (*pwrite)(int fd, const void* data, size_t n, off_t at);
    int (*fsync)(int fd);
    int (*fdatasync)(int fd);
    int (*ftruncate)(int fd, off_t size);
    int (*rename)(const char* from, const char* to);
    int (*close)(int fd);
    int (*unlink)(const char* path);
};

// The table in force: the system's unless a test installed its own. One atomic load, next to a
// system call.
const FileOps& file_ops() noexcept;
// The system's calls (what a test table forwards to when it is not injecting a fault).
const FileOps& system_file_ops() noexcept;

namespace testing {
// Test-only: makes `ops` the table every writer uses from now on (nullptr: the system's again) and
// returns the previous one. `ops` must outlive its use; installing is not synchronised with writers
// running at that moment, so tests install it while no file is being written.
const FileOps* set_file_ops(const FileOps* ops) noexcept;
}  // namespace testing

// Fsyncs the directory holding `path` ("." for a bare name), so that a rename or creation in it
// survives a power loss. Throws kes::Error(KES_ERR_IO) naming the directory, `why` (what was made
// durable) and the system error.
void fsync_parent_directory(const std::string& path, const char* why);

// Replaces the file at `target` so that a crash or a full disk at any instant leaves either the
// previous file or the new one, whole: the bytes go to a temporary file beside it
// (target.tmp.<pid>.<n>), commit() fsyncs and closes that, renames it over `target` and fsyncs the
// directory. Until commit() succeeds — on any exception, or when the object is destroyed uncommitted
// — the temporary file is removed and `target` is untouched, except: a failure of the directory's
// fsync, after the rename, leaves the new file in place with its durability unknown (the error says
// so; a caller must not act as if it were on disk, e.g. empty a log it replaces).
// Every failure is kes::Error(KES_ERR_IO) whose message names the operation, the file(s) and the
// system error ("writing /d/a.kfv.tmp.12.0 (new /d/a.kfv): No space left on device").
class AtomicFile {
public:
    explicit AtomicFile(std::string target);
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    // All n bytes, after those written before (short writes are continued, EINTR retried).
    void write(const void* data, size_t n);
    // Makes the written bytes the content of target. Call once.
    void commit();
    const std::string& temp_path() const noexcept { return temp_; }

private:
    std::string target_;
    std::string temp_;
    int fd_ = -1;
    bool renamed_ = false;
};

}  // namespace kes
