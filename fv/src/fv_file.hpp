// fv_file.hpp — crash-safe file replacement shared by snapshots (fv_persist.cpp) and exports
// (fv_export.cpp): write a temporary file beside the target, fsync it, rename it over the target and
// fsync the directory, so a crash at any instant leaves either the old file or the new one, whole.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "kes/error.hpp"

namespace kes {
namespace fv {

class TempFile {
public:
    explicit TempFile(const std::string& target) {
        static std::atomic<unsigned> counter{0};
        path_ = target + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
        fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd_ < 0) KES_FAIL(KES_ERR_IO, "cannot create %s: %s", path_.c_str(), std::strerror(errno));
    }
    ~TempFile() {
        if (fd_ >= 0) ::close(fd_);
        if (!committed_) ::unlink(path_.c_str());
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;

    void write(const void* data, size_t n) {
        const uint8_t* p = static_cast<const uint8_t*>(data);
        while (n > 0) {
            const ssize_t w = ::write(fd_, p, n);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) KES_FAIL(KES_ERR_IO, "writing %s: %s", path_.c_str(), std::strerror(w < 0 ? errno : EIO));
            p += w;
            n -= static_cast<size_t>(w);
        }
    }
    void commit(const std::string& target) {
        if (::fsync(fd_) != 0) KES_FAIL(KES_ERR_IO, "fsync %s: %s", path_.c_str(), std::strerror(errno));
        const int fd = fd_;
        fd_ = -1;
        if (::close(fd) != 0) KES_FAIL(KES_ERR_IO, "closing %s: %s", path_.c_str(), std::strerror(errno));
        if (::rename(path_.c_str(), target.c_str()) != 0)
            KES_FAIL(KES_ERR_IO, "renaming %s to %s: %s", path_.c_str(), target.c_str(), std::strerror(errno));
        committed_ = true;
        // The rename is durable only once the directory entry is on disk.
        const size_t slash = target.rfind('/');
        const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : target.substr(0, slash);
        const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            ::fsync(dfd);
            ::close(dfd);
        }
    }

private:
    std::string path_;
    int fd_ = -1;
    bool committed_ = false;
};

}  // namespace fv
}  // namespace kes
