#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kestrel/sdk.h"

namespace {

struct Captured {
    std::mutex mutex;
    std::vector<std::string> lines;
};

void capture(kes_log_level level, const char* module, const char* message, void* user) {
    auto* c = static_cast<Captured*>(user);
    std::lock_guard<std::mutex> lock(c->mutex);
    c->lines.push_back(std::string(kes_log_level_name(level)) + "/" + module + ": " + message);
}

class LogTest : public ::testing::Test {
protected:
    void SetUp() override {
        saved_ = kes_log_get_level();
        kes_log_set_callback(capture, &captured_);
    }
    void TearDown() override {
        kes_log_set_callback(nullptr, nullptr);
        kes_log_set_level(saved_);
    }
    Captured captured_;
    kes_log_level saved_ = KES_LOG_WARN;
};

}  // namespace

TEST_F(LogTest, LevelFiltersMessages) {
    ASSERT_EQ(kes_log_set_level(KES_LOG_WARN), KES_OK);
    kes_log_write(KES_LOG_ERROR, "app", "e%d", 1);
    kes_log_write(KES_LOG_WARN, "app", "w%d", 2);
    kes_log_write(KES_LOG_INFO, "app", "i%d", 3);
    kes_log_write(KES_LOG_TRACE, "app", "t%d", 4);
    ASSERT_EQ(captured_.lines.size(), 2u);
    EXPECT_EQ(captured_.lines[0], "error/app: e1");
    EXPECT_EQ(captured_.lines[1], "warn/app: w2");
}

TEST_F(LogTest, TraceLevelLetsEverythingThroughAndOffNothing) {
    kes_log_set_level(KES_LOG_TRACE);
    kes_log_write(KES_LOG_TRACE, "dvpp", "deep");
    kes_log_set_level(KES_LOG_OFF);
    kes_log_write(KES_LOG_ERROR, "dvpp", "silenced");
    ASSERT_EQ(captured_.lines.size(), 1u);
    EXPECT_EQ(captured_.lines[0], "trace/dvpp: deep");
}

TEST_F(LogTest, InternalFailuresAreLoggedAtDebug) {
    kes_log_set_level(KES_LOG_DEBUG);
    kes_board b;
    kes_board_from_name("not-a-board", &b);
    ASSERT_FALSE(captured_.lines.empty());
    EXPECT_NE(captured_.lines.back().find("not-a-board"), std::string::npos);
    EXPECT_EQ(captured_.lines.back().rfind("debug/sdk", 0), 0u);
}

TEST_F(LogTest, RejectsLevelsOutsideTheEnum) {
    EXPECT_EQ(kes_log_set_level(static_cast<kes_log_level>(9)), KES_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kes_last_error()).find("level 9"), std::string::npos);
}

TEST_F(LogTest, CallbackSeesConcurrentMessagesWhole) {
    kes_log_set_level(KES_LOG_INFO);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([t] {
            for (int i = 0; i < 50; ++i) kes_log_write(KES_LOG_INFO, "app", "thread %d message %d", t, i);
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(captured_.lines.size(), 200u);
}

TEST(LogLevelNames, ParseNamesAndDigits) {
    kes_log_level level;
    ASSERT_EQ(kes_log_level_from_name("DEBUG", &level), KES_OK);
    EXPECT_EQ(level, KES_LOG_DEBUG);
    ASSERT_EQ(kes_log_level_from_name("3", &level), KES_OK);
    EXPECT_EQ(level, KES_LOG_INFO);
    ASSERT_EQ(kes_log_level_from_name("off", &level), KES_OK);
    EXPECT_EQ(level, KES_LOG_OFF);
    EXPECT_EQ(kes_log_level_from_name("loud", &level), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_log_level_from_name("6", &level), KES_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(kes_log_level_name(KES_LOG_WARN), "warn");
}
