// peer_ffmpeg_opencv — the P12 peer: the multi-stream face pipeline written the way users write it without
// Kestrel, one stream per thread: FFmpeg (libavformat + libavcodec, one decoder thread) decodes, libswscale
// converts each frame to BGR, OpenCV resizes and letterboxes it to 256x256, cv::dnn runs BlazeFace 256 (the
// ONNX file Kestrel converts), the thread decodes the 896 anchors, cv::dnn::NMSBoxes keeps the faces and a
// greedy IoU tracker gives them ids. Each stream plays a file in a loop at its frame rate, as a camera sends
// it: a thread that falls behind skips the frames whose time has passed (a camera's frames do not wait).
//
//   peer_ffmpeg_opencv MODEL.onnx CLIP.mp4 CHANNELS SECONDS THREADS
//
// Prints one JSON line: channels, seconds (wall), frames processed and skipped, tracks started, and the CPU
// ms per frame of each stage (decode = demux + decode + BGR conversion, per frame decoded; detect = resize +
// letterbox + blob + forward + anchor decode + NMS and track, per frame processed). Exit codes: 0, 1 runtime error, 2
// usage. Built by run.sh with g++.
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswscale/swscale.h>
}
#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

namespace {

double thread_cpu_s() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

using Clock = std::chrono::steady_clock;

struct Anchor {
    float x, y;
};

// BlazeFace 256 ("back" model): 16x16 cells x 2 anchors (stride 16) and 8x8 x 6 (stride 32), unit size.
std::vector<Anchor> blazeface_anchors() {
    std::vector<Anchor> a;
    for (int y = 0; y < 16; ++y)
        for (int x = 0; x < 16; ++x)
            for (int k = 0; k < 2; ++k) a.push_back({(x + 0.5f) / 16, (y + 0.5f) / 16});
    for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 8; ++x)
            for (int k = 0; k < 6; ++k) a.push_back({(x + 0.5f) / 8, (y + 0.5f) / 8});
    return a;
}

struct Track {
    int id;
    cv::Rect2f box;
    int misses;
};

float iou(const cv::Rect2f& a, const cv::Rect2f& b) {
    const float inter = (a & b).area();
    const float uni = a.area() + b.area() - inter;
    return uni > 0 ? inter / uni : 0;
}

struct Result {
    long frames = 0, skipped = 0, tracks = 0;
    double cpu_decode = 0, cpu_detect = 0, cpu_track = 0;
    std::string error;
};

void run_stream(const std::string& model, const std::string& clip, double seconds, Clock::time_point start, Result* r) {
    cv::dnn::Net net;
    try {
        net = cv::dnn::readNetFromONNX(model);
    } catch (const cv::Exception& e) {
        r->error = e.what();
        return;
    }
    net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
    net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    const std::vector<std::string> out_names = net.getUnconnectedOutLayersNames();
    const std::vector<Anchor> anchors = blazeface_anchors();
    std::vector<Track> tracks;
    int next_id = 1;
    AVFormatContext* fmt = nullptr;
    AVCodecContext* dec = nullptr;
    SwsContext* sws = nullptr;
    AVPacket* pkt = av_packet_alloc();
    AVFrame* frame = av_frame_alloc();
    int stream = -1;
    double fps = 25;
    auto open = [&]() -> bool {
        if (avformat_open_input(&fmt, clip.c_str(), nullptr, nullptr) < 0 ||
            avformat_find_stream_info(fmt, nullptr) < 0)
            return false;
        const AVCodec* codec = nullptr;
        stream = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
        if (stream < 0) return false;
        const AVRational rate = fmt->streams[stream]->avg_frame_rate;
        if (rate.num > 0 && rate.den > 0) fps = av_q2d(rate);
        dec = avcodec_alloc_context3(codec);
        avcodec_parameters_to_context(dec, fmt->streams[stream]->codecpar);
        dec->thread_count = 1;
        return avcodec_open2(dec, codec, nullptr) == 0;
    };
    if (!open()) {
        r->error = "cannot open " + clip;
        return;
    }
    long due_index = 0;  // the camera's frame number now due
    cv::Mat bgr, small, boxed(256, 256, CV_8UC3), rgb, input;
    const auto end = start + std::chrono::duration<double>(seconds);
    while (Clock::now() < end) {
        double cpu0 = thread_cpu_s();
        int got = 0;
        while (!got) {
            const int rd = av_read_frame(fmt, pkt);
            if (rd < 0) {  // the end of the file: loop it
                avcodec_free_context(&dec);
                avformat_close_input(&fmt);
                if (!open()) {
                    r->error = "cannot reopen " + clip;
                    return;
                }
                continue;
            }
            if (pkt->stream_index == stream && avcodec_send_packet(dec, pkt) == 0)
                got = avcodec_receive_frame(dec, frame) == 0;
            av_packet_unref(pkt);
        }
        // A real-time source: wait for this frame's time, or skip it when its time has passed.
        const auto due = start + std::chrono::duration<double>(static_cast<double>(due_index) / fps);
        const auto now = Clock::now();
        ++due_index;
        if (now > due + std::chrono::duration<double>(1.0 / fps)) {
            ++r->skipped;
            r->cpu_decode += thread_cpu_s() - cpu0;
            continue;
        }
        if (now < due) std::this_thread::sleep_until(due);
        const int w = frame->width, h = frame->height;
        sws = sws_getCachedContext(sws, w, h, static_cast<AVPixelFormat>(frame->format), w, h, AV_PIX_FMT_BGR24,
                                   SWS_BILINEAR, nullptr, nullptr, nullptr);
        bgr.create(h, w, CV_8UC3);
        uint8_t* dst[1] = {bgr.data};
        const int dst_stride[1] = {static_cast<int>(bgr.step)};
        sws_scale(sws, frame->data, frame->linesize, 0, h, dst, dst_stride);
        r->cpu_decode += thread_cpu_s() - cpu0;

        cpu0 = thread_cpu_s();
        const float scale = 256.0f / static_cast<float>(std::max(w, h));
        const int sw = std::max(1, static_cast<int>(std::lround(w * scale)));
        const int sh = std::max(1, static_cast<int>(std::lround(h * scale)));
        cv::resize(bgr, small, cv::Size(sw, sh), 0, 0, cv::INTER_LINEAR);
        const int left = (256 - sw) / 2, top = (256 - sh) / 2;
        cv::copyMakeBorder(small, boxed, top, 256 - sh - top, left, 256 - sw - left, cv::BORDER_CONSTANT,
                           cv::Scalar(0, 0, 0));
        cv::cvtColor(boxed, rgb, cv::COLOR_BGR2RGB);
        rgb.convertTo(input, CV_32FC3, 1.0 / 128, -127.5 / 128);  // the model's (x - 127.5) / 128
        const int nhwc[4] = {1, 256, 256, 3};
        net.setInput(cv::Mat(4, nhwc, CV_32F, input.data));
        std::vector<cv::Mat> outs;
        net.forward(outs, out_names);
        // Outputs by size: scores 512 and 384, boxes 512x16 and 384x16.
        const float* scores[2] = {nullptr, nullptr};
        const float* boxes[2] = {nullptr, nullptr};
        for (const cv::Mat& m : outs) {
            const size_t n = m.total();
            const auto* p = reinterpret_cast<const float*>(m.data);
            if (n == 512) scores[0] = p;
            if (n == 384) scores[1] = p;
            if (n == 512 * 16) boxes[0] = p;
            if (n == 384 * 16) boxes[1] = p;
        }
        std::vector<cv::Rect2d> found;
        std::vector<float> found_scores;
        for (int head = 0, base = 0; head < 2; base += head == 0 ? 512 : 0, ++head) {
            if (!scores[head] || !boxes[head]) {
                r->error = "the model's outputs are not BlazeFace 256's";
                return;
            }
            const int count = head == 0 ? 512 : 384;
            for (int i = 0; i < count; ++i) {
                const float s = 1.0f / (1.0f + std::exp(-scores[head][i]));
                if (s < 0.5f) continue;
                const float* b = boxes[head] + i * 16;
                const Anchor& a = anchors[base + i];
                const float cx = b[0] / 256 + a.x, cy = b[1] / 256 + a.y, bw = b[2] / 256, bh = b[3] / 256;
                // model input → source pixels: undo the letterbox
                const double x0 = ((cx - bw / 2) * 256 - left) / scale, y0 = ((cy - bh / 2) * 256 - top) / scale;
                found.emplace_back(x0, y0, bw * 256 / scale, bh * 256 / scale);
                found_scores.push_back(s);
            }
        }
        std::vector<int> keep;
        cv::dnn::NMSBoxes(found, found_scores, 0.5f, 0.3f, keep);
        r->cpu_detect += thread_cpu_s() - cpu0;

        cpu0 = thread_cpu_s();
        // Greedy IoU matching, best pairs first; unmatched detections start tracks, tracks die after 30 misses.
        std::vector<bool> used(keep.size(), false);
        for (Track& t : tracks) {
            float best = 0.3f;
            int at = -1;
            for (size_t k = 0; k < keep.size(); ++k) {
                if (used[k]) continue;
                const float v = iou(t.box, cv::Rect2f(found[static_cast<size_t>(keep[k])]));
                if (v > best) best = v, at = static_cast<int>(k);
            }
            if (at >= 0) {
                used[static_cast<size_t>(at)] = true;
                t.box = cv::Rect2f(found[static_cast<size_t>(keep[static_cast<size_t>(at)])]);
                t.misses = 0;
            } else {
                ++t.misses;
            }
        }
        tracks.erase(std::remove_if(tracks.begin(), tracks.end(), [](const Track& t) { return t.misses > 30; }),
                     tracks.end());
        for (size_t k = 0; k < keep.size(); ++k)
            if (!used[k]) tracks.push_back({next_id++, cv::Rect2f(found[static_cast<size_t>(keep[k])]), 0});
        r->cpu_track += thread_cpu_s() - cpu0;
        r->tracks = next_id - 1;
        ++r->frames;
    }
    sws_freeContext(sws);
    av_frame_free(&frame);
    av_packet_free(&pkt);
    avcodec_free_context(&dec);
    avformat_close_input(&fmt);
}

long parse(const char* text, const char* what, long lo, long hi) {
    char* end = nullptr;
    const long v = std::strtol(text, &end, 10);
    if (end == text || *end || v < lo || v > hi) {
        std::fprintf(stderr, "peer_ffmpeg_opencv: %s must be a whole number in [%ld, %ld], not '%s'\n", what, lo, hi,
                     text);
        std::exit(2);
    }
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: peer_ffmpeg_opencv MODEL.onnx CLIP.mp4 CHANNELS SECONDS THREADS\n");
        return 2;
    }
    const int channels = static_cast<int>(parse(argv[3], "CHANNELS", 1, 64));
    const double seconds = static_cast<double>(parse(argv[4], "SECONDS", 1, 3600));
    cv::setNumThreads(static_cast<int>(parse(argv[5], "THREADS", 1, 64)));
    av_log_set_level(AV_LOG_ERROR);
    std::vector<Result> results(static_cast<size_t>(channels));
    std::vector<std::thread> threads;
    const auto start = Clock::now() + std::chrono::milliseconds(500);  // every stream's clock starts together
    for (int c = 0; c < channels; ++c)
        threads.emplace_back(run_stream, std::string(argv[1]), std::string(argv[2]), seconds, start,
                             &results[static_cast<size_t>(c)]);
    for (std::thread& t : threads) t.join();
    const double wall = std::chrono::duration<double>(Clock::now() - start).count();
    Result total;
    for (const Result& r : results) {
        if (!r.error.empty()) {
            std::fprintf(stderr, "peer_ffmpeg_opencv: %s\n", r.error.c_str());
            return 1;
        }
        total.frames += r.frames, total.skipped += r.skipped, total.tracks += r.tracks;
        total.cpu_decode += r.cpu_decode, total.cpu_detect += r.cpu_detect, total.cpu_track += r.cpu_track;
    }
    const double per = total.frames ? 1e3 / static_cast<double>(total.frames) : 0;
    const long decoded = total.frames + total.skipped;  // a skipped frame was decoded too (a reference)
    std::printf(
        "{\"channels\":%d,\"seconds\":%.2f,\"frames\":%ld,\"skipped\":%ld,\"tracks\":%ld,\"cpu_ms_per_frame\":{"
        "\"decode\":%.2f,"
        "\"detect\":%.2f,\"track\":%.3f}}\n",
        channels, wall, total.frames, total.skipped, total.tracks,
        decoded ? total.cpu_decode * 1e3 / static_cast<double>(decoded) : 0, total.cpu_detect * per,
        total.cpu_track * per);
    return 0;
}
