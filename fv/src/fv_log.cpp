// fv_log.cpp — the append log (issue 6 §5): every change made between two snapshots is written and
// fdatasync'ed to a log file before the call that makes it returns, and replayed when the
// repository is opened again, so a crash loses nothing that was acknowledged.
//
// Log file: a sequence of records, little-endian, no file header:
//   56-byte header: "FVLG", op (1 add, 2 delete, 3 modify, 4 delete_range), u64 sequence number,
//                   u32 a, b, c, d (id0, id1, offset / the range), u64 count, u64 payload bytes,
//                   payload CRC, CRC of bytes 0..51
//   payload:        add: the features exactly as passed to kes_fv_repo_add; modify: the feature.
// Sequence numbers rise by 1 from record to record. A snapshot records the last sequence number it
// contains (fv_persist.cpp), so replay skips records a snapshot already holds: a crash between a
// checkpoint's rename and its log truncation replays nothing twice.
//
// A crash can leave the last record torn. Torn = fewer than 56 bytes left, or a valid header whose
// payload runs past the end, or a valid header whose payload fails its CRC and ends exactly at the
// end of the file, or nothing but zero bytes to the end (space allocated, never written). A torn tail
// is ignored and cut off, with a warning; any other damage is KES_ERR_CORRUPT_DATA (the log is not
// silently shortened in the middle).
//
// Under faults (fv/tests/test_fv_faults.cpp injects ENOSPC/EIO at every call through kes::FileOps):
// a failed append is cut back off (ftruncate to the old end) so the log holds exactly the changes
// made; if even that fails the log is marked broken and refuses appends until a checkpoint empties
// it. Emptying moves the write position to 0 as soon as the ftruncate succeeds, whatever the fsync
// after it says: appending at the old end would leave a hole of zeros, which reads as damage.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "fv_repo.hpp"
#include "kes/error.hpp"
#include "kes/file.hpp"
#include "kes/logging.hpp"

namespace kes {
namespace fv {

namespace {
constexpr char kMagic[4] = {'F', 'V', 'L', 'G'};
constexpr size_t kHeaderBytes = 56;

template <class T>
void put(uint8_t* p, size_t at, T v) {
    std::memcpy(p + at, &v, sizeof v);
}
template <class T>
T get(const uint8_t* p, size_t at) {
    T v;
    std::memcpy(&v, p + at, sizeof v);
    return v;
}
}  // namespace

class Log {
public:
    Log(std::string path, int fd, uint64_t end) : path_(std::move(path)), fd_(fd), end_(end) {}
    ~Log() { file_ops().close(fd_); }
    Log(const Log&) = delete;
    Log& operator=(const Log&) = delete;

    // Writes header + payload at the end and syncs; on failure cuts the file back to where it was.
    void append(const uint8_t* header, const void* payload, size_t n) {
        std::lock_guard<std::mutex> hold(mutex_);
        const FileOps& io = file_ops();
        const char* what = "writing";
        int err = write_at(end_, header, kHeaderBytes);
        if (!err) err = write_at(end_ + kHeaderBytes, payload, n);
        if (!err && io.fdatasync(fd_) != 0) {
            what = "fdatasync of";
            err = errno;
        }
        if (!err) {
            end_ += kHeaderBytes + n;
            return;
        }
        const unsigned long long at = end_, bytes = kHeaderBytes + n;
        if (io.ftruncate(fd_, static_cast<off_t>(end_)) == 0)
            KES_FAIL(KES_ERR_IO, "append log %s: %s the %llu-byte record at byte %llu: %s (nothing was changed)",
                     path_.c_str(), what, bytes, at, std::strerror(err));
        // The record may stay, whole or torn: a torn one is dropped at the next open, a whole one would be
        // replayed. Until a checkpoint empties the log no further record may follow it.
        const int cut_err = errno;
        broken_ = true;
        KES_FAIL(KES_ERR_IO,
                 "append log %s: %s the %llu-byte record at byte %llu: %s, and cutting it back off failed too (%s): "
                 "nothing was changed in memory, but the log may hold the change; kes_fv_repo_checkpoint repairs it",
                 path_.c_str(), what, bytes, at, std::strerror(err), std::strerror(cut_err));
    }
    void truncate() {
        std::lock_guard<std::mutex> hold(mutex_);
        const FileOps& io = file_ops();
        if (io.ftruncate(fd_, 0) != 0)
            KES_FAIL(KES_ERR_IO, "emptying append log %s: ftruncate: %s", path_.c_str(), std::strerror(errno));
        // The file is empty now whatever the fsync says: the next record goes at byte 0 (a record written
        // at the old end would leave a hole of zeros that makes the log unreadable).
        end_ = 0;
        broken_ = false;
        if (io.fsync(fd_) != 0)
            KES_FAIL(KES_ERR_IO, "emptying append log %s: fsync: %s", path_.c_str(), std::strerror(errno));
    }
    void check_usable() const {
        if (broken_)
            KES_FAIL(KES_ERR_IO,
                     "append log %s could not be cut back after a failed write; kes_fv_repo_checkpoint repairs it",
                     path_.c_str());
    }

private:
    int write_at(uint64_t at, const void* data, size_t n) {
        const uint8_t* p = static_cast<const uint8_t*>(data);
        while (n > 0) {
            const ssize_t w = file_ops().pwrite(fd_, p, n, static_cast<off_t>(at));
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) return w < 0 ? errno : EIO;
            p += w;
            at += static_cast<uint64_t>(w);
            n -= static_cast<size_t>(w);
        }
        return 0;
    }

    std::string path_;
    int fd_;
    uint64_t end_;
    bool broken_ = false;
    std::mutex mutex_;
};

void LogDeleter::operator()(Log* log) const noexcept {
    delete log;
}

void log_append(kes_fv_repo& repo, LogOp op, uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint64_t count,
                const void* payload, size_t payload_bytes) {
    if (!repo.log) return;
    repo.log->check_usable();
    uint8_t h[kHeaderBytes] = {};
    std::memcpy(h, kMagic, 4);
    put<uint32_t>(h, 4, static_cast<uint32_t>(op));
    put<uint64_t>(h, 8, repo.log_seq + 1);
    put<uint32_t>(h, 16, a);
    put<uint32_t>(h, 20, b);
    put<uint32_t>(h, 24, c);
    put<uint32_t>(h, 28, d);
    put<uint64_t>(h, 32, count);
    put<uint64_t>(h, 40, payload_bytes);
    put<uint32_t>(h, 48, crc32(payload, payload_bytes));
    put<uint32_t>(h, 52, crc32(h, 52));
    repo.log->append(h, payload, payload_bytes);
    ++repo.log_seq;
}

void log_truncate(const kes_fv_repo& repo) {
    if (repo.log) repo.log->truncate();
}

namespace {

#define KES_CORRUPT_IF_LOG(cond, at, what)                                                                        \
    do {                                                                                                          \
        if (cond) ::kes::fail(KES_ERR_CORRUPT_DATA, "log record at byte %zu: %s", static_cast<size_t>(at), what); \
    } while (0)

bool all_zero(const uint8_t* p, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if (p[i]) return false;
    return true;
}

void apply(kes_fv_repo* repo, const uint8_t* h, const uint8_t* payload, uint64_t at) {
    const uint32_t op = get<uint32_t>(h, 4);
    const uint32_t a = get<uint32_t>(h, 16), b = get<uint32_t>(h, 20), c = get<uint32_t>(h, 24),
                   d = get<uint32_t>(h, 28);
    const uint64_t count = get<uint64_t>(h, 32);
    const size_t bytes = static_cast<size_t>(get<uint64_t>(h, 40));
    kes_status st = KES_OK;
    switch (op) {
        case 1: st = kes_fv_repo_add(repo, a, b, c, payload, count, bytes); break;
        case 2: st = kes_fv_repo_delete(repo, a, b, c); break;
        case 3: st = kes_fv_repo_modify(repo, a, b, c, payload, bytes); break;
        case 4: {
            const kes_fv_range r{a, b, c, d};
            st = kes_fv_repo_delete_range(repo, &r, nullptr);
            break;
        }
        default:
            KES_FAIL(KES_ERR_CORRUPT_DATA, "log record at byte %llu has unknown op %u",
                     static_cast<unsigned long long>(at), op);
    }
    if (st == KES_ERR_OUT_OF_MEMORY) KES_FAIL(st, "replaying the log: %s", kes_last_error());
    if (st != KES_OK)
        KES_FAIL(KES_ERR_CORRUPT_DATA, "log record at byte %llu does not apply to the snapshot: %s",
                 static_cast<unsigned long long>(at), kes_last_error());
}

// Replays the log at `path` into `repo` (which has no log yet) and attaches it for appends.
void replay_and_attach(kes_fv_repo* repo, const std::string& path) {
    const FileOps& io = file_ops();
    const int fd = io.open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) KES_FAIL(KES_ERR_IO, "cannot open append log %s: %s", path.c_str(), std::strerror(errno));
    struct FdGuard {
        int fd;
        bool keep = false;
        ~FdGuard() {
            if (!keep) file_ops().close(fd);
        }
    } guard{fd};
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        KES_FAIL(KES_ERR_IO, "append log %s is not a regular file", path.c_str());
    // Records are fdatasync'ed, which does not make a new file's name durable: without this a power
    // loss could take the whole log, acknowledged changes included. An empty log may have just been
    // created (here, or by an open that failed before this point), so its directory is synced.
    if (st.st_size == 0) fsync_parent_directory(path, ("append log " + path).c_str());
    std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
    for (size_t got = 0; got < bytes.size();) {
        const ssize_t r = ::pread(fd, bytes.data() + got, bytes.size() - got, static_cast<off_t>(got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) KES_FAIL(KES_ERR_IO, "reading append log %s: %s", path.c_str(), std::strerror(r < 0 ? errno : EIO));
        got += static_cast<size_t>(r);
    }
    const size_t size = bytes.size();
    size_t pos = 0;
    try {
        while (pos < size) {
            const uint8_t* h = bytes.data() + pos;
            const size_t left = size - pos;
            if (left < kHeaderBytes || all_zero(h, left)) break;  // torn tail
            KES_CORRUPT_IF_LOG(std::memcmp(h, kMagic, 4) != 0 || get<uint32_t>(h, 52) != crc32(h, 52), pos,
                               "bad record header");
            const uint64_t payload = get<uint64_t>(h, 40);
            if (payload > left - kHeaderBytes) break;  // torn: the payload never reached the disk
            const bool last = payload == left - kHeaderBytes;
            if (crc32(h + kHeaderBytes, static_cast<size_t>(payload)) != get<uint32_t>(h, 48)) {
                if (last) break;  // torn
                KES_CORRUPT_IF_LOG(true, pos, "payload checksum mismatch");
            }
            const uint64_t seq = get<uint64_t>(h, 8);
            if (seq > repo->log_seq) {
                if (seq != repo->log_seq + 1)
                    KES_FAIL(KES_ERR_CORRUPT_DATA, "log record at byte %zu has sequence %llu, expected %llu", pos,
                             static_cast<unsigned long long>(seq), static_cast<unsigned long long>(repo->log_seq + 1));
                apply(repo, h, h + kHeaderBytes, pos);
                repo->log_seq = seq;
            }
            pos += kHeaderBytes + static_cast<size_t>(payload);
        }
    } catch (const kes::Error& e) {
        if (e.status() != KES_ERR_CORRUPT_DATA) throw;
        KES_FAIL(KES_ERR_CORRUPT_DATA, "append log %s: %s", path.c_str(), e.what());
    }
    if (pos < size) {
        if (io.ftruncate(fd, static_cast<off_t>(pos)) != 0)
            KES_FAIL(KES_ERR_IO, "cutting the torn end of append log %s at byte %zu: ftruncate: %s", path.c_str(), pos,
                     std::strerror(errno));
        if (io.fsync(fd) != 0)
            KES_FAIL(KES_ERR_IO, "cutting the torn end of append log %s at byte %zu: fsync: %s", path.c_str(), pos,
                     std::strerror(errno));
        KES_LOGW("fv",
                 "append log %s: torn record at byte %zu (%zu bytes to the end, left by a crash or a failed "
                 "write) ignored and cut off",
                 path.c_str(), pos, size - pos);
    }
    repo->log.reset(new Log(path, fd, pos));
    guard.keep = true;
}

}  // namespace
}  // namespace fv
}  // namespace kes

extern "C" {

kes_status kes_fv_repo_open_logged(const char* snapshot_path, const char* log_path, kes_fv_repo** out_repo) {
    if (out_repo) *out_repo = nullptr;
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(snapshot_path);
        KES_REQUIRE_NOT_NULL(log_path);
        KES_REQUIRE_NOT_NULL(out_repo);
        kes_fv_repo* raw = nullptr;
        const kes_status st = kes_fv_repo_load(snapshot_path, &raw);
        if (st != KES_OK) KES_FAIL(st, "%s", kes_last_error());
        std::unique_ptr<kes_fv_repo> repo(raw);
        kes::fv::replay_and_attach(repo.get(), log_path);
        *out_repo = repo.release();
        return KES_OK;
    });
}

kes_status kes_fv_repo_checkpoint(kes_fv_repo* repo, const char* snapshot_path) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(repo);
        KES_REQUIRE_NOT_NULL(snapshot_path);
        KES_REQUIRE(snapshot_path[0] != '\0', "snapshot_path is empty");
        // The reader lock keeps writers (and so appends) out between the snapshot and the truncation.
        kes::fv::RwLock::Read lock(repo->lock);
        kes::fv::save_locked(*repo, snapshot_path);
        kes::fv::log_truncate(*repo);
        return KES_OK;
    });
}

}  // extern "C"
