// kes-model-bench — the model_bench of Kestrel (CANN's ais_bench analog): load a .kom, run it N times
// on random or given inputs, and print latency, throughput, memory; per-layer profile; dump every tensor.
//
//   kes-model-bench MODEL.kom [--iterations N] [--warmup N] [--threads N] [--batch B] [--image-size HxW]
//                   [--input NAME=FILE.npy ...] [--seed S] [--profile] [--dump DIR] [--inject-error LAYER]
//
// Exit codes: 0 success, 1 runtime error (the message says what), 2 usage error.
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kes/error.hpp"
#include "kes/file.hpp"
#include "kes/npy.hpp"
#include "kestrel/engine.h"
#include "kestrel/trace.h"

namespace {

const char kUsage[] =
    "usage: kes-model-bench MODEL.kom [options]\n"
    "  --iterations N      timed executions (default 100)\n"
    "  --warmup N          untimed executions first (default 10)\n"
    "  --threads N         threads per node (default: the shared pool, at most 8; 1 = this thread)\n"
    "  --batch B           batch gear (models converted with --dynamic-batch)\n"
    "  --image-size HxW    image size gear (models converted with --dynamic-image-size)\n"
    "  --input NAME=FILE   an input from a .npy file (others get uniform random values in [-1, 1])\n"
    "  --seed S            seed of the random inputs (default 1)\n"
    "  --profile           per-layer table (op, kernel, output shape, median time, %, GFLOP/s); with KES_TRACE,\n"
    "                      one span per layer\n"
    "  --dump DIR          write every node output of one execution to DIR/<tensor>.npy, and\n"
    "                      DIR/order.txt listing them in graph order (file, layer, node; tab-separated):\n"
    "                      compare dumps with kes-compare\n"
    "  --inject-error L    (testing) add 1.0 to the first element of layer L's output in the dumped run\n"
    "  --json              one line of JSON instead of the text summary (bench/engine/run.sh reads it)\n";

[[noreturn]] void usage_error(const std::string& message) {
    std::fprintf(stderr, "kes-model-bench: %s\n%s", message.c_str(), kUsage);
    std::exit(2);
}

[[noreturn]] void runtime_error(const std::string& message) {
    std::fprintf(stderr, "kes-model-bench: %s\n", message.c_str());
    std::exit(1);
}

void check(kes_status st, const char* what) {
    if (st != KES_OK) runtime_error(std::string(what) + ": " + kes_last_error());
}

long parse_count(const std::string& text, const char* option, long min_value, long max_value) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || v < min_value || v > max_value)
        usage_error(std::string(option) + " takes a whole number in [" + std::to_string(min_value) + ", " +
                    std::to_string(max_value) + "], not '" + text + "'");
    return v;
}

// File-safe tensor names: anything but [A-Za-z0-9._-] becomes '_'.
std::string file_name_of(const std::string& name) {
    std::string out = name;
    for (char& c : out)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
    return out.empty() ? std::string("_") : out;
}

// The --dump directory, made (its parent must exist) and proven writable before any work: a path that
// cannot take the dump failed only after every iteration, with the error of the first .npy. The probe
// is order.txt itself, written again once the dump is complete.
void prepare_dump_dir(const std::string& dir) {
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
        runtime_error("--dump: cannot make the directory " + dir + ": " + std::strerror(errno));
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) runtime_error("--dump: " + dir + " is not a directory");
    const std::string probe = dir + "/order.txt";
    std::FILE* f = std::fopen(probe.c_str(), "w");
    if (!f) runtime_error("--dump: cannot write " + probe + ": " + std::strerror(errno));
    std::fclose(f);
}

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    const double rank = std::ceil(p / 100.0 * static_cast<double>(v.size()));  // nearest-rank percentile
    const size_t i = rank < 1.0 ? 0 : std::min(v.size() - 1, static_cast<size_t>(rank) - 1);
    return v[i];
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
        std::fputs(kUsage, stdout);
        return 0;
    }
    if (argc < 2 || argv[1][0] == '-') usage_error("no model given");
    const std::string model_path = argv[1];
    long iterations = 100, warmup = 10, threads = 0, batch = 0, seed = 1, inject = -1;
    int64_t height = 0, width = 0;
    bool profile = false, json = false;
    std::string dump_dir;
    std::map<std::string, std::string> input_files;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage_error(a + " needs a value");
            return argv[++i];
        };
        if (a == "--iterations") {
            iterations = parse_count(value(), "--iterations", 1, 1000000);
        } else if (a == "--warmup") {
            warmup = parse_count(value(), "--warmup", 0, 1000000);
        } else if (a == "--threads") {
            threads = parse_count(value(), "--threads", 1, KES_MODEL_MAX_THREADS);
        } else if (a == "--batch") {
            batch = parse_count(value(), "--batch", 1, 1 << 20);
        } else if (a == "--seed") {
            seed = parse_count(value(), "--seed", 0, 1L << 30);
        } else if (a == "--image-size") {
            const std::string v = value();
            const size_t x = v.find_first_of("x,");
            if (x == std::string::npos) usage_error("--image-size takes HxW, not '" + v + "'");
            height = parse_count(v.substr(0, x), "--image-size height", 1, 1 << 16);
            width = parse_count(v.substr(x + 1), "--image-size width", 1, 1 << 16);
        } else if (a == "--input") {
            const std::string v = value();
            const size_t eq = v.rfind('=');
            if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
                usage_error("--input takes NAME=FILE.npy, not '" + v + "'");
            input_files[v.substr(0, eq)] = v.substr(eq + 1);
        } else if (a == "--json") {
            json = true;
        } else if (a == "--profile") {
            profile = true;
        } else if (a == "--dump") {
            dump_dir = value();
        } else if (a == "--inject-error") {
            inject = parse_count(value(), "--inject-error", 0, 1L << 30);
        } else {
            usage_error("unknown option '" + a + "'");
        }
    }
    if (inject >= 0 && dump_dir.empty()) usage_error("--inject-error needs --dump");
    if (!dump_dir.empty()) prepare_dump_dir(dump_dir);

    // Load: mmap + prepack, timed as the peer's session creation is.
    const auto load_start = std::chrono::steady_clock::now();
    kes_model* model = nullptr;
    check(kes_model_load_from_file(model_path.c_str(), KES_MODEL_LOAD_MMAP, &model), "cannot load the model");
    kes_model_context_config cfg;
    kes_model_context_config_init(&cfg);
    cfg.threads = static_cast<uint32_t>(threads);
    kes_model_context* ctx = nullptr;
    check(kes_model_context_create_with_config(model, nullptr, 0, &cfg, &ctx), "cannot create a context");
    const double load_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count();
    if (batch) check(kes_model_context_set_batch(ctx, batch), "--batch");
    if (height) check(kes_model_context_set_image_size(ctx, height, width), "--image-size");
    if (inject >= 0) {
        // A layer the model does not have would inject nothing, and the dump would pass for a faulty one.
        size_t layers = 0;
        check(kes_model_layer_count(model, &layers), "layers");
        if (static_cast<size_t>(inject) >= layers)
            usage_error("--inject-error " + std::to_string(inject) + ": the model has layers 0.." +
                        std::to_string(layers - 1));
    }

    // Inputs at the context's gear.
    size_t n_in = 0, n_out = 0;
    check(kes_model_input_count(model, &n_in), "inputs");
    check(kes_model_output_count(model, &n_out), "outputs");
    std::vector<kes_tensor> inputs(n_in), outputs(n_out);
    std::vector<std::vector<uint8_t>> storage(n_in + n_out);
    std::mt19937 rng(static_cast<uint32_t>(seed));
    for (size_t i = 0; i < n_in; ++i) {
        check(kes_model_context_input_desc(ctx, i, &inputs[i]), "input desc");
        const char* name = nullptr;
        kes_model_input_name(model, i, &name);
        storage[i].assign(inputs[i].size + 1, 0);
        inputs[i].data = storage[i].data();
        const auto file = input_files.find(name);
        if (file != input_files.end()) {
            try {
                const std::vector<uint8_t> bytes = kes::read_file(file->second.c_str());
                const kes::npy::Array arr = kes::npy::parse(bytes.data(), bytes.size());
                if (arr.dtype != inputs[i].dtype || arr.data_bytes != inputs[i].size)
                    runtime_error(file->second + ": " + kes_dtype_name(arr.dtype) + " array of " +
                                  std::to_string(arr.data_bytes) + " bytes; input '" + name + "' takes " +
                                  kes_dtype_name(inputs[i].dtype) + " of " + std::to_string(inputs[i].size) + " bytes");
                std::memcpy(storage[i].data(), bytes.data() + arr.data_offset, arr.data_bytes);
            } catch (const kes::Error& e) {
                runtime_error(file->second + ": " + e.what());
            }
            input_files.erase(file);
        } else if (inputs[i].dtype == KES_F32) {
            std::uniform_real_distribution<float> d(-1.0f, 1.0f);
            float* p = static_cast<float*>(inputs[i].data);
            for (size_t k = 0; k < inputs[i].size / sizeof(float); ++k) p[k] = d(rng);
        } else {
            for (size_t k = 0; k < inputs[i].size; ++k) storage[i][k] = static_cast<uint8_t>(rng());
        }
    }
    if (!input_files.empty()) usage_error("--input: the model has no input named '" + input_files.begin()->first + "'");
    for (size_t i = 0; i < n_out; ++i) {
        check(kes_model_context_output_desc(ctx, i, &outputs[i]), "output desc");
        storage[n_in + i].assign(outputs[i].size + 1, 0);
        outputs[i].data = storage[n_in + i].data();
    }

    uint32_t used_threads = 0;
    kes_model_context_threads(ctx, &used_threads);
    size_t work = 0, weight = 0, arena = 0, ideal = 0;
    kes_model_get_size(model, &work, &weight);
    kes_model_get_memory_plan(model, &arena, &ideal);

    for (long i = 0; i < warmup; ++i)
        check(kes_model_execute(ctx, inputs.data(), n_in, outputs.data(), n_out), "execute");
    if (profile) check(kes_model_context_set_profiling(ctx, 1), "profiling");
    size_t layers = 0;
    kes_model_layer_count(model, &layers);
    // Every layer's time in every run: the table shows each layer's median, so a run preempted on a
    // shared machine does not inflate the layers it happened to hit.
    std::vector<std::vector<double>> layer_runs(layers);
    std::vector<double> ms;
    ms.reserve(static_cast<size_t>(iterations));
    for (long i = 0; i < iterations; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        check(kes_model_execute(ctx, inputs.data(), n_in, outputs.data(), n_out), "execute");
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        if (profile) {
            for (size_t l = 0; l < layers; ++l) {
                kes_model_layer_profile lp;
                std::memset(&lp, 0, sizeof lp);
                lp.struct_size = sizeof lp;
                kes_model_context_layer_profile(ctx, l, &lp);
                layer_runs[l].push_back(static_cast<double>(lp.time_ns));
            }
        }
    }
    struct rusage ru {};
    getrusage(RUSAGE_SELF, &ru);
    const double median = percentile(ms, 50);
    const int64_t items = inputs.empty() || inputs[0].ndim == 0 ? 1 : inputs[0].shape[0];
    // Packed weights against the raw weights of the layers that packed theirs.
    uint64_t raw_packed = 0, packed = 0;
    double flops = 0.0;
    for (size_t l = 0; l < layers; ++l) {
        kes_model_layer_profile lp;
        std::memset(&lp, 0, sizeof lp);
        lp.struct_size = sizeof lp;
        kes_model_context_layer_profile(ctx, l, &lp);
        if (lp.packed_bytes) raw_packed += lp.weight_bytes, packed += lp.packed_bytes;
        flops += lp.flops;
    }
    if (json) {
        std::printf(
            "{\"model\":\"%s\",\"threads\":%u,\"load_ms\":%.3f,\"min_ms\":%.4f,\"median_ms\":%.4f,"
            "\"p90_ms\":%.4f,\"p99_ms\":%.4f,\"work\":%zu,\"arena\":%zu,\"ideal\":%zu,\"weights\":%zu,"
            "\"packed\":%llu,\"packed_raw\":%llu,\"rss_kib\":%ld,\"gflop\":%.4f}\n",
            model_path.c_str(), used_threads, load_ms, percentile(ms, 0), median, percentile(ms, 90),
            percentile(ms, 99), work, arena, ideal, weight, static_cast<unsigned long long>(packed),
            static_cast<unsigned long long>(raw_packed), ru.ru_maxrss, flops / 1e9);
    } else {
        std::printf("model       %s\n", model_path.c_str());
        std::printf("threads     %u\n", used_threads);
        std::printf("load        %.2f ms (mmap + prepack + context)\n", load_ms);
        std::printf("latency     min %.3f  median %.3f  p90 %.3f  p99 %.3f ms  (%ld runs after %ld warm-up)\n",
                    percentile(ms, 0), median, percentile(ms, 90), percentile(ms, 99), iterations, warmup);
        std::printf("throughput  %.1f inferences/s (batch %lld), %.2f GFLOP per run: %.1f GFLOP/s\n",
                    1000.0 / median * static_cast<double>(items), static_cast<long long>(items), flops / 1e9,
                    flops / 1e6 / median);
        std::printf(
            "memory      work %zu (arena %zu + scratch %zu; ideal %zu: %.3fx)  weights %zu (packed %llu for "
            "%llu raw)  peak RSS %ld KiB\n",
            work, arena, work - arena, ideal, ideal ? static_cast<double>(work) / static_cast<double>(ideal) : 0.0,
            weight, static_cast<unsigned long long>(packed), static_cast<unsigned long long>(raw_packed), ru.ru_maxrss);
    }

    if (profile) {
        std::vector<double> layer_ns(layers, 0.0);
        double total = 0.0;
        for (size_t l = 0; l < layers; ++l) total += layer_ns[l] = percentile(layer_runs[l], 50);
        std::printf("\n%4s  %-28s %-18s %-16s %-20s %10s %6s %8s\n", "#", "layer", "op", "kernel", "output", "ms", "%",
                    "GFLOP/s");
        for (size_t l = 0; l < layers; ++l) {
            kes_model_layer_profile lp;
            std::memset(&lp, 0, sizeof lp);
            lp.struct_size = sizeof lp;
            kes_model_context_layer_profile(ctx, l, &lp);
            std::string shape = "[";
            for (uint32_t d = 0; d < lp.output_ndim; ++d) shape += (d ? "," : "") + std::to_string(lp.output_shape[d]);
            shape += "]";
            const double median_ns = layer_ns[l];
            std::printf("%4zu  %-28.28s %-18.18s %-16.16s %-20.20s %10.4f %6.2f %8.2f\n", l, lp.name, lp.op, lp.impl,
                        shape.c_str(), median_ns / 1e6, total > 0 ? 100.0 * layer_ns[l] / total : 0.0,
                        median_ns > 0 ? lp.flops / median_ns : 0.0);
        }
        std::printf("%4s  %-28s %-18s %-16s %-20s %10.4f\n", "", "total (layer medians)", "", "", "", total / 1e6);
        check(kes_model_context_set_profiling(ctx, 0), "profiling");
    }

    if (!dump_dir.empty()) {
        struct DumpState {
            std::string dir;
            long inject;
            std::vector<std::string> order;
            std::string error;
        } d{dump_dir, inject, {}, {}};
        // One file per node output, named after the tensor (the node's name for its first output is
        // not unique across runtimes; tensor names are what ONNX references carry).
        check(kes_model_context_set_observer(
                  ctx,
                  [](size_t layer, const char* node, const char* const* names, kes_tensor* outs, size_t count,
                     void* user) {
                      DumpState& s = *static_cast<DumpState*>(user);
                      for (size_t k = 0; k < count; ++k) {
                          kes_tensor& t = outs[k];
                          if (!t.data && t.size) continue;
                          if (static_cast<long>(layer) == s.inject && k == 0 && t.dtype == KES_F32 &&
                              t.size >= sizeof(float))
                              static_cast<float*>(t.data)[0] += 1.0f;
                          const std::string file = file_name_of(names[k]) + ".npy";
                          std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
                          try {
                              kes::npy::write_file(s.dir + "/" + file, t.dtype, shape, t.data, t.size);
                          } catch (const kes::Error& e) {
                              if (s.error.empty()) s.error = e.what();
                          }
                          s.order.push_back(file + "\t" + std::to_string(layer) + "\t" + node);
                      }
                  },
                  &d),
              "observer");
        check(kes_model_execute(ctx, inputs.data(), n_in, outputs.data(), n_out), "execute (dump)");
        kes_model_context_set_observer(ctx, nullptr, nullptr);
        if (!d.error.empty()) runtime_error("--dump: " + d.error);
        std::ofstream order(dump_dir + "/order.txt");
        for (const std::string& f : d.order) order << f << "\n";
        if (!order) runtime_error("--dump: cannot write " + dump_dir + "/order.txt");
        std::printf("dump        %zu tensors in %s (graph order in order.txt)\n", d.order.size(), dump_dir.c_str());
    }

    // The trace is written before the model goes: its per-layer spans name the model's layers.
    if (kes_trace_enabled() && kes_trace_stop() != KES_OK) runtime_error(kes_last_error());
    kes_model_context_destroy(ctx);
    kes_model_unload(model);
    return 0;
}
