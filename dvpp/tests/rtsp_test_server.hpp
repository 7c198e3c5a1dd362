// rtsp_test_server.hpp — the camera-like RTSP server of the VDEC tests (rtsp_test_server.c, GStreamer's
// rtsp-server) run as a child process, for the CPU path (test_vdec_rtsp.cpp) and the hardware path
// (test_vdec_ascend.cpp). KES_RTSP_TEST_SERVER is the server's path, defined by dvpp/video.cmake and
// board/ascend-sim/CMakeLists.txt on host builds only: a cross-compiled (aarch64) test runs under qemu,
// where there is no server by design.
#pragma once

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
