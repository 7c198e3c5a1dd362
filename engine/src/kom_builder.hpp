// kom_builder.hpp — writes .kom images from a graph description (internal: tests, fuzz seeds and the
// converter). It runs the static memory planner (memory_plan.hpp) and lays the weights out in
// 128-byte aligned sections of the trailing blob.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model.hpp"

namespace kes {

struct KomImage {
    std::vector<uint8_t> bytes;
    uint64_t arena_size = 0;
    uint64_t ideal_size = 0;
    uint64_t weights_size = 0;
};

class KomBuilder {
public:
    // Activation tensor; returns its index.
    int32_t tensor(const std::string& name, std::vector<int64_t> shape, kes_layout layout = KES_LAYOUT_ND,
                   kes_dtype dtype = KES_F32);
    // Constant f32 tensor; values.size() must equal the element count.
    int32_t weight(const std::string& name, std::vector<int64_t> shape, std::vector<float> values,
                   kes_layout layout = KES_LAYOUT_ND);
    void input(int32_t t) { inputs_.push_back(t); }
    void output(int32_t t) { outputs_.push_back(t); }
    // `attrs` supplies fused_relu and the Conv2D fields; its op/inputs/output are ignored.
    void node(Op op, std::vector<int32_t> inputs, int32_t output, const NodeInfo& attrs = NodeInfo{},
              const std::string& name = "");
    void metadata(std::string source_format, std::string source_hash, std::string converter_version,
                  std::string target_board);
    // Reshape outputs share their input's arena bytes (no copy). Off: each gets its own buffer.
    void alias_reshapes(bool on) { alias_reshapes_ = on; }

    // Plans memory and serialises. Throws kes::Error(KES_ERR_INVALID_ARGUMENT) for an index out of
    // range; other inconsistencies are written as given (so tests can build hostile files).
    KomImage finish() const;

private:
    struct T {
        std::string name;
        std::vector<int64_t> shape;
        kes_layout layout;
        kes_dtype dtype;
        int32_t weight;  // index into weights_ or -1
    };
    struct N {
        Op op;
        std::vector<int32_t> inputs;
        int32_t output;
        NodeInfo attrs;
        std::string name;
    };
    std::vector<T> tensors_;
    std::vector<std::vector<float>> weights_;
    std::vector<N> nodes_;
    std::vector<int32_t> inputs_, outputs_;
    std::string source_format_ = "builder", source_hash_, converter_version_ = "kestrel", target_board_ = "host";
    bool alias_reshapes_ = true;
};

}  // namespace kes
