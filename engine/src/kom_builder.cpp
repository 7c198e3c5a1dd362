#include "kom_builder.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "kes/error.hpp"
#include "kes/math.hpp"
#include "kom_generated.h"
#include "memory_plan.hpp"

namespace kes {

int32_t KomBuilder::tensor(const std::string& name, std::vector<int64_t> shape, kes_layout layout, kes_dtype dtype) {
    tensors_.push_back(T{name, std::move(shape), layout, dtype, -1});
    return static_cast<int32_t>(tensors_.size() - 1);
}

int32_t KomBuilder::weight(const std::string& name, std::vector<int64_t> shape, std::vector<float> values,
                           kes_layout layout) {
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    KES_REQUIRE(count == static_cast<int64_t>(values.size()), "weight %s: %zu values for %lld elements", name.c_str(),
                values.size(), static_cast<long long>(count));
    weights_.push_back(std::move(values));
    tensors_.push_back(T{name, std::move(shape), layout, KES_F32, static_cast<int32_t>(weights_.size() - 1)});
    return static_cast<int32_t>(tensors_.size() - 1);
}

void KomBuilder::node(Op op, std::vector<int32_t> inputs, int32_t output, const NodeInfo& attrs,
                      const std::string& name) {
    nodes_.push_back(N{op, std::move(inputs), output, attrs, name});
}

void KomBuilder::metadata(std::string source_format, std::string source_hash, std::string converter_version,
                          std::string target_board) {
    source_format_ = std::move(source_format);
    source_hash_ = std::move(source_hash);
    converter_version_ = std::move(converter_version);
    target_board_ = std::move(target_board);
}

KomImage KomBuilder::finish() const {
    const size_t nt = tensors_.size();
    auto check = [&](int32_t t) { KES_REQUIRE(t >= 0 && static_cast<size_t>(t) < nt, "tensor index %d", t); };
    for (int32_t t : inputs_) check(t);
    for (int32_t t : outputs_) check(t);
    for (const N& n : nodes_) {
        for (int32_t t : n.inputs) check(t);
        check(n.output);
    }

    // Lifetimes in steps: graph inputs appear at step 0, node i runs at step i + 1, graph outputs live
    // to the end. Reshape outputs join their input's buffer (union-find), so the reshape copies nothing.
    std::vector<uint64_t> bytes(nt);
    for (size_t i = 0; i < nt; ++i) {
        uint64_t b = kes_dtype_size(tensors_[i].dtype);
        for (int64_t d : tensors_[i].shape) b *= static_cast<uint64_t>(d < 0 ? 0 : d);
        bytes[i] = b;
    }
    std::vector<size_t> group(nt);
    std::iota(group.begin(), group.end(), size_t{0});
    auto root = [&](size_t t) {
        while (group[t] != t) t = group[t] = group[group[t]];
        return t;
    };
    const int64_t end_step = static_cast<int64_t>(nodes_.size()) + 1;
    std::vector<int64_t> first(nt, INT64_MAX), last(nt, INT64_MIN);
    auto touch = [&](size_t t, int64_t step) {
        first[t] = std::min(first[t], step);
        last[t] = std::max(last[t], step);
    };
    for (int32_t t : inputs_) touch(static_cast<size_t>(t), 0);
    for (size_t i = 0; i < nodes_.size(); ++i) {
        const N& n = nodes_[i];
        const int64_t step = static_cast<int64_t>(i) + 1;
        for (int32_t t : n.inputs) touch(static_cast<size_t>(t), step);
        touch(static_cast<size_t>(n.output), step);
        const size_t in = n.inputs.empty() ? 0 : static_cast<size_t>(n.inputs[0]);
        if (alias_reshapes_ && n.op == Op::Reshape && !n.inputs.empty() && tensors_[in].weight < 0 &&
            bytes[in] == bytes[static_cast<size_t>(n.output)])
            group[root(static_cast<size_t>(n.output))] = root(in);
    }
    for (int32_t t : outputs_) touch(static_cast<size_t>(t), end_step);

    std::vector<size_t> buffer_of(nt, SIZE_MAX);
    std::vector<PlanBuffer> buffers;
    for (size_t t = 0; t < nt; ++t) {
        if (tensors_[t].weight >= 0) continue;
        if (first[t] == INT64_MAX) first[t] = last[t] = 0;  // unused: give it a slot anyway
        const size_t r = root(t);
        if (buffer_of[r] == SIZE_MAX) {
            buffer_of[r] = buffers.size();
            buffers.push_back(PlanBuffer{0, first[t], last[t]});
        }
        PlanBuffer& b = buffers[buffer_of[r]];
        b.size = std::max(b.size, bytes[t]);
        b.first = std::min(b.first, first[t]);
        b.last = std::max(b.last, last[t]);
        buffer_of[t] = buffer_of[r];
    }
    const MemoryPlanResult plan = plan_memory(buffers);
    std::vector<uint64_t> offsets(nt, 0);
    for (size_t t = 0; t < nt; ++t)
        if (tensors_[t].weight < 0) offsets[t] = plan.offsets[buffer_of[t]];

    // Weight blob layout.
    std::vector<kom::WeightSection> sections;
    uint64_t blob = 0;
    for (const auto& w : weights_) {
        sections.emplace_back(blob, w.size() * sizeof(float));
        blob = align_up(blob + w.size() * sizeof(float), KES_MEM_ALIGNMENT);
    }

    // Serialise twice: the first pass measures the FlatBuffer so the blob offset can be filled in
    // (ForceDefaults keeps the field present, so both passes have the same size).
    auto build = [&](uint64_t weights_offset, flatbuffers::FlatBufferBuilder& fbb) {
        fbb.ForceDefaults(true);
        std::vector<flatbuffers::Offset<kom::Tensor>> ts;
        for (const T& t : tensors_)
            ts.push_back(kom::CreateTensor(fbb, fbb.CreateString(t.name), static_cast<kom::DType>(t.dtype),
                                           fbb.CreateVector(t.shape), static_cast<kom::Layout>(t.layout), 0, t.weight));
        std::vector<flatbuffers::Offset<kom::Node>> ns;
        for (const N& n : nodes_) {
            const auto act = n.attrs.fused_relu ? kom::FusedActivation::Relu : kom::FusedActivation::None;
            kom::OpAttrs type = kom::OpAttrs::NONE;
            flatbuffers::Offset<void> attrs;
            if (n.op == Op::Conv2D) {
                const NodeInfo& a = n.attrs;
                type = kom::OpAttrs::Conv2DAttrs;
                attrs = kom::CreateConv2DAttrs(fbb, a.stride_h, a.stride_w, a.dilation_h, a.dilation_w, a.pad_top,
                                               a.pad_left, a.pad_bottom, a.pad_right, act)
                            .Union();
            } else if (n.op == Op::Add || n.op == Op::Sub || n.op == Op::Mul) {
                type = kom::OpAttrs::ElementwiseAttrs;
                attrs = kom::CreateElementwiseAttrs(fbb, act).Union();
            } else if (n.op == Op::FullyConnected) {
                type = kom::OpAttrs::FullyConnectedAttrs;
                attrs = kom::CreateFullyConnectedAttrs(fbb, act).Union();
            }
            const std::vector<int32_t> outs{n.output};
            ns.push_back(kom::CreateNode(fbb, fbb.CreateString(n.name), static_cast<kom::OpType>(n.op),
                                         fbb.CreateVector(n.inputs), fbb.CreateVector(outs), type, attrs));
        }
        auto md = kom::CreateMetadata(fbb, fbb.CreateString(source_format_), fbb.CreateString(source_hash_),
                                      fbb.CreateString(converter_version_), fbb.CreateString(target_board_));
        auto pl = kom::CreateMemoryPlan(fbb, plan.arena_size, plan.ideal_size, fbb.CreateVector(offsets));
        auto model = kom::CreateModel(fbb, 1, fbb.CreateVector(ts), fbb.CreateVector(ns), fbb.CreateVector(inputs_),
                                      fbb.CreateVector(outputs_), fbb.CreateVectorOfStructs(sections), weights_offset,
                                      blob, pl, md);
        kom::FinishModelBuffer(fbb, model);
    };
    flatbuffers::FlatBufferBuilder probe;
    build(0, probe);
    const uint64_t weights_offset = align_up(probe.GetSize(), KES_MEM_ALIGNMENT);
    flatbuffers::FlatBufferBuilder fbb;
    build(weights_offset, fbb);
    KES_REQUIRE(fbb.GetSize() == probe.GetSize(), "kom builder: FlatBuffer size changed between passes");

    KomImage image;
    image.bytes.assign(weights_offset + blob, 0);
    std::memcpy(image.bytes.data(), fbb.GetBufferPointer(), fbb.GetSize());
    for (size_t i = 0; i < weights_.size(); ++i)
        if (!weights_[i].empty())
            std::memcpy(image.bytes.data() + weights_offset + sections[i].offset(), weights_[i].data(),
                        weights_[i].size() * sizeof(float));
    image.arena_size = plan.arena_size;
    image.ideal_size = plan.ideal_size;
    image.weights_size = blob;
    return image;
}

}  // namespace kes
