// kes-bench: runs every Kestrel benchmark with its peer in the same process and prints, after Google
// Benchmark's own table, one ratio per case: peer time / Kestrel time (> 1 means Kestrel is faster).
//
// Naming contract for benchmark files: register "<case>:<impl>" where impl is "kestrel" for ours and
// a short peer name otherwise ("malloc", "opencv", "faiss"); Google Benchmark may append "/..." to it.
// A ratio compares CPU times, or wall times for cases registered with UseRealTime (threads, I/O); a
// case with repetitions contributes its median.
//
// Exit codes: 0 success, 2 usage error (an unknown flag, or a flag's value that does not parse).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "kestrel/sdk.h"

void kes_bench_register_mem_pool();
#if KES_BENCH_AIPP_VS_OPENCV
void kes_bench_register_aipp();
#endif

namespace {

struct Timing {
    std::string impl;
    double ns_per_iter;
};

class RatioReporter : public benchmark::ConsoleReporter {
public:
    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const Run& run : runs) {
            if (run.error_occurred || run.iterations == 0) continue;
            // A case run with repetitions is reported by its median (the noise-robust figure); its
            // other aggregates, and its single repetitions when they are shown too, are not ratios.
            const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
            if (run.run_type != Run::RT_Iteration && !median) continue;
            if (run.run_type == Run::RT_Iteration && run.repetitions > 1) continue;
            // The case's own name: without the min_time/repeats/real_time suffixes settings append.
            std::string name = run.run_name.function_name;
            if (!run.run_name.args.empty()) name += "/" + run.run_name.args;
            const size_t colon = name.rfind(':');
            if (colon == std::string::npos) continue;
            const size_t slash = name.find('/', colon);
            const std::string impl =
                name.substr(colon + 1, slash == std::string::npos ? std::string::npos : slash - colon - 1);
            const std::string key = name.substr(0, colon) + (slash == std::string::npos ? "" : name.substr(slash));
            // Wall time for cases that ask for it (UseRealTime: several threads, or I/O), else CPU time:
            // a single-thread case preempted by a neighbour on a shared machine is not slower code.
            const bool wall = run.run_name.time_type == "real_time";
            const double ns = (wall ? run.GetAdjustedRealTime() : run.GetAdjustedCPUTime()) * multiplier(run.time_unit);
            if (by_case_.find(key) == by_case_.end()) order_.push_back(key);
            by_case_[key].push_back({impl, ns});
        }
    }

    void Finalize() override {
        ConsoleReporter::Finalize();
        std::printf("\nKestrel vs peers (ratio = peer time / Kestrel time; > 1: Kestrel faster)\n");
        std::printf("machine: %s, %u CPUs, %s\n", cpu_model().c_str(), std::thread::hardware_concurrency(),
                    kes_build_info());
        std::printf("%-44s %-16s %14s %14s %8s\n", "case", "peer", "kestrel ns", "peer ns", "ratio");
        for (const std::string& key : order_) {
            const auto& timings = by_case_[key];
            const Timing* ours = nullptr;
            for (const Timing& t : timings)
                if (t.impl == "kestrel") ours = &t;
            if (!ours) continue;
            for (const Timing& t : timings) {
                if (&t == ours) continue;
                std::printf("%-44s %-16s %14.1f %14.1f %7.2fx\n", key.c_str(), t.impl.c_str(), ours->ns_per_iter,
                            t.ns_per_iter, t.ns_per_iter / ours->ns_per_iter);
            }
        }
    }

private:
    static double multiplier(benchmark::TimeUnit unit) {
        switch (unit) {
            case benchmark::kSecond: return 1e9;
            case benchmark::kMillisecond: return 1e6;
            case benchmark::kMicrosecond: return 1e3;
            default: return 1.0;
        }
    }
    static std::string cpu_model() {
        std::ifstream in("/proc/cpuinfo");
        std::string line;
        while (std::getline(in, line)) {
            if (line.rfind("model name", 0) == 0 || line.rfind("CPU part", 0) == 0) {
                const size_t colon = line.find(':');
                if (colon != std::string::npos) return line.substr(colon + 2);
            }
        }
        return "unknown CPU";
    }
    std::map<std::string, std::vector<Timing>> by_case_;
    std::vector<std::string> order_;
};

}  // namespace

int main(int argc, char** argv) {
    kes_bench_register_mem_pool();
#if KES_BENCH_AIPP_VS_OPENCV
    kes_bench_register_aipp();
#endif
    // Cases with repetitions (the short single-thread ones, whose ratio a burst of load on a shared
    // machine can swing) run their repetitions interleaved with their peer's in random order, so both
    // sides sample the same load; an explicit flag on the command line still wins.
    std::vector<char*> args(argv, argv + argc);
    char interleave[] = "--benchmark_enable_random_interleaving=true";
    bool user_set = false;
    for (int i = 1; i < argc; ++i)
        user_set |= std::string(argv[i]).rfind("--benchmark_enable_random_interleaving", 0) == 0;
    if (!user_set) args.insert(args.begin() + 1, interleave);
    args.push_back(nullptr);
    argc = static_cast<int>(args.size()) - 1;
    argv = args.data();
    // Google Benchmark prints its usage for --help and exits 0 itself; a flag it does not know, or one whose
    // value does not parse (--benchmark_repetitions=abc), is left in argv and reported here: a usage
    // error, exit 2, like every Kestrel tool.
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
    RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return 0;
}
