// pass_layout.cpp — layout choice by regions (pass_layout.hpp).
//
// Choices:
// - A region is stored permuted by one perm D: its tensor t becomes t' with t'.shape[i] = t.shape[D[i]],
//   so an axis a of t is axis D⁻¹[a] of t'. Only NCHW → NHWC (D = [0, 2, ..., r-1, 1]) can retag a
//   layout-sensitive op; regions of layout-free ops take any D that cancels a Transpose at their edge.
// - The cost of a region is counted before anything changes: +1 for each Transpose it needs (where a
//   region tensor comes from or goes to an op outside the region, a graph input or a graph output;
//   0 when that Transpose only moves size-1 dims and no gears are set, since it is then a Reshape), −1
//   for each Transpose at its edge that becomes the identity or a Reshape, and, for NCHW → NHWC, minus
//   the gain of every op that a fast kernel then runs (kNhwcGainConv, kNhwcGainMaxPool in the header).
//   Only negative costs are applied. The loop ends: a plan that switches a gaining op lowers the number
//   of NCHW gaining ops (nothing ever switches one back: an NHWC op joins no region), any other
//   applied plan lowers the number of Transposes and leaves the NCHW gaining ops as they were.
// - Regions whose edge Transposes are disjoint do not interact, so one round applies all profitable
//   ones that share no Transpose (NHWC ones first, then the cheapest) and the next round recomputes
//   the regions.
// - A Transpose left with the identity perm is removed: its readers read its input, or, when its output
//   is a graph output, the node making its input writes that output instead; if neither works (graph
//   input straight to graph output) it becomes an Identity node.
// - Constant operands of broadcasting ops are first brought to the output's rank (leading 1s, numpy's
//   rule) and then transposed with the region; all-ones shapes (scalars) are kept as they are. New
//   constants never replace shared ones in place.
#include "pass_layout.hpp"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>

#include "kes/error.hpp"

namespace kes::ir {

namespace {

using Perm = std::vector<int64_t>;

Perm nchw_to_nhwc(size_t rank) {
    Perm p{0};
    for (size_t d = 2; d < rank; ++d) p.push_back(static_cast<int64_t>(d));
    if (rank >= 2) p.push_back(1);
    return p;
}

Perm inverse(const Perm& p) {
    Perm q(p.size());
    for (size_t i = 0; i < p.size(); ++i) q[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
    return q;
}

bool is_identity(const Perm& p) {
    for (size_t i = 0; i < p.size(); ++i)
        if (p[i] != static_cast<int64_t>(i)) return false;
    return true;
}

// Transpose's rule for anything per axis: out[i] = in[p[i]].
template <class T>
std::vector<T> permuted(const std::vector<T>& v, const Perm& p) {
    std::vector<T> out(p.size());
    for (size_t i = 0; i < p.size(); ++i) out[i] = v[static_cast<size_t>(p[i])];
    return out;
}

// Pads-like lists (Pad's pads, Resize's roi): [begin per axis..., end per axis...].
template <class T>
std::vector<T> permuted_halves(const std::vector<T>& v, const Perm& p) {
    const size_t r = p.size();
    std::vector<T> out(2 * r);
    for (size_t i = 0; i < r; ++i) {
        out[i] = v[static_cast<size_t>(p[i])];
        out[r + i] = v[r + static_cast<size_t>(p[i])];
    }
    return out;
}

// A transpose that moves only size-1 dims keeps the element order: a Reshape does it without copying.
// Empty tensors are excluded (Reshape's 0 means "copy the input dim").
bool keeps_element_order(const Shape& shape, const Perm& p) {
    int64_t last = -1;
    for (int64_t d : p) {
        const int64_t extent = shape[static_cast<size_t>(d)];
        if (extent == 0) return false;
        if (extent == 1) continue;
        if (d < last) return false;
        last = d;
    }
    return true;
}

std::vector<uint8_t> transpose_bytes(const std::vector<uint8_t>& src, const Shape& shape, const Perm& p, size_t elem) {
    const size_t r = shape.size();
    const Shape out_shape = permuted(shape, p);
    const Shape in_strides = contiguous_strides(shape);
    Shape step(r);  // source stride of each output axis
    for (size_t i = 0; i < r; ++i) step[i] = in_strides[static_cast<size_t>(p[i])];
    const int64_t count = shape_elements(shape);
    std::vector<uint8_t> dst(src.size());
    std::vector<int64_t> idx(r, 0);
    int64_t off = 0;
    for (int64_t k = 0; k < count; ++k) {
        std::memcpy(dst.data() + static_cast<size_t>(k) * elem, src.data() + static_cast<size_t>(off) * elem, elem);
        for (size_t d = r; d-- > 0;) {
            if (++idx[d] < out_shape[d]) {
                off += step[d];
                break;
            }
            off -= step[d] * (out_shape[d] - 1);
            idx[d] = 0;
        }
    }
    return dst;
}

// A Reshape's target shape holds one gear's batch or image size; with gears only Transposes are used.
bool reshape_allowed(const Graph& g) {
    return g.dynamic_batch.empty() && g.dynamic_image_sizes.empty();
}

Perm perm_of(const Node& n, size_t rank) {
    Perm p = n.attrs.get_ints("perm");
    if (!n.attrs.has("perm"))
        for (size_t d = rank; d-- > 0;) p.push_back(static_cast<int64_t>(d));
    for (int64_t& v : p)
        if (v < 0) v += static_cast<int64_t>(rank);
    return p;
}

bool known_shape(const Tensor& t) {
    if (!t.has_shape) return false;
    return std::all_of(t.shape.begin(), t.shape.end(), [](int64_t d) { return d >= 0; });
}

std::vector<int64_t> ints_of(const Tensor& t) {
    std::vector<int64_t> v(static_cast<size_t>(t.elements()));
    for (size_t i = 0; i < v.size(); ++i) {
        if (t.dtype == KES_I64) {
            v[i] = t.as<int64_t>()[i];
        } else {
            v[i] = t.as<int32_t>()[i];
        }
    }
    return v;
}

std::vector<float> floats_of(const Tensor& t) {
    std::vector<float> v(static_cast<size_t>(t.elements()));
    if (!v.empty()) std::memcpy(v.data(), t.data.data(), v.size() * sizeof(float));
    return v;
}

// Unique names for the tensors and nodes a rewrite adds.
class Names {
public:
    explicit Names(const Graph& g) {
        for (const Tensor& t : g.tensors) used_.insert(t.name);
        for (const Node& n : g.nodes) used_.insert(n.name);
    }
    std::string fresh(const std::string& base) {
        std::string name = base;
        for (int k = 1; !used_.insert(name).second; ++k) name = base + "_" + std::to_string(k);
        return name;
    }

private:
    std::unordered_set<std::string> used_;
};

// ---- which ops can join a region ------------------------------------------------------------------------

enum class Kind : uint8_t {
    Elementwise,  // unary and broadcasting ops, Concat: constant operands are transposed
    Conv,
    ConvTranspose,
    LayoutAttr,  // pools, BatchNormalization: only data_layout changes
    Axis,        // "axis" attribute: Softmax, LogSoftmax, Hardmax, ArgMax, ArgMin, Split, ChannelShuffle
    Reduce,
    Pad,
    Slice,
    Resize,
};

struct Role {
    Kind kind = Kind::Elementwise;
    std::vector<size_t> carried;  // input slots holding region tensors; every output is a region tensor
    size_t rank = 0;
    int64_t default_axis = 0;  // Kind::Axis
    bool concat = false;       // Kind::Elementwise: Concat's "axis" moves too

    bool layout_sensitive() const {
        return kind == Kind::Conv || kind == Kind::ConvTranspose || kind == Kind::LayoutAttr;
    }
    bool carries(size_t slot) const { return std::find(carried.begin(), carried.end(), slot) != carried.end(); }
};

bool one_of(const std::string& op, std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(), [&](const char* n) { return op == n; });
}

bool is_unary(const std::string& op) {
    return is_unary_elementwise(op) || op == "Identity" || op == "Cast";
}

bool is_broadcasting(const std::string& op) {
    return one_of(op, {"Add",         "Sub",      "Mul",   "Div",     "Mod",  "Pow",
                       "PRelu",       "BitShift", "Equal", "Greater", "Less", "GreaterOrEqual",
                       "LessOrEqual", "And",      "Or",    "Xor",     "Max",  "Min",
                       "Sum",         "Mean",     "Where"});
}

bool is_reduce(const std::string& op) {
    return one_of(op, {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                       "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"});
}

class Analysis {
public:
    const Graph& g;
    explicit Analysis(const Graph& graph) : g(graph) {}

    bool absent(const Node& n, size_t i) const { return i >= n.inputs.size() || n.inputs[i] < 0; }
    const Tensor& in(const Node& n, size_t i) const { return g.tensors[static_cast<size_t>(n.inputs[i])]; }
    bool constant(const Node& n, size_t i) const { return !absent(n, i) && in(n, i).is_const; }
    bool int_list(const Node& n, size_t i) const {
        return constant(n, i) && (in(n, i).dtype == KES_I64 || in(n, i).dtype == KES_I32) && in(n, i).shape.size() <= 1;
    }
    bool absent_or_int_list(const Node& n, size_t i) const { return absent(n, i) || int_list(n, i); }

    std::optional<Role> role_of(const Node& n) const {
        if (n.outputs.empty()) return std::nullopt;
        for (int32_t o : n.outputs)
            if (o < 0) return std::nullopt;
        const Tensor& y = g.tensors[static_cast<size_t>(n.outputs[0])];
        if (!known_shape(y) || y.shape.size() < 2) return std::nullopt;
        Role role;
        role.rank = y.shape.size();
        for (int32_t o : n.outputs) {
            const Tensor& t = g.tensors[static_cast<size_t>(o)];
            if (!known_shape(t) || t.shape.size() != role.rank || t.is_const) return std::nullopt;
        }
        auto carry = [&](size_t i) {
            if (absent(n, i)) return false;
            const Tensor& t = in(n, i);
            if (t.is_const || !known_shape(t) || t.shape.size() != role.rank) return false;
            role.carried.push_back(i);
            return true;
        };
        const std::string& op = n.op;
        const bool nchw = n.attrs.get_string("data_layout", "NCHW") == "NCHW";
        const bool one_out = n.outputs.size() == 1;
        if (is_unary(op)) {
            if (n.inputs.size() != 1 || !one_out || !carry(0)) return std::nullopt;
            return role;
        }
        if (op == "Dropout" || op == "Clip") {
            // Dropout's ratio / training_mode and Clip's bounds are scalars: any layout reads them alike.
            if (!one_out || !carry(0)) return std::nullopt;
            for (size_t i = 1; i < n.inputs.size(); ++i)
                if (!absent(n, i) && (!constant(n, i) || in(n, i).elements() != 1)) return std::nullopt;
            return role;
        }
        if (is_broadcasting(op) || op == "Concat") {
            if (!one_out) return std::nullopt;
            for (size_t i = 0; i < n.inputs.size(); ++i) {
                if (absent(n, i)) return std::nullopt;
                if (!constant(n, i) && !carry(i)) return std::nullopt;
                if (constant(n, i) && in(n, i).shape.size() > role.rank) return std::nullopt;
            }
            if (role.carried.empty()) return std::nullopt;
            role.concat = op == "Concat";
            return role;
        }
        if (op == "Conv" || op == "ConvTranspose") {
            if (!nchw || !one_out || (role.rank != 3 && role.rank != 4) || !carry(0)) return std::nullopt;
            if (!constant(n, 1) || in(n, 1).dtype != KES_F32 || in(n, 1).shape.size() != role.rank)
                return std::nullopt;  // a runtime weight would need its own Transpose
            role.kind = op == "Conv" ? Kind::Conv : Kind::ConvTranspose;
            return role;
        }
        if (one_of(op, {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "BatchNormalization"})) {
            // MaxPool's Indices output exists in NCHW only; BatchNormalization's parameters are [C] in both.
            if (!nchw || !one_out || role.rank < 3 || !carry(0)) return std::nullopt;
            role.kind = Kind::LayoutAttr;
            return role;
        }
        if (one_of(op, {"Softmax", "LogSoftmax", "Hardmax", "ArgMax", "ArgMin", "Split", "ChannelShuffle"})) {
            const bool arg = op == "ArgMax" || op == "ArgMin";
            if (arg && n.attrs.get_int("keepdims", 1) == 0) return std::nullopt;
            if (op == "Split" ? !absent_or_int_list(n, 1) : n.inputs.size() != 1) return std::nullopt;
            if (op != "Split" && !one_out) return std::nullopt;
            if (!carry(0)) return std::nullopt;
            role.kind = Kind::Axis;
            role.default_axis = arg || op == "Split" ? 0 : op == "ChannelShuffle" ? 1 : -1;
            return role;
        }
        if (is_reduce(op)) {
            if (!one_out || n.attrs.get_int("keepdims", 1) == 0 || !absent_or_int_list(n, 1) || !carry(0))
                return std::nullopt;
            role.kind = Kind::Reduce;
            return role;
        }
        if (op == "Pad") {
            // constant_value (input 2) is a scalar whatever the layout.
            if (!one_out || !absent_or_int_list(n, 1) || !absent_or_int_list(n, 3) || !carry(0)) return std::nullopt;
            if (!absent(n, 2) && in(n, 2).elements() != 1) return std::nullopt;
            role.kind = Kind::Pad;
            return role;
        }
        if (op == "Slice") {
            if (!one_out || !int_list(n, 1) || !int_list(n, 2) || !absent_or_int_list(n, 3) ||
                !absent_or_int_list(n, 4) || !carry(0))
                return std::nullopt;
            role.kind = Kind::Slice;
            return role;
        }
        if (op == "Resize") {
            if (!one_out || n.inputs.size() > 4 || !carry(0)) return std::nullopt;
            for (size_t i = 1; i < n.inputs.size(); ++i)
                if (!absent(n, i) && !constant(n, i)) return std::nullopt;
            if (!absent(n, 3) && !int_list(n, 3)) return std::nullopt;
            if (!absent(n, 2) && in(n, 2).dtype != KES_F32) return std::nullopt;
            if (!absent(n, 1) && in(n, 1).dtype != KES_F32) return std::nullopt;
            role.kind = Kind::Resize;
            return role;
        }
        return std::nullopt;
    }
};

// ---- regions --------------------------------------------------------------------------------------------

struct Use {
    int32_t node;
    size_t slot;
};

struct Regions {
    std::vector<std::optional<Role>> roles;     // per node
    std::vector<int32_t> node_region;           // member nodes → region, else -1
    std::vector<int32_t> tensor_region;         // -1 outside every region
    std::vector<int32_t> producer;              // per tensor
    std::vector<std::vector<Use>> uses;         // per tensor
    std::vector<char> is_output;                // per tensor
    std::vector<std::vector<int32_t>> tensors;  // per region
    std::vector<std::vector<int32_t>> members;  // per region
    std::vector<size_t> rank;                   // per region
};

int32_t find_root(std::vector<int32_t>& parent, int32_t x) {
    while (parent[static_cast<size_t>(x)] != x) {
        parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
        x = parent[static_cast<size_t>(x)];
    }
    return x;
}

Regions find_regions(const Graph& g) {
    const size_t nt = g.tensors.size(), nn = g.nodes.size();
    Regions r;
    r.roles.resize(nn);
    r.node_region.assign(nn, -1);
    r.tensor_region.assign(nt, -1);
    r.producer.assign(nt, -1);
    r.uses.resize(nt);
    r.is_output.assign(nt, 0);
    for (int32_t t : g.outputs) r.is_output[static_cast<size_t>(t)] = 1;
    for (size_t i = 0; i < nn; ++i) {
        const Node& n = g.nodes[i];
        for (int32_t o : n.outputs)
            if (o >= 0) r.producer[static_cast<size_t>(o)] = static_cast<int32_t>(i);
        for (size_t s = 0; s < n.inputs.size(); ++s)
            if (n.inputs[s] >= 0) r.uses[static_cast<size_t>(n.inputs[s])].push_back({static_cast<int32_t>(i), s});
    }
    std::vector<int32_t> parent(nt);
    std::iota(parent.begin(), parent.end(), 0);
    std::vector<char> marked(nt, 0);
    auto mark_plain = [&](int32_t t) {
        if (t < 0) return;
        const Tensor& x = g.tensors[static_cast<size_t>(t)];
        if (!x.is_const && known_shape(x) && x.shape.size() >= 2) marked[static_cast<size_t>(t)] = 1;
    };
    Analysis a(g);
    for (size_t i = 0; i < nn; ++i) {
        const Node& n = g.nodes[i];
        if (n.op == "Transpose") {
            if (n.inputs.size() == 1 && n.outputs.size() == 1) {
                mark_plain(n.inputs[0]);
                mark_plain(n.outputs[0]);
            }
            continue;
        }
        r.roles[i] = a.role_of(n);
        if (!r.roles[i]) continue;
        std::vector<int32_t> carried;
        for (size_t s : r.roles[i]->carried) carried.push_back(n.inputs[s]);
        carried.insert(carried.end(), n.outputs.begin(), n.outputs.end());
        for (int32_t t : carried) {
            marked[static_cast<size_t>(t)] = 1;
            const int32_t ra = find_root(parent, carried[0]), rb = find_root(parent, t);
            if (ra != rb) parent[static_cast<size_t>(rb)] = ra;
        }
    }
    std::vector<int32_t> root_region(nt, -1);
    for (size_t t = 0; t < nt; ++t) {
        if (!marked[t]) continue;
        const size_t root = static_cast<size_t>(find_root(parent, static_cast<int32_t>(t)));
        if (root_region[root] < 0) {
            root_region[root] = static_cast<int32_t>(r.tensors.size());
            r.tensors.emplace_back();
            r.members.emplace_back();
            r.rank.push_back(g.tensors[t].shape.size());
        }
        r.tensor_region[t] = root_region[root];
        r.tensors[static_cast<size_t>(root_region[root])].push_back(static_cast<int32_t>(t));
    }
    for (size_t i = 0; i < nn; ++i) {
        if (!r.roles[i]) continue;
        const int32_t reg = r.tensor_region[static_cast<size_t>(g.nodes[i].outputs[0])];
        r.node_region[i] = reg;
        r.members[static_cast<size_t>(reg)].push_back(static_cast<int32_t>(i));
    }
    return r;
}

// What storing region `reg` permuted by D would do (computed before anything changes).
struct Plan {
    int32_t region = -1;
    Perm perm;
    int cost = 0;
    bool to_nhwc = false;
    std::vector<char> physical_source;  // per region tensor: its producer will write the permuted tensor
    std::vector<char> logical_needed;   // per region tensor: someone outside still reads the original
    std::vector<int32_t> edge_transposes;
    int gain = 0;  // the members' nhwc_gain, already taken off cost
};

// What switching n to NHWC is worth in Transposes (pass_layout.hpp): only ops that a fast kernel runs
// in NHWC and not in NCHW gain (kernels/select.cpp: 2-D f32 Conv, 2-D f32 ConvTranspose of one group,
// 2-D f32 MaxPool). The other
// layout-sensitive ops switch at no gain: they run the same reference kernel in either layout, but
// carry the region through so that the convs on both sides of them need no Transposes.
int nhwc_gain(const Graph& g, const Node& n, const Role& role) {
    if (role.rank != 4 || n.inputs.empty() || n.inputs[0] < 0) return 0;
    const Tensor& x = g.tensors[static_cast<size_t>(n.inputs[0])];
    if (x.dtype != KES_F32 || !x.quant.empty()) return 0;
    if (role.kind == Kind::Conv) return kNhwcGainConv;
    if (role.kind == Kind::ConvTranspose && n.attrs.get_int("group", 1) == 1) return kNhwcGainConv;
    if (n.op == "MaxPool") return kNhwcGainMaxPool;
    return 0;
}

class Planner {
public:
    Planner(const Graph& g, const Regions& r) : g_(g), r_(r), reshape_ok_(reshape_allowed(g)) {}

    bool transpose(int32_t node) const { return node >= 0 && g_.nodes[static_cast<size_t>(node)].op == "Transpose"; }

    bool physical_source(int32_t reg, int32_t t) const {
        const int32_t p = r_.producer[static_cast<size_t>(t)];
        return p >= 0 && (r_.node_region[static_cast<size_t>(p)] == reg || transpose(p));
    }

    // Every read of t that neither a member (at a region slot) nor a Transpose makes; graph outputs too.
    bool logical_needed(int32_t reg, int32_t t) const {
        if (r_.is_output[static_cast<size_t>(t)]) return true;
        for (const Use& u : r_.uses[static_cast<size_t>(t)]) {
            if (transpose(u.node)) continue;
            const auto& role = r_.roles[static_cast<size_t>(u.node)];
            if (r_.node_region[static_cast<size_t>(u.node)] == reg && role && role->carries(u.slot)) continue;
            return true;
        }
        return false;
    }

    int insert_cost(const Shape& shape, const Perm& p) const {
        return reshape_ok_ && keeps_element_order(shape, p) ? 0 : 1;
    }

    // The perm an edge Transpose gets; reads/writes: its input/output is the permuted region tensor.
    static Perm edge_perm(const Perm& p, const Perm& d, const Perm& dinv, bool reads, bool writes) {
        Perm out(p.size());
        for (size_t i = 0; i < p.size(); ++i) {
            const int64_t src = p[static_cast<size_t>(writes ? d[i] : static_cast<int64_t>(i))];
            out[i] = reads ? dinv[static_cast<size_t>(src)] : src;
        }
        return out;
    }

    bool reads_physical(int32_t reg, const Node& x) const {
        const int32_t in = x.inputs[0];
        return in >= 0 && r_.tensor_region[static_cast<size_t>(in)] == reg && physical_source(reg, in);
    }
    bool writes_physical(int32_t reg, const Node& x) const {
        return r_.tensor_region[static_cast<size_t>(x.outputs[0])] == reg;
    }

    std::vector<int32_t> edge_transposes(int32_t reg) const {
        std::set<int32_t> edge;
        for (int32_t t : r_.tensors[static_cast<size_t>(reg)]) {
            const int32_t p = r_.producer[static_cast<size_t>(t)];
            if (transpose(p)) edge.insert(p);
            if (!physical_source(reg, t)) continue;
            for (const Use& u : r_.uses[static_cast<size_t>(t)])
                if (transpose(u.node)) edge.insert(u.node);
        }
        return {edge.begin(), edge.end()};
    }

    // The perms worth trying: each cancels one edge Transpose; NHWC for layout-sensitive members.
    std::vector<Perm> candidates(int32_t reg, const std::vector<int32_t>& edges) const {
        std::set<Perm> out;
        const size_t rank = r_.rank[static_cast<size_t>(reg)];
        for (int32_t xi : edges) {
            const Node& x = g_.nodes[static_cast<size_t>(xi)];
            const Perm p = perm_of(x, rank);
            const bool reads = reads_physical(reg, x), writes = writes_physical(reg, x);
            if (writes && !reads) out.insert(inverse(p));
            if (reads && !writes) out.insert(p);
        }
        for (int32_t m : r_.members[static_cast<size_t>(reg)])
            if (r_.roles[static_cast<size_t>(m)]->layout_sensitive()) out.insert(nchw_to_nhwc(rank));
        return {out.begin(), out.end()};
    }

    std::optional<Plan> plan(int32_t reg, const Perm& d, const std::vector<int32_t>& edges) const {
        const size_t rank = r_.rank[static_cast<size_t>(reg)];
        if (d.size() != rank || is_identity(d)) return std::nullopt;
        if (!g_.dynamic_batch.empty() && d[0] != 0) return std::nullopt;  // the batch axis must stay first
        const bool to_nhwc = d == nchw_to_nhwc(rank);
        Plan pl;
        for (int32_t m : r_.members[static_cast<size_t>(reg)]) {
            const Role& role = *r_.roles[static_cast<size_t>(m)];
            if (!role.layout_sensitive()) continue;
            if (!to_nhwc) return std::nullopt;
            pl.gain += nhwc_gain(g_, g_.nodes[static_cast<size_t>(m)], role);
        }
        pl.cost = -pl.gain;
        pl.region = reg;
        pl.perm = d;
        pl.to_nhwc = to_nhwc;
        pl.edge_transposes = edges;
        const Perm dinv = inverse(d);
        for (int32_t t : r_.tensors[static_cast<size_t>(reg)]) {
            const Shape& shape = g_.tensors[static_cast<size_t>(t)].shape;
            const bool phys = physical_source(reg, t);
            const bool logical = phys && logical_needed(reg, t);
            pl.physical_source.push_back(phys);
            pl.logical_needed.push_back(logical);
            if (!phys) pl.cost += insert_cost(shape, d);
            if (logical) pl.cost += insert_cost(permuted(shape, d), dinv);
        }
        for (int32_t xi : edges) {
            const Node& x = g_.nodes[static_cast<size_t>(xi)];
            const bool reads = reads_physical(reg, x);
            const Perm p = edge_perm(perm_of(x, rank), d, dinv, reads, writes_physical(reg, x));
            const Tensor& in = g_.tensors[static_cast<size_t>(x.inputs[0])];
            const bool reshape = known_shape(in) && insert_cost(reads ? permuted(in.shape, d) : in.shape, p) == 0;
            if (is_identity(p) || reshape) --pl.cost;
        }
        return pl;
    }

private:
    const Graph& g_;
    const Regions& r_;
    bool reshape_ok_;
};

// ---- rewriting ------------------------------------------------------------------------------------------

class Rewriter {
public:
    Rewriter(Graph& g, const Regions& r) : g_(g), r_(r), names_(g), reshape_ok_(reshape_allowed(g)) {}

    size_t switched_to_nhwc = 0;

    void apply(const Plan& pl) {
        const auto& tensors = r_.tensors[static_cast<size_t>(pl.region)];
        const size_t rank = r_.rank[static_cast<size_t>(pl.region)];
        const Perm& d = pl.perm;
        const Perm dinv = inverse(d);
        suffix_ = pl.to_nhwc ? "_nhwc" : "_perm";
        // Edge Transposes' sides, read before any node changes.
        std::vector<std::pair<bool, bool>> edge_sides;
        const Planner planner(g_, r_);
        for (int32_t xi : pl.edge_transposes) {
            const Node& x = g_.nodes[static_cast<size_t>(xi)];
            edge_sides.emplace_back(planner.reads_physical(pl.region, x), planner.writes_physical(pl.region, x));
        }
        std::vector<int32_t> phys(g_.tensors.size(), -1);
        for (int32_t t : tensors) {
            Tensor p = g_.tensors[static_cast<size_t>(t)];
            p.name = names_.fresh(p.name + suffix_);
            p.shape = permuted(p.shape, d);
            p.layout = KES_LAYOUT_ND;
            p.data.clear();
            if (p.quant.axis >= 0 && static_cast<size_t>(p.quant.axis) < rank)
                p.quant.axis = dinv[static_cast<size_t>(p.quant.axis)];
            phys[static_cast<size_t>(t)] = g_.add_tensor(std::move(p));
        }
        for (int32_t m : r_.members[static_cast<size_t>(pl.region)]) {
            const Role& role = *r_.roles[static_cast<size_t>(m)];
            Node& n = g_.nodes[static_cast<size_t>(m)];
            for (size_t s : role.carried) n.inputs[s] = phys[static_cast<size_t>(n.inputs[s])];
            for (int32_t& o : n.outputs) o = phys[static_cast<size_t>(o)];
            rewrite_member(static_cast<size_t>(m), role, d, dinv);
        }
        for (size_t e = 0; e < pl.edge_transposes.size(); ++e) {
            Node& x = g_.nodes[static_cast<size_t>(pl.edge_transposes[e])];
            const auto [reads, writes] = edge_sides[e];
            const Perm p = Planner::edge_perm(perm_of(x, rank), d, dinv, reads, writes);
            if (reads) x.inputs[0] = phys[static_cast<size_t>(x.inputs[0])];
            if (writes) x.outputs[0] = phys[static_cast<size_t>(x.outputs[0])];
            const Tensor& in = g_.tensors[static_cast<size_t>(x.inputs[0])];
            if (!is_identity(p) && reshape_ok_ && known_shape(in) && keeps_element_order(in.shape, p)) {
                const Shape out_shape = permuted(in.shape, p);
                x.op = "Reshape";
                x.attrs = Attrs{};
                x.inputs.push_back(shape_constant(x.name, out_shape));
            } else {
                x.attrs.set_ints("perm", p);  // an identity perm is removed afterwards
            }
        }
        for (size_t i = 0; i < tensors.size(); ++i) {
            const int32_t t = tensors[i], p = phys[static_cast<size_t>(t)];
            if (!pl.physical_source[i])
                add_transpose(t, p, d);
            else if (pl.logical_needed[i])
                add_transpose(p, t, dinv);
        }
    }

private:
    Graph& g_;
    const Regions& r_;
    Names names_;
    bool reshape_ok_;
    std::string suffix_;

    int32_t shape_constant(const std::string& base, const Shape& shape) {
        return g_.add_constant_i64(names_.fresh(base + "/shape"), {static_cast<int64_t>(shape.size())}, shape);
    }

    // from → to, to's shape = from's shape permuted by p (a Reshape when no element moves).
    void add_transpose(int32_t from, int32_t to, const Perm& p) {
        const Shape in_shape = g_.tensors[static_cast<size_t>(from)].shape;
        const std::string name = names_.fresh(g_.tensors[static_cast<size_t>(to)].name + "/layout");
        if (reshape_ok_ && keeps_element_order(in_shape, p)) {
            const int32_t shape = shape_constant(name, permuted(in_shape, p));
            g_.add_node("Reshape", {from, shape}, {to}, name);
        } else {
            g_.add_node("Transpose", {from}, {to}, name).attrs.set_ints("perm", p);
        }
    }

    int32_t add_constant(const Tensor& like, const std::string& base, Shape shape, std::vector<uint8_t> data) {
        Tensor t;
        t.name = names_.fresh(base);
        t.dtype = like.dtype;
        t.shape = std::move(shape);
        t.has_shape = true;
        t.is_const = true;
        t.quant = like.quant;
        t.data = std::move(data);
        return g_.add_tensor(std::move(t));
    }

    int32_t int_constant(int32_t like_id, std::vector<int64_t> values) {
        const Tensor like = g_.tensors[static_cast<size_t>(like_id)];
        std::vector<uint8_t> bytes(values.size() * kes_dtype_size(like.dtype));
        for (size_t i = 0; i < values.size(); ++i) {
            if (like.dtype == KES_I64) {
                std::memcpy(bytes.data() + i * 8, &values[i], 8);
            } else {
                const int32_t v = static_cast<int32_t>(values[i]);
                std::memcpy(bytes.data() + i * 4, &v, 4);
            }
        }
        return add_constant(like, like.name + suffix_, {static_cast<int64_t>(values.size())}, std::move(bytes));
    }

    int32_t float_constant(int32_t like_id, const std::vector<float>& values) {
        const Tensor like = g_.tensors[static_cast<size_t>(like_id)];
        std::vector<uint8_t> bytes(values.size() * sizeof(float));
        if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
        return add_constant(like, like.name + suffix_, like.shape, std::move(bytes));
    }

    // A broadcasting operand brought to the region's rank and permuted; all-ones shapes stay.
    int32_t permuted_operand(int32_t id, size_t rank, const Perm& d, const Perm& dinv) {
        const Tensor c = g_.tensors[static_cast<size_t>(id)];
        Shape shape(rank - c.shape.size(), 1);
        shape.insert(shape.end(), c.shape.begin(), c.shape.end());
        if (std::all_of(shape.begin(), shape.end(), [](int64_t e) { return e == 1; })) return id;
        Tensor t = c;
        t.name = names_.fresh(c.name + suffix_);
        t.shape = permuted(shape, d);
        t.data = transpose_bytes(c.data, shape, d, kes_dtype_size(c.dtype));
        if (t.quant.axis >= 0) {
            const size_t axis = static_cast<size_t>(t.quant.axis) + rank - c.shape.size();
            t.quant.axis = dinv[axis];
        }
        return g_.add_tensor(std::move(t));
    }

    void rewrite_member(size_t ni, const Role& role, const Perm& d, const Perm& dinv) {
        const size_t rank = role.rank;
        auto axis_of = [&](int64_t a) {
            return dinv[static_cast<size_t>(normalize_axis(a, static_cast<int64_t>(rank)))];
        };
        auto axes_of = [&](std::vector<int64_t> v) {
            for (int64_t& a : v) a = axis_of(a);
            return v;
        };
        auto node = [&]() -> Node& { return g_.nodes[ni]; };
        auto input = [&](size_t i) -> int32_t { return i < node().inputs.size() ? node().inputs[i] : -1; };
        auto tensor = [&](int32_t id) -> const Tensor& { return g_.tensors[static_cast<size_t>(id)]; };
        switch (role.kind) {
            case Kind::Elementwise:
                for (size_t i = 0; i < node().inputs.size(); ++i) {
                    const int32_t t = input(i);
                    if (t >= 0 && tensor(t).is_const) {
                        const int32_t nt = permuted_operand(t, rank, d, dinv);
                        node().inputs[i] = nt;
                    }
                }
                if (role.concat) node().attrs.set_int("axis", axis_of(node().attrs.require_int("axis")));
                break;
            case Kind::Conv: {
                // OIHW → OHWI is the same perm as NCHW → NHWC.
                const Tensor w = tensor(input(1));
                const int32_t nw =
                    add_constant(w, w.name + suffix_, permuted(w.shape, d), transpose_bytes(w.data, w.shape, d, 4));
                node().inputs[1] = nw;
                node().attrs.set_string("data_layout", "NHWC");
                ++switched_to_nhwc;
                break;
            }
            case Kind::ConvTranspose: {
                // [C, M/g, K...] → [M, K..., C/g] (nn.cpp): W'[oc, k, ci] = W[grp·C/g + ci, oc mod M/g, k].
                const Tensor w = tensor(input(1));
                const int64_t group = node().attrs.get_int("group", 1);
                const int64_t c = w.shape[0], mg = w.shape[1], cg = c / group, m = mg * group;
                const int64_t k = shape_elements(Shape(w.shape.begin() + 2, w.shape.end()));
                Shape shape{m};
                shape.insert(shape.end(), w.shape.begin() + 2, w.shape.end());
                shape.push_back(cg);
                std::vector<float> src = floats_of(w), dst(src.size());
                for (int64_t oc = 0; oc < m; ++oc)
                    for (int64_t kk = 0; kk < k; ++kk)
                        for (int64_t ci = 0; ci < cg; ++ci) {
                            const int64_t from = (((oc / mg) * cg + ci) * mg + oc % mg) * k + kk;
                            dst[static_cast<size_t>((oc * k + kk) * cg + ci)] = src[static_cast<size_t>(from)];
                        }
                std::vector<uint8_t> bytes(dst.size() * sizeof(float));
                if (!dst.empty()) std::memcpy(bytes.data(), dst.data(), bytes.size());
                const int32_t nw = add_constant(w, w.name + suffix_, shape, std::move(bytes));
                node().inputs[1] = nw;
                const std::vector<int64_t> out_shape = node().attrs.get_ints("output_shape");
                if (out_shape.size() == rank) node().attrs.set_ints("output_shape", permuted(out_shape, d));
                node().attrs.set_string("data_layout", "NHWC");
                ++switched_to_nhwc;
                break;
            }
            case Kind::LayoutAttr:
                node().attrs.set_string("data_layout", "NHWC");
                ++switched_to_nhwc;
                break;
            case Kind::Axis:
                node().attrs.set_int("axis", axis_of(node().attrs.get_int("axis", role.default_axis)));
                break;
            case Kind::Reduce:
                if (input(1) >= 0) {
                    const int32_t nt = int_constant(input(1), axes_of(ints_of(tensor(input(1)))));
                    node().inputs[1] = nt;
                } else if (node().attrs.has("axes")) {
                    node().attrs.set_ints("axes", axes_of(node().attrs.get_ints("axes")));
                }
                break;
            case Kind::Pad:
                if (input(3) >= 0) {  // pads follow the listed axes
                    const int32_t nt = int_constant(input(3), axes_of(ints_of(tensor(input(3)))));
                    node().inputs[3] = nt;
                } else if (input(1) >= 0) {
                    const int32_t nt = int_constant(input(1), permuted_halves(ints_of(tensor(input(1))), d));
                    node().inputs[1] = nt;
                } else if (node().attrs.has("pads")) {
                    node().attrs.set_ints("pads", permuted_halves(node().attrs.get_ints("pads"), d));
                }
                break;
            case Kind::Slice:
                if (input(3) >= 0) {
                    const int32_t nt = int_constant(input(3), axes_of(ints_of(tensor(input(3)))));
                    node().inputs[3] = nt;
                } else {  // default axes 0..len(starts)-1
                    std::vector<int64_t> axes(static_cast<size_t>(tensor(input(1)).elements()));
                    std::iota(axes.begin(), axes.end(), 0);
                    const int32_t nt = g_.add_constant_i64(names_.fresh(node().name + "/axes"),
                                                           {static_cast<int64_t>(axes.size())}, axes_of(axes));
                    if (node().inputs.size() < 4) node().inputs.resize(4, -1);
                    node().inputs[3] = nt;
                }
                break;
            case Kind::Resize:
                if (node().attrs.has("axes")) {
                    node().attrs.set_ints("axes", axes_of(node().attrs.get_ints("axes")));
                    break;
                }
                // Without "axes", roi / scales / sizes list every axis in order.
                if (input(1) >= 0 && tensor(input(1)).elements() == static_cast<int64_t>(2 * rank)) {
                    const int32_t nt = float_constant(input(1), permuted_halves(floats_of(tensor(input(1))), d));
                    node().inputs[1] = nt;
                }
                if (input(2) >= 0 && tensor(input(2)).elements() == static_cast<int64_t>(rank)) {
                    const int32_t nt = float_constant(input(2), permuted(floats_of(tensor(input(2))), d));
                    node().inputs[2] = nt;
                }
                if (input(3) >= 0 && tensor(input(3)).elements() == static_cast<int64_t>(rank)) {
                    const int32_t nt = int_constant(input(3), permuted(ints_of(tensor(input(3))), d));
                    node().inputs[3] = nt;
                }
                break;
        }
    }
};

// Removes Transposes with the identity perm (see the top of this file). Returns how many went.
size_t remove_identity_transposes(Graph& g) {
    std::vector<char> erase(g.nodes.size(), 0);
    size_t removed = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        Node& x = g.nodes[i];
        if (x.op != "Transpose" || x.inputs.size() != 1 || x.outputs.size() != 1 || x.inputs[0] < 0) continue;
        const int32_t a = x.inputs[0], b = x.outputs[0];
        const Tensor& in = g.tensors[static_cast<size_t>(a)];
        if (!in.has_shape || !is_identity(perm_of(x, in.shape.size()))) continue;
        auto replace_inputs = [&](int32_t from, int32_t to) {
            for (size_t j = 0; j < g.nodes.size(); ++j)
                if (j != i && !erase[j])
                    for (int32_t& t : g.nodes[j].inputs)
                        if (t == from) t = to;
        };
        if (!g.is_graph_output(b)) {
            replace_inputs(b, a);
        } else {
            int32_t p = -1;
            for (size_t j = 0; j < g.nodes.size() && p < 0; ++j)
                if (j != i && !erase[j])
                    for (int32_t o : g.nodes[j].outputs)
                        if (o == a) p = static_cast<int32_t>(j);
            const bool graph_input = std::find(g.inputs.begin(), g.inputs.end(), a) != g.inputs.end();
            if (p < 0 || graph_input || g.is_graph_output(a) || in.is_const) {
                // Graph input (or constant) straight to a graph output: a copy must stay.
                x.op = "Identity";
                x.attrs = Attrs{};
                ++removed;
                continue;
            }
            for (int32_t& o : g.nodes[static_cast<size_t>(p)].outputs)
                if (o == a) o = b;
            replace_inputs(a, b);
        }
        erase[i] = 1;
        ++removed;
    }
    if (removed == 0) return 0;
    std::vector<Node> kept;
    kept.reserve(g.nodes.size());
    for (size_t i = 0; i < g.nodes.size(); ++i)
        if (!erase[i]) kept.push_back(std::move(g.nodes[i]));
    g.nodes = std::move(kept);
    return removed;
}

}  // namespace

PassStats choose_layout(Graph& g) {
    PassStats stats;
    const size_t nodes_before = g.nodes.size();
    bool changed = remove_identity_transposes(g) > 0;
    for (;;) {
        const Regions regions = find_regions(g);
        const Planner planner(g, regions);
        std::vector<Plan> plans;
        for (size_t reg = 0; reg < regions.tensors.size(); ++reg) {
            const int32_t r = static_cast<int32_t>(reg);
            const std::vector<int32_t> edges = planner.edge_transposes(r);
            // Without edge Transposes only the NHWC candidate of a region with layout-sensitive ops is
            // left: a pure NCHW model, where the gain of its convs has to pay for the new Transposes.
            std::optional<Plan> best;
            for (const Perm& d : planner.candidates(r, edges)) {
                std::optional<Plan> p = planner.plan(r, d, edges);
                if (p && (!best || p->cost < best->cost || (p->cost == best->cost && p->to_nhwc && !best->to_nhwc)))
                    best = std::move(p);
            }
            if (best && best->cost < 0) plans.push_back(std::move(*best));
        }
        if (plans.empty()) break;
        // NHWC first (the layout the NPU prefers for a chain: a tf2onnx graph then ends NHWC throughout
        // rather than NCHW behind one input Transpose), then cheapest first.
        std::stable_sort(plans.begin(), plans.end(), [](const Plan& a, const Plan& b) {
            return a.to_nhwc != b.to_nhwc ? a.to_nhwc : a.cost < b.cost;
        });
        Rewriter rewriter(g, regions);
        std::set<int32_t> touched;
        for (const Plan& p : plans) {
            if (std::any_of(p.edge_transposes.begin(), p.edge_transposes.end(),
                            [&](int32_t x) { return touched.count(x) != 0; }))
                continue;
            touched.insert(p.edge_transposes.begin(), p.edge_transposes.end());
            rewriter.apply(p);
        }
        stats.nodes_fused += rewriter.switched_to_nhwc;
        remove_identity_transposes(g);
        g.toposort();
        g.compact();
        changed = true;
    }
    if (changed) {
        g.toposort();
        g.compact();
        infer_shapes(g);
    }
    stats.nodes_removed = nodes_before > g.nodes.size() ? nodes_before - g.nodes.size() : 0;
    return stats;
}

}  // namespace kes::ir
