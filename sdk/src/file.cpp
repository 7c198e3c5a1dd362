// Kestrel's file layer (kes/file.hpp): whole-file reads and mappings, the crash-safe replacement of a
// file, and the system-call table its writers go through.
#include "kes/file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#include "kes/error.hpp"

namespace kes {

std::vector<uint8_t> read_file(const char* path) {
    KES_REQUIRE(path != nullptr, "path is NULL");
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path, "rb"), &std::fclose);
    if (!f) {
        const int err = errno;
        KES_FAIL(err == ENOENT ? KES_ERR_NOT_FOUND : KES_ERR_IO, "cannot open '%s': %s", path, std::strerror(err));
    }
    std::vector<uint8_t> bytes;
    uint8_t chunk[65536];
    for (;;) {
        const size_t n = std::fread(chunk, 1, sizeof chunk, f.get());
        bytes.insert(bytes.end(), chunk, chunk + n);
        if (n < sizeof chunk) break;
    }
    if (std::ferror(f.get())) KES_FAIL(KES_ERR_IO, "cannot read '%s'", path);
    return bytes;
}

// ---- mappings -----------------------------------------------------------------------------------

MappedFile::MappedFile(const std::string& path, Access access) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        KES_FAIL(err == ENOENT ? KES_ERR_NOT_FOUND : KES_ERR_IO, "cannot open '%s': %s", path.c_str(),
                 std::strerror(err));
    }
    struct stat st {};
    int err = ::fstat(fd, &st) == 0 ? 0 : errno;
    if (!err && !S_ISREG(st.st_mode)) {
        ::close(fd);
        KES_FAIL(KES_ERR_IO, "cannot map '%s': not a regular file", path.c_str());
    }
    if (!err && static_cast<uint64_t>(st.st_size) > SIZE_MAX) err = EFBIG;
    void* map = nullptr;
    if (!err && st.st_size > 0) {
        const int prot = access == Access::CopyOnWrite ? PROT_READ | PROT_WRITE : PROT_READ;
        map = ::mmap(nullptr, static_cast<size_t>(st.st_size), prot, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) err = errno, map = nullptr;
    }
    ::close(fd);  // read-only: nothing a failed close could lose; the mapping keeps the file
    if (err) KES_FAIL(KES_ERR_IO, "cannot map '%s': %s", path.c_str(), std::strerror(err));
    map_ = map;
    size_ = map ? static_cast<size_t>(st.st_size) : 0;
    writable_ = map && access == Access::CopyOnWrite;
}

MappedFile::~MappedFile() {
    if (map_) ::munmap(map_, size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : map_(std::exchange(other.map_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      writable_(std::exchange(other.writable_, false)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        if (map_) ::munmap(map_, size_);
        map_ = std::exchange(other.map_, nullptr);
        size_ = std::exchange(other.size_, 0);
        writable_ = std::exchange(other.writable_, false);
    }
    return *this;
}

const uint8_t* MappedFile::data() const noexcept {
    static const uint8_t kNoBytes[1] = {0};
    return map_ ? static_cast<const uint8_t*>(map_) : kNoBytes;
}

// ---- the system-call table ----------------------------------------------------------------------

namespace {

int sys_open(const char* path, int flags, mode_t mode) {
    return ::open(path, flags, mode);
}

const FileOps kSystemOps = {&sys_open,    &::write,  &::pwrite, &::fsync, &::fdatasync,
                            &::ftruncate, &::rename, &::close,  &::unlink};

std::atomic<const FileOps*> g_ops{&kSystemOps};

}  // namespace

const FileOps& file_ops() noexcept {
    return *g_ops.load(std::memory_order_acquire);
}

const FileOps& system_file_ops() noexcept {
    return kSystemOps;
}

namespace testing {
const FileOps* set_file_ops(const FileOps* ops) noexcept {
    return g_ops.exchange(ops ? ops : &kSystemOps, std::memory_order_acq_rel);
}
}  // namespace testing

// ---- crash-safe replacement ---------------------------------------------------------------------

void fsync_parent_directory(const std::string& path, const char* why) {
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    const FileOps& io = file_ops();
    const int fd = io.open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0)
        KES_FAIL(KES_ERR_IO, "opening directory %s to make %s durable: %s", dir.c_str(), why, std::strerror(errno));
    const int err = io.fsync(fd) == 0 ? 0 : errno;
    // A read-only directory descriptor holds no data a failed close could lose: not through the table.
    ::close(fd);
    if (err) KES_FAIL(KES_ERR_IO, "fsync of directory %s to make %s durable: %s", dir.c_str(), why, std::strerror(err));
}

AtomicFile::AtomicFile(std::string target) : target_(std::move(target)) {
    static std::atomic<unsigned> counter{0};
    temp_ = target_ + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
    fd_ = file_ops().open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) KES_FAIL(KES_ERR_IO, "creating %s (new %s): %s", temp_.c_str(), target_.c_str(), std::strerror(errno));
}

AtomicFile::~AtomicFile() {
    const FileOps& io = file_ops();
    if (fd_ >= 0) io.close(fd_);
    if (!renamed_) io.unlink(temp_.c_str());
}

void AtomicFile::write(const void* data, size_t n) {
    const FileOps& io = file_ops();
    const uint8_t* p = static_cast<const uint8_t*>(data);
    while (n > 0) {
        const ssize_t w = io.write(fd_, p, n);
        if (w < 0 && errno == EINTR) continue;
        // write() returning 0 for n > 0 does not happen on a regular file; EIO rather than a loop.
        if (w <= 0)
            KES_FAIL(KES_ERR_IO, "writing %s (new %s): %s", temp_.c_str(), target_.c_str(),
                     std::strerror(w < 0 ? errno : EIO));
        p += w;
        n -= static_cast<size_t>(w);
    }
}

void AtomicFile::commit() {
    const FileOps& io = file_ops();
    if (io.fsync(fd_) != 0)
        KES_FAIL(KES_ERR_IO, "fsync of %s (new %s): %s", temp_.c_str(), target_.c_str(), std::strerror(errno));
    const int fd = fd_;
    fd_ = -1;
    if (io.close(fd) != 0)
        KES_FAIL(KES_ERR_IO, "closing %s (new %s): %s", temp_.c_str(), target_.c_str(), std::strerror(errno));
    if (io.rename(temp_.c_str(), target_.c_str()) != 0)
        KES_FAIL(KES_ERR_IO, "renaming %s to %s: %s", temp_.c_str(), target_.c_str(), std::strerror(errno));
    renamed_ = true;
    // Until the directory is synced the rename may not survive a power loss: a caller that went on as
    // if it did (fv's checkpoint empties its log next) could lose data, so this failure is an error too.
    try {
        fsync_parent_directory(target_, ("the new " + target_).c_str());
    } catch (const Error& e) {
        KES_FAIL(KES_ERR_IO, "%s (%s is replaced, but may come back as it was after a power loss)", e.what(),
                 target_.c_str());
    }
}

}  // namespace kes
