// kes-compare — Kestrel's msaccucmp: compares two tensor dumps and names the first tensor, in graph
// order, where they diverge.
//
//   kes-compare A B [--rtol R] [--atol A] [--min-cosine C] [--all]
//
// A and B are directories of .npy files. A is a kes-model-bench --dump (its order.txt gives the graph
// order); B is another dump, or reference tensors from any runtime saved as <tensor name>.npy (names
// made file-safe the same way: every character outside [A-Za-z0-9._-] becomes '_'). Tensors in A
// without a counterpart in B are listed as skipped. A tensor diverges when an element differs by more
// than atol + rtol·|b| or its cosine similarity is below --min-cosine.
//
// Exit codes: 0 no divergence, 1 a tensor diverges (or a runtime error), 2 usage error.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "kes/error.hpp"
#include "kes/file.hpp"
#include "kes/npy.hpp"
#include "kes/tensor_compare.hpp"
#include "kestrel/tensor.h"

namespace {

const char kUsage[] =
    "usage: kes-compare A B [--rtol R] [--atol A] [--min-cosine C] [--all]\n"
    "  A, B           dump directories (kes-model-bench --dump), or B = <tensor>.npy files from any runtime\n"
    "  --rtol R       relative tolerance (default 1e-3)\n"
    "  --atol A       absolute tolerance (default 1e-4)\n"
    "  --min-cosine C cosine similarity below which a tensor diverges (default 0.999)\n"
    "  --all          print every compared tensor, not only up to the first divergence\n";

[[noreturn]] void usage_error(const std::string& m) {
    std::fprintf(stderr, "kes-compare: %s\n%s", m.c_str(), kUsage);
    std::exit(2);
}

double parse_real(const char* text, const char* option, double max_value = HUGE_VAL) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text, &end);
    if (*text == '\0' || *end != '\0' || errno != 0 || !std::isfinite(v) || v < 0 || v > max_value)
        usage_error(std::string(option) +
                    (max_value == HUGE_VAL ? " takes a number ≥ 0" : " takes a number in [0, 1]") + ", not '" + text +
                    "'");
    return v;
}

bool exists(const std::string& path) {
    std::ifstream f(path);
    return f.good();
}

// The values of a .npy file as doubles (floats and integers; bools as 0/1).
std::vector<double> load_values(const std::string& path, std::vector<int64_t>& shape) {
    const std::vector<uint8_t> bytes = kes::read_file(path.c_str());
    kes::npy::Array a;
    try {
        a = kes::npy::parse(bytes.data(), bytes.size());
    } catch (const kes::Error& e) {
        throw kes::Error(e.status(), path + ": " + e.what());  // the parser knows bytes, not which file
    }
    shape = a.shape;
    const uint8_t* p = bytes.data() + a.data_offset;
    const size_t n = a.data_bytes / std::max<size_t>(1, kes_dtype_size(a.dtype));
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) {
        switch (a.dtype) {
#define KES_CASE(DT, T)                                \
    case DT: {                                         \
        T x;                                           \
        std::memcpy(&x, p + i * sizeof(T), sizeof(T)); \
        v[i] = static_cast<double>(x);                 \
        break;                                         \
    }
            KES_CASE(KES_F32, float)
            KES_CASE(KES_F64, double)
            KES_CASE(KES_I8, int8_t)
            KES_CASE(KES_U8, uint8_t)
            KES_CASE(KES_I16, int16_t)
            KES_CASE(KES_U16, uint16_t)
            KES_CASE(KES_I32, int32_t)
            KES_CASE(KES_U32, uint32_t)
            KES_CASE(KES_I64, int64_t)
            KES_CASE(KES_U64, uint64_t)
            KES_CASE(KES_BOOL, uint8_t)
#undef KES_CASE
            case KES_F16: {
                uint16_t h;
                std::memcpy(&h, p + i * 2, 2);
                v[i] = kes_fp16_to_float(h);
                break;
            }
            default: throw kes::Error(KES_ERR_UNSUPPORTED, path + ": dtype not compared");
        }
    }
    return v;
}

std::string shape_text(const std::vector<int64_t>& s) {
    std::string t = "[";
    for (size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + std::to_string(s[i]);
    return t + "]";
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
        std::fputs(kUsage, stdout);
        return 0;
    }
    std::vector<std::string> dirs;
    double rtol = 1e-3, atol = 1e-4, min_cosine = 0.999;
    bool all = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) usage_error(a + " needs a value");
            return argv[++i];
        };
        if (a == "--rtol") {
            rtol = parse_real(value(), "--rtol");
        } else if (a == "--atol") {
            atol = parse_real(value(), "--atol");
        } else if (a == "--min-cosine") {
            min_cosine = parse_real(value(), "--min-cosine", 1.0);  // above 1, every tensor would diverge
        } else if (a == "--all") {
            all = true;
        } else if (!a.empty() && a[0] == '-') {
            usage_error("unknown option '" + a + "'");
        } else {
            dirs.push_back(a);
        }
    }
    if (dirs.size() != 2) usage_error("give two dump directories");
    std::ifstream order(dirs[0] + "/order.txt");
    if (!order) {
        std::fprintf(stderr, "kes-compare: %s/order.txt not found: A must be a kes-model-bench --dump\n",
                     dirs[0].c_str());
        return 1;
    }
    // The tensor column is as wide as the longest name: names cut to a fixed width (40) made rows of
    // tensors sharing a long prefix impossible to tell apart.
    std::vector<std::string> lines;
    int name_width = 6;  // "tensor"
    for (std::string line; std::getline(order, line);) {
        if (line.empty()) continue;
        const std::string file = line.substr(0, line.find('\t'));
        name_width = std::max(name_width, static_cast<int>(file.size() >= 4 ? file.size() - 4 : file.size()));
        lines.push_back(line);
    }
    std::printf("%-*s %-18s %12s %12s %10s\n", name_width, "tensor", "shape", "max abs", "max rel", "cosine");
    std::string first_divergent;
    size_t compared = 0, skipped = 0;
    for (const std::string& line : lines) {
        // file, then (kes-model-bench's dumps) the layer index and node name, tab-separated.
        const size_t tab = line.find('\t');
        const std::string file = line.substr(0, tab);
        const std::string where = tab == std::string::npos ? "" : " (layer " + [&] {
            std::string rest = line.substr(tab + 1);
            const size_t t2 = rest.find('\t');
            return t2 == std::string::npos ? rest : rest.substr(0, t2) + ", node " + rest.substr(t2 + 1);
        }() + ")";
        const std::string b_path = dirs[1] + "/" + file;
        if (!exists(b_path)) {
            ++skipped;
            continue;
        }
        try {
            std::vector<int64_t> sa, sb;
            const std::vector<double> a = load_values(dirs[0] + "/" + file, sa);
            const std::vector<double> b = load_values(b_path, sb);
            const std::string name = file.substr(0, file.size() - 4);
            const std::string label = name + where;
            if (a.size() != b.size()) {
                std::printf("%-*s shape %s vs %s\n", name_width, name.c_str(), shape_text(sa).c_str(),
                            shape_text(sb).c_str());
                if (first_divergent.empty()) first_divergent = label;
                continue;
            }
            kes::TensorComparison c;
            for (size_t i = 0; i < a.size(); ++i) c.add(a[i], b[i], atol, rtol);  // NaN in either diverges
            const bool diverges = c.diverges(min_cosine);
            ++compared;
            if (all || first_divergent.empty())
                std::printf("%-*s %-18s %12.4g %12.4g %10.6f%s\n", name_width, name.c_str(), shape_text(sa).c_str(),
                            c.max_abs, c.max_rel, c.cosine(), diverges ? "  <- diverges" : "");
            if (diverges && first_divergent.empty()) first_divergent = label;
        } catch (const kes::Error& e) {
            std::fprintf(stderr, "kes-compare: %s\n", e.what());
            return 1;
        }
    }
    std::printf("\n%zu tensors compared, %zu without a counterpart in %s\n", compared, skipped, dirs[1].c_str());
    if (compared == 0) {
        std::fprintf(stderr, "kes-compare: no tensor of %s has a counterpart in %s\n", dirs[0].c_str(),
                     dirs[1].c_str());
        return 1;
    }
    if (!first_divergent.empty()) {
        std::printf("first divergent tensor: %s\n", first_divergent.c_str());
        return 1;
    }
    std::printf("no divergence (rtol %g, atol %g, cosine >= %g)\n", rtol, atol, min_cosine);
    return 0;
}
