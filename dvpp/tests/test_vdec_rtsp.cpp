// VDEC over RTSP: frames pulled from a camera-like server (dvpp/tests/rtsp_test_server.c, GStreamer
// rtsp-server) on 127.0.0.1, and the timeout / refused-connection paths against local sockets.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kestrel/dvpp_video.h"
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

#ifdef KES_RTSP_TEST_SERVER
// Runs the server on a clip; port() is 0 if it did not come up.
class RtspServer {
public:
    explicit RtspServer(const std::string& clip) {
        int out[2];
        if (pipe(out) != 0) return;
        pid_ = fork();
        if (pid_ == 0) {
            dup2(out[1], STDOUT_FILENO);
            close(out[0]);
            close(out[1]);
            execl(KES_RTSP_TEST_SERVER, KES_RTSP_TEST_SERVER, clip.c_str(), static_cast<char*>(nullptr));
            _exit(127);
        }
        close(out[1]);
        std::string line;
        pollfd pfd{out[0], POLLIN, 0};
        char c;
        while (poll(&pfd, 1, 20000) > 0 && read(out[0], &c, 1) == 1 && c != '\n') line += c;
        close(out[0]);
        if (line.rfind("PORT ", 0) == 0) port_ = std::atoi(line.c_str() + 5);
    }
    ~RtspServer() {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
    }
    int port() const { return port_; }

private:
    pid_t pid_ = -1;
    int port_ = 0;
};

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
#endif

}  // namespace
