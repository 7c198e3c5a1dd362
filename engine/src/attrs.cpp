#include "attrs.hpp"

#include <algorithm>

#include "kes/error.hpp"

namespace kes {

const char* attr_kind_name(AttrKind kind) {
    switch (kind) {
        case AttrKind::Int: return "int";
        case AttrKind::Float: return "float";
        case AttrKind::Ints: return "ints";
        case AttrKind::Floats: return "floats";
        case AttrKind::String: return "string";
    }
    return "unknown";
}

void Attrs::set(Attr attr) {
    for (Attr& a : attrs_) {
        if (a.name == attr.name) {
            a = std::move(attr);
            return;
        }
    }
    attrs_.push_back(std::move(attr));
}

void Attrs::set_int(std::string name, int64_t v) {
    Attr a;
    a.name = std::move(name);
    a.kind = AttrKind::Int;
    a.i = v;
    set(std::move(a));
}

void Attrs::set_float(std::string name, float v) {
    Attr a;
    a.name = std::move(name);
    a.kind = AttrKind::Float;
    a.f = v;
    set(std::move(a));
}

void Attrs::set_ints(std::string name, std::vector<int64_t> v) {
    Attr a;
    a.name = std::move(name);
    a.kind = AttrKind::Ints;
    a.ints = std::move(v);
    set(std::move(a));
}

void Attrs::set_floats(std::string name, std::vector<float> v) {
    Attr a;
    a.name = std::move(name);
    a.kind = AttrKind::Floats;
    a.floats = std::move(v);
    set(std::move(a));
}

void Attrs::set_string(std::string name, std::string v) {
    Attr a;
    a.name = std::move(name);
    a.kind = AttrKind::String;
    a.s = std::move(v);
    set(std::move(a));
}

bool Attrs::erase(std::string_view name) {
    const auto it = std::find_if(attrs_.begin(), attrs_.end(), [&](const Attr& a) { return a.name == name; });
    if (it == attrs_.end()) return false;
    attrs_.erase(it);
    return true;
}

const Attr* Attrs::find(std::string_view name) const {
    for (const Attr& a : attrs_)
        if (a.name == name) return &a;
    return nullptr;
}

const Attr& Attrs::expect(std::string_view name, AttrKind kind) const {
    const Attr* a = find(name);
    if (!a) fail(KES_ERR_INVALID_ARGUMENT, "attribute '%.*s' is required", static_cast<int>(name.size()), name.data());
    const bool ok = a->kind == kind || (kind == AttrKind::Float && a->kind == AttrKind::Int);
    if (!ok)
        fail(KES_ERR_INVALID_ARGUMENT, "attribute '%s' is %s, expected %s", a->name.c_str(), attr_kind_name(a->kind),
             attr_kind_name(kind));
    return *a;
}

int64_t Attrs::get_int(std::string_view name, int64_t fallback) const {
    return has(name) ? expect(name, AttrKind::Int).i : fallback;
}

float Attrs::get_float(std::string_view name, float fallback) const {
    return has(name) ? require_float(name) : fallback;
}

std::vector<int64_t> Attrs::get_ints(std::string_view name, std::vector<int64_t> fallback) const {
    return has(name) ? expect(name, AttrKind::Ints).ints : fallback;
}

std::vector<float> Attrs::get_floats(std::string_view name, std::vector<float> fallback) const {
    return has(name) ? expect(name, AttrKind::Floats).floats : fallback;
}

std::string Attrs::get_string(std::string_view name, std::string fallback) const {
    return has(name) ? expect(name, AttrKind::String).s : fallback;
}

int64_t Attrs::require_int(std::string_view name) const {
    return expect(name, AttrKind::Int).i;
}

float Attrs::require_float(std::string_view name) const {
    const Attr& a = expect(name, AttrKind::Float);
    return a.kind == AttrKind::Int ? static_cast<float>(a.i) : a.f;
}

std::vector<int64_t> Attrs::require_ints(std::string_view name) const {
    return expect(name, AttrKind::Ints).ints;
}

std::string Attrs::require_string(std::string_view name) const {
    return expect(name, AttrKind::String).s;
}

}  // namespace kes
