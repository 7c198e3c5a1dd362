// onnx_conformance — runs ONNX's node tests (Debian libonnx-testdata) through Kestrel: convert
// model.onnx, load the .kom through the public engine API, execute on test_data_set_0/input_N.pb and
// compare with output_N.pb.
//
//   kes_onnx_conformance --data DIR --expected LIST [--update] [--filter TEXT] [--verbose] [--work DIR]
//
// Inputs: the test first runs with every input a runtime input. When conversion refuses that as
// unsupported (Kestrel's shapes are static: an op needs a constant shape, axes, indices...), it is
// retried with the non-float inputs frozen as constants (--freeze-input), then with all but the first
// input frozen (e.g. Resize roi/scales), then with every input frozen; the model's last op still runs in the executor
// (nodes producing graph outputs are never folded) and the folded ones ran the same reference kernels. Tolerances (|got
// − want| ≤ atol + rtol·|want|): f32 rtol 1e-3 atol 1e-5; f16 rtol 1e-2 atol 1e-3; f64 rtol 1e-6 atol 1e-9; integers
// and bools exact. NaN matches NaN; an infinity must match exactly. Each test runs in a forked child (host: crash
// isolation and a 30 s limit per test), so one crashing kernel shows up as that test failing.
//
// LIST holds the tests expected to pass, one per line ('#' comments). The run fails when a listed test
// fails; unlisted passes are reported. --update adds every passing test to LIST (the list only grows:
// a listed test that fails is kept, and the run still fails). Known-bad data (never listed):
// test_resize_downsample_scales_{linear,cubic}_align_corners (their expected outputs in Debian's
// libonnx-testdata are inconsistent).
//
// Bounded outputs: Kestrel's NonMaxSuppression writes [B × C × min(K, boxes), 3] rows, the selected
// ones first and -1 rows after them (kernels/ref/nms.cpp), where ONNX has exactly the selected rows.
// A graph output produced by NonMaxSuppression passes when its first rows equal ONNX's and every
// later row is -1 (so the count is right too).
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "convert/convert.hpp"
#include "convert/importers.hpp"
#include "kes/error.hpp"
#include "kes/file.hpp"
#include "kestrel/engine.h"

namespace {

const std::set<std::string> kKnownBad = {"test_resize_downsample_scales_cubic_align_corners",
                                         "test_resize_downsample_scales_linear_align_corners"};

bool exists(const std::string& path) {
    return access(path.c_str(), R_OK) == 0;
}

std::vector<std::string> list_tests(const std::string& dir) {
    std::vector<std::string> names;
    DIR* d = opendir(dir.c_str());
    if (!d) return names;
    while (const dirent* e = readdir(d)) {
        const std::string n = e->d_name;
        if (n.rfind("test_", 0) == 0 && exists(dir + "/" + n + "/model.onnx")) names.push_back(n);
    }
    closedir(d);
    std::sort(names.begin(), names.end());
    return names;
}

struct Tolerance {
    double rtol, atol;
};

Tolerance tolerance_of(kes_dtype t) {
    switch (t) {
        case KES_F32: return {1e-3, 1e-5};
        case KES_F16: return {1e-2, 1e-3};
        case KES_F64: return {1e-6, 1e-9};
        default: return {0, 0};
    }
}

double value_at(const uint8_t* p, kes_dtype t, size_t i) {
    switch (t) {
        case KES_F32: {
            float v;
            std::memcpy(&v, p + i * 4, 4);
            return v;
        }
        case KES_F16: {
            uint16_t h;
            std::memcpy(&h, p + i * 2, 2);
            return kes_fp16_to_float(h);
        }
        case KES_F64: {
            double v;
            std::memcpy(&v, p + i * 8, 8);
            return v;
        }
        default: return 0;
    }
}

// A bounded output (NonMaxSuppression, see the top): `want` must be its first rows, -1 rows follow.
std::string compare_bounded(const kes::ir::Tensor& want, const kes::Shape& got_shape, const uint8_t* got) {
    if (want.shape.size() != 2 || got_shape.size() != 2 || want.shape[1] != got_shape[1] ||
        want.shape[0] > got_shape[0])
        return kes::format("bounded shape %s cannot hold the expected %s", kes::shape_string(got_shape).c_str(),
                           kes::shape_string(want.shape).c_str());
    const size_t valid = want.data.size() / sizeof(int64_t), total = static_cast<size_t>(got_shape[0] * got_shape[1]);
    for (size_t i = 0; i < total; ++i) {
        int64_t g, w = -1;
        std::memcpy(&g, got + i * sizeof g, sizeof g);
        if (i < valid) std::memcpy(&w, want.data.data() + i * sizeof w, sizeof w);
        if (g != w)
            return kes::format("element %zu is %lld, expected %lld (%zu valid elements, -1 after them)", i,
                               static_cast<long long>(g), static_cast<long long>(w), valid);
    }
    return {};
}

// "" when equal within tolerance, else the first difference.
std::string compare(const kes::ir::Tensor& want, kes_dtype got_dtype, const kes::Shape& got_shape, const uint8_t* got,
                    bool bounded) {
    if (want.dtype != got_dtype)
        return kes::format("dtype %s, expected %s", kes_dtype_name(got_dtype), kes_dtype_name(want.dtype));
    if (bounded && want.dtype == KES_I64) return compare_bounded(want, got_shape, got);
    if (want.shape != got_shape)
        return kes::format("shape %s, expected %s", kes::shape_string(got_shape).c_str(),
                           kes::shape_string(want.shape).c_str());
    const size_t n = static_cast<size_t>(want.elements());
    const size_t es = kes_dtype_size(want.dtype);
    if (want.dtype != KES_F32 && want.dtype != KES_F16 && want.dtype != KES_F64) {
        for (size_t i = 0; i < n; ++i)
            if (std::memcmp(want.data.data() + i * es, got + i * es, es) != 0)
                return kes::format("element %zu differs (integer/bool data must match exactly)", i);
        return {};
    }
    const Tolerance tol = tolerance_of(want.dtype);
    for (size_t i = 0; i < n; ++i) {
        const double w = value_at(want.data.data(), want.dtype, i), g = value_at(got, want.dtype, i);
        if (std::isnan(w) && std::isnan(g)) continue;
        if (std::isinf(w) || std::isinf(g)) {
            if (w == g) continue;
            return kes::format("element %zu is %g, expected %g", i, g, w);
        }
        if (!(std::fabs(g - w) <= tol.atol + tol.rtol * std::fabs(w)))
            return kes::format("element %zu is %.9g, expected %.9g", i, g, w);
    }
    return {};
}

std::string run_with(const std::vector<uint8_t>& model, const std::vector<std::string>& input_names,
                     const std::vector<kes::ir::Tensor>& inputs, const std::vector<kes::ir::Tensor>& outputs,
                     const std::vector<bool>& freeze, const std::vector<bool>& bounded, const std::string& work_file) {
    kes::convert::Options opt;
    for (size_t i = 0; i < inputs.size(); ++i)
        if (freeze[i]) opt.frozen.emplace_back(input_names[i], inputs[i]);
    kes::convert::Result r;
    try {
        r = kes::convert::convert(model.data(), model.size(), opt);
    } catch (const kes::Error& e) {
        return std::string("convert: ") + kes_status_str(e.status()) + ": " + e.what();
    }
    if (!work_file.empty()) kes::convert::write_file_atomically(work_file, r.image.bytes);
    kes_model* m = nullptr;
    if (kes_model_load_from_memory(r.image.bytes.data(), r.image.bytes.size(), &m) != KES_OK)
        return std::string("load: ") + kes_last_error();
    std::string result;
    kes_model_context* ctx = nullptr;
    std::vector<kes_tensor> in_t, out_t;
    std::vector<std::vector<uint8_t>> out_buf;
    size_t n_in = 0, n_out = 0;
    do {
        if (kes_model_context_create(m, nullptr, 0, &ctx) != KES_OK) {
            result = std::string("context: ") + kes_last_error();
            break;
        }
        kes_model_input_count(m, &n_in);
        kes_model_output_count(m, &n_out);
        in_t.resize(n_in);
        for (size_t i = 0; i < n_in && result.empty(); ++i) {
            const char* name = nullptr;
            kes_model_input_name(m, i, &name);
            const auto it = std::find(input_names.begin(), input_names.end(), std::string(name));
            if (it == input_names.end()) {
                result = kes::format("model input '%s' has no test data", name);
                break;
            }
            const kes::ir::Tensor& t = inputs[static_cast<size_t>(it - input_names.begin())];
            if (kes_tensor_wrap(&in_t[i], t.dtype, KES_LAYOUT_ND, static_cast<uint32_t>(t.shape.size()), t.shape.data(),
                                const_cast<uint8_t*>(t.data.data()), t.data.size()) != KES_OK)
                result = std::string("input: ") + kes_last_error();
        }
        if (!result.empty()) break;
        if (n_out != outputs.size()) {
            result = kes::format("%zu outputs, expected %zu", n_out, outputs.size());
            break;
        }
        out_t.resize(n_out);
        out_buf.resize(n_out);
        for (size_t i = 0; i < n_out && result.empty(); ++i) {
            kes_tensor desc;
            kes_model_output_desc(m, i, &desc);
            out_buf[i].assign(desc.size + 1, 0);
            if (kes_tensor_wrap(&out_t[i], desc.dtype, desc.layout, desc.ndim, desc.shape, out_buf[i].data(),
                                desc.size) != KES_OK)
                result = std::string("output: ") + kes_last_error();
        }
        if (!result.empty()) break;
        if (kes_model_execute(ctx, in_t.data(), n_in, out_t.data(), n_out) != KES_OK) {
            result = std::string("execute: ") + kes_last_error();
            break;
        }
        for (size_t i = 0; i < n_out && result.empty(); ++i) {
            const kes::Shape shape(out_t[i].shape, out_t[i].shape + out_t[i].ndim);
            const std::string diff = compare(outputs[i], out_t[i].dtype, shape, out_buf[i].data(), bounded[i]);
            if (!diff.empty()) result = kes::format("output %zu: %s", i, diff.c_str());
        }
    } while (false);
    kes_model_context_destroy(ctx);
    kes_model_unload(m);
    return result;
}

// "" on a pass, else why it failed.
std::string run_test(const std::string& dir, const std::string& work_file, std::string* mode) {
    try {
        const std::vector<uint8_t> model = kes::read_file((dir + "/model.onnx").c_str());
        const kes::ir::Graph g = kes::ir::import_onnx(model.data(), model.size());
        const std::string data = dir + "/test_data_set_0";
        std::vector<std::string> names;
        std::vector<kes::ir::Tensor> inputs, outputs;
        for (int32_t t : g.inputs) names.push_back(g.tensors[static_cast<size_t>(t)].name);
        for (size_t i = 0; exists(data + "/input_" + std::to_string(i) + ".pb"); ++i)
            inputs.push_back(kes::convert::read_tensor_file(data + "/input_" + std::to_string(i) + ".pb"));
        for (size_t i = 0; exists(data + "/output_" + std::to_string(i) + ".pb"); ++i)
            outputs.push_back(kes::convert::read_tensor_file(data + "/output_" + std::to_string(i) + ".pb"));
        if (inputs.size() != names.size())
            return kes::format("%zu input files for %zu graph inputs", inputs.size(), names.size());
        std::vector<bool> bounded(outputs.size());
        for (size_t i = 0; i < outputs.size() && i < g.outputs.size(); ++i)
            for (const kes::ir::Node& n : g.nodes)
                if (n.op == "NonMaxSuppression" && !n.outputs.empty() && n.outputs[0] == g.outputs[i])
                    bounded[i] = true;
        // Attempts: nothing frozen; then non-float inputs frozen; then every input frozen. The next is
        // tried only when conversion refused the model as unsupported (a runtime tensor where an op
        // needs a constant).
        std::vector<bool> ints(inputs.size()), all(inputs.size(), true), none(inputs.size(), false), rest = all;
        if (!rest.empty()) rest[0] = false;  // the data input stays a runtime input
        for (size_t i = 0; i < inputs.size(); ++i) {
            const kes_dtype d = inputs[i].dtype;
            ints[i] = d != KES_F32 && d != KES_F16 && d != KES_F64;
        }
        const std::vector<std::pair<const char*, std::vector<bool>*>> attempts = {{"nothing frozen", &none},
                                                                                  {"int inputs frozen", &ints},
                                                                                  {"all but input 0 frozen", &rest},
                                                                                  {"all inputs frozen", &all}};
        std::string r;
        const std::vector<bool>* tried = nullptr;
        for (const auto& [name, freeze] : attempts) {
            if (tried && *tried == *freeze) continue;
            const bool retry =
                r.rfind("convert: KES_ERR_UNSUPPORTED", 0) == 0 || r.find("no graph inputs") != std::string::npos;
            if (tried && !retry) break;
            tried = freeze;
            *mode = name;
            const std::string attempt = run_with(model, names, inputs, outputs, *freeze, bounded, work_file);
            // Keep the most telling failure: a later attempt's conversion refusal says less.
            if (r.empty() || attempt.empty() || attempt.rfind("convert:", 0) != 0) r = attempt;
            if (r.empty()) break;
        }
        return r;
    } catch (const std::exception& e) {
        return std::string("error: ") + e.what();
    }
}

// Runs one test in a child process; the child writes its failure reason into a pipe.
std::string run_isolated(const std::string& dir, const std::string& work_file, std::string* mode) {
    int fds[2];
    if (pipe(fds) != 0) return run_test(dir, work_file, mode);
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return run_test(dir, work_file, mode);
    }
    if (pid == 0) {
        close(fds[0]);
        alarm(30);
        std::string m;
        const std::string r = run_test(dir, work_file, &m);
        const std::string msg = m + "\n" + r;
        size_t off = 0;
        while (off < msg.size()) {
            const ssize_t w = write(fds[1], msg.data() + off, msg.size() - off);
            if (w <= 0) break;
            off += static_cast<size_t>(w);
        }
        close(fds[1]);
        _exit(0);
    }
    close(fds[1]);
    std::string msg;
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) msg.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) return kes::format("crashed (signal %d)", WTERMSIG(status));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return kes::format("child exited with status %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    const size_t nl = msg.find('\n');
    if (nl == std::string::npos) return "no result from the child";
    *mode = msg.substr(0, nl);
    return msg.substr(nl + 1);
}

std::set<std::string> read_list(const std::string& path) {
    std::set<std::string> names;
    std::ifstream f(path);
    std::string line;
    while (std::getline(f, line)) {
        line = line.substr(0, line.find('#'));
        line.erase(std::remove_if(line.begin(), line.end(),
                                  [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
                   line.end());
        if (!line.empty()) names.insert(line);
    }
    return names;
}

}  // namespace

int main(int argc, char** argv) {
    std::string data = "/usr/share/libonnx-testdata/data/node", expected_path, filter, work;
    bool update = false, verbose = false, isolate = true;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--data")
            data = value();
        else if (a == "--expected")
            expected_path = value();
        else if (a == "--filter")
            filter = value();
        else if (a == "--work")
            work = value();
        else if (a == "--update")
            update = true;
        else if (a == "--verbose" || a == "-v")
            verbose = true;
        else if (a == "--no-fork")
            isolate = false;
        else {
            std::fprintf(stderr,
                         "usage: %s --data DIR --expected LIST [--update] [--filter TEXT] [--verbose] [--work DIR] "
                         "[--no-fork]\n",
                         argv[0]);
            return 2;
        }
    }
    if (expected_path.empty()) {
        std::fprintf(stderr, "--expected LIST is required\n");
        return 2;
    }
    const std::vector<std::string> tests = list_tests(data);
    if (tests.empty()) {
        std::fprintf(stderr, "no ONNX node tests under %s\n", data.c_str());
        return 2;
    }
    if (!work.empty()) (void)!system(("mkdir -p '" + work + "'").c_str());
    const std::set<std::string> listed = read_list(expected_path);
    std::set<std::string> passed;
    std::vector<std::string> listed_failures;
    size_t ran = 0, listed_passed = 0;
    std::map<std::string, size_t> pass_modes;
    for (const std::string& t : tests) {
        if (!filter.empty() && t.find(filter) == std::string::npos) continue;
        if (kKnownBad.count(t)) {
            if (verbose) std::printf("SKIP %s (known-bad expected data)\n", t.c_str());
            continue;
        }
        ++ran;
        std::string mode;
        const std::string work_file = work.empty() ? std::string() : work + "/" + t + ".kom";
        const std::string why =
            isolate ? run_isolated(data + "/" + t, work_file, &mode) : run_test(data + "/" + t, work_file, &mode);
        const bool is_listed = listed.count(t) > 0;
        if (why.empty()) {
            passed.insert(t);
            listed_passed += is_listed;
            ++pass_modes[mode];
            if (verbose) std::printf("PASS %s (%s)\n", t.c_str(), mode.c_str());
        } else {
            if (is_listed) listed_failures.push_back(t + ": " + why);
            if (verbose || is_listed) std::printf("%s %s: %s\n", is_listed ? "FAIL" : "fail", t.c_str(), why.c_str());
        }
    }
    if (filter.empty())
        for (const std::string& t : listed)
            if (!std::binary_search(tests.begin(), tests.end(), t))
                listed_failures.push_back(t + ": listed but not in " + data);
    size_t new_passes = 0;
    for (const std::string& t : passed) new_passes += listed.count(t) == 0;
    std::printf("ONNX conformance: %zu passed of %zu listed (of %zu in libonnx-testdata)\n", listed_passed,
                listed.size(), tests.size());
    std::string modes;
    for (const auto& [m, n] : pass_modes) modes += (modes.empty() ? "" : ", ") + std::to_string(n) + " " + m;
    std::printf("  ran %zu, passed %zu (%s), %zu passing but not listed%s\n", ran, passed.size(), modes.c_str(),
                new_passes, new_passes && !update ? " (run with --update to add them)" : "");
    for (const std::string& f : listed_failures) std::printf("  listed test failed: %s\n", f.c_str());
    if (update) {
        std::set<std::string> all = listed;  // the list only grows
        all.insert(passed.begin(), passed.end());
        std::ofstream out(expected_path, std::ios::trunc);
        out << "# ONNX node tests (Debian libonnx-testdata) that Kestrel passes; the conformance ctest fails if\n"
               "# any of them fails. Grown by `kes_onnx_conformance --update`; never remove a line to make a\n"
               "# run pass. Known-bad data, never listed: "
               "test_resize_downsample_scales_{linear,cubic}_align_corners.\n";
        for (const std::string& t : all) out << t << "\n";
        std::printf("  updated %s: %zu tests\n", expected_path.c_str(), all.size());
    }
    // A filtered run checks only the listed tests it ran.
    return listed_failures.empty() ? 0 : 1;
}
