// Whole-file reads shared by the modules (kes/file.hpp).
#include "kes/file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

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

}  // namespace kes
