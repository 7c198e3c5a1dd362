// aipp_config.cpp — the ATC --insert_op_conf text format (protobuf text of domi.InsertNewOps,
// BOARD-RULES §AIPP-fields): parser with line-numbered errors, and the serialiser that writes it back.
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "aipp_internal.hpp"
#include "kes/error.hpp"
#include "kes/file.hpp"

struct kes_aipp_config {
    std::vector<kes_aipp_params> ops;
};

namespace kes {
namespace aipp {
namespace {

enum class Kind { Bool, U32, U64, I32, F32, Mode, Format, String };

struct Field {
    const char* name;
    Kind kind;
    size_t offset;
    bool csc_matrix;  // part of the matrix/bias group (matrix_set)
};

#define KES_F(name, kind) \
    { #name, Kind::kind, offsetof(kes_aipp_params, name), false }
#define KES_FA(name, kind, member, index) \
    { #name, Kind::kind, offsetof(kes_aipp_params, member) + (index) * sizeof(int32_t), false }
#define KES_FM(name, member, index) \
    { #name, Kind::I32, offsetof(kes_aipp_params, member) + (index) * sizeof(int32_t), true }

// BOARD-RULES §AIPP-fields, in the order the serialiser writes them (the proto's grouping).
const Field kFields[] = {
    KES_F(aipp_mode, Mode),
    KES_F(related_input_rank, U32),
    KES_F(related_input_name, String),
    KES_F(input_edge_idx, U32),
    KES_F(max_src_image_size, U64),
    KES_F(support_rotation, Bool),
    KES_F(input_format, Format),
    KES_F(src_image_size_w, U32),
    KES_F(src_image_size_h, U32),
    KES_F(crop, Bool),
    KES_F(load_start_pos_w, U32),
    KES_F(load_start_pos_h, U32),
    KES_F(crop_size_w, U32),
    KES_F(crop_size_h, U32),
    KES_F(resize, Bool),
    KES_F(resize_output_w, U32),
    KES_F(resize_output_h, U32),
    KES_F(padding, Bool),
    KES_F(left_padding_size, U32),
    KES_F(right_padding_size, U32),
    KES_F(top_padding_size, U32),
    KES_F(bottom_padding_size, U32),
    KES_F(padding_value, F32),
    KES_F(cpadding_value, F32),
    KES_F(csc_switch, Bool),
    KES_F(rbuv_swap_switch, Bool),
    KES_F(ax_swap_switch, Bool),
    KES_F(single_line_mode, Bool),
    KES_FM(matrix_r0c0, matrix, 0),
    KES_FM(matrix_r0c1, matrix, 1),
    KES_FM(matrix_r0c2, matrix, 2),
    KES_FM(matrix_r1c0, matrix, 3),
    KES_FM(matrix_r1c1, matrix, 4),
    KES_FM(matrix_r1c2, matrix, 5),
    KES_FM(matrix_r2c0, matrix, 6),
    KES_FM(matrix_r2c1, matrix, 7),
    KES_FM(matrix_r2c2, matrix, 8),
    KES_FM(output_bias_0, output_bias, 0),
    KES_FM(output_bias_1, output_bias, 1),
    KES_FM(output_bias_2, output_bias, 2),
    KES_FM(input_bias_0, input_bias, 0),
    KES_FM(input_bias_1, input_bias, 1),
    KES_FM(input_bias_2, input_bias, 2),
    KES_FA(mean_chn_0, I32, mean_chn, 0),
    KES_FA(mean_chn_1, I32, mean_chn, 1),
    KES_FA(mean_chn_2, I32, mean_chn, 2),
    KES_FA(mean_chn_3, I32, mean_chn, 3),
    KES_FA(min_chn_0, F32, min_chn, 0),
    KES_FA(min_chn_1, F32, min_chn, 1),
    KES_FA(min_chn_2, F32, min_chn, 2),
    KES_FA(min_chn_3, F32, min_chn, 3),
    KES_FA(var_reci_chn_0, F32, var_reci_chn, 0),
    KES_FA(var_reci_chn_1, F32, var_reci_chn, 1),
    KES_FA(var_reci_chn_2, F32, var_reci_chn, 2),
    KES_FA(var_reci_chn_3, F32, var_reci_chn, 3),
    KES_F(raw_rgbir_to_f16_n, Bool),
};
#undef KES_F
#undef KES_FA
#undef KES_FM

const Field* find_field(const std::string& name) {
    for (const Field& f : kFields) {
        if (name == f.name) return &f;
    }
    return nullptr;
}

enum class Tok { End, Ident, Number, String, LBrace, RBrace, Colon, Sep, Bad };

struct Token {
    Tok kind;
    std::string text;
    int line;
};

class Lexer {
public:
    Lexer(const char* text, size_t size) : p_(text), end_(text + size) {}

    Token next() {
        for (;;) {
            while (p_ < end_ &&
                   (*p_ == ' ' || *p_ == '\t' || *p_ == '\r' || *p_ == '\n' || *p_ == '\f' || *p_ == '\v')) {
                if (*p_ == '\n') ++line_;
                ++p_;
            }
            if (p_ < end_ && *p_ == '#') {
                while (p_ < end_ && *p_ != '\n') ++p_;
                continue;
            }
            break;
        }
        if (p_ >= end_) return {Tok::End, "", line_};
        const char c = *p_;
        const char* start = p_;
        if (c == '{' || c == '}' || c == ':' || c == ',' || c == ';') {
            ++p_;
            const Tok k = c == '{' ? Tok::LBrace : c == '}' ? Tok::RBrace : c == ':' ? Tok::Colon : Tok::Sep;
            return {k, std::string(1, c), line_};
        }
        if (is_alpha(c)) {
            while (p_ < end_ && (is_alpha(*p_) || is_digit(*p_))) ++p_;
            return {Tok::Ident, std::string(start, p_), line_};
        }
        if (is_digit(c) || c == '-' || c == '+' || c == '.') {
            ++p_;
            while (p_ < end_ && (is_alpha(*p_) || is_digit(*p_) || *p_ == '.' ||
                                 ((*p_ == '-' || *p_ == '+') && (p_[-1] == 'e' || p_[-1] == 'E')))) {
                ++p_;
            }
            return {Tok::Number, std::string(start, p_), line_};
        }
        if (c == '"' || c == '\'') {
            ++p_;
            std::string s;
            while (p_ < end_ && *p_ != c && *p_ != '\n') s.push_back(*p_++);
            if (p_ >= end_ || *p_ != c) return {Tok::Bad, "unterminated string", line_};
            ++p_;
            return {Tok::String, s, line_};
        }
        ++p_;
        return {Tok::Bad, printable(c), line_};
    }

private:
    static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
    static bool is_digit(char c) { return c >= '0' && c <= '9'; }
    static std::string printable(char c) {
        const unsigned char u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
        return format("byte 0x%02x", u);
    }
    const char* p_;
    const char* end_;
    int line_ = 1;
};

class Parser {
public:
    Parser(const char* text, size_t size, std::string source) : lex_(text, size), src_(std::move(source)) { advance(); }

    std::vector<kes_aipp_params> parse_file() {
        std::vector<kes_aipp_params> ops;
        while (tok_.kind != Tok::End) {
            if (tok_.kind != Tok::Ident) error(tok_.line, "expected 'aipp_op {', got %s", describe(tok_).c_str());
            if (tok_.text == "multi_shape_op") {
                error(tok_.line,
                      "multi_shape_op is a legacy block that Kestrel does not support "
                      "(docs/BOARD-RULES.md §AIPP-fields)");
            }
            if (tok_.text != "aipp_op") error(tok_.line, "unknown block '%s' (expected aipp_op)", tok_.text.c_str());
            // A cap that no real model reaches keeps hostile inputs from growing memory without bound.
            if (ops.size() >= 1024) error(tok_.line, "more than 1024 aipp_op blocks");
            ops.push_back(parse_block());
        }
        if (ops.empty()) error(tok_.line, "no aipp_op block found");
        return ops;
    }

private:
    template <class... A>
    [[noreturn]] void error(int line, const char* fmt, A... args) {
        std::string msg = format("%s line %d: ", src_.c_str(), line);
        msg += format(fmt, args...);
        fail(KES_ERR_INVALID_ARGUMENT, "%s", msg.c_str());
    }
    [[noreturn]] void error(int line, const char* msg) { error(line, "%s", msg); }

    static std::string describe(const Token& t) {
        switch (t.kind) {
            case Tok::End: return "end of file";
            case Tok::Bad: return t.text;
            case Tok::String: return "a string";
            default: return "'" + t.text.substr(0, 40) + "'";
        }
    }

    void advance() { tok_ = lex_.next(); }

    kes_aipp_params parse_block() {
        const int block_line = tok_.line;
        advance();
        if (tok_.kind == Tok::Colon) advance();  // protobuf text allows `aipp_op: {`
        if (tok_.kind != Tok::LBrace) error(tok_.line, "expected '{' after aipp_op, got %s", describe(tok_).c_str());
        advance();
        kes_aipp_params p;
        kes_aipp_params_init(&p);
        std::map<std::string, int> lines;
        bool matrix_given = false;
        for (;;) {
            if (tok_.kind == Tok::RBrace) break;
            if (tok_.kind == Tok::End) {
                error(tok_.line, "unbalanced braces: aipp_op block opened on line %d is not closed", block_line);
            }
            if (tok_.kind != Tok::Ident) error(tok_.line, "expected a field name, got %s", describe(tok_).c_str());
            const std::string name = tok_.text;
            const int line = tok_.line;
            const Field* f = find_field(name);
            if (!f) error(line, "unknown field '%s' in aipp_op", name.substr(0, 64).c_str());
            const auto seen = lines.find(name);
            if (seen != lines.end()) error(line, "%s is given twice (first on line %d)", f->name, seen->second);
            lines[name] = line;
            advance();
            if (tok_.kind == Tok::LBrace) error(line, "%s is a value, not a block", f->name);
            if (tok_.kind != Tok::Colon)
                error(tok_.line, "expected ':' after %s, got %s", f->name, describe(tok_).c_str());
            advance();
            set_value(&p, *f, tok_, line);
            matrix_given = matrix_given || f->csc_matrix;
            advance();
            if (tok_.kind == Tok::Sep) advance();
        }
        advance();  // '}'
        if (tok_.kind == Tok::Sep) advance();
        p.matrix_set = matrix_given ? 1 : 0;
        apply_csc_defaults(&p);
        const std::string src = src_;
        validate(p, *kes_board_active_profile(), [&](const char* field) {
            const auto it = lines.find(field);
            if (it != lines.end()) return format("%s line %d: %s", src.c_str(), it->second, field);
            return format("%s line %d (aipp_op block): %s", src.c_str(), block_line, field);
        });
        return p;
    }

    void set_value(kes_aipp_params* p, const Field& f, const Token& v, int line) {
        unsigned char* base = reinterpret_cast<unsigned char*>(p) + f.offset;
        if (v.kind == Tok::End || v.kind == Tok::LBrace || v.kind == Tok::RBrace || v.kind == Tok::Colon ||
            v.kind == Tok::Sep || v.kind == Tok::Bad) {
            error(line, "%s: missing value (got %s)", f.name, describe(v).c_str());
        }
        switch (f.kind) {
            case Kind::Bool: {
                int32_t b;
                if (v.text == "true" || v.text == "True" || v.text == "t" || v.text == "1") {
                    b = 1;
                } else if (v.text == "false" || v.text == "False" || v.text == "f" || v.text == "0") {
                    b = 0;
                } else {
                    error(line, "%s must be true or false (got %s)", f.name, describe(v).c_str());
                }
                std::memcpy(base, &b, sizeof(b));
                break;
            }
            case Kind::U32:
            case Kind::U64:
            case Kind::I32: {
                long long n = integer(f, v, line);
                const long long lo = f.kind == Kind::I32 ? INT32_MIN : 0;
                const long long hi = f.kind == Kind::I32 ? INT32_MAX : f.kind == Kind::U32 ? UINT32_MAX : LLONG_MAX;
                if (n < lo || n > hi) error(line, "%s is out of range (got %s)", f.name, v.text.substr(0, 40).c_str());
                if (f.kind == Kind::I32) {
                    const int32_t x = static_cast<int32_t>(n);
                    std::memcpy(base, &x, sizeof(x));
                } else if (f.kind == Kind::U32) {
                    const uint32_t x = static_cast<uint32_t>(n);
                    std::memcpy(base, &x, sizeof(x));
                } else {
                    const uint64_t x = static_cast<uint64_t>(n);
                    std::memcpy(base, &x, sizeof(x));
                }
                break;
            }
            case Kind::F32: {
                if (v.kind != Tok::Number) error(line, "%s must be a number (got %s)", f.name, describe(v).c_str());
                char* endp = nullptr;
                errno = 0;
                const double d = std::strtod(v.text.c_str(), &endp);
                if (*endp != '\0' || errno == ERANGE) {
                    error(line, "%s must be a number (got '%s')", f.name, v.text.substr(0, 40).c_str());
                }
                const float x = static_cast<float>(d);
                std::memcpy(base, &x, sizeof(x));
                break;
            }
            case Kind::Mode: {
                int32_t m;
                if (v.text == "static" || v.text == "1") {
                    m = KES_AIPP_MODE_STATIC;
                } else if (v.text == "dynamic" || v.text == "2") {
                    m = KES_AIPP_MODE_DYNAMIC;
                } else if (v.text == "undefined" || v.text == "0") {
                    error(
                        line,
                        "aipp_mode must be static or dynamic (undefined is refused, docs/BOARD-RULES.md §AIPP-fields)");
                } else {
                    error(line, "aipp_mode must be static or dynamic (got %s)", describe(v).c_str());
                }
                std::memcpy(base, &m, sizeof(m));
                break;
            }
            case Kind::Format: {
                int32_t fmt = -1;
                for (int i = 1; i <= 20; ++i) {
                    if (v.text == input_format_name(static_cast<kes_aipp_input_format>(i)) ||
                        (v.kind == Tok::Number && v.text == std::to_string(i))) {
                        fmt = i;
                    }
                }
                if (fmt < 0) error(line, "input_format: unknown format %s", describe(v).c_str());
                std::memcpy(base, &fmt, sizeof(fmt));
                break;
            }
            case Kind::String: {
                if (v.kind != Tok::String) error(line, "%s must be a quoted string", f.name);
                if (v.text.size() >= KES_AIPP_NAME_MAX) {
                    error(line, "%s is longer than %d bytes", f.name, KES_AIPP_NAME_MAX - 1);
                }
                for (char ch : v.text) {
                    if (static_cast<unsigned char>(ch) < 0x20 || ch == '\\') {
                        error(line, "%s: escapes and control characters are not supported", f.name);
                    }
                }
                std::memcpy(base, v.text.c_str(), v.text.size() + 1);
                break;
            }
        }
    }

    long long integer(const Field& f, const Token& v, int line) {
        if (v.kind != Tok::Number) error(line, "%s must be an integer (got %s)", f.name, describe(v).c_str());
        char* endp = nullptr;
        errno = 0;
        const long long n = std::strtoll(v.text.c_str(), &endp, 10);
        if (*endp != '\0' || errno == ERANGE) {
            error(line, "%s must be an integer (got '%s')", f.name, v.text.substr(0, 40).c_str());
        }
        return n;
    }

    Lexer lex_;
    std::string src_;
    Token tok_;
};

void write_value(std::string* out, const kes_aipp_params& p, const Field& f) {
    const unsigned char* base = reinterpret_cast<const unsigned char*>(&p) + f.offset;
    switch (f.kind) {
        case Kind::Bool: {
            int32_t b;
            std::memcpy(&b, base, sizeof(b));
            *out += b ? "true" : "false";
            break;
        }
        case Kind::U32: {
            uint32_t x;
            std::memcpy(&x, base, sizeof(x));
            *out += std::to_string(x);
            break;
        }
        case Kind::U64: {
            uint64_t x;
            std::memcpy(&x, base, sizeof(x));
            *out += std::to_string(x);
            break;
        }
        case Kind::I32: {
            int32_t x;
            std::memcpy(&x, base, sizeof(x));
            *out += std::to_string(x);
            break;
        }
        case Kind::F32: {
            float x;
            std::memcpy(&x, base, sizeof(x));
            *out += format("%.9g", static_cast<double>(x));  // 9 digits: every float round-trips
            break;
        }
        case Kind::Mode: *out += p.aipp_mode == KES_AIPP_MODE_DYNAMIC ? "dynamic" : "static"; break;
        case Kind::Format: *out += input_format_name(p.input_format); break;
        case Kind::String:
            *out += '"';
            *out += p.related_input_name;
            *out += '"';
            break;
    }
}

bool is_default(const kes_aipp_params& p, const kes_aipp_params& d, const Field& f) {
    if (f.kind == Kind::Mode) return false;  // always written: ATC requires it
    if (f.csc_matrix) return !p.matrix_set;
    const size_t size = f.kind == Kind::String ? KES_AIPP_NAME_MAX : f.kind == Kind::U64 ? 8 : 4;
    if (f.kind == Kind::String) return p.related_input_name[0] == '\0';
    return std::memcmp(reinterpret_cast<const unsigned char*>(&p) + f.offset,
                       reinterpret_cast<const unsigned char*>(&d) + f.offset, size) == 0;
}

}  // namespace

std::string serialize(const kes_aipp_params* ops, uint32_t count) {
    kes_aipp_params d;
    kes_aipp_params_init(&d);
    std::string out = "# written by Kestrel (kes_aipp_params_serialize)\n";
    for (uint32_t i = 0; i < count; ++i) {
        kes_aipp_params p = read_params_in(&ops[i]);
        validate(p, *kes_board_active_profile(), [&](const char* f) { return format("params[%u].%s", i, f); });
        for (const char* c = p.related_input_name; *c; ++c) {
            KES_REQUIRE(static_cast<unsigned char>(*c) >= 0x20 && *c != '"' && *c != '\\',
                        "params[%u].related_input_name: quotes, backslashes and control characters cannot be "
                        "written",
                        i);
        }
        out += "aipp_op {\n";
        for (const Field& f : kFields) {
            if (is_default(p, d, f)) continue;
            out += "    ";
            out += f.name;
            out += ": ";
            write_value(&out, p, f);
            out += '\n';
        }
        out += "}\n";
    }
    return out;
}

}  // namespace aipp
}  // namespace kes

extern "C" {

kes_status kes_aipp_config_parse(const char* text, size_t size, const char* source_name, kes_aipp_config** out_config) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_config);
        *out_config = nullptr;
        KES_REQUIRE(text != nullptr || size == 0, "text is NULL");
        kes::aipp::Parser parser(text ? text : "", size, source_name ? source_name : "aipp.cfg");
        auto cfg = std::make_unique<kes_aipp_config>();
        cfg->ops = parser.parse_file();
        *out_config = cfg.release();
        return KES_OK;
    });
}

kes_status kes_aipp_config_load(const char* path, kes_aipp_config** out_config) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(out_config);
        *out_config = nullptr;
        KES_REQUIRE_NOT_NULL(path);
        const std::vector<uint8_t> text = kes::read_file(path);
        kes::aipp::Parser parser(reinterpret_cast<const char*>(text.data()), text.size(), path);
        auto cfg = std::make_unique<kes_aipp_config>();
        cfg->ops = parser.parse_file();
        *out_config = cfg.release();
        return KES_OK;
    });
}

void kes_aipp_config_destroy(kes_aipp_config* config) {
    std::unique_ptr<kes_aipp_config> owned(config);
}

uint32_t kes_aipp_config_count(const kes_aipp_config* config) {
    return config ? static_cast<uint32_t>(config->ops.size()) : 0;
}

kes_status kes_aipp_config_get(const kes_aipp_config* config, uint32_t index, kes_aipp_params* out_params) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(config);
        KES_REQUIRE_NOT_NULL(out_params);
        KES_REQUIRE(index < config->ops.size(), "index %u out of range (config has %zu aipp_op blocks)", index,
                    config->ops.size());
        kes::aipp::copy_params_out(config->ops[index], out_params);
        return KES_OK;
    });
}

kes_status kes_aipp_config_find_input(const kes_aipp_config* config, uint32_t rank, kes_aipp_params* out_params) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(config);
        KES_REQUIRE_NOT_NULL(out_params);
        for (const kes_aipp_params& p : config->ops) {
            if (p.related_input_rank == rank) {
                kes::aipp::copy_params_out(p, out_params);
                return KES_OK;
            }
        }
        KES_FAIL(KES_ERR_NOT_FOUND, "no aipp_op block has related_input_rank %u", rank);
    });
}

kes_status kes_aipp_params_serialize(const kes_aipp_params* params, uint32_t count, char* buf, size_t size,
                                     size_t* out_needed) {
    return kes::guard(__func__, [&] {
        KES_REQUIRE_NOT_NULL(params);
        KES_REQUIRE(count > 0, "count must be >= 1");
        const std::string text = kes::aipp::serialize(params, count);
        if (out_needed) *out_needed = text.size() + 1;
        KES_REQUIRE(buf != nullptr && size > text.size(), "buffer too small: %zu bytes needed, %zu given",
                    text.size() + 1, buf ? size : size_t{0});
        std::memcpy(buf, text.c_str(), text.size() + 1);
        return KES_OK;
    });
}

}  // extern "C"
