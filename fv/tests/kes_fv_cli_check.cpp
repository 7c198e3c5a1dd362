// Helper of the KesFvCli.* ctests (fv/CMakeLists.txt): `generate DIR` writes DIR/data.npy (300 × 64
// floats) and DIR/query.npy (row 5 of it); `compare DIR` checks that kes-fv's export DIR/out.npy and
// DIR/out.csv give back exactly data.npy, row i at (3, 7, i); `pending-delete DIR` deletes feature
// (3, 7, 0) of DIR/mod.kfv through its append log DIR/mod.kfv.log and stops without a checkpoint, as a
// kes-fv killed after the change and before its save would. Exit 0 on success, 1 with a message.
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "kes/error.hpp"
#include "kes/npy.hpp"
#include "kestrel/fv.h"
#include "vector_files.hpp"

namespace {

constexpr uint32_t kRows = 300, kDim = 64;

std::vector<uint8_t> read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool write_npy(const std::string& path, const float* x, uint32_t rows) {
    std::vector<uint8_t> b = kes::npy::header(KES_F32, {rows, kDim});
    const uint8_t* p = reinterpret_cast<const uint8_t*>(x);
    b.insert(b.end(), p, p + size_t{rows} * kDim * 4);
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    return static_cast<bool>(out);
}

std::vector<float> data() {
    std::mt19937 rng(2026);
    std::vector<float> x(size_t{kRows} * kDim);
    for (float& v : x) v = static_cast<float>(static_cast<int>(rng() % 4001) - 2000) / 128.f;
    return x;
}

std::vector<float> read_npy(const std::string& path) {
    const auto b = read_all(path);
    const kes::fv::MatrixLayout m = kes::fv::parse_npy(b.data(), b.size());
    std::vector<float> v(static_cast<size_t>(m.rows) * m.cols);
    kes::fv::copy_rows(b.data(), m, 0, m.rows, v.data());
    if (m.cols != kDim) throw kes::Error(KES_ERR_CORRUPT_DATA, path + ": wrong dim");
    return v;
}

int fail(const std::string& msg) {
    std::fprintf(stderr, "kes_fv_cli_check: %s\n", msg.c_str());
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) return fail("usage: kes_fv_cli_check generate|compare|pending-delete DIR");
    const std::string mode = argv[1], dir = argv[2];
    try {
        const std::vector<float> x = data();
        if (mode == "generate") {
            ::mkdir(dir.c_str(), 0755);
            if (!write_npy(dir + "/data.npy", x.data(), kRows) ||
                !write_npy(dir + "/query.npy", x.data() + 5 * kDim, 1))
                return fail("cannot write into " + dir);
            return 0;
        }
        if (mode == "pending-delete") {
            const std::string repo_path = dir + "/mod.kfv";
            kes_fv_repo* repo = nullptr;
            if (kes_fv_repo_open_logged(repo_path.c_str(), (repo_path + ".log").c_str(), &repo) != KES_OK ||
                kes_fv_repo_delete(repo, 3, 7, 0) != KES_OK) {
                kes_fv_repo_destroy(repo);
                return fail(kes_last_error());
            }
            kes_fv_repo_destroy(repo);
            return 0;
        }
        if (mode != "compare") return fail("unknown mode " + mode);
        const std::vector<float> y = read_npy(dir + "/out.npy");
        if (y.size() != x.size()) return fail("export has " + std::to_string(y.size() / kDim) + " rows");
        if (std::memcmp(x.data(), y.data(), x.size() * 4) != 0) return fail("exported vectors differ from the input");
        std::string expect = "id0,id1,offset\n";
        for (uint32_t i = 0; i < kRows; ++i) expect += "3,7," + std::to_string(i) + "\n";
        const auto ids = read_all(dir + "/out.csv");
        if (std::string(ids.begin(), ids.end()) != expect) return fail("id map differs from the expected one");
        std::printf("export matches the import: %u rows\n", kRows);
        return 0;
    } catch (const std::exception& e) {
        return fail(e.what());
    }
}
