// attrs.hpp — node attributes: named, typed values (ONNX's AttributeProto kinds), shared by the
// converter's graph (convert/ir.hpp), the .kom file (Node.attrs) and the ops that read them when a
// kernel is created (op.hpp). Lookups never allocate except the vector/string getters, which are
// only called when kernels are created, never while executing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kes {

enum class AttrKind : uint8_t { Int = 0, Float = 1, Ints = 2, Floats = 3, String = 4 };

const char* attr_kind_name(AttrKind kind);

struct Attr {
    std::string name;
    AttrKind kind = AttrKind::Int;
    int64_t i = 0;
    float f = 0.0f;
    std::vector<int64_t> ints;
    std::vector<float> floats;
    std::string s;
};

// The getters throw kes::Error(KES_ERR_INVALID_ARGUMENT, "attribute 'x' is <kind>, expected <kind>")
// when the attribute exists with another kind, and the require_* getters when it is missing; callers
// (op creation) add the node's name to the message. An Int attribute is accepted where a Float is
// expected (ONNX files write e.g. alpha=1 either way); nothing else converts.
class Attrs {
public:
    void set(Attr attr);  // replaces an attribute of the same name
    void set_int(std::string name, int64_t v);
    void set_float(std::string name, float v);
    void set_ints(std::string name, std::vector<int64_t> v);
    void set_floats(std::string name, std::vector<float> v);
    void set_string(std::string name, std::string v);
    bool erase(std::string_view name);

    const Attr* find(std::string_view name) const;
    bool has(std::string_view name) const { return find(name) != nullptr; }

    int64_t get_int(std::string_view name, int64_t fallback) const;
    float get_float(std::string_view name, float fallback) const;
    std::vector<int64_t> get_ints(std::string_view name, std::vector<int64_t> fallback = {}) const;
    std::vector<float> get_floats(std::string_view name, std::vector<float> fallback = {}) const;
    std::string get_string(std::string_view name, std::string fallback = {}) const;

    int64_t require_int(std::string_view name) const;
    float require_float(std::string_view name) const;
    std::vector<int64_t> require_ints(std::string_view name) const;
    std::string require_string(std::string_view name) const;

    const std::vector<Attr>& all() const { return attrs_; }
    size_t size() const { return attrs_.size(); }

private:
    const Attr& expect(std::string_view name, AttrKind kind) const;  // throws if missing or mistyped
    std::vector<Attr> attrs_;
};

}  // namespace kes
