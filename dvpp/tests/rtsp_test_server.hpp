// rtsp_test_server.hpp — the camera-like RTSP server of the VDEC tests (rtsp_test_server.c, GStreamer's
// rtsp-server) run as a child process, for the CPU path (test_vdec_rtsp.cpp) and the hardware path
// (test_vdec_ascend.cpp). KES_RTSP_TEST_SERVER is the server's path, defined by dvpp/video.cmake and
// board/ascend-sim/CMakeLists.txt on host builds only: a cross-compiled (aarch64) test runs under qemu,
// where there is no server by design.
//
// Also the steps every camera test takes on its channel (read N frames, read until the loss shows,
// read through an outage), so each test says only what it checks of the frames.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <functional>

#include "kestrel/dvpp_video.h"

namespace kes_test {

using FrameCheck = std::function<void(const kes_vdec_frame&)>;

inline kes_vdec_health vdec_health(const kes_vdec* v) {
    kes_vdec_health h{};
    h.struct_size = sizeof h;
    EXPECT_EQ(kes_vdec_get_health(v, &h), KES_OK) << kes_last_error();
    return h;
}

// Reads `n` frames of a live source: each must come (no error, no end), goes to `check`, is released.
inline void read_frames(kes_vdec* v, size_t n, const FrameCheck& check = nullptr) {
    for (size_t i = 0; i < n; ++i) {
        kes_vdec_frame f;
        ASSERT_EQ(kes_vdec_read_frame(v, &f), KES_OK) << kes_last_error() << " (frame " << i << ")";
        ASSERT_FALSE(f.end_of_stream) << "a live source ended after " << i << " frames";
        if (check) check(f);
        kes_image_release(&f.image);
    }
}

// After the camera went away: the frames the decoder still holds (to `check`), then the first status
// that is not KES_OK, returned. A frame with end_of_stream fails the test (reconnect on: a live source
// does not end).
inline kes_status read_until_error(kes_vdec* v, const FrameCheck& check = nullptr) {
    for (int held = 0; held < 1000; ++held) {
        kes_vdec_frame f;
        const kes_status st = kes_vdec_read_frame(v, &f);
        if (st != KES_OK) return st;
        EXPECT_FALSE(f.end_of_stream) << "a live source does not end when reconnect is on";
        if (check && !f.end_of_stream) check(f);
        kes_image_release(&f.image);
        if (f.end_of_stream) return KES_OK;
    }
    ADD_FAILURE() << "no error after 1000 frames from a stopped camera";
    return KES_OK;
}

// Reads up to `n` frames while the channel reconnects: KES_ERR_TIMEOUT (still reconnecting) is retried
// until `limit`; any other error fails the test. Returns the frames read.
inline size_t read_through_outage(kes_vdec* v, size_t n, const FrameCheck& check = nullptr,
                                  std::chrono::seconds limit = std::chrono::seconds(60)) {
    size_t got = 0;
    const auto give_up = std::chrono::steady_clock::now() + limit;
    while (got < n && std::chrono::steady_clock::now() < give_up) {
        kes_vdec_frame f;
        const kes_status st = kes_vdec_read_frame(v, &f);
        if (st == KES_ERR_TIMEOUT) continue;  // still reconnecting (a slow machine)
        EXPECT_EQ(st, KES_OK) << kes_last_error();
        if (st != KES_OK) break;
        EXPECT_FALSE(f.end_of_stream);
        if (check) check(f);
        kes_image_release(&f.image);
        ++got;
    }
    return got;
}

}  // namespace kes_test

#ifdef KES_RTSP_TEST_SERVER

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

namespace kes_test {

// Runs the server on a clip, on `port` (0: a free one); port() is 0 if it did not come up.
class RtspServer {
public:
    explicit RtspServer(const std::string& clip, int port = 0) {
        int out[2];
        if (pipe(out) != 0) return;
        const std::string port_arg = std::to_string(port);
        pid_ = fork();
        if (pid_ == 0) {
            dup2(out[1], STDOUT_FILENO);
            close(out[0]);
            close(out[1]);
            execl(KES_RTSP_TEST_SERVER, KES_RTSP_TEST_SERVER, clip.c_str(), port_arg.c_str(),
                  static_cast<char*>(nullptr));
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
    ~RtspServer() { stop(); }
    RtspServer(const RtspServer&) = delete;
    RtspServer& operator=(const RtspServer&) = delete;
    // The camera dies: no TEARDOWN, no BYE, the connection just closes.
    void stop() {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
            pid_ = -1;
        }
    }
    // The camera hangs (the connection stays open, nothing comes), then wakes up.
    void pause() {
        if (pid_ > 0) kill(pid_, SIGSTOP);
    }
    void resume() {
        if (pid_ > 0) kill(pid_, SIGCONT);
    }
    int port() const { return port_; }

private:
    pid_t pid_ = -1;
    int port_ = 0;
};

// The camera comes back on its old port. Retried for a while: on a loaded machine the port may take a
// moment to be free again.
inline std::unique_ptr<RtspServer> restart_on(const std::string& clip, int port) {
    for (int i = 0; i < 20; ++i) {
        auto s = std::make_unique<RtspServer>(clip, port);
        if (s->port() == port) return s;
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    return nullptr;
}

}  // namespace kes_test

#endif  // KES_RTSP_TEST_SERVER
