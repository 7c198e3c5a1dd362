// op_test_util.hpp — helpers for the op tests (test_ops_*.cpp): test tensors, running one op through
// the registry (create_kernel + Kernel::run, with the allocation counter around run), error capture,
// deterministic random data and index helpers for the double-precision references the tests write.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "kernels/ref/ops.hpp"
#include "kes/error.hpp"
#include "op.hpp"

namespace kes_test {

using kes::Shape;

// A dense tensor owned by the test; `is_const` makes its data visible to create() (TensorDesc::data).
struct TT {
    kes_dtype dtype = KES_F32;
    Shape shape;
    std::vector<uint8_t> bytes;
    bool is_const = false;

    int64_t elements() const {
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        return n;
    }
    template <class V>
    std::vector<V> values() const {
        std::vector<V> v(bytes.size() / sizeof(V));
        if (!v.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
        return v;
    }
    std::vector<float> f() const { return values<float>(); }
};

template <class V>
TT make_tensor(kes_dtype dtype, Shape shape, const std::vector<V>& values, bool is_const) {
    TT t;
    t.dtype = dtype;
    t.shape = std::move(shape);
    EXPECT_EQ(static_cast<int64_t>(values.size()), t.elements()) << "test tensor size";
    t.bytes.resize(values.size() * sizeof(V));
    if (!values.empty()) std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
    t.is_const = is_const;
    return t;
}
inline TT f32(Shape s, const std::vector<float>& v, bool c = false) {
    return make_tensor(KES_F32, std::move(s), v, c);
}
inline TT i64(Shape s, const std::vector<int64_t>& v, bool c = true) {
    return make_tensor(KES_I64, std::move(s), v, c);
}
inline TT i32(Shape s, const std::vector<int32_t>& v, bool c = false) {
    return make_tensor(KES_I32, std::move(s), v, c);
}
inline TT boolean(Shape s, const std::vector<uint8_t>& v, bool c = false) {
    return make_tensor(KES_BOOL, std::move(s), v, c);
}
// A 1-D constant int64 vector (shape-like inputs).
inline TT ints(const std::vector<int64_t>& v) {
    return i64({static_cast<int64_t>(v.size())}, v, true);
}
inline TT konst(TT t) {
    t.is_const = true;
    return t;
}

// Attribute builder: A().i("axis", 1).s("mode", "linear").
struct A {
    kes::Attrs attrs;
    A& i(const char* n, int64_t v) { return attrs.set_int(n, v), *this; }
    A& f(const char* n, float v) { return attrs.set_float(n, v), *this; }
    A& is(const char* n, std::vector<int64_t> v) { return attrs.set_ints(n, std::move(v)), *this; }
    A& fs(const char* n, std::vector<float> v) { return attrs.set_floats(n, std::move(v)), *this; }
    A& s(const char* n, std::string v) { return attrs.set_string(n, std::move(v)), *this; }
    operator const kes::Attrs&() const { return attrs; }
};

struct Created {
    std::unique_ptr<kes::Kernel> kernel;
    std::vector<kes::TensorDesc> outputs;
};

inline Created create_op(const std::string& op, const kes::Attrs& attrs, const std::vector<const TT*>& inputs,
                         size_t n_out) {
    static const std::string node_name = "n0";
    std::vector<kes::TensorDesc> descs(inputs.size());
    std::vector<const kes::TensorDesc*> ptrs;
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (!inputs[i]) {
            ptrs.push_back(nullptr);
            continue;
        }
        descs[i].dtype = inputs[i]->dtype;
        descs[i].shape = inputs[i]->shape;
        descs[i].data = inputs[i]->is_const ? inputs[i]->bytes.data() : nullptr;
        if (inputs[i]->is_const && inputs[i]->bytes.empty()) descs[i].data = &node_name;  // empty constant
        ptrs.push_back(&descs[i]);
    }
    const kes::OpDef* def = kes::find_op(op);
    if (!def) throw kes::Error(KES_ERR_NOT_FOUND, "op " + op + " is not registered");
    kes::NodeDesc node{node_name, op, attrs, ptrs, n_out};
    Created c;
    c.kernel = kes::create_kernel(*def, node, c.outputs);
    return c;
}

// Creates and runs `op`; returns the outputs. Fails the test if run() allocates.
inline std::vector<TT> run_op(const std::string& op, const kes::Attrs& attrs, const std::vector<const TT*>& inputs,
                              size_t n_out = 1) {
    Created c = create_op(op, attrs, inputs, n_out);
    std::vector<TT> outs(c.outputs.size());
    std::vector<void*> out_ptrs;
    for (size_t i = 0; i < outs.size(); ++i) {
        outs[i].dtype = c.outputs[i].dtype;
        outs[i].shape = c.outputs[i].shape;
        outs[i].bytes.assign(c.outputs[i].bytes() + 1, 0xCD);  // +1: never a null pointer; poisoned
        out_ptrs.push_back(outs[i].bytes.data());
    }
    std::vector<const void*> in_ptrs;
    for (const TT* t : inputs) in_ptrs.push_back(t ? static_cast<const void*>(t->bytes.data()) : nullptr);
    start_counting();
    c.kernel->run(in_ptrs.data(), out_ptrs.data());
    const uint64_t allocations = stop_counting();
    EXPECT_EQ(allocations, 0u) << op << ": run() allocated";
    for (TT& t : outs) t.bytes.pop_back();
    return outs;
}
inline TT run1(const std::string& op, const kes::Attrs& attrs, const std::vector<const TT*>& inputs) {
    return run_op(op, attrs, inputs, 1).at(0);
}

// Status and message of a failing create() (KES_OK and "" when it succeeds).
struct Failure {
    kes_status status = KES_OK;
    std::string message;
};
inline Failure create_failure(const std::string& op, const kes::Attrs& attrs, const std::vector<const TT*>& inputs,
                              size_t n_out = 1) {
    try {
        create_op(op, attrs, inputs, n_out);
    } catch (const kes::Error& e) {
        return {e.status(), e.what()};
    }
    return {};
}

#define EXPECT_CREATE_FAILS(status_, needle_, ...)                                           \
    do {                                                                                     \
        const ::kes_test::Failure f_ = ::kes_test::create_failure(__VA_ARGS__);              \
        EXPECT_EQ(f_.status, status_) << f_.message;                                         \
        EXPECT_NE(f_.message.find(needle_), std::string::npos) << "message: " << f_.message; \
    } while (0)

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

inline int64_t product(const Shape& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}

// Row-major multi-index of flat index i in shape s.
inline std::vector<int64_t> unravel(int64_t i, const Shape& s) {
    std::vector<int64_t> idx(s.size());
    for (size_t d = s.size(); d-- > 0;) {
        idx[d] = s[d] ? i % s[d] : 0;
        i = s[d] ? i / s[d] : 0;
    }
    return idx;
}
inline int64_t ravel(const std::vector<int64_t>& idx, const Shape& s) {
    int64_t off = 0;
    for (size_t d = 0; d < s.size(); ++d) off = off * s[d] + idx[d];
    return off;
}
// Offset into `in` (numpy-broadcast against an output index `idx` of higher or equal rank).
inline int64_t broadcast_offset(const std::vector<int64_t>& idx, const Shape& in) {
    const size_t shift = idx.size() - in.size();
    int64_t off = 0;
    for (size_t d = 0; d < in.size(); ++d) off = off * in[d] + (in[d] == 1 ? 0 : idx[d + shift]);
    return off;
}

// Transposes a float tensor by perm (reference helper for layout tests).
inline std::vector<float> transpose_ref(const std::vector<float>& x, const Shape& s, const std::vector<size_t>& perm,
                                        Shape* out_shape) {
    Shape o(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) o[i] = s[perm[i]];
    std::vector<float> y(x.size());
    for (int64_t i = 0; i < static_cast<int64_t>(y.size()); ++i) {
        const std::vector<int64_t> oi = unravel(i, o);
        std::vector<int64_t> ii(s.size());
        for (size_t k = 0; k < perm.size(); ++k) ii[perm[k]] = oi[k];
        y[static_cast<size_t>(i)] = x[static_cast<size_t>(ravel(ii, s))];
    }
    *out_shape = o;
    return y;
}

inline void expect_near_all(const std::vector<float>& got, const std::vector<double>& want, double tol,
                            const char* what = "") {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(want[i])) {
            EXPECT_TRUE(std::isnan(got[i])) << what << " [" << i << "]";
            continue;
        }
        EXPECT_NEAR(got[i], want[i], tol * (1.0 + std::fabs(want[i]))) << what << " [" << i << "]";
    }
}
inline void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, double tol,
                            const char* what = "") {
    expect_near_all(got, std::vector<double>(want.begin(), want.end()), tol, what);
}

}  // namespace kes_test
