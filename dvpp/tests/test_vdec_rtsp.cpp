// VDEC over RTSP: frames pulled from a camera-like server (dvpp/tests/rtsp_test_server.c, GStreamer
// rtsp-server) on 127.0.0.1, the timeout / refused-connection paths against local sockets, and reconnect:
// the server killed mid-stream and started again on the same port (a camera that reboots).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kestrel/dvpp_video.h"
#include "rtsp_test_server.hpp"
#include "test_deps.hpp"

namespace vtest {  // test_vdec.cpp
std::string data_path(const char* name);
std::vector<uint8_t> tight_nv12(const kes_image& img);
std::string md5_hex(const std::vector<uint8_t>& bytes);
}  // namespace vtest

namespace {

using namespace vtest;

// A TCP socket bound to 127.0.0.1 on a free port; listening (accepts into the backlog, never answers)
// or closed again (connections to the port are refused).
struct LocalSocket {
    int fd = -1;
    int port = 0;
    explicit LocalSocket(bool listening) {
        fd = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return;
        socklen_t len = sizeof addr;
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
        port = ntohs(addr.sin_port);
        if (listening) {
            listen(fd, 4);
        } else {
            close(fd);
            fd = -1;
        }
    }
    ~LocalSocket() {
        if (fd >= 0) close(fd);
    }
};

TEST(VdecRtsp, SilentServerTimesOut) {
    LocalSocket silent(true);
    ASSERT_GT(silent.port, 0);
    const std::string url = "rtsp://127.0.0.1:" + std::to_string(silent.port) + "/cam";
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.source = url.c_str();
    cfg.timeout_ms = 300;
    kes_vdec* v = nullptr;
    EXPECT_EQ(kes_vdec_create(&cfg, &v), KES_ERR_TIMEOUT) << kes_last_error();
    EXPECT_NE(std::strstr(kes_last_error(), url.c_str()), nullptr) << kes_last_error();
    EXPECT_EQ(v, nullptr);
    EXPECT_EQ(kes_vdec_open_channels(), 0u);
}

TEST(VdecRtsp, RefusedConnectionIsIo) {
    LocalSocket closed(false);
    ASSERT_GT(closed.port, 0);
    const std::string url = "rtsp://127.0.0.1:" + std::to_string(closed.port) + "/cam";
    for (kes_rtsp_transport transport : {KES_RTSP_TCP, KES_RTSP_UDP}) {
        kes_vdec_config cfg;
        kes_vdec_config_init(&cfg);
        cfg.source = url.c_str();
        cfg.rtsp_transport = transport;
        cfg.timeout_ms = 2000;
        kes_vdec* v = nullptr;
        EXPECT_EQ(kes_vdec_create(&cfg, &v), KES_ERR_IO) << kes_last_error();
    }
}

TEST(VdecRtsp, ReconnectConfigIsChecked) {
    if (data_path("camera.h264").empty()) KES_TEST_SKIP("no test clips");
    const std::string path = data_path("camera.h264");
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    EXPECT_EQ(cfg.reconnect, KES_VDEC_RECONNECT_AUTO);
    EXPECT_EQ(cfg.reconnect_delay_ms, 0u);  // 0: the documented defaults, so a zero tail stays valid
    cfg.source = path.c_str();
    cfg.reconnect = KES_VDEC_RECONNECT_ON;
    kes_vdec* v = nullptr;
    EXPECT_EQ(kes_vdec_create(&cfg, &v), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "network source"), nullptr) << kes_last_error();
    cfg.reconnect = static_cast<kes_vdec_reconnect>(7);
    EXPECT_EQ(kes_vdec_create(&cfg, &v), KES_ERR_INVALID_ARGUMENT);
    cfg.reconnect = KES_VDEC_RECONNECT_AUTO;
    cfg.reconnect_delay_ms = 2000;
    cfg.reconnect_max_delay_ms = 1000;
    EXPECT_EQ(kes_vdec_create(&cfg, &v), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kes_last_error(), "reconnect_max_delay_ms"), nullptr) << kes_last_error();
    EXPECT_EQ(v, nullptr);
}

TEST(VdecHealth, FileRunsThenEnds) {
    if (data_path("camera.h264").empty()) KES_TEST_SKIP("no test clips");
    const std::string path = data_path("camera.h264");
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.source = path.c_str();
    kes_vdec* v = nullptr;
    ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
    kes_vdec_health h;
    h.struct_size = 8;  // below the first kes_vdec_health
    EXPECT_EQ(kes_vdec_get_health(v, &h), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_vdec_get_health(v, nullptr), KES_ERR_INVALID_ARGUMENT);
    h.struct_size = sizeof h;
    ASSERT_EQ(kes_vdec_get_health(v, &h), KES_OK) << kes_last_error();
    EXPECT_EQ(h.state, KES_VDEC_STATE_RUNNING);
    EXPECT_EQ(h.frames_delivered, 0u);
    EXPECT_EQ(h.last_error, KES_OK);
    EXPECT_STREQ(h.last_error_text, "");
    uint64_t frames = 0;
    for (;;) {
        kes_vdec_frame f;
        ASSERT_EQ(kes_vdec_read_frame(v, &f), KES_OK) << kes_last_error();
        if (f.end_of_stream) break;
        ++frames;
        kes_image_release(&f.image);
    }
    ASSERT_EQ(kes_vdec_get_health(v, &h), KES_OK);
    EXPECT_EQ(h.state, KES_VDEC_STATE_ENDED);
    EXPECT_EQ(h.frames_delivered, frames);
    EXPECT_EQ(h.frames_decoded, frames);
    EXPECT_EQ(h.frames_dropped, 0u);
    EXPECT_EQ(h.reconnects, 0u);
    EXPECT_EQ(h.reconnect_attempts, 0u);
    kes_vdec_destroy(v);
}

#ifdef KES_RTSP_TEST_SERVER
using kes_test::restart_on;
using kes_test::RtspServer;

// The clip decoded from its file: the reference for what the camera serves (from its first frame on
// every new session).
std::vector<std::string> camera_reference() {
    std::vector<std::string> ref;
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    const std::string path = data_path("camera.h264");
    cfg.source = path.c_str();
    kes_vdec* v = nullptr;
    if (kes_vdec_create(&cfg, &v) != KES_OK) return ref;
    for (;;) {
        kes_vdec_frame f;
        if (kes_vdec_read_frame(v, &f) != KES_OK || f.end_of_stream) break;
        ref.push_back(md5_hex(tight_nv12(f.image)));
        kes_image_release(&f.image);
    }
    kes_vdec_destroy(v);
    return ref;
}

TEST(VdecRtsp, PullsCameraFramesOverTcp) {
    if (data_path("camera.h264").empty()) KES_TEST_SKIP("no test clips");
    // Reference: the same clip decoded from the file.
    std::vector<std::string> ref;
    {
        kes_vdec_config cfg;
        kes_vdec_config_init(&cfg);
        const std::string path = data_path("camera.h264");
        cfg.source = path.c_str();
        kes_vdec* v = nullptr;
        ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
        for (;;) {
            kes_vdec_frame f;
            ASSERT_EQ(kes_vdec_read_frame(v, &f), KES_OK) << kes_last_error();
            if (f.end_of_stream) break;
            ref.push_back(md5_hex(tight_nv12(f.image)));
            kes_image_release(&f.image);
        }
        kes_vdec_destroy(v);
    }
    ASSERT_EQ(ref.size(), 90u);

    RtspServer server(data_path("camera.mp4"));
    if (server.port() == 0) KES_TEST_SKIP("the GStreamer RTSP server did not start (plugins missing?)");
    const std::string url = "rtsp://127.0.0.1:" + std::to_string(server.port()) + "/cam";
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.source = url.c_str();
    cfg.rtsp_transport = KES_RTSP_TCP;
    cfg.timeout_ms = 10000;
    cfg.board_profile = kes_board_get_profile(KES_BOARD_310);
    kes_vdec* v = nullptr;
    ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
    kes_vdec_stream_info info;
    info.struct_size = sizeof info;
    ASSERT_EQ(kes_vdec_get_stream_info(v, &info), KES_OK) << kes_last_error();
    EXPECT_EQ(info.codec, KES_VIDEO_CODEC_H264);
    const size_t wanted = 20;
    size_t matched = 0;
    int64_t last_pts = KES_VIDEO_NO_PTS;
    for (size_t i = 0; i < wanted; ++i) {
        kes_vdec_frame f;
        ASSERT_EQ(kes_vdec_read_frame(v, &f), KES_OK) << kes_last_error();
        ASSERT_FALSE(f.end_of_stream) << "after " << i << " frames";
        EXPECT_EQ(f.image.width, 328u);
        EXPECT_EQ(f.image.width_stride, 336u);
        EXPECT_EQ(f.frame_index, i);
        // RTP timestamps (90 kHz, from the MP4 time scale) in microseconds, the first frame's too.
        EXPECT_NE(f.pts, KES_VIDEO_NO_PTS) << "frame " << i;
        if (i > 0 && last_pts != KES_VIDEO_NO_PTS) {
            EXPECT_NEAR(double(f.pts - last_pts), 1e6 / 30, 50.0) << "frame " << i;
        }
        last_pts = f.pts;
        if (md5_hex(tight_nv12(f.image)) == ref[i]) ++matched;
        kes_image_release(&f.image);
    }
    EXPECT_EQ(matched, wanted) << "the camera serves the clip from its first frame, losslessly over TCP";
    kes_vdec_stats stats;
    ASSERT_EQ(kes_vdec_get_stats(v, &stats), KES_OK);
    EXPECT_EQ(stats.corrupt_packets, 0u);
    kes_vdec_destroy(v);
}

TEST(VdecRtsp, PullsCameraFramesOverUdp) {
    if (data_path("camera.h264").empty()) KES_TEST_SKIP("no test clips");
    RtspServer server(data_path("camera.mp4"));
    if (server.port() == 0) KES_TEST_SKIP("the GStreamer RTSP server did not start (plugins missing?)");
    const std::string url = "rtsp://127.0.0.1:" + std::to_string(server.port()) + "/cam";
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.source = url.c_str();
    cfg.rtsp_transport = KES_RTSP_UDP;
    cfg.timeout_ms = 10000;
    kes_vdec* v = nullptr;
    ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
    // RTP over UDP may drop a datagram even on loopback: count frames, not exact pixels.
    for (size_t i = 0; i < 20; ++i) {
        kes_vdec_frame f;
        ASSERT_EQ(kes_vdec_read_frame(v, &f), KES_OK) << kes_last_error();
        ASSERT_FALSE(f.end_of_stream) << "after " << i << " frames";
        EXPECT_EQ(f.image.width, 328u);
        EXPECT_EQ(f.image.height, 240u);
        kes_image_release(&f.image);
    }
    kes_vdec_destroy(v);
}

// Reads frames and checks what every frame of a camera channel must have: a pts, increasing, and an
// increasing frame_index, across reconnects too.
struct FrameChecker {
    int64_t last_pts = KES_VIDEO_NO_PTS;
    uint64_t last_index = 0;
    size_t frames = 0;
    void take(const kes_vdec_frame& f) {
        EXPECT_NE(f.pts, KES_VIDEO_NO_PTS) << "frame " << frames;
        if (frames > 0) {
            EXPECT_GT(f.pts, last_pts) << "frame " << frames;
            EXPECT_GT(f.frame_index, last_index) << "frame " << frames;
        }
        last_pts = f.pts;
        last_index = f.frame_index;
        ++frames;
    }
};

// The camera (the server on camera.mp4) and the URL to pull it from; nullptr, and why, when the test
// clips or the server are missing.
std::unique_ptr<RtspServer> start_camera(std::string& url, std::string& why) {
    if (data_path("camera.h264").empty()) {
        why = "no test clips";
        return nullptr;
    }
    auto server = std::make_unique<RtspServer>(data_path("camera.mp4"));
    if (server->port() == 0) {
        why = "the GStreamer RTSP server did not start (plugins missing?)";
        return nullptr;
    }
    url = "rtsp://127.0.0.1:" + std::to_string(server->port()) + "/cam";
    return server;
}

kes_vdec_config camera_config(const std::string& url) {
    kes_vdec_config cfg;
    kes_vdec_config_init(&cfg);
    cfg.source = url.c_str();
    cfg.rtsp_transport = KES_RTSP_TCP;
    // Generous for a loaded 2-core machine: the camera sends a frame every 33 ms.
    cfg.timeout_ms = 3000;
    cfg.reconnect_delay_ms = 100;
    cfg.reconnect_max_delay_ms = 400;
    return cfg;
}

TEST(VdecRtsp, ReconnectsWhenTheCameraRestarts) {
    if (data_path("camera.h264").empty()) KES_TEST_SKIP("no test clips");
    const std::vector<std::string> ref = camera_reference();
    ASSERT_EQ(ref.size(), 90u);
    const std::string clip = data_path("camera.mp4");
    auto server = std::make_unique<RtspServer>(clip);
    if (server->port() == 0) KES_TEST_SKIP("the GStreamer RTSP server did not start (plugins missing?)");
    const int port = server->port();
    const std::string url = "rtsp://127.0.0.1:" + std::to_string(port) + "/cam";
    const kes_vdec_config cfg = camera_config(url);  // reconnect AUTO: on for rtsp://
    kes_vdec* v = nullptr;
    ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();

    // A dashboard thread watches the channel while this one reads (kes_vdec_get_health from any thread).
    std::atomic<bool> done{false}, saw_reconnecting{false};
    std::thread monitor([&] {
        while (!done.load()) {
            kes_vdec_health h;
            h.struct_size = sizeof h;
            if (kes_vdec_get_health(v, &h) == KES_OK && h.state == KES_VDEC_STATE_RECONNECTING) saw_reconnecting = true;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    });

    FrameChecker check;
    ASSERT_NO_FATAL_FAILURE(kes_test::read_frames(v, 10, [&](const kes_vdec_frame& f) { check.take(f); }));
    server->stop();
    // The frames the decoder still held come first; then, with the camera down, a read gives up after
    // timeout_ms and says the channel is reconnecting.
    kes_status st = kes_test::read_until_error(v, [&](const kes_vdec_frame& f) { check.take(f); });
    ASSERT_EQ(st, KES_ERR_TIMEOUT) << kes_last_error();
    EXPECT_NE(std::strstr(kes_last_error(), url.c_str()), nullptr) << kes_last_error();
    EXPECT_NE(std::strstr(kes_last_error(), "reconnecting"), nullptr) << kes_last_error();
    kes_vdec_health h = kes_test::vdec_health(v);
    EXPECT_EQ(h.state, KES_VDEC_STATE_RECONNECTING);
    EXPECT_GE(h.reconnect_attempts, 1u);
    EXPECT_GE(h.failed_attempts, 1u);
    EXPECT_EQ(h.reconnects, 0u);
    EXPECT_NE(h.last_error, KES_OK);
    EXPECT_NE(std::strstr(h.last_error_text, url.c_str()), nullptr) << h.last_error_text;
    const size_t before = check.frames;
    const int64_t pts_before = check.last_pts;

    std::this_thread::sleep_for(std::chrono::seconds(1));
    server = restart_on(clip, port);
    ASSERT_TRUE(server) << "the server did not come back on port " << port;
    // Frames come again: the camera's new session from its first frame, decoded afresh, on the channel's
    // timeline (the new session's clock restarts at 0; the channel's pts go on past the outage).
    size_t seen = 0, matched = 0;
    const size_t after = kes_test::read_through_outage(v, 20, [&](const kes_vdec_frame& f) {
        if (seen == 0) {
            EXPECT_GE(f.pts - pts_before, 1000000) << "pts after the outage include the outage";
        }
        check.take(f);
        if (seen < ref.size() && md5_hex(tight_nv12(f.image)) == ref[seen]) ++matched;
        ++seen;
    });
    EXPECT_EQ(after, 20u);
    EXPECT_EQ(matched, after) << "every frame after the reconnect is the camera's, from its key frame";
    h = kes_test::vdec_health(v);
    EXPECT_EQ(h.state, KES_VDEC_STATE_RUNNING);
    EXPECT_GE(h.reconnects, 1u);
    EXPECT_GT(h.reconnect_attempts, h.reconnects - 1);
    EXPECT_EQ(h.failed_attempts, 0u);
    EXPECT_EQ(h.next_attempt_ms, 0u);
    EXPECT_EQ(h.frames_delivered, before + after);
    EXPECT_NE(h.last_error, KES_OK) << "why it reconnected stays readable";
    done = true;
    monitor.join();
    EXPECT_TRUE(saw_reconnecting.load());
    kes_vdec_destroy(v);
}

TEST(VdecRtsp, ReconnectsOverUdp) {
    if (data_path("camera.h264").empty()) KES_TEST_SKIP("no test clips");
    const std::string clip = data_path("camera.mp4");
    auto server = std::make_unique<RtspServer>(clip);
    if (server->port() == 0) KES_TEST_SKIP("the GStreamer RTSP server did not start (plugins missing?)");
    const int port = server->port();
    const std::string url = "rtsp://127.0.0.1:" + std::to_string(port) + "/cam";
    kes_vdec_config cfg = camera_config(url);
    cfg.rtsp_transport = KES_RTSP_UDP;
    kes_vdec* v = nullptr;
    ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
    // RTP over UDP may drop a datagram even on loopback: count frames and check pts, not pixels.
    FrameChecker check;
    ASSERT_NO_FATAL_FAILURE(kes_test::read_frames(v, 5, [&](const kes_vdec_frame& f) { check.take(f); }));
    server->stop();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    server = restart_on(clip, port);
    ASSERT_TRUE(server) << "the server did not come back on port " << port;
    size_t frames = 0;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (kes_test::vdec_health(v).reconnects == 0 || frames < 10) {
        ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "no reconnect, or no frames after it";
        kes_vdec_frame f;
        const kes_status st = kes_vdec_read_frame(v, &f);
        if (st == KES_ERR_TIMEOUT) continue;
        ASSERT_EQ(st, KES_OK) << kes_last_error();
        ASSERT_FALSE(f.end_of_stream);
        check.take(f);
        if (kes_test::vdec_health(v).reconnects > 0) ++frames;
        kes_image_release(&f.image);
    }
    EXPECT_EQ(kes_test::vdec_health(v).state, KES_VDEC_STATE_RUNNING);
    kes_vdec_destroy(v);
}

TEST(VdecRtsp, ReconnectsWhenTheCameraHangs) {
    std::string url, why;
    auto server = start_camera(url, why);
    if (!server) KES_TEST_SKIP(why);
    kes_vdec_config cfg = camera_config(url);
    kes_vdec* v = nullptr;
    ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
    FrameChecker check;
    ASSERT_NO_FATAL_FAILURE(kes_test::read_frames(v, 5, [&](const kes_vdec_frame& f) { check.take(f); }));
    server->pause();
    // No error from the network, just silence: timeout_ms without a packet is a loss too.
    kes_status st = kes_test::read_until_error(v, [&](const kes_vdec_frame& f) { check.take(f); });
    ASSERT_EQ(st, KES_ERR_TIMEOUT) << kes_last_error();
    EXPECT_NE(std::strstr(kes_last_error(), "reconnecting (lost: no data within timeout_ms"), nullptr)
        << kes_last_error();
    kes_vdec_health h = kes_test::vdec_health(v);
    EXPECT_EQ(h.state, KES_VDEC_STATE_RECONNECTING);
    EXPECT_EQ(h.last_error, KES_ERR_TIMEOUT);
    server->resume();
    const size_t after = kes_test::read_through_outage(v, 10, [&](const kes_vdec_frame& f) { check.take(f); });
    EXPECT_EQ(after, 10u);
    h = kes_test::vdec_health(v);
    EXPECT_EQ(h.state, KES_VDEC_STATE_RUNNING);
    EXPECT_GE(h.reconnects, 1u);
    kes_vdec_destroy(v);
}

TEST(VdecRtsp, ReconnectGivesUpAfterMaxAttempts) {
    std::string url, why;
    auto server = start_camera(url, why);
    if (!server) KES_TEST_SKIP(why);
    kes_vdec_config cfg = camera_config(url);
    cfg.reconnect_max_attempts = 3;
    kes_vdec* v = nullptr;
    ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
    ASSERT_NO_FATAL_FAILURE(kes_test::read_frames(v, 5));
    server->stop();  // for good: every attempt is refused
    kes_status st = KES_OK;
    for (int i = 0; i < 200; ++i) {
        kes_vdec_frame f;
        st = kes_vdec_read_frame(v, &f);
        if (st != KES_OK && st != KES_ERR_TIMEOUT) break;
        if (st == KES_OK) {
            ASSERT_FALSE(f.end_of_stream);
            kes_image_release(&f.image);
        }
    }
    ASSERT_EQ(st, KES_ERR_IO) << kes_last_error();
    const std::string message = kes_last_error();
    EXPECT_NE(message.find(url), std::string::npos) << message;
    EXPECT_NE(message.find("gave up after 3 reconnect attempts"), std::string::npos) << message;
    kes_vdec_health h = kes_test::vdec_health(v);
    EXPECT_EQ(h.state, KES_VDEC_STATE_STOPPED);
    EXPECT_EQ(h.reconnect_attempts, 3u);
    EXPECT_EQ(h.failed_attempts, 3u);
    EXPECT_EQ(h.reconnects, 0u);
    EXPECT_EQ(h.last_error, KES_ERR_IO);
    EXPECT_NE(message.find(h.last_error_text), std::string::npos) << h.last_error_text;
    // Stopped for good: later reads say the same at once.
    kes_vdec_frame f;
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(kes_vdec_read_frame(v, &f), KES_ERR_IO);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
    EXPECT_EQ(message, kes_last_error());
    EXPECT_EQ(kes_test::vdec_health(v).reconnect_attempts, 3u);
    kes_vdec_destroy(v);
}

TEST(VdecRtsp, WithoutReconnectTheFirstErrorEndsTheStream) {
    std::string url, why;
    auto server = start_camera(url, why);
    if (!server) KES_TEST_SKIP(why);
    kes_vdec_config cfg = camera_config(url);
    cfg.reconnect = KES_VDEC_RECONNECT_OFF;
    kes_vdec* v = nullptr;
    ASSERT_EQ(kes_vdec_create(&cfg, &v), KES_OK) << kes_last_error();
    ASSERT_NO_FATAL_FAILURE(kes_test::read_frames(v, 5));
    server->stop();
    // The frames the decoder held, then the end: KES_ERR_IO for a broken connection, or end_of_stream
    // when the server's side closed it (FFmpeg cannot tell that from the end of a stream), as before
    // reconnect existed. Either way at once, with no attempt to reconnect.
    kes_status st = KES_OK;
    bool ended = false;
    const auto t0 = std::chrono::steady_clock::now();
    for (int held = 0; held < 90; ++held) {
        kes_vdec_frame f;
        st = kes_vdec_read_frame(v, &f);
        if (st != KES_OK) break;
        if (f.end_of_stream) {
            ended = true;
            break;
        }
        kes_image_release(&f.image);
    }
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(cfg.timeout_ms));
    kes_vdec_health h = kes_test::vdec_health(v);
    if (ended) {
        EXPECT_EQ(h.state, KES_VDEC_STATE_ENDED);
        kes_vdec_frame f;
        EXPECT_EQ(kes_vdec_read_frame(v, &f), KES_OK);
        EXPECT_TRUE(f.end_of_stream);
    } else {
        EXPECT_EQ(st, KES_ERR_IO) << kes_last_error();
        EXPECT_NE(std::strstr(kes_last_error(), url.c_str()), nullptr) << kes_last_error();
        EXPECT_EQ(h.state, KES_VDEC_STATE_STOPPED);
        EXPECT_EQ(h.last_error, KES_ERR_IO);
    }
    EXPECT_EQ(h.reconnect_attempts, 0u);
    EXPECT_EQ(h.reconnects, 0u);
    kes_vdec_destroy(v);
}
#endif

}  // namespace
