// Replay driver for Kestrel's fuzz targets: runs LLVMFuzzerTestOneInput over files and directories
// (the seed corpus, or crash reproducers), so every fuzz target also runs as an ordinary test with
// any compiler. With -DKES_FUZZ=ON under clang the same target links libFuzzer instead.
#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

int run_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
        return 1;
    }
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    int inputs = 0, errors = 0;
    for (int i = 1; i < argc; ++i) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            std::fprintf(stderr, "replay: %s does not exist\n", argv[i]);
            return 1;
        }
        if (S_ISDIR(st.st_mode)) {
            DIR* dir = opendir(argv[i]);
            if (!dir) return 1;
            while (dirent* e = readdir(dir)) {
                if (e->d_name[0] == '.') continue;
                errors += run_file(std::string(argv[i]) + "/" + e->d_name);
                ++inputs;
            }
            closedir(dir);
        } else {
            errors += run_file(argv[i]);
            ++inputs;
        }
    }
    // Also the classic edge cases every parser must survive.
    LLVMFuzzerTestOneInput(nullptr, 0);
    const uint8_t one = 0xff;
    LLVMFuzzerTestOneInput(&one, 1);
    std::printf("replay: %d inputs, %d unreadable\n", inputs, errors);
    return errors ? 1 : 0;
}
