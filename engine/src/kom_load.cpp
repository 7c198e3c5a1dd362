// kom_load.cpp — verify a .kom image and turn it into a ModelInfo (model.hpp).
//
// Two layers: flatbuffers::Verifier proves every offset, vector and string lies inside the buffer;
// then the checks below prove the content is consistent (indices, shapes per op, weights inside the
// blob, plan inside the arena, topological order), so the executor never reads outside its memory.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kes/error.hpp"
#include "kes/math.hpp"
#include "kom_generated.h"
#include "model.hpp"

namespace kes {

namespace {

constexpr uint32_t kFormatVersion = 1;
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;  // also caps the arena: far above any board
constexpr size_t kMaxTensors = size_t{1} << 20;

#define CORRUPT(...) ::kes::fail(KES_ERR_CORRUPT_DATA, __VA_ARGS__)

const char* str_or_empty(const flatbuffers::String* s) {
    return s ? s->c_str() : "";
}

// The 2.0.8 verifier checks only the 4-byte alignment of a vector's length, not that 8-byte elements
// are 8-aligned; reading a misaligned one would be undefined behaviour, so such files are refused.
template <class V>
void require_aligned8(const V* v, const char* what) {
    if (v && v->size() != 0 && reinterpret_cast<uintptr_t>(v->Data()) % 8 != 0)
        CORRUPT("model: %s vector is not 8-byte aligned", what);
}

bool known_dtype(int64_t v) {
    return (v >= 0 && v <= 4) || (v >= 6 && v <= 12);
}

// Shape of the numpy broadcast of a and b; false if they do not broadcast.
bool broadcast_shape(const TensorInfo& a, const TensorInfo& b, uint32_t* ndim, int64_t* shape) {
    *ndim = std::max(a.ndim, b.ndim);
    for (uint32_t i = 0; i < *ndim; ++i) {
        const int64_t da = i < *ndim - a.ndim ? 1 : a.shape[i - (*ndim - a.ndim)];
        const int64_t db = i < *ndim - b.ndim ? 1 : b.shape[i - (*ndim - b.ndim)];
        if (da != db && da != 1 && db != 1) return false;
        shape[i] = da == 1 ? db : da;
    }
    return true;
}

bool same_shape(const TensorInfo& t, uint32_t ndim, const int64_t* shape) {
    if (t.ndim != ndim) return false;
    for (uint32_t i = 0; i < ndim; ++i)
        if (t.shape[i] != shape[i]) return false;
    return true;
}

void check_node_shapes(const ModelInfo& m, const NodeInfo& n, size_t index) {
    const char* name = n.name.c_str();
    const TensorInfo& out = m.tensors[n.output];
    auto in = [&](uint32_t i) -> const TensorInfo& { return m.tensors[n.inputs[i]]; };
    switch (n.op) {
        case Op::Add:
        case Op::Sub:
        case Op::Mul: {
            uint32_t nd = 0;
            int64_t shape[KES_TENSOR_MAX_DIMS];
            if (!broadcast_shape(in(0), in(1), &nd, shape))
                CORRUPT("node %zu (%s): input shapes do not broadcast", index, name);
            if (!same_shape(out, nd, shape))
                CORRUPT("node %zu (%s): output shape is not the broadcast of the inputs", index, name);
            break;
        }
        case Op::Relu:
        case Op::Abs:
            if (!same_shape(out, in(0).ndim, in(0).shape))
                CORRUPT("node %zu (%s): output shape differs from the input", index, name);
            break;
        case Op::Reshape:
            if (out.elements != in(0).elements)
                CORRUPT("node %zu (%s): reshape changes the element count (%llu -> %llu)", index, name,
                        static_cast<unsigned long long>(in(0).elements), static_cast<unsigned long long>(out.elements));
            break;
        case Op::Conv2D: {
            const TensorInfo& x = in(0);
            const TensorInfo& f = in(1);
            if (x.ndim != 4 || f.ndim != 4 || out.ndim != 4)
                CORRUPT("node %zu (%s): Conv2D needs 4-d NHWC input, OHWI filter and output", index, name);
            if (f.shape[3] != x.shape[3])
                CORRUPT("node %zu (%s): filter Cin %lld != input C %lld", index, name,
                        static_cast<long long>(f.shape[3]), static_cast<long long>(x.shape[3]));
            if (n.stride_h < 1 || n.stride_w < 1 || n.dilation_h < 1 || n.dilation_w < 1 || n.pad_top < 0 ||
                n.pad_left < 0 || n.pad_bottom < 0 || n.pad_right < 0)
                CORRUPT("node %zu (%s): Conv2D strides and dilations must be >= 1, pads >= 0", index, name);
            if (n.input_count == 3) {
                const TensorInfo& b = in(2);
                if (b.ndim != 1 || b.shape[0] != f.shape[0]) CORRUPT("node %zu (%s): bias must be [Cout]", index, name);
            }
            // Dims are < 2^31 (checked per tensor) and attributes are int32: no int64 overflow here.
            const int64_t eh = int64_t{n.dilation_h} * (f.shape[1] - 1) + 1;
            const int64_t ew = int64_t{n.dilation_w} * (f.shape[2] - 1) + 1;
            const int64_t ph = x.shape[1] + n.pad_top + n.pad_bottom - eh;
            const int64_t pw = x.shape[2] + n.pad_left + n.pad_right - ew;
            if (f.shape[1] < 1 || f.shape[2] < 1 || ph < 0 || pw < 0)
                CORRUPT("node %zu (%s): Conv2D kernel larger than the padded input", index, name);
            const int64_t expect[4] = {x.shape[0], ph / n.stride_h + 1, pw / n.stride_w + 1, f.shape[0]};
            if (!same_shape(out, 4, expect))
                CORRUPT("node %zu (%s): Conv2D output shape should be [%lld,%lld,%lld,%lld]", index, name,
                        static_cast<long long>(expect[0]), static_cast<long long>(expect[1]),
                        static_cast<long long>(expect[2]), static_cast<long long>(expect[3]));
            break;
        }
        case Op::FullyConnected: {
            const TensorInfo& x = in(0);
            const TensorInfo& w = in(1);
            if (x.ndim != 2 || w.ndim != 2 || w.shape[1] != x.shape[1])
                CORRUPT("node %zu (%s): FullyConnected needs input [N,K] and weights [Cout,K]", index, name);
            if (n.input_count == 3 && (in(2).ndim != 1 || in(2).shape[0] != w.shape[0]))
                CORRUPT("node %zu (%s): bias must be [Cout]", index, name);
            const int64_t expect[2] = {x.shape[0], w.shape[0]};
            if (!same_shape(out, 2, expect)) CORRUPT("node %zu (%s): output must be [N,Cout]", index, name);
            break;
        }
        case Op::MatMul: {
            const TensorInfo& a = in(0);
            const TensorInfo& b = in(1);
            if (a.ndim != 2 || b.ndim != 2 || a.shape[1] != b.shape[0])
                CORRUPT("node %zu (%s): MatMul needs [M,K] x [K,N]", index, name);
            const int64_t expect[2] = {a.shape[0], b.shape[1]};
            if (!same_shape(out, 2, expect)) CORRUPT("node %zu (%s): output must be [M,N]", index, name);
            break;
        }
    }
}

// The plan must never give two tensors live at the same step overlapping bytes, or a kernel would read
// what another just wrote. The one sharing allowed is a Reshape whose output sits exactly on its
// input (the no-copy alias the builder plans); such tensors form one group with the union lifetime.
// Lifetimes: graph inputs appear at step 0, node i runs at step i + 1, graph outputs live to the end.
void check_plan_overlaps(const ModelInfo& m) {
    const size_t nt = m.tensors.size();
    std::vector<size_t> group(nt);
    for (size_t t = 0; t < nt; ++t) group[t] = t;
    auto root = [&](size_t t) {
        while (group[t] != t) t = group[t] = group[group[t]];
        return t;
    };
    std::vector<int64_t> first(nt, INT64_MAX), last(nt, INT64_MIN);
    auto touch = [&](size_t t, int64_t step) {
        first[t] = std::min(first[t], step);
        last[t] = std::max(last[t], step);
    };
    for (int32_t t : m.inputs) touch(static_cast<size_t>(t), 0);
    for (size_t i = 0; i < m.nodes.size(); ++i) {
        const NodeInfo& n = m.nodes[i];
        const int64_t step = static_cast<int64_t>(i) + 1;
        for (uint32_t k = 0; k < n.input_count; ++k) touch(static_cast<size_t>(n.inputs[k]), step);
        touch(static_cast<size_t>(n.output), step);
        const TensorInfo& in = m.tensors[static_cast<size_t>(n.inputs[0])];
        const TensorInfo& out = m.tensors[static_cast<size_t>(n.output)];
        if (n.op == Op::Reshape && in.weight < 0 && in.offset == out.offset)
            group[root(static_cast<size_t>(n.output))] = root(static_cast<size_t>(n.inputs[0]));
    }
    for (int32_t t : m.outputs) touch(static_cast<size_t>(t), static_cast<int64_t>(m.nodes.size()) + 1);

    struct Range {
        uint64_t begin, end;
        int64_t first, last;
        size_t tensor;
    };
    std::vector<Range> ranges(nt, Range{0, 0, INT64_MAX, INT64_MIN, 0});
    for (size_t t = 0; t < nt; ++t) {
        const TensorInfo& ti = m.tensors[t];
        if (ti.weight >= 0 || ti.bytes == 0 || first[t] == INT64_MAX) continue;  // never holds data
        Range& r = ranges[root(t)];
        if (r.first == INT64_MAX) r = Range{ti.offset, ti.offset, first[t], last[t], t};
        r.end = std::max(r.end, ti.offset + ti.bytes);
        r.first = std::min(r.first, first[t]);
        r.last = std::max(r.last, last[t]);
    }
    ranges.erase(std::remove_if(ranges.begin(), ranges.end(), [](const Range& r) { return r.first == INT64_MAX; }),
                 ranges.end());
    std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.tensor < b.tensor;
    });
    for (size_t i = 0; i < ranges.size(); ++i)
        for (size_t j = i + 1; j < ranges.size() && ranges[j].begin < ranges[i].end; ++j)
            if (ranges[i].first <= ranges[j].last && ranges[j].first <= ranges[i].last)
                CORRUPT("model: the memory plan overlaps tensors %zu (%s) and %zu (%s) while both are live",
                        ranges[i].tensor, m.tensors[ranges[i].tensor].name.c_str(), ranges[j].tensor,
                        m.tensors[ranges[j].tensor].name.c_str());
}

}  // namespace

ModelInfo parse_kom(const uint8_t* data, size_t size) {
    KES_REQUIRE(data != nullptr || size == 0, "data is NULL");
    if (size < 8) CORRUPT("model: %zu bytes is too short for a .kom file", size);
    if (!kom::ModelBufferHasIdentifier(data)) CORRUPT("model: not a .kom file (file identifier is not \"KOM1\")");

    // FlatBuffers reads scalars in place: give it an 8-byte aligned copy if the caller's bytes are not.
    // The FlatBuffer part must lie in the first 2 GiB (the verifier's limit); the blob may extend past.
    const size_t fb_size = std::min<size_t>(size, FLATBUFFERS_MAX_BUFFER_SIZE - 1);
    std::vector<uint64_t> aligned;
    const uint8_t* fb = data;
    if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) != 0) {
        aligned.resize((fb_size + 7) / 8);
        std::memcpy(aligned.data(), data, fb_size);
        fb = reinterpret_cast<const uint8_t*>(aligned.data());
    }
    flatbuffers::Verifier verifier(fb, fb_size, 64, 1000000);
    if (!kom::VerifyModelBuffer(verifier))
        CORRUPT("model: the FlatBuffer structure is malformed or truncated (verifier failed)");
    const kom::Model* root = kom::GetModel(fb);

    ModelInfo m;
    m.format_version = root->format_version();
    if (m.format_version != kFormatVersion)
        fail(KES_ERR_UNSUPPORTED, "model: format version %u (this build reads %u)", m.format_version, kFormatVersion);

    // Weight blob.
    m.weights_offset = root->weights_offset();
    m.weights_size = root->weights_size();
    uint64_t blob_end = 0;
    if (m.weights_offset % KES_MEM_ALIGNMENT != 0 || m.weights_size % KES_MEM_ALIGNMENT != 0)
        CORRUPT("model: weight blob offset %llu and size %llu must be multiples of 128",
                static_cast<unsigned long long>(m.weights_offset), static_cast<unsigned long long>(m.weights_size));
    if (!checked_add(m.weights_offset, m.weights_size, &blob_end) || blob_end > size)
        CORRUPT("model: weight blob [%llu, +%llu) runs past the end of the file (%zu bytes)",
                static_cast<unsigned long long>(m.weights_offset), static_cast<unsigned long long>(m.weights_size),
                size);
    const auto* weights = root->weights();
    require_aligned8(weights, "weight section");
    const size_t weight_count = weights ? weights->size() : 0;
    for (size_t i = 0; i < weight_count; ++i) {
        const kom::WeightSection* w = weights->Get(static_cast<flatbuffers::uoffset_t>(i));
        uint64_t end = 0;
        if (w->offset() % KES_MEM_ALIGNMENT != 0)
            CORRUPT("model: weight section %zu offset %llu is not 128-byte aligned", i,
                    static_cast<unsigned long long>(w->offset()));
        if (!checked_add(w->offset(), w->size(), &end) || end > m.weights_size)
            CORRUPT("model: weight section %zu runs past the weight blob", i);
    }

    // Tensors.
    const auto* tensors = root->tensors();
    if (!tensors || tensors->size() == 0) CORRUPT("model: no tensors");
    if (tensors->size() > kMaxTensors) CORRUPT("model: %u tensors (limit %zu)", tensors->size(), kMaxTensors);
    const auto* plan = root->plan();
    if (!plan || !plan->tensor_offsets()) CORRUPT("model: no memory plan");
    if (plan->tensor_offsets()->size() != tensors->size())
        CORRUPT("model: memory plan has %u offsets for %u tensors", plan->tensor_offsets()->size(), tensors->size());
    require_aligned8(plan->tensor_offsets(), "plan offset");
    m.arena_size = plan->arena_size();
    m.ideal_size = plan->ideal_size();
    if (m.arena_size % KES_MEM_ALIGNMENT != 0 || m.arena_size > kMaxTensorBytes)
        CORRUPT("model: arena size %llu must be a multiple of 128 and at most 2^40",
                static_cast<unsigned long long>(m.arena_size));
    m.tensors.resize(tensors->size());
    for (size_t i = 0; i < m.tensors.size(); ++i) {
        const kom::Tensor* t = tensors->Get(static_cast<flatbuffers::uoffset_t>(i));
        TensorInfo& ti = m.tensors[i];
        ti.name = str_or_empty(t->name());
        const int64_t dtype = static_cast<int64_t>(t->dtype());
        const int64_t layout = static_cast<int64_t>(t->layout());
        if (!known_dtype(dtype))
            CORRUPT("model: tensor %zu (%s) has unknown dtype %lld", i, ti.name.c_str(), (long long)dtype);
        if (layout < 0 || layout > 2)
            CORRUPT("model: tensor %zu (%s) has unknown layout %lld", i, ti.name.c_str(), (long long)layout);
        ti.dtype = static_cast<kes_dtype>(dtype);
        ti.layout = static_cast<kes_layout>(layout);
        const auto* shape = t->shape();
        require_aligned8(shape, "tensor shape");
        ti.ndim = shape ? shape->size() : 0;
        if (ti.ndim > KES_TENSOR_MAX_DIMS)
            CORRUPT("model: tensor %zu (%s) has %u dims (limit %d)", i, ti.name.c_str(), ti.ndim, KES_TENSOR_MAX_DIMS);
        if (ti.layout != KES_LAYOUT_ND && ti.ndim != 4)
            CORRUPT("model: tensor %zu (%s) is NCHW/NHWC with %u dims", i, ti.name.c_str(), ti.ndim);
        ti.elements = 1;
        for (uint32_t d = 0; d < ti.ndim; ++d) {
            ti.shape[d] = shape->Get(d);
            if (ti.shape[d] < 0 || ti.shape[d] > INT32_MAX)
                CORRUPT("model: tensor %zu (%s) dim %u is %lld (must be 0..2^31-1)", i, ti.name.c_str(), d,
                        static_cast<long long>(ti.shape[d]));
            if (!checked_mul(ti.elements, static_cast<uint64_t>(ti.shape[d]), &ti.elements) ||
                ti.elements > kMaxTensorBytes)
                CORRUPT("model: tensor %zu (%s) has too many elements", i, ti.name.c_str());
        }
        ti.bytes = ti.elements * kes_dtype_size(ti.dtype);
        if (ti.bytes > kMaxTensorBytes) CORRUPT("model: tensor %zu (%s) is larger than 2^40 bytes", i, ti.name.c_str());
        ti.weight = t->weight();
        if (ti.weight >= 0) {
            if (static_cast<size_t>(ti.weight) >= weight_count)
                CORRUPT("model: tensor %zu (%s) names weight section %d of %zu", i, ti.name.c_str(), ti.weight,
                        weight_count);
            const kom::WeightSection* w = weights->Get(static_cast<flatbuffers::uoffset_t>(ti.weight));
            if (w->size() != ti.bytes)
                CORRUPT("model: tensor %zu (%s) needs %llu weight bytes, its section has %llu", i, ti.name.c_str(),
                        static_cast<unsigned long long>(ti.bytes), static_cast<unsigned long long>(w->size()));
            ti.offset = w->offset();
        } else if (ti.weight != -1) {
            CORRUPT("model: tensor %zu (%s) has weight index %d", i, ti.name.c_str(), ti.weight);
        } else {
            ti.offset = plan->tensor_offsets()->Get(static_cast<flatbuffers::uoffset_t>(i));
            uint64_t end = 0;
            if (ti.offset % KES_MEM_ALIGNMENT != 0 || !checked_add(ti.offset, ti.bytes, &end) || end > m.arena_size)
                CORRUPT(
                    "model: tensor %zu (%s): plan offset %llu (+%llu bytes) is unaligned or outside the %llu-byte "
                    "arena",
                    i, ti.name.c_str(), static_cast<unsigned long long>(ti.offset),
                    static_cast<unsigned long long>(ti.bytes), static_cast<unsigned long long>(m.arena_size));
        }
    }

    // Graph inputs and outputs; `state` tracks which tensors hold data so far (topological order).
    enum : uint8_t { kUnset = 0, kAvailable = 1 };
    std::vector<uint8_t> state(m.tensors.size(), kUnset);
    for (size_t i = 0; i < m.tensors.size(); ++i)
        if (m.tensors[i].weight >= 0) state[i] = kAvailable;
    auto read_io = [&](const flatbuffers::Vector<int32_t>* v, std::vector<int32_t>& dst, const char* what) {
        if (!v || v->size() == 0) CORRUPT("model: no graph %ss", what);
        for (flatbuffers::uoffset_t i = 0; i < v->size(); ++i) {
            const int32_t t = v->Get(i);
            if (t < 0 || static_cast<size_t>(t) >= m.tensors.size())
                CORRUPT("model: graph %s %u is tensor %d of %zu", what, i, t, m.tensors.size());
            if (m.tensors[t].weight >= 0)
                CORRUPT("model: graph %s %u (%s) is a weight", what, i, m.tensors[t].name.c_str());
            if (m.tensors[t].dtype != KES_F32)
                fail(KES_ERR_UNSUPPORTED, "model: graph %s %u (%s) is %s; this build executes f32", what, i,
                     m.tensors[t].name.c_str(), kes_dtype_name(m.tensors[t].dtype));
            dst.push_back(t);
        }
    };
    read_io(root->inputs(), m.inputs, "input");
    read_io(root->outputs(), m.outputs, "output");
    for (int32_t t : m.inputs) {
        if (state[t] != kUnset) CORRUPT("model: tensor %d (%s) is a graph input twice", t, m.tensors[t].name.c_str());
        state[t] = kAvailable;
    }

    // Nodes, in order: every input must already hold data.
    const auto* nodes = root->nodes();
    const size_t node_count = nodes ? nodes->size() : 0;
    m.nodes.resize(node_count);
    for (size_t i = 0; i < node_count; ++i) {
        const kom::Node* fn = nodes->Get(static_cast<flatbuffers::uoffset_t>(i));
        NodeInfo& n = m.nodes[i];
        n.name = str_or_empty(fn->name());
        const char* name = n.name.c_str();
        const auto op = static_cast<uint16_t>(fn->op());
        if (op < 1 || op > static_cast<uint16_t>(Op::MatMul))
            fail(KES_ERR_UNSUPPORTED, "model: node %zu (%s) has op %u, unknown to this build", i, name, op);
        n.op = static_cast<Op>(op);
        uint32_t min_in = 1, max_in = 1;
        switch (n.op) {
            case Op::Add:
            case Op::Sub:
            case Op::Mul:
            case Op::MatMul: min_in = max_in = 2; break;
            case Op::Conv2D:
            case Op::FullyConnected: min_in = 2, max_in = 3; break;
            default: break;
        }
        const auto* ins = fn->inputs();
        const auto* outs = fn->outputs();
        n.input_count = ins ? ins->size() : 0;
        if (n.input_count < min_in || n.input_count > max_in)
            CORRUPT("model: node %zu (%s) has %u inputs (expected %u..%u)", i, name, n.input_count, min_in, max_in);
        if (!outs || outs->size() != 1) CORRUPT("model: node %zu (%s) must have exactly one output", i, name);
        for (uint32_t k = 0; k < n.input_count; ++k) {
            const int32_t t = ins->Get(k);
            if (t < 0 || static_cast<size_t>(t) >= m.tensors.size())
                CORRUPT("model: node %zu (%s) input %u is tensor %d of %zu", i, name, k, t, m.tensors.size());
            if (state[t] != kAvailable)
                CORRUPT("model: node %zu (%s) reads tensor %d (%s) that no earlier node produces", i, name, t,
                        m.tensors[t].name.c_str());
            n.inputs[k] = t;
        }
        const int32_t o = outs->Get(0);
        if (o < 0 || static_cast<size_t>(o) >= m.tensors.size())
            CORRUPT("model: node %zu (%s) output is tensor %d of %zu", i, name, o, m.tensors.size());
        if (state[o] != kUnset)
            CORRUPT("model: node %zu (%s) writes tensor %d (%s), which is a weight, an input or already produced", i,
                    name, o, m.tensors[o].name.c_str());
        state[o] = kAvailable;
        n.output = o;
        for (uint32_t k = 0; k < n.input_count; ++k)
            if (m.tensors[n.inputs[k]].dtype != KES_F32)
                fail(KES_ERR_UNSUPPORTED, "model: node %zu (%s) input %u is %s; this build executes f32", i, name, k,
                     kes_dtype_name(m.tensors[n.inputs[k]].dtype));
        if (m.tensors[o].dtype != KES_F32)
            fail(KES_ERR_UNSUPPORTED, "model: node %zu (%s) output is %s; this build executes f32", i, name,
                 kes_dtype_name(m.tensors[o].dtype));

        // Attributes: the union's type must fit the op, and a typed union must carry its table.
        if (fn->attrs_type() != kom::OpAttrs::NONE && fn->attrs() == nullptr)
            CORRUPT("model: node %zu (%s) has an attribute type but no attribute table", i, name);
        switch (fn->attrs_type()) {
            case kom::OpAttrs::NONE:
                if (n.op == Op::Conv2D) CORRUPT("model: node %zu (%s): Conv2D needs Conv2DAttrs", i, name);
                break;
            case kom::OpAttrs::ElementwiseAttrs:
                if (n.op != Op::Add && n.op != Op::Sub && n.op != Op::Mul)
                    CORRUPT("model: node %zu (%s): ElementwiseAttrs on a non-elementwise op", i, name);
                n.fused_relu = fn->attrs_as_ElementwiseAttrs()->activation() == kom::FusedActivation::Relu;
                break;
            case kom::OpAttrs::Conv2DAttrs: {
                if (n.op != Op::Conv2D) CORRUPT("model: node %zu (%s): Conv2DAttrs on a non-Conv2D op", i, name);
                const kom::Conv2DAttrs* a = fn->attrs_as_Conv2DAttrs();
                n.stride_h = a->stride_h(), n.stride_w = a->stride_w();
                n.dilation_h = a->dilation_h(), n.dilation_w = a->dilation_w();
                n.pad_top = a->pad_top(), n.pad_left = a->pad_left();
                n.pad_bottom = a->pad_bottom(), n.pad_right = a->pad_right();
                n.fused_relu = a->activation() == kom::FusedActivation::Relu;
                break;
            }
            case kom::OpAttrs::FullyConnectedAttrs:
                if (n.op != Op::FullyConnected)
                    CORRUPT("model: node %zu (%s): FullyConnectedAttrs on another op", i, name);
                n.fused_relu = fn->attrs_as_FullyConnectedAttrs()->activation() == kom::FusedActivation::Relu;
                break;
            default: CORRUPT("model: node %zu (%s) has an unknown attribute type", i, name);
        }
        check_node_shapes(m, n, i);
    }
    for (int32_t t : m.outputs)
        if (state[t] != kAvailable || m.tensors[t].weight >= 0)
            CORRUPT("model: graph output %d (%s) is never produced", t, m.tensors[t].name.c_str());
    check_plan_overlaps(m);

    if (const kom::Metadata* md = root->metadata()) {
        m.source_format = str_or_empty(md->source_format());
        m.source_hash = str_or_empty(md->source_hash());
        m.converter_version = str_or_empty(md->converter_version());
        m.target_board = str_or_empty(md->target_board());
    }
    return m;
}

}  // namespace kes
