// sim_report.cpp — aclrtSubscribeReport / aclrtProcessReport / aclrtUnSubscribeReport: the report thread
// that runs host callbacks queued by the device, here the VDEC callbacks of libacl_dvpp.so.
//
// A thread subscribes to a stream (CANN's aclvdecCreateChannel subscribes the channel's thread to the
// channel's own stream, and so does the simulator's); aclrtProcessReport(timeout) on that thread then runs
// every report queued for it, or returns 507012 ACL_ERROR_RT_REPORT_TIMEOUT when none arrives in time.
// Choices (UNCONFIRMED, no board to check): a stream takes one subscriber (a second one gets 100033);
// aclrtProcessReport on a thread subscribed to nothing returns 100035 at once; it needs a current
// context, as the samples' report threads set one; the default stream (NULL) cannot be subscribed.
#include <pthread.h>

#include "sim.hpp"

namespace kes_sim {

uint64_t this_thread_id() {
    return static_cast<uint64_t>(pthread_self());
}

aclError subscribe_report(uint64_t thread, const void* key, const char* call) {
    Reports& r = sim().reports;
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.subscriptions.find(key);
    if (it != r.subscriptions.end()) {
        return report(kRepeatSubscribe, std::string(call) + ": stream " + hex(key) +
                                            " is already subscribed by thread " + std::to_string(it->second));
    }
    r.subscriptions[key] = thread;
    return kOk;
}

aclError unsubscribe_report(uint64_t thread, const void* key, const char* call) {
    Reports& r = sim().reports;
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.subscriptions.find(key);
    if (it == r.subscriptions.end() || it->second != thread) {
        return report(kStreamNotSubscribe, std::string(call) + ": stream " + hex(key) +
                                               " is not subscribed by thread " + std::to_string(thread));
    }
    r.subscriptions.erase(it);
    return kOk;
}

void post_report(uint64_t thread, std::function<void()> work) {
    Reports& r = sim().reports;
    {
        std::lock_guard<std::mutex> lock(r.mutex);
        r.queues[thread].push_back(std::move(work));
    }
    r.cv.notify_all();
}

}  // namespace kes_sim

using namespace kes_sim;

#define SIM_ENTER(needs)                                          \
    std::lock_guard<std::recursive_mutex> sim_lock_(sim().mutex); \
    if (aclError e_ = enter(__func__, (needs))) return e_

SIM_API aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream) {
    SIM_ENTER(kNeedContext);
    if (!stream) return report(kInvalidParam, "aclrtSubscribeReport: stream is NULL (subscribe a created stream)");
    Stream* st = nullptr;
    if (aclError e = resolve_stream(stream, &st)) return e;
    return subscribe_report(threadId, st, "aclrtSubscribeReport");
}

SIM_API aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream) {
    SIM_ENTER(kNeedContext);
    if (!stream) return report(kInvalidParam, "aclrtUnSubscribeReport: stream is NULL");
    Stream* st = nullptr;
    if (aclError e = resolve_stream(stream, &st)) return e;
    return unsubscribe_report(threadId, st, "aclrtUnSubscribeReport");
}

SIM_API aclError aclrtProcessReport(int32_t timeout) {
    {
        // The simulator's lock is not held while waiting or while callbacks run: a callback calls back
        // into AscendCL, and the thread that sent an EOS frame waits for this one.
        SIM_ENTER(kNeedContext);
        if (timeout < -1) return report(kInvalidParam, "aclrtProcessReport: timeout < -1");
    }
    Reports& r = sim().reports;
    const uint64_t me = this_thread_id();
    std::deque<std::function<void()>> work;
    {
        std::unique_lock<std::mutex> lock(r.mutex);
        bool subscribed = false;
        for (const auto& sub : r.subscriptions) subscribed = subscribed || sub.second == me;
        std::deque<std::function<void()>>& queue = r.queues[me];
        if (!subscribed && queue.empty()) {
            return report(kThreadNotSubscribe, "aclrtProcessReport: thread " + std::to_string(me) +
                                                   " is subscribed to no stream (aclrtSubscribeReport, or the "
                                                   "thread id of a created VDEC channel)");
        }
        const auto ready = [&queue] { return !queue.empty(); };
        if (timeout < 0) {
            r.cv.wait(lock, ready);
        } else if (!r.cv.wait_for(lock, std::chrono::milliseconds(timeout), ready)) {
            return report(kRtReportTimeout, "aclrtProcessReport: no report within " + std::to_string(timeout) + " ms");
        }
        work.swap(queue);
    }
    for (auto& w : work) w();
    return kOk;
}
