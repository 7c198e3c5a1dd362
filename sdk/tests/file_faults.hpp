// Test helper: injects faults into Kestrel's file writers through the kes::FileOps table
// (kes/file.hpp). While a FileFaults is alive every open, write, pwrite, fsync, fdatasync, ftruncate,
// rename and close a writer makes is counted (unlink, the writers' clean-up, passes uncounted) and
// traced; the call numbered `step` (1-based) fails as asked, and with `sticky` every counted call
// after it fails too (a disk that stays full or broken). Not thread-safe: one armed FileFaults at a
// time, on a test that does its file I/O on one thread.
#pragma once

#include <sys/stat.h>

#include <cerrno>
#include <string>
#include <vector>

#include "kes/file.hpp"

namespace kes_test {

enum class Fault {
    kNone,
    kEnospc,      // the call fails with ENOSPC
    kEio,         // the call fails with EIO
    kShortWrite,  // a write/pwrite of n > 1 bytes writes n / 2; other calls are not affected
};

inline const char* fault_name(Fault f) {
    switch (f) {
        case Fault::kNone: return "none";
        case Fault::kEnospc: return "ENOSPC";
        case Fault::kEio: return "EIO";
        case Fault::kShortWrite: return "short write";
    }
    return "?";
}

class FileFaults {
public:
    // step 0: count and trace only.
    explicit FileFaults(int step = 0, Fault fault = Fault::kNone, bool sticky = false)
        : step_(step), fault_(fault), sticky_(sticky) {
        active() = this;
        previous_ = kes::testing::set_file_ops(&table());
    }
    ~FileFaults() {
        kes::testing::set_file_ops(previous_);
        active() = nullptr;
    }
    FileFaults(const FileFaults&) = delete;
    FileFaults& operator=(const FileFaults&) = delete;

    int calls() const { return calls_; }
    // True once the armed step was reached (and its fault, if it applies to that call, injected).
    bool fired() const { return fired_; }
    // The counted calls in order: "open", "write", "pwrite", "fsync", "fsync(dir)", "fdatasync",
    // "ftruncate", "rename", "close"; a failed one ends in "!", a short one in "~".
    const std::vector<std::string>& trace() const { return trace_; }
    // The kind of the call at which the fault was injected ("" if none was).
    const std::string& failed_call() const { return failed_; }

private:
    static FileFaults*& active() {
        static FileFaults* a = nullptr;
        return a;
    }
    static const kes::FileOps& sys() { return kes::system_file_ops(); }

    // Counts one call of kind `name`; true when it must fail (errno is then set).
    bool fail_now(const char* name) {
        ++calls_;
        trace_.emplace_back(name);
        hit_now_ = calls_ == step_ || (sticky_ && step_ > 0 && calls_ > step_);
        if (!hit_now_) return false;
        fired_ = true;
        if (fault_ != Fault::kEnospc && fault_ != Fault::kEio) return false;
        if (failed_.empty()) failed_ = name;
        trace_.back() += "!";
        errno = fault_ == Fault::kEnospc ? ENOSPC : EIO;
        return true;
    }
    size_t short_len(size_t n) {
        if (fault_ != Fault::kShortWrite || !hit_now_ || n < 2) return n;
        if (failed_.empty()) failed_ = trace_.back();
        trace_.back() += "~";
        return n / 2;
    }

    static int on_open(const char* path, int flags, mode_t mode) {
        return active()->fail_now("open") ? -1 : sys().open(path, flags, mode);
    }
    static ssize_t on_write(int fd, const void* p, size_t n) {
        if (active()->fail_now("write")) return -1;
        return sys().write(fd, p, active()->short_len(n));
    }
    static ssize_t on_pwrite(int fd, const void* p, size_t n, off_t at) {
        if (active()->fail_now("pwrite")) return -1;
        return sys().pwrite(fd, p, active()->short_len(n), at);
    }
    static int on_fsync(int fd) {
        struct stat st;
        const bool dir = ::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
        return active()->fail_now(dir ? "fsync(dir)" : "fsync") ? -1 : sys().fsync(fd);
    }
    static int on_fdatasync(int fd) { return active()->fail_now("fdatasync") ? -1 : sys().fdatasync(fd); }
    static int on_ftruncate(int fd, off_t size) {
        return active()->fail_now("ftruncate") ? -1 : sys().ftruncate(fd, size);
    }
    static int on_rename(const char* from, const char* to) {
        return active()->fail_now("rename") ? -1 : sys().rename(from, to);
    }
    // A close that fails has still released the descriptor (Linux), so the fault is reported after it.
    static int on_close(int fd) {
        const bool fail = active()->fail_now("close");
        const int r = sys().close(fd);
        if (fail) {
            errno = active()->fault_ == Fault::kEnospc ? ENOSPC : EIO;
            return -1;
        }
        return r;
    }
    static int on_unlink(const char* path) { return sys().unlink(path); }

    static const kes::FileOps& table() {
        static const kes::FileOps t = {&on_open,      &on_write,  &on_pwrite, &on_fsync, &on_fdatasync,
                                       &on_ftruncate, &on_rename, &on_close,  &on_unlink};
        return t;
    }

    int step_;
    Fault fault_;
    bool sticky_;
    int calls_ = 0;
    bool fired_ = false;
    bool hit_now_ = false;
    std::string failed_;
    std::vector<std::string> trace_;
    const kes::FileOps* previous_ = nullptr;
};

}  // namespace kes_test
