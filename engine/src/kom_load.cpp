// kom_load.cpp — verify a .kom image and turn it into a ModelInfo (model.hpp).
//
// Two layers: flatbuffers::Verifier proves every offset, vector and string lies inside the buffer;
// then the checks below prove the content is consistent (indices, shapes per op, weights inside the
// blob, plan inside the arena, topological order), so the executor never reads outside its memory.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <numeric>
#include <vector>

#include "kernels/select.hpp"
#include "kes/error.hpp"
#include "kes/math.hpp"
#include "kom_checksum.hpp"
#include "kom_generated.h"
#include "memory_plan.hpp"
#include "model.hpp"

namespace kes {

namespace {

constexpr uint32_t kFormatVersion = 2;
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;  // also caps the arena: far above any board
constexpr size_t kMaxTensors = size_t{1} << 20;
// Gears per model, as ATC and kes-convert allow: each gear is a program built at load time, so a
// hostile file must not ask for millions.
constexpr size_t kMaxGears = 100;

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

// Throws for two overlapping groups, naming two members live at one step on shared bytes (or the
// groups' first tensors, when only the groups' union ranges meet).
[[noreturn]] void report_plan_overlap(const ModelInfo& m, const BufferSharing& sharing, size_t a, size_t b) {
    auto holds_data = [&](size_t t) { return m.tensors[t].capacity != 0 && sharing.first[t] != INT64_MAX; };
    auto clash = [&](size_t s, size_t t) {
        const TensorInfo &x = m.tensors[s], &y = m.tensors[t];
        return sharing.first[s] <= sharing.last[t] && sharing.first[t] <= sharing.last[s] &&
               x.offset < y.offset + y.capacity && y.offset < x.offset + x.capacity;
    };
    std::vector<size_t> in_a, in_b;
    for (size_t t = 0; t < m.tensors.size(); ++t) {
        if (!holds_data(t)) continue;
        if (sharing.group[t] == sharing.group[a]) in_a.push_back(t);
        if (sharing.group[t] == sharing.group[b]) in_b.push_back(t);
    }
    size_t first = a, second = b;
    // Only an error message: bounded, so a hostile file with huge groups cannot make it quadratic.
    if (in_a.size() * in_b.size() <= (size_t{1} << 20)) {
        bool named = false;
        for (size_t i = 0; i < in_a.size() && !named; ++i)
            for (size_t j = 0; j < in_b.size() && !named; ++j)
                if (clash(in_a[i], in_b[j])) {
                    first = std::min(in_a[i], in_b[j]), second = std::max(in_a[i], in_b[j]);
                    named = true;
                }
    }
    CORRUPT("model: the memory plan overlaps tensors %zu (%s) and %zu (%s) while both are live", first,
            m.tensors[first].name.c_str(), second, m.tensors[second].name.c_str());
}

// The plan must never give two tensors live at the same step overlapping bytes, or a kernel would read
// what another just wrote. The sharing allowed is share_buffers()'s (memory_plan.hpp), where the file
// puts an output exactly at an input's offset: a view (Reshape, Flatten, Squeeze, Unsqueeze, Identity)
// and an elementwise node writing in place over an input that nothing needs afterwards — the rule
// re-checked here from the file's ops, shapes, dtypes and lifetimes, so an alias anywhere else is an
// overlap. Such tensors form one group with the union lifetime, checked as one range.
// (An in-place rule is checked here at the written shapes, and by build_program at every other gear.)
void check_plan_overlaps(const ModelInfo& m) {
    const size_t nt = m.tensors.size();
    SharingGraph g;
    g.tensors.resize(nt);
    for (size_t t = 0; t < nt; ++t)
        g.tensors[t] = SharingGraph::Tensor{m.tensors[t].dtype, &m.tensors[t].shape, m.tensors[t].weight < 0};
    for (const NodeInfo& n : m.nodes) g.nodes.push_back(SharingGraph::Node{n.op, &n.inputs, &n.outputs});
    g.inputs = &m.inputs;
    g.outputs = &m.outputs;
    const BufferSharing sharing = share_buffers(g, [&](ShareKind, size_t node, size_t input) {
        const TensorInfo& in = m.tensors[static_cast<size_t>(m.nodes[node].inputs[input])];
        const TensorInfo& out = m.tensors[static_cast<size_t>(m.nodes[node].outputs[0])];
        return in.capacity != 0 && out.capacity != 0 && in.offset == out.offset;  // as the writer shares
    });
    auto holds_data = [&](size_t t) {
        return m.tensors[t].weight < 0 && m.tensors[t].capacity != 0 && sharing.first[t] != INT64_MAX;
    };

    struct Range {
        uint64_t begin, end;
        int64_t first, last;
        size_t tensor;
    };
    std::vector<Range> ranges(nt, Range{0, 0, INT64_MAX, INT64_MIN, 0});
    for (size_t t = 0; t < nt; ++t) {
        if (!holds_data(t)) continue;
        const TensorInfo& ti = m.tensors[t];
        Range& r = ranges[sharing.group[t]];
        if (r.first == INT64_MAX) r = Range{ti.offset, ti.offset, sharing.first[t], sharing.last[t], t};
        r.end = std::max(r.end, ti.offset + ti.capacity);
        r.first = std::min(r.first, sharing.first[t]);
        r.last = std::max(r.last, sharing.last[t]);
    }
    ranges.erase(std::remove_if(ranges.begin(), ranges.end(), [](const Range& r) { return r.first == INT64_MAX; }),
                 ranges.end());
    // Sweep over the steps with the byte ranges live at the current step in an ordered map: they are
    // pairwise disjoint (each was checked when it arrived), so a new range need only be checked against
    // its neighbours. O(n log n), whatever a hostile file puts at one offset.
    std::vector<size_t> by_first(ranges.size()), by_end(ranges.size());
    std::iota(by_first.begin(), by_first.end(), size_t{0});
    std::iota(by_end.begin(), by_end.end(), size_t{0});
    std::sort(by_first.begin(), by_first.end(), [&](size_t a, size_t b) {
        return ranges[a].first != ranges[b].first ? ranges[a].first < ranges[b].first : a < b;
    });
    std::sort(by_end.begin(), by_end.end(), [&](size_t a, size_t b) { return ranges[a].last < ranges[b].last; });
    std::map<uint64_t, size_t> live;  // begin → index into ranges
    size_t ended = 0;
    for (size_t i : by_first) {
        const Range& r = ranges[i];
        for (; ended < by_end.size() && ranges[by_end[ended]].last < r.first; ++ended)
            live.erase(ranges[by_end[ended]].begin);
        const auto next = live.lower_bound(r.begin);
        if (next != live.end() && next->first < r.end)
            report_plan_overlap(m, sharing, r.tensor, ranges[next->second].tensor);
        if (next != live.begin()) {
            const Range& before = ranges[std::prev(next)->second];
            if (before.end > r.begin) report_plan_overlap(m, sharing, before.tensor, r.tensor);
        }
        live.emplace(r.begin, i);
    }
}

}  // namespace

ModelInfo parse_kom(const uint8_t* data, size_t size, WeightCheck check) {
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
    // The blob's CRC-32: the verifier and the checks below prove the structure, only this proves the
    // weight values (a flipped byte or a NaN written into a weight). Checked before anything else reads
    // them; files of earlier converters have none and load as before.
    if (const flatbuffers::Optional<uint32_t> crc = root->weights_crc32()) {
        m.has_weights_crc = true;
        if (check == WeightCheck::Verify) {
            const uint32_t actual = weights_crc32(data + m.weights_offset, static_cast<size_t>(m.weights_size));
            if (actual != *crc)
                CORRUPT(
                    "model: the weights are damaged: their CRC-32 is %08x, the file records %08x (%llu weight "
                    "bytes at offset %llu); convert the model again or copy the file again",
                    actual, *crc, static_cast<unsigned long long>(m.weights_size),
                    static_cast<unsigned long long>(m.weights_offset));
            m.weights_checked = true;
        }
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
    const auto* capacity = plan->tensor_capacity();
    require_aligned8(capacity, "plan capacity");
    if (capacity && capacity->size() != 0 && capacity->size() != tensors->size())
        CORRUPT("model: memory plan has %u capacities for %u tensors", capacity->size(), tensors->size());
    const bool has_capacity = capacity && capacity->size() != 0;
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
        const uint32_t ndim = shape ? shape->size() : 0;
        if (ndim > KES_TENSOR_MAX_DIMS)
            CORRUPT("model: tensor %zu (%s) has %u dims (limit %d)", i, ti.name.c_str(), ndim, KES_TENSOR_MAX_DIMS);
        if (ti.layout != KES_LAYOUT_ND && ndim != 4)
            CORRUPT("model: tensor %zu (%s) is NCHW/NHWC with %u dims", i, ti.name.c_str(), ndim);
        ti.shape.resize(ndim);
        ti.elements = 1;
        uint64_t nonzero = 1;
        for (uint32_t d = 0; d < ndim; ++d) {
            ti.shape[d] = shape->Get(d);
            if (ti.shape[d] < 0 || ti.shape[d] > INT32_MAX)
                CORRUPT("model: tensor %zu (%s) dim %u is %lld (must be 0..2^31-1)", i, ti.name.c_str(), d,
                        static_cast<long long>(ti.shape[d]));
            ti.elements *= static_cast<uint64_t>(ti.shape[d]);
            // Capped over the non-zero dims, so no stride of an empty tensor overflows either.
            if (!checked_mul(nonzero, static_cast<uint64_t>(ti.shape[d] ? ti.shape[d] : 1), &nonzero) ||
                nonzero > kMaxTensorBytes)
                CORRUPT("model: tensor %zu (%s) has too many elements", i, ti.name.c_str());
        }
        ti.bytes = ti.elements * kes_dtype_size(ti.dtype);
        if (const kom::Quantization* q = t->quant()) {
            require_aligned8(q->zero_point(), "zero point");
            if (q->scale()) ti.quant.scale.assign(q->scale()->begin(), q->scale()->end());
            if (q->zero_point()) ti.quant.zero_point.assign(q->zero_point()->begin(), q->zero_point()->end());
            ti.quant.axis = q->axis();
        }
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
            ti.capacity = has_capacity ? capacity->Get(static_cast<flatbuffers::uoffset_t>(i)) : ti.bytes;
            if (ti.capacity < ti.bytes || ti.capacity > kMaxTensorBytes)
                CORRUPT("model: tensor %zu (%s): plan capacity %llu is below its %llu bytes or above 2^40", i,
                        ti.name.c_str(), static_cast<unsigned long long>(ti.capacity),
                        static_cast<unsigned long long>(ti.bytes));
            uint64_t end = 0;
            if (ti.offset % KES_MEM_ALIGNMENT != 0 || !checked_add(ti.offset, ti.capacity, &end) || end > m.arena_size)
                CORRUPT(
                    "model: tensor %zu (%s): plan offset %llu (+%llu bytes) is unaligned or outside the %llu-byte "
                    "arena",
                    i, ti.name.c_str(), static_cast<unsigned long long>(ti.offset),
                    static_cast<unsigned long long>(ti.capacity), static_cast<unsigned long long>(m.arena_size));
        }
    }

    // Graph inputs and outputs; `state` tracks which tensors hold data so far (topological order).
    enum : uint8_t { kUnset = 0, kAvailable = 1 };
    std::vector<uint8_t> state(m.tensors.size(), kUnset);
    for (size_t i = 0; i < m.tensors.size(); ++i)
        if (m.tensors[i].weight >= 0) state[i] = kAvailable;
    // A model may have no inputs (it computes constants, e.g. ONNX Range or window functions) but
    // must have outputs.
    auto read_io = [&](const flatbuffers::Vector<int32_t>* v, std::vector<int32_t>& dst, const char* what,
                       bool required) {
        if (!v || v->size() == 0) {
            if (required) CORRUPT("model: no graph %ss", what);
            return;
        }
        for (flatbuffers::uoffset_t i = 0; i < v->size(); ++i) {
            const int32_t t = v->Get(i);
            if (t < 0 || static_cast<size_t>(t) >= m.tensors.size())
                CORRUPT("model: graph %s %u is tensor %d of %zu", what, i, t, m.tensors.size());
            if (m.tensors[t].weight >= 0)
                CORRUPT("model: graph %s %u (%s) is a weight", what, i, m.tensors[t].name.c_str());
            dst.push_back(t);
        }
    };
    read_io(root->inputs(), m.inputs, "input", false);
    read_io(root->outputs(), m.outputs, "output", true);
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
        n.op = fn->op()->str();  // required: the verifier guarantees it
        const char* name = n.name.c_str();
        n.def = find_op(n.op);
        if (!n.def)
            fail(KES_ERR_UNSUPPORTED, "model: node %zu (%s) has op '%s', unknown to this build", i, name, n.op.c_str());
        const auto* ins = fn->inputs();
        const auto* outs = fn->outputs();
        const size_t input_count = ins ? ins->size() : 0;
        const size_t output_count = outs ? outs->size() : 0;
        if (input_count < n.def->min_inputs || input_count > n.def->max_inputs)
            CORRUPT("model: node %zu (%s) has %zu inputs (%s takes %zu..%zu)", i, name, input_count, n.def->name,
                    n.def->min_inputs, n.def->max_inputs);
        if (output_count < n.def->min_outputs || output_count > n.def->max_outputs)
            CORRUPT("model: node %zu (%s) has %zu outputs (%s gives %zu..%zu)", i, name, output_count, n.def->name,
                    n.def->min_outputs, n.def->max_outputs);
        for (size_t k = 0; k < input_count; ++k) {
            const int32_t t = ins->Get(static_cast<flatbuffers::uoffset_t>(k));
            if (t == -1 && k >= n.def->min_inputs) {
                n.inputs.push_back(-1);
                continue;
            }
            if (t < 0 || static_cast<size_t>(t) >= m.tensors.size())
                CORRUPT("model: node %zu (%s) input %zu is tensor %d of %zu", i, name, k, t, m.tensors.size());
            if (state[t] != kAvailable)
                CORRUPT("model: node %zu (%s) reads tensor %d (%s) that no earlier node produces", i, name, t,
                        m.tensors[t].name.c_str());
            n.inputs.push_back(t);
        }
        for (size_t k = 0; k < output_count; ++k) {
            const int32_t o = outs->Get(static_cast<flatbuffers::uoffset_t>(k));
            if (o < 0 || static_cast<size_t>(o) >= m.tensors.size())
                CORRUPT("model: node %zu (%s) output %zu is tensor %d of %zu", i, name, k, o, m.tensors.size());
            if (state[o] != kUnset)
                CORRUPT("model: node %zu (%s) writes tensor %d (%s), which is a weight, an input or already produced",
                        i, name, o, m.tensors[o].name.c_str());
            state[o] = kAvailable;
            n.outputs.push_back(o);
        }
        m.max_node_inputs = std::max(m.max_node_inputs, n.inputs.size());
        m.max_node_outputs = std::max(m.max_node_outputs, n.outputs.size());
        if (const auto* attrs = fn->attrs()) {
            for (flatbuffers::uoffset_t k = 0; k < attrs->size(); ++k) {
                const kom::Attribute* fa = attrs->Get(k);
                Attr a;
                a.name = fa->name()->str();
                const int64_t kind = static_cast<int64_t>(fa->kind());
                if (kind < 0 || kind > static_cast<int64_t>(AttrKind::String))
                    CORRUPT("model: node %zu (%s) attribute '%s' has unknown kind %lld", i, name, a.name.c_str(),
                            static_cast<long long>(kind));
                if (n.attrs.has(a.name))
                    CORRUPT("model: node %zu (%s) has attribute '%s' twice", i, name, a.name.c_str());
                a.kind = static_cast<AttrKind>(kind);
                a.i = fa->i();
                a.f = fa->f();
                require_aligned8(fa->ints(), "attribute ints");
                if (fa->ints()) a.ints.assign(fa->ints()->begin(), fa->ints()->end());
                if (fa->floats()) a.floats.assign(fa->floats()->begin(), fa->floats()->end());
                if (fa->s()) a.s = fa->s()->str();
                n.attrs.set(std::move(a));
            }
        }
    }
    for (int32_t t : m.outputs)
        if (state[t] != kAvailable || m.tensors[t].weight >= 0)
            CORRUPT("model: graph output %d (%s) is never produced", t, m.tensors[t].name.c_str());
    check_plan_overlaps(m);

    if (const auto* aipp = root->aipp()) {
        for (flatbuffers::uoffset_t k = 0; k < aipp->size(); ++k) {
            const kom::InputAipp* a = aipp->Get(k);
            if (a->input() < 0 || static_cast<size_t>(a->input()) >= m.inputs.size())
                CORRUPT("model: AIPP entry %u names input %d of %zu", k, a->input(), m.inputs.size());
            m.aipp.emplace_back(static_cast<uint32_t>(a->input()), str_or_empty(a->config()));
        }
    }
    if (const auto* gears = root->batch_gears()) {
        require_aligned8(gears, "batch gears");
        if (gears->size() > kMaxGears) CORRUPT("model: %u batch gears (at most %zu)", gears->size(), kMaxGears);
        for (flatbuffers::uoffset_t k = 0; k < gears->size(); ++k) {
            const int64_t b = gears->Get(k);
            if (b < 1 || (!m.batch_gears.empty() && b <= m.batch_gears.back()))
                CORRUPT("model: batch gears must be positive and ascending (gear %u is %lld)", k,
                        static_cast<long long>(b));
            m.batch_gears.push_back(b);
        }
        if (!m.batch_gears.empty()) {
            for (int32_t t : m.inputs) {
                const TensorInfo& ti = m.tensors[static_cast<size_t>(t)];
                if (ti.shape.empty() || ti.shape[0] != m.batch_gears.back())
                    CORRUPT("model: input %s must have the largest batch gear (%lld) as dim 0", ti.name.c_str(),
                            static_cast<long long>(m.batch_gears.back()));
            }
        }
    }

    if (const auto* sizes = root->image_gears()) {
        require_aligned8(sizes, "image gears");
        if (sizes->size() > kMaxGears) CORRUPT("model: %u image gears (at most %zu)", sizes->size(), kMaxGears);
        for (flatbuffers::uoffset_t k = 0; k < sizes->size(); ++k) {
            const kom::ImageSize* s = sizes->Get(k);
            const int64_t h = s->height(), w = s->width();
            if (h < 1 || w < 1 || h > INT32_MAX || w > INT32_MAX)
                CORRUPT("model: image gear %u is %lldx%lld", k, static_cast<long long>(h), static_cast<long long>(w));
            if (!m.image_sizes.empty()) {
                const auto& [ph, pw] = m.image_sizes.back();
                if (h * w < ph * pw || (h * w == ph * pw && h <= ph))
                    CORRUPT("model: image gears must ascend by area, then height (gear %u is %lldx%lld)", k,
                            static_cast<long long>(h), static_cast<long long>(w));
            }
            m.image_sizes.emplace_back(h, w);
        }
    }
    if (const auto* ins = root->image_inputs()) {
        for (flatbuffers::uoffset_t k = 0; k < ins->size(); ++k) {
            const kom::ImageInput* a = ins->Get(k);
            if (a->input() < 0 || static_cast<size_t>(a->input()) >= m.inputs.size())
                CORRUPT("model: image gear entry %u names input %d of %zu", k, a->input(), m.inputs.size());
            const TensorInfo& ti = m.tensors[static_cast<size_t>(m.inputs[static_cast<size_t>(a->input())])];
            const int64_t rank = static_cast<int64_t>(ti.shape.size());
            if (a->h_dim() < 0 || a->w_dim() < 0 || a->h_dim() >= rank || a->w_dim() >= rank ||
                a->h_dim() == a->w_dim())
                CORRUPT("model: image gear input %s: dims %d and %d must be two different dims of its %lld",
                        ti.name.c_str(), a->h_dim(), a->w_dim(), static_cast<long long>(rank));
            for (const ImageInputInfo& other : m.image_inputs)
                if (other.input == static_cast<uint32_t>(a->input()))
                    CORRUPT("model: image gear input %s is listed twice", ti.name.c_str());
            m.image_inputs.push_back(ImageInputInfo{static_cast<uint32_t>(a->input()), a->h_dim(), a->w_dim()});
            if (m.image_sizes.empty()) continue;
            if (ti.shape[static_cast<size_t>(a->h_dim())] != m.image_sizes.back().first ||
                ti.shape[static_cast<size_t>(a->w_dim())] != m.image_sizes.back().second)
                CORRUPT("model: image gear input %s must have the last gear (%lldx%lld) as dims %d and %d",
                        ti.name.c_str(), static_cast<long long>(m.image_sizes.back().first),
                        static_cast<long long>(m.image_sizes.back().second), a->h_dim(), a->w_dim());
        }
    }
    if (m.image_sizes.empty() != m.image_inputs.empty())
        CORRUPT("model: %zu image gears for %zu image inputs (both or neither)", m.image_sizes.size(),
                m.image_inputs.size());
    if (!m.image_sizes.empty() && !m.batch_gears.empty()) CORRUPT("model: has both batch gears and image size gears");

    if (const kom::Metadata* md = root->metadata()) {
        m.source_format = str_or_empty(md->source_format());
        m.source_hash = str_or_empty(md->source_hash());
        m.converter_version = str_or_empty(md->converter_version());
        m.target_board = str_or_empty(md->target_board());
    }
    return m;
}

Program build_program(const ModelInfo& m, const uint8_t* weights, Gear gear, bool fast) {
    const bool image = gear.height != 0 || gear.width != 0;
    if (gear.batch != 0 && std::find(m.batch_gears.begin(), m.batch_gears.end(), gear.batch) == m.batch_gears.end())
        fail(KES_ERR_INVALID_ARGUMENT, "model: batch %lld is not one of the model's gears",
             static_cast<long long>(gear.batch));
    if (image && std::find(m.image_sizes.begin(), m.image_sizes.end(), std::make_pair(gear.height, gear.width)) ==
                     m.image_sizes.end())
        fail(KES_ERR_INVALID_ARGUMENT, "model: image size %lldx%lld is not one of the model's gears",
             static_cast<long long>(gear.height), static_cast<long long>(gear.width));
    const bool as_written = (gear.batch == 0 || gear.batch == m.batch_gears.back()) &&
                            (!image || std::make_pair(gear.height, gear.width) == m.image_sizes.back());
    Program p;
    p.gear = gear;
    const size_t nt = m.tensors.size();
    std::vector<TensorDesc> descs(nt);
    static const uint8_t empty_weight[1] = {0};
    for (size_t t = 0; t < nt; ++t) {
        const TensorInfo& ti = m.tensors[t];
        descs[t].dtype = ti.dtype;
        descs[t].shape = ti.shape;
        descs[t].quant = ti.quant;
        if (ti.weight >= 0) descs[t].data = ti.bytes ? weights + ti.offset : empty_weight;
    }
    if (!as_written) {
        if (gear.batch != 0)
            for (int32_t t : m.inputs) descs[static_cast<size_t>(t)].shape[0] = gear.batch;
        for (const ImageInputInfo& in : m.image_inputs) {
            Shape& shape = descs[static_cast<size_t>(m.inputs[in.input])].shape;
            shape[static_cast<size_t>(in.h_dim)] = gear.height;
            shape[static_cast<size_t>(in.w_dim)] = gear.width;
        }
    }

    std::vector<TensorDesc> outs;
    p.kernels.reserve(m.nodes.size());
    for (size_t i = 0; i < m.nodes.size(); ++i) {
        const NodeInfo& n = m.nodes[i];
        NodeDesc nd{n.name, n.op, n.attrs, {}, n.outputs.size()};
        for (int32_t t : n.inputs) nd.inputs.push_back(t >= 0 ? &descs[static_cast<size_t>(t)] : nullptr);
        try {
            p.kernels.push_back(create_kernel(*n.def, nd, outs));
            if (fast)
                if (std::unique_ptr<Kernel> k = select_kernel(nd, outs)) p.kernels.back() = std::move(k);
        } catch (const Error& e) {
            // Inconsistent content in a file that passed the writer's checks is a corrupt file.
            throw Error(e.status() == KES_ERR_INVALID_ARGUMENT ? KES_ERR_CORRUPT_DATA : e.status(),
                        format("model: %s", e.what()));
        }
        // An output written over an input (the plan's in-place sharing, checked at the written shapes by
        // parse_kom) must still be a valid in-place pair at this gear: the input could broadcast here.
        if (!as_written && n.outputs.size() == 1 && !is_view_op(n.op)) {
            const TensorInfo& out = m.tensors[static_cast<size_t>(n.outputs[0])];
            for (size_t k = 0; k < n.inputs.size(); ++k) {
                if (n.inputs[k] < 0) continue;
                const TensorInfo& in = m.tensors[static_cast<size_t>(n.inputs[k])];
                if (in.weight >= 0 || in.capacity == 0 || out.capacity == 0 || in.offset != out.offset) continue;
                const TensorDesc& d = descs[static_cast<size_t>(n.inputs[k])];
                if (!is_inplace_input(n.op, k, 1, d.dtype, d.shape, outs[0].dtype, outs[0].shape))
                    CORRUPT("model: node %zu (%s) writes over input %zu, which is %s at this gear (output %s)", i,
                            n.name.c_str(), k, shape_string(d.shape).c_str(), shape_string(outs[0].shape).c_str());
            }
        }
        for (size_t k = 0; k < n.outputs.size(); ++k) {
            const size_t o = static_cast<size_t>(n.outputs[k]);
            const TensorInfo& ti = m.tensors[o];
            if (outs[k].dtype != ti.dtype)
                CORRUPT("model: node %zu (%s) output %zu is %s, the file says %s", i, n.name.c_str(), k,
                        kes_dtype_name(outs[k].dtype), kes_dtype_name(ti.dtype));
            if (as_written ? outs[k].shape != ti.shape : outs[k].bytes() > ti.capacity)
                CORRUPT("model: node %zu (%s) output %zu has shape %s%s, the file says %s", i, n.name.c_str(), k,
                        shape_string(outs[k].shape).c_str(), as_written ? "" : " (more than the plan reserves)",
                        shape_string(ti.shape).c_str());
            descs[o].shape = outs[k].shape;
        }
    }
    p.shapes.resize(nt);
    p.bytes.resize(nt);
    for (size_t t = 0; t < nt; ++t) {
        p.shapes[t] = descs[t].shape;
        p.bytes[t] = static_cast<uint64_t>(shape_elements(descs[t].shape)) * kes_dtype_size(descs[t].dtype);
    }
    return p;
}

}  // namespace kes
