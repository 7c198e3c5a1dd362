// kom_writer.cpp — ir::Graph → .kom bytes (kom_writer.hpp).
#include "kom_writer.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include "../kom_checksum.hpp"
#include "../memory_plan.hpp"
#include "kes/error.hpp"
#include "kes/math.hpp"
#include "kom_generated.h"
#include "passes.hpp"

namespace kes::ir {

namespace {

uint64_t tensor_bytes(const Tensor& t) {
    return static_cast<uint64_t>(shape_elements(t.shape)) * kes_dtype_size(t.dtype);
}

// Every tensor's shape at each gear but the written one (none for a static graph). An in-place alias
// must hold at every gear: an input with the output's shape at the written gear may be broadcast at
// another (e.g. its batch dim 1 against a constant's). An empty entry: shapes at that gear are unknown
// (the graph does not infer there), so no in-place alias is taken.
std::vector<std::vector<Shape>> other_gear_shapes(const Graph& g) {
    const size_t gears = std::max(g.dynamic_batch.size(), g.dynamic_image_sizes.size());
    std::vector<std::vector<Shape>> out;
    if (gears < 2) return out;
    Graph at = g;
    for (size_t k = 0; k + 1 < gears; ++k) {
        std::vector<Shape>& shapes = out.emplace_back();
        try {
            if (!g.dynamic_batch.empty()) {
                for (int32_t t : at.inputs) {
                    Shape& shape = at.tensors[static_cast<size_t>(t)].shape;
                    if (shape.empty()) throw Error(KES_ERR_INVALID_ARGUMENT, "an input has no batch dimension");
                    shape[0] = g.dynamic_batch[k];
                }
            } else {
                for (const ImageInput& a : at.image_inputs) {
                    Shape& shape = at.tensors[static_cast<size_t>(a.input)].shape;
                    if (a.h_dim < 0 || a.w_dim < 0 || static_cast<size_t>(std::max(a.h_dim, a.w_dim)) >= shape.size())
                        throw Error(KES_ERR_INVALID_ARGUMENT, "image gear dims out of range");
                    shape[static_cast<size_t>(a.h_dim)] = g.dynamic_image_sizes[k].height;
                    shape[static_cast<size_t>(a.w_dim)] = g.dynamic_image_sizes[k].width;
                }
            }
            infer_shapes(at);
            for (const Tensor& t : at.tensors) shapes.push_back(t.shape);
        } catch (const Error&) {
            shapes.clear();
        }
    }
    return out;
}

}  // namespace

KomImage write_kom(const Graph& g, const WriteOptions& options) {
    const size_t nt = g.tensors.size();
    auto check = [&](int32_t t, const char* what) {
        KES_REQUIRE(t >= 0 && static_cast<size_t>(t) < nt, "kom writer: %s tensor index %d out of range", what, t);
    };
    for (int32_t t : g.inputs) check(t, "graph input");
    for (int32_t t : g.outputs) check(t, "graph output");
    for (const Node& n : g.nodes) {
        for (int32_t t : n.inputs)
            if (t != -1) check(t, "node input");
        for (int32_t t : n.outputs) check(t, "node output");
    }
    for (const Tensor& t : g.tensors) {
        KES_REQUIRE(t.has_shape, "kom writer: tensor '%s' has no shape (run infer_shapes)", t.name.c_str());
        KES_REQUIRE(!t.is_const || t.data.size() == tensor_bytes(t), "kom writer: constant '%s' has %zu bytes for %s",
                    t.name.c_str(), t.data.size(), shape_string(t.shape).c_str());
    }

    // Lifetimes and sharing (memory_plan.hpp): views join their input's buffer, so views copy nothing;
    // elementwise outputs join a dying input's buffer (in place), when that holds at every gear.
    std::vector<uint64_t> bytes(nt), reserved(nt);
    const bool has_capacity = !options.tensor_capacity.empty();
    KES_REQUIRE(!has_capacity || options.tensor_capacity.size() == nt, "kom writer: %zu capacities for %zu tensors",
                options.tensor_capacity.size(), nt);
    for (size_t i = 0; i < nt; ++i) {
        bytes[i] = tensor_bytes(g.tensors[i]);
        reserved[i] = has_capacity ? std::max(bytes[i], options.tensor_capacity[i]) : bytes[i];
    }
    SharingGraph sg;
    sg.tensors.resize(nt);
    for (size_t t = 0; t < nt; ++t)
        sg.tensors[t] = SharingGraph::Tensor{g.tensors[t].dtype, &g.tensors[t].shape, !g.tensors[t].is_const};
    for (const Node& n : g.nodes) sg.nodes.push_back(SharingGraph::Node{n.op, &n.inputs, &n.outputs});
    sg.inputs = &g.inputs;
    sg.outputs = &g.outputs;
    std::optional<std::vector<std::vector<Shape>>> gear_shapes;  // computed on the first in-place candidate
    const BufferSharing sharing = share_buffers(sg, [&](ShareKind kind, size_t node, size_t input) {
        const Node& n = g.nodes[node];
        const size_t in = static_cast<size_t>(n.inputs[input]), out = static_cast<size_t>(n.outputs[0]);
        // Only tensors holding bytes share: the loader can then tell a shared pair by its one offset.
        if (reserved[in] == 0 || reserved[out] == 0) return false;
        if (kind == ShareKind::View) return options.alias_reshapes && reserved[in] == reserved[out];
        if (!options.alias_inplace) return false;
        if (!gear_shapes) gear_shapes = other_gear_shapes(g);
        for (const std::vector<Shape>& shapes : *gear_shapes)
            if (shapes.empty() ||
                !is_inplace_input(n.op, input, 1, g.tensors[in].dtype, shapes[in], g.tensors[out].dtype, shapes[out]))
                return false;
        return true;
    });
    const std::vector<size_t>& group = sharing.group;
    std::vector<int64_t> first = sharing.first, last = sharing.last;

    std::vector<size_t> buffer_of(nt, SIZE_MAX);
    std::vector<PlanBuffer> buffers;
    for (size_t t = 0; t < nt; ++t) {
        if (g.tensors[t].is_const) continue;
        if (first[t] == INT64_MAX) first[t] = last[t] = 0;  // unused: give it a slot anyway
        const size_t r = group[t];
        if (buffer_of[r] == SIZE_MAX) {
            buffer_of[r] = buffers.size();
            buffers.push_back(PlanBuffer{0, first[t], last[t]});
        }
        // A group's buffer is as large as its largest member and lives from its first member's first
        // step to its last member's last step.
        PlanBuffer& b = buffers[buffer_of[r]];
        b.size = std::max(b.size, reserved[t]);
        b.first = std::min(b.first, first[t]);
        b.last = std::max(b.last, last[t]);
        buffer_of[t] = buffer_of[r];
    }
    const MemoryPlanResult plan = plan_memory(buffers);
    std::vector<uint64_t> offsets(nt, 0);
    std::vector<int32_t> weight_index(nt, -1);
    std::vector<kom::WeightSection> sections;
    uint64_t blob = 0;
    for (size_t t = 0; t < nt; ++t) {
        if (g.tensors[t].is_const) {
            weight_index[t] = static_cast<int32_t>(sections.size());
            sections.emplace_back(blob, bytes[t]);
            blob = align_up(blob + bytes[t], KES_MEM_ALIGNMENT);
        } else {
            offsets[t] = plan.offsets[buffer_of[t]];
        }
    }

    std::vector<int32_t> aipp_inputs;  // index into g.inputs per aipp entry
    for (const InputAipp& a : g.aipp) {
        const auto it = std::find(g.inputs.begin(), g.inputs.end(), a.input);
        KES_REQUIRE(it != g.inputs.end(), "kom writer: AIPP names tensor %d, which is not a graph input", a.input);
        aipp_inputs.push_back(static_cast<int32_t>(it - g.inputs.begin()));
    }

    std::vector<int32_t> image_input_index;  // index into g.inputs per image input
    for (const ImageInput& a : g.image_inputs) {
        const auto it = std::find(g.inputs.begin(), g.inputs.end(), a.input);
        KES_REQUIRE(it != g.inputs.end(), "kom writer: image gear input %d is not a graph input", a.input);
        image_input_index.push_back(static_cast<int32_t>(it - g.inputs.begin()));
    }

    // The blob first: its CRC-32 goes into the FlatBuffer (kom.fbs: weights_crc32).
    std::vector<uint8_t> blob_bytes(static_cast<size_t>(blob), 0);
    for (size_t t = 0; t < nt; ++t)
        if (weight_index[t] >= 0 && bytes[t])
            std::memcpy(blob_bytes.data() + sections[static_cast<size_t>(weight_index[t])].offset(),
                        g.tensors[t].data.data(), bytes[t]);
    const uint32_t crc = weights_crc32(blob_bytes.data(), blob_bytes.size());

    // Serialise twice: the first pass measures the FlatBuffer so the blob offset can be filled in
    // (ForceDefaults keeps every field present, so both passes have the same size).
    auto build = [&](uint64_t weights_offset, flatbuffers::FlatBufferBuilder& fbb) {
        fbb.ForceDefaults(true);
        std::vector<flatbuffers::Offset<kom::Tensor>> ts;
        for (size_t t = 0; t < nt; ++t) {
            const Tensor& x = g.tensors[t];
            flatbuffers::Offset<kom::Quantization> q;
            if (!x.quant.empty())
                q = kom::CreateQuantization(fbb, fbb.CreateVector(x.quant.scale), fbb.CreateVector(x.quant.zero_point),
                                            static_cast<int32_t>(x.quant.axis));
            ts.push_back(kom::CreateTensor(fbb, fbb.CreateString(x.name), static_cast<kom::DType>(x.dtype),
                                           fbb.CreateVector(x.shape), static_cast<kom::Layout>(x.layout), q,
                                           weight_index[t]));
        }
        std::vector<flatbuffers::Offset<kom::Node>> ns;
        for (const Node& n : g.nodes) {
            std::vector<flatbuffers::Offset<kom::Attribute>> as;
            for (const Attr& a : n.attrs.all()) {
                const auto name = fbb.CreateString(a.name);
                const auto ints = fbb.CreateVector(a.ints);
                const auto floats = fbb.CreateVector(a.floats);
                const auto s = fbb.CreateString(a.s);
                as.push_back(
                    kom::CreateAttribute(fbb, name, static_cast<kom::AttrKind>(a.kind), a.i, a.f, ints, floats, s));
            }
            ns.push_back(kom::CreateNode(fbb, fbb.CreateString(n.name), fbb.CreateString(n.op),
                                         fbb.CreateVector(n.inputs), fbb.CreateVector(n.outputs),
                                         fbb.CreateVector(as)));
        }
        std::vector<flatbuffers::Offset<kom::InputAipp>> aipp;
        for (size_t i = 0; i < g.aipp.size(); ++i)
            aipp.push_back(kom::CreateInputAipp(fbb, aipp_inputs[i], fbb.CreateString(g.aipp[i].config)));
        std::vector<kom::ImageSize> image_sizes;
        for (const ImageSize& s : g.dynamic_image_sizes) image_sizes.emplace_back(s.height, s.width);
        std::vector<flatbuffers::Offset<kom::ImageInput>> image_inputs;
        for (size_t i = 0; i < g.image_inputs.size(); ++i)
            image_inputs.push_back(
                kom::CreateImageInput(fbb, image_input_index[i], g.image_inputs[i].h_dim, g.image_inputs[i].w_dim));
        const Metadata& m = g.metadata;
        auto md = kom::CreateMetadata(fbb, fbb.CreateString(m.source_format), fbb.CreateString(m.source_hash),
                                      fbb.CreateString(m.converter_version), fbb.CreateString(m.target_board));
        std::vector<uint64_t> capacity;
        if (has_capacity)
            for (size_t t = 0; t < nt; ++t) capacity.push_back(g.tensors[t].is_const ? 0 : reserved[t]);
        auto pl = kom::CreateMemoryPlan(fbb, plan.arena_size, plan.ideal_size, fbb.CreateVector(offsets),
                                        fbb.CreateVector(capacity));
        auto model = kom::CreateModel(fbb, 2, fbb.CreateVector(ts), fbb.CreateVector(ns), fbb.CreateVector(g.inputs),
                                      fbb.CreateVector(g.outputs), fbb.CreateVectorOfStructs(sections), weights_offset,
                                      blob, pl, md, fbb.CreateVector(aipp), fbb.CreateVector(g.dynamic_batch),
                                      fbb.CreateVectorOfStructs(image_sizes), fbb.CreateVector(image_inputs), crc);
        kom::FinishModelBuffer(fbb, model);
    };
    flatbuffers::FlatBufferBuilder probe;
    build(0, probe);
    const uint64_t weights_offset = align_up(probe.GetSize(), KES_MEM_ALIGNMENT);
    flatbuffers::FlatBufferBuilder fbb;
    build(weights_offset, fbb);
    KES_REQUIRE(fbb.GetSize() == probe.GetSize(), "kom writer: FlatBuffer size changed between passes");

    KomImage image;
    image.bytes.assign(weights_offset + blob, 0);
    std::memcpy(image.bytes.data(), fbb.GetBufferPointer(), fbb.GetSize());
    if (blob) std::memcpy(image.bytes.data() + weights_offset, blob_bytes.data(), blob_bytes.size());
    image.arena_size = plan.arena_size;
    image.ideal_size = plan.ideal_size;
    image.weights_size = blob;
    return image;
}

}  // namespace kes::ir
