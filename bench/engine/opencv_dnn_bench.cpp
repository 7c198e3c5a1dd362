// opencv_dnn_bench — the OpenCV DNN peer of bench/engine/run.sh: times one ONNX model through
// cv::dnn (Debian's OpenCV 4.6, CPU target) the way kes-model-bench times its .kom: same iterations,
// warm-up, thread count and uniform random input in [-1, 1]. Prints one line of JSON.
//
//   opencv_dnn_bench MODEL.onnx SHAPE THREADS ITERATIONS WARMUP     (SHAPE: e.g. 1,256,256,3)
//
// Exit codes: 0 success, 1 runtime error (OpenCV's message), 2 usage error: every number is checked
// (atoi read "abc" as 0, and 0 iterations read past an empty vector). One file, built by run.sh with g++.
#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace {

const char kUsage[] =
    "usage: opencv_dnn_bench MODEL.onnx SHAPE THREADS ITERATIONS WARMUP\n"
    "  SHAPE       the input's dimensions, e.g. 1,256,256,3 (each in [1, 65536])\n"
    "  THREADS     cv::setNumThreads, in [1, 256]\n"
    "  ITERATIONS  timed runs, in [1, 1000000]\n"
    "  WARMUP      untimed runs first, in [0, 1000000]\n";

[[noreturn]] void usage_error(const std::string& message) {
    std::fprintf(stderr, "opencv_dnn_bench: %s\n%s", message.c_str(), kUsage);
    std::exit(2);
}

int parse_int(const std::string& text, const char* what, long min_value, long max_value) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || text[0] < '0' || text[0] > '9' || *end != '\0' || errno != 0 || v < min_value || v > max_value)
        usage_error(std::string(what) + " takes a whole number in [" + std::to_string(min_value) + ", " +
                    std::to_string(max_value) + "], not '" + text + "'");
    return static_cast<int>(v);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
        std::fputs(kUsage, stdout);
        return 0;
    }
    if (argc != 6) usage_error("wants 5 arguments, got " + std::to_string(argc - 1));
    std::vector<int> shape;
    std::stringstream ss(argv[2]);
    for (std::string d; std::getline(ss, d, ',');) shape.push_back(parse_int(d, "each SHAPE dimension", 1, 65536));
    if (shape.empty() || shape.size() > 8 || std::string(argv[2]).back() == ',')
        usage_error(std::string("SHAPE takes 1 to 8 dimensions separated by commas, not '") + argv[2] + "'");
    const int threads = parse_int(argv[3], "THREADS", 1, 256);
    const int iterations = parse_int(argv[4], "ITERATIONS", 1, 1000000);
    const int warmup = parse_int(argv[5], "WARMUP", 0, 1000000);
    try {
        cv::setNumThreads(threads);
        const auto t0 = std::chrono::steady_clock::now();
        cv::dnn::Net net = cv::dnn::readNetFromONNX(argv[1]);
        net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
        net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
        cv::Mat input(static_cast<int>(shape.size()), shape.data(), CV_32F);
        cv::randu(input, -1.0f, 1.0f);
        net.setInput(input);
        std::vector<cv::Mat> outs;
        net.forward(outs, net.getUnconnectedOutLayersNames());  // the first run finishes the set-up
        const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        for (int i = 0; i < warmup; ++i) net.forward(outs, net.getUnconnectedOutLayersNames());
        std::vector<double> ms;
        for (int i = 0; i < iterations; ++i) {
            const auto s = std::chrono::steady_clock::now();
            net.setInput(input);
            net.forward(outs, net.getUnconnectedOutLayersNames());
            ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
        }
        std::sort(ms.begin(), ms.end());
        auto pct = [&](double p) {
            const double rank = std::ceil(p / 100.0 * static_cast<double>(ms.size()));
            return ms[rank < 1 ? 0 : std::min(ms.size() - 1, static_cast<size_t>(rank) - 1)];
        };
        std::printf(
            "{\"peer\":\"opencv-dnn 4.6\",\"threads\":%d,\"load_ms\":%.3f,\"min_ms\":%.4f,\"median_ms\":%.4f,"
            "\"p99_ms\":%.4f}\n",
            threads, load_ms, ms.front(), pct(50), pct(99));
    } catch (const cv::Exception& e) {
        std::fprintf(stderr, "opencv_dnn_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
