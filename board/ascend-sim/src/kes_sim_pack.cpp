// kes-sim-pack — wraps a .kom into the simulator's .om container (src/imod.hpp), recording the SoC the
// "model" targets, as ATC's --soc_version does:
//
//   kes-sim-pack model.kom model.om --soc Ascend310B4
//
// The .kom is verified first (kes_model_query_size), so a container always holds a loadable model.
// Exit codes: 0 written, 1 the input is not a valid .kom (or not a file), a file (or the KES_TRACE file)
// could not be read/written, 2 usage (an unknown --soc included).
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "imod.hpp"
#include "kestrel/engine.h"
#include "kestrel/trace.h"

namespace {

const char kUsage[] = "usage: kes-sim-pack in.kom out.om [--soc Ascend310|Ascend310B1..Ascend310B4]\n";

// The chips Kestrel targets, as ATC's --soc_version and aclrtGetSocName spell them (the 310B family's
// variants B1..B4). Anything else packed fine and failed only at load, as a SoC mismatch.
bool known_soc(const std::string& soc) {
    return soc == "Ascend310" || soc == "Ascend310B1" || soc == "Ascend310B2" || soc == "Ascend310B3" ||
           soc == "Ascend310B4";
}

int run(int argc, char** argv) {
    std::string in, out, soc = "Ascend310B4";
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (std::strcmp(argv[i], "--soc") == 0 && i + 1 < argc) {
            soc = argv[++i];
        } else if (in.empty() && argv[i][0] != '-') {
            in = argv[i];
        } else if (out.empty() && argv[i][0] != '-') {
            out = argv[i];
        } else {
            std::fputs(kUsage, stderr);
            return 2;
        }
    }
    if (in.empty() || out.empty() || soc.empty() || soc.size() >= kes_sim::kImodSocSize) {
        std::fputs(kUsage, stderr);
        return 2;
    }
    if (!known_soc(soc)) {
        std::fprintf(stderr,
                     "kes-sim-pack: --soc %s is not a chip Kestrel targets: Ascend310, or Ascend310B1..Ascend310B4 "
                     "(the simulator loads a model only on its KES_SIM_SOC)\n",
                     soc.c_str());
        return 2;
    }
    // A directory opens as a stream on Linux and then throws at the first read (an uncaught
    // std::ios_failure, exit 134): only a regular file is read.
    struct stat st;
    if (stat(in.c_str(), &st) != 0) {
        std::fprintf(stderr, "kes-sim-pack: cannot read %s: %s\n", in.c_str(), std::strerror(errno));
        return 1;
    }
    if (!S_ISREG(st.st_mode)) {
        std::fprintf(stderr, "kes-sim-pack: %s is not a file (a .kom from kes-convert)\n", in.c_str());
        return 1;
    }
    std::ifstream f(in, std::ios::binary);
    if (!f) {
        std::fprintf(stderr, "kes-sim-pack: cannot read %s\n", in.c_str());
        return 1;
    }
    std::vector<uint8_t> kom((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    size_t work = 0, weight = 0;
    if (kom.empty() || kes_model_query_size(kom.data(), kom.size(), &work, &weight) != KES_OK) {
        std::fprintf(stderr, "kes-sim-pack: %s is not a valid .kom: %s\n", in.c_str(),
                     kom.empty() ? "empty file" : kes_last_error());
        return 1;
    }
    uint8_t header[kes_sim::kImodHeaderSize];
    kes_sim::write_header(header, kom.data(), kom.size(), soc);
    std::ofstream o(out, std::ios::binary | std::ios::trunc);
    o.write(reinterpret_cast<const char*>(header), sizeof header);
    o.write(reinterpret_cast<const char*>(kom.data()), static_cast<std::streamsize>(kom.size()));
    if (!o.flush()) {
        std::fprintf(stderr, "kes-sim-pack: cannot write %s\n", out.c_str());
        return 1;
    }
    std::printf("%s: %zu-byte .kom for %s (work %zu B, weights %zu B)\n", out.c_str(), kom.size(), soc.c_str(), work,
                weight);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    int rc = 1;
    try {
        rc = run(argc, argv);
    } catch (const std::exception& e) {  // a read or write error of the streams: a failure, not an abort
        std::fprintf(stderr, "kes-sim-pack: %s\n", e.what());
    }
    // KES_TRACE is written at exit, too late for the exit status: a trace that cannot be written fails here.
    if (kes_trace_enabled() && kes_trace_stop() != KES_OK) {
        std::fprintf(stderr, "kes-sim-pack: KES_TRACE: %s\n", kes_last_error());
        if (rc == 0) rc = 1;
    }
    return rc;
}
