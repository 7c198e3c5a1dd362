#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kestrel/sdk.h"

namespace {

// A strict little JSON reader: enough to prove the file is valid JSON and to pull out the events.
struct Json {
    enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
    double number = 0;
    std::string str;
    std::vector<Json> items;
    std::map<std::string, Json> fields;
};

class JsonReader {
public:
    explicit JsonReader(const std::string& s) : s_(s) {}
    bool parse(Json* out) {
        if (!value(out)) return false;
        ws();
        return pos_ == s_.size();
    }

private:
    void ws() {
        while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    }
    bool lit(const char* word) {
        const std::string w(word);
        if (s_.compare(pos_, w.size(), w) != 0) return false;
        pos_ += w.size();
        return true;
    }
    bool string(std::string* out) {
        if (s_[pos_] != '"') return false;
        ++pos_;
        while (pos_ < s_.size() && s_[pos_] != '"') {
            char c = s_[pos_++];
            if (static_cast<unsigned char>(c) < 0x20) return false;
            if (c == '\\') {
                if (pos_ >= s_.size()) return false;
                c = s_[pos_++];
                if (c == 'u') {
                    if (pos_ + 4 > s_.size()) return false;
                    for (int i = 0; i < 4; ++i)
                        if (!std::isxdigit(static_cast<unsigned char>(s_[pos_ + i]))) return false;
                    c = static_cast<char>(std::stoi(s_.substr(pos_, 4), nullptr, 16));
                    pos_ += 4;
                } else if (std::string("\"\\/bfnrt").find(c) == std::string::npos) {
                    return false;
                }
            }
            out->push_back(c);
        }
        if (pos_ >= s_.size()) return false;
        ++pos_;
        return true;
    }
    bool value(Json* out) {
        ws();
        if (pos_ >= s_.size()) return false;
        const char c = s_[pos_];
        if (c == '{') {
            out->kind = Json::Object;
            ++pos_;
            ws();
            if (s_[pos_] == '}') return ++pos_, true;
            for (;;) {
                ws();
                std::string key;
                if (!string(&key)) return false;
                ws();
                if (s_[pos_++] != ':') return false;
                if (!value(&out->fields[key])) return false;
                ws();
                if (s_[pos_] == ',') {
                    ++pos_;
                    continue;
                }
                return s_[pos_++] == '}';
            }
        }
        if (c == '[') {
            out->kind = Json::Array;
            ++pos_;
            ws();
            if (s_[pos_] == ']') return ++pos_, true;
            for (;;) {
                out->items.emplace_back();
                if (!value(&out->items.back())) return false;
                ws();
                if (s_[pos_] == ',') {
                    ++pos_;
                    continue;
                }
                return s_[pos_++] == ']';
            }
        }
        if (c == '"') return out->kind = Json::String, string(&out->str);
        if (lit("true") || lit("false")) return out->kind = Json::Bool, true;
        if (lit("null")) return true;
        size_t used = 0;
        try {
            out->number = std::stod(s_.substr(pos_, 40), &used);
        } catch (...) {
            return false;
        }
        out->kind = Json::Number;
        pos_ += used;
        return used > 0;
    }
    const std::string& s_;
    size_t pos_ = 0;
};

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string temp_path(const char* name) {
    return std::string(KES_TEST_TMPDIR) + "/" + name;
}

}  // namespace

TEST(Trace, WritesValidChromeTraceJsonWithSpansFromEveryThread) {
    const std::string path = temp_path("trace_threads.json");
    std::remove(path.c_str());
    ASSERT_EQ(kes_trace_start(path.c_str()), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_trace_enabled(), 1);
    {
        kes::TraceScope outer("test", "outer");
        kes::TraceScope inner("test", "inner \"quoted\"");
    }
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t) {
        threads.emplace_back([] {
            for (int i = 0; i < 10; ++i) {
                kes_trace_begin("worker", "step");
                kes_trace_end();
            }
        });
    }
    for (auto& th : threads) th.join();
    ASSERT_EQ(kes_trace_stop(), KES_OK) << kes_last_error();
    EXPECT_EQ(kes_trace_enabled(), 0);

    const std::string text = read_file(path);
    Json root;
    ASSERT_TRUE(JsonReader(text).parse(&root)) << text.substr(0, 400);
    ASSERT_EQ(root.kind, Json::Object);
    const Json& events = root.fields["traceEvents"];
    ASSERT_EQ(events.kind, Json::Array);
    int outer = 0, inner = 0, steps = 0;
    std::map<double, int> step_tids;
    double outer_ts = 0, outer_dur = 0, inner_ts = 0, inner_dur = 0;
    for (const Json& e : events.items) {
        ASSERT_EQ(e.kind, Json::Object);
        auto f = e.fields;
        if (f["ph"].str != "X") continue;
        ASSERT_EQ(f["ts"].kind, Json::Number);
        ASSERT_EQ(f["dur"].kind, Json::Number);
        EXPECT_GE(f["dur"].number, 0.0);
        if (f["name"].str == "outer") ++outer, outer_ts = f["ts"].number, outer_dur = f["dur"].number;
        if (f["name"].str == "inner \"quoted\"") ++inner, inner_ts = f["ts"].number, inner_dur = f["dur"].number;
        if (f["name"].str == "step") {
            ++steps;
            step_tids[f["tid"].number]++;
            EXPECT_EQ(f["cat"].str, "worker");
        }
    }
    EXPECT_EQ(outer, 1);
    EXPECT_EQ(inner, 1);
    EXPECT_EQ(steps, 30);
    EXPECT_EQ(step_tids.size(), 3u);
    // The inner span nests inside the outer one.
    EXPECT_GE(inner_ts, outer_ts);
    EXPECT_LE(inner_ts + inner_dur, outer_ts + outer_dur + 0.001);
}

TEST(Trace, StartTwiceIsBusyAndStopWithoutStartIsNotFound) {
    const std::string path = temp_path("trace_busy.json");
    ASSERT_EQ(kes_trace_start(path.c_str()), KES_OK);
    EXPECT_EQ(kes_trace_start(path.c_str()), KES_ERR_BUSY);
    ASSERT_EQ(kes_trace_stop(), KES_OK);
    EXPECT_EQ(kes_trace_stop(), KES_ERR_NOT_FOUND);
    EXPECT_EQ(kes_trace_start(nullptr), KES_ERR_INVALID_ARGUMENT);
}

TEST(Trace, UnwritablePathIsAnIoError) {
    ASSERT_EQ(kes_trace_start("/nonexistent-dir/trace.json"), KES_OK);
    kes_trace_begin("t", "x");
    kes_trace_end();
    EXPECT_EQ(kes_trace_stop(), KES_ERR_IO);
    EXPECT_NE(std::string(kes_last_error()).find("/nonexistent-dir/trace.json"), std::string::npos);
}

TEST(Trace, SpansOutsideARecordingAreIgnored) {
    kes_trace_begin("t", "before");  // not recording: no-op
    kes_trace_end();
    kes_trace_end();  // unbalanced end: harmless
    const std::string path = temp_path("trace_empty.json");
    ASSERT_EQ(kes_trace_start(path.c_str()), KES_OK);
    ASSERT_EQ(kes_trace_stop(), KES_OK);
    Json root;
    const std::string text = read_file(path);
    ASSERT_TRUE(JsonReader(text).parse(&root)) << text;
    for (const Json& e : root.fields["traceEvents"].items) EXPECT_NE(e.fields.at("ph").str, "X");
}

TEST(Trace, SpanOpenAcrossARestartIsDropped) {
    const std::string first = temp_path("trace_first.json");
    const std::string second = temp_path("trace_second.json");
    ASSERT_EQ(kes_trace_start(first.c_str()), KES_OK);
    kes_trace_begin("t", "straddles");
    ASSERT_EQ(kes_trace_stop(), KES_OK);
    ASSERT_EQ(kes_trace_start(second.c_str()), KES_OK);
    kes_trace_end();
    kes_trace_begin("t", "fresh");
    kes_trace_end();
    ASSERT_EQ(kes_trace_stop(), KES_OK);
    const std::string text = read_file(second);
    EXPECT_EQ(text.find("straddles"), std::string::npos);
    EXPECT_NE(text.find("fresh"), std::string::npos);
}
