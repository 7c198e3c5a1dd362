// op_registry.cpp — every op this build executes, found by name. Built once, read-only afterwards
// (safe from any thread).
#include <algorithm>
#include <cstring>

#include "kernels/ref/ops.hpp"
#include "op.hpp"

namespace kes {

namespace {

const OpList& registry() {
    static const OpList ops = [] {
        OpList v;
        add_elementwise_ops(v);
        add_nn_ops(v);
        add_shape_ops(v);
        add_reduce_ops(v);
        add_misc_ops(v);
        add_resize_ops(v);
        add_quant_ops(v);
        add_rnn_ops(v);
        add_sampling_ops(v);
        add_detection_ops(v);
        add_mediapipe_ops(v);
        std::sort(v.begin(), v.end(), [](const OpDef& a, const OpDef& b) { return std::strcmp(a.name, b.name) < 0; });
        return v;
    }();
    return ops;
}

}  // namespace

const OpDef* find_op(std::string_view name) {
    const OpList& ops = registry();
    const auto it = std::lower_bound(ops.begin(), ops.end(), name,
                                     [](const OpDef& d, std::string_view n) { return std::string_view(d.name) < n; });
    return it != ops.end() && it->name == name ? &*it : nullptr;
}

std::vector<std::string> registered_op_names() {
    std::vector<std::string> names;
    for (const OpDef& d : registry()) names.emplace_back(d.name);
    return names;
}

}  // namespace kes
