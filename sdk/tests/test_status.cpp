#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "kes/error.hpp"
#include "kestrel/sdk.h"

TEST(Status, EveryCodeHasItsName) {
    EXPECT_STREQ(kes_status_str(KES_OK), "KES_OK");
    EXPECT_STREQ(kes_status_str(KES_ERR_INVALID_ARGUMENT), "KES_ERR_INVALID_ARGUMENT");
    EXPECT_STREQ(kes_status_str(KES_ERR_UNSUPPORTED), "KES_ERR_UNSUPPORTED");
    EXPECT_STREQ(kes_status_str(KES_ERR_OUT_OF_MEMORY), "KES_ERR_OUT_OF_MEMORY");
    EXPECT_STREQ(kes_status_str(KES_ERR_IO), "KES_ERR_IO");
    EXPECT_STREQ(kes_status_str(KES_ERR_CORRUPT_DATA), "KES_ERR_CORRUPT_DATA");
    EXPECT_STREQ(kes_status_str(KES_ERR_NOT_FOUND), "KES_ERR_NOT_FOUND");
    EXPECT_STREQ(kes_status_str(KES_ERR_BUSY), "KES_ERR_BUSY");
    EXPECT_STREQ(kes_status_str(KES_ERR_TIMEOUT), "KES_ERR_TIMEOUT");
    EXPECT_STREQ(kes_status_str(KES_ERR_INTERNAL), "KES_ERR_INTERNAL");
    EXPECT_STREQ(kes_status_str(static_cast<kes_status>(-1234)), "KES_ERR_UNKNOWN");
}

TEST(Status, CodesAreNegativeAndDistinct) {
    const kes_status all[] = {KES_ERR_INVALID_ARGUMENT, KES_ERR_UNSUPPORTED, KES_ERR_OUT_OF_MEMORY, KES_ERR_IO,
                              KES_ERR_CORRUPT_DATA,     KES_ERR_NOT_FOUND,   KES_ERR_BUSY,          KES_ERR_TIMEOUT,
                              KES_ERR_INTERNAL};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
        EXPECT_LT(all[i], 0);
        for (size_t j = i + 1; j < sizeof all / sizeof all[0]; ++j) EXPECT_NE(all[i], all[j]);
    }
}

TEST(LastError, NamesTheCallTheArgumentAndTheRule) {
    kes_clear_error();
    kes_board board;
    EXPECT_EQ(kes_board_from_name("320X", &board), KES_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(kes_last_status(), KES_ERR_INVALID_ARGUMENT);
    const std::string msg = kes_last_error();
    EXPECT_NE(msg.find("kes_board_from_name"), std::string::npos) << msg;
    EXPECT_NE(msg.find("320X"), std::string::npos) << msg;
}

TEST(LastError, GuardPrefixesTheFunctionAndStopsExceptions) {
    const kes_status st = kes::guard("kes_demo_call", []() -> kes_status {
        KES_REQUIRE(1 + 1 == 3, "n must be %d (got %d)", 3, 2);
        return KES_OK;
    });
    EXPECT_EQ(st, KES_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(kes_last_error(), "kes_demo_call: n must be 3 (got 2)");

    EXPECT_EQ(kes::guard("kes_alloc_call", []() -> kes_status { throw std::bad_alloc(); }), KES_ERR_OUT_OF_MEMORY);
    EXPECT_EQ(kes::guard("kes_bug_call", []() -> kes_status { throw std::runtime_error("boom"); }), KES_ERR_INTERNAL);
    EXPECT_NE(std::string(kes_last_error()).find("boom"), std::string::npos);
    EXPECT_EQ(kes::guard("kes_odd_call", []() -> kes_status { throw 42; }), KES_ERR_INTERNAL);
}

TEST(LastError, SuccessLeavesItAndClearForgetsIt) {
    kes_board board;
    ASSERT_NE(kes_board_from_name("nope", &board), KES_OK);
    ASSERT_EQ(kes_board_from_name("310", &board), KES_OK);
    EXPECT_NE(std::string(kes_last_error()), "");
    kes_clear_error();
    EXPECT_STREQ(kes_last_error(), "");
    EXPECT_EQ(kes_last_status(), KES_OK);
}

TEST(LastError, IsPerThread) {
    kes_clear_error();
    kes_board board;
    ASSERT_NE(kes_board_from_name("main-thread-error", &board), KES_OK);
    std::string other;
    std::thread t([&] {
        other = kes_last_error();
        kes_board b;
        kes_board_from_name("worker-error", &b);
    });
    t.join();
    EXPECT_EQ(other, "");
    EXPECT_NE(std::string(kes_last_error()).find("main-thread-error"), std::string::npos);
}

TEST(LastError, LongMessagesAreKeptWhole) {
    const std::string long_arg(1000, 'x');
    kes_board board;
    ASSERT_NE(kes_board_from_name(long_arg.c_str(), &board), KES_OK);
    EXPECT_NE(std::string(kes_last_error()).find(long_arg), std::string::npos);
}

TEST(Version, RuntimeMatchesHeaders) {
    EXPECT_EQ(kes_version(), KES_VERSION);
    EXPECT_STREQ(kes_version_string(), KES_VERSION_STRING);
    EXPECT_EQ(KES_VERSION, KES_VERSION_MAJOR * 10000 + KES_VERSION_MINOR * 100 + KES_VERSION_PATCH);
    const std::string info = kes_build_info();
    EXPECT_NE(info.find(KES_VERSION_STRING), std::string::npos);
    EXPECT_NE(info.find(kes_cpu_arch()), std::string::npos) << info;
}
