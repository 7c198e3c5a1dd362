// opencv_dnn_bench — the OpenCV DNN peer of bench/engine/run.sh: times one ONNX model through
// cv::dnn (Debian's OpenCV 4.6, CPU target) the way kes-model-bench times its .kom: same iterations,
// warm-up, thread count and uniform random input in [-1, 1]. Prints one line of JSON.
//
//   opencv_dnn_bench MODEL.onnx SHAPE THREADS ITERATIONS WARMUP     (SHAPE: e.g. 1,256,256,3)
#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: opencv_dnn_bench MODEL.onnx SHAPE THREADS ITERATIONS WARMUP\n");
        return 2;
    }
    std::vector<int> shape;
    std::stringstream ss(argv[2]);
    for (std::string d; std::getline(ss, d, ',');) shape.push_back(std::atoi(d.c_str()));
    const int threads = std::atoi(argv[3]), iterations = std::atoi(argv[4]), warmup = std::atoi(argv[5]);
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
