// In-place kernels: for every (op, input) pair that is_inplace_input() (op.hpp) lets the memory plan
// share, the kernel run with its output on that input's bytes gives bitwise what it gives out of place.
#include <set>
#include <utility>

#include "op_test_util.hpp"

namespace kes_test {
namespace {

const Shape kFull{2, 3, 4};

// Deterministic values in [lo, hi] stored as `dtype` (integers rounded, bool 0/1, f16 as binary16).
TT random_tensor(kes_dtype dtype, Shape shape, uint32_t seed, double lo = -3.0, double hi = 3.0,
                 bool is_const = false) {
    const size_t n = static_cast<size_t>(product(shape));
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<double> v(n);
    for (double& x : v) x = dist(rng);
    auto as = [&](auto tag) {
        using V = decltype(tag);
        std::vector<V> out;
        for (double x : v) out.push_back(static_cast<V>(std::is_floating_point<V>::value ? x : std::round(x)));
        return make_tensor(dtype, shape, out, is_const);
    };
    switch (dtype) {
        case KES_F32: return as(float{});
        case KES_F64: return as(double{});
        case KES_I8: return as(int8_t{});
        case KES_U8: return as(uint8_t{});
        case KES_I16: return as(int16_t{});
        case KES_U16: return as(uint16_t{});
        case KES_I32: return as(int32_t{});
        case KES_U32: return as(uint32_t{});
        case KES_I64: return as(int64_t{});
        case KES_U64: return as(uint64_t{});
        case KES_F16: {
            std::vector<uint16_t> h;
            for (double x : v) h.push_back(kes_fp16_from_float(static_cast<float>(x)));
            return make_tensor(dtype, shape, h, is_const);
        }
        case KES_BOOL: {
            std::vector<uint8_t> b;
            for (double x : v) b.push_back(x > (lo + hi) / 2 ? 1 : 0);
            return make_tensor(dtype, shape, b, is_const);
        }
        default: ADD_FAILURE() << "no random data for " << kes_dtype_name(dtype); return TT{};
    }
}

struct Case {
    std::string op;
    A attrs;
    std::vector<TT> inputs;
    size_t alias = 0;  // the input the output is written over
};

std::string describe(const Case& c) {
    std::string s = c.op + " (output on input " + std::to_string(c.alias) + ", inputs";
    for (const TT& t : c.inputs) s += " " + std::string(kes_dtype_name(t.dtype)) + kes::shape_string(t.shape);
    return s + ")";
}

void expect_inplace_matches(const Case& c) {
    SCOPED_TRACE(describe(c));
    std::vector<const TT*> ptrs;
    for (const TT& t : c.inputs) ptrs.push_back(&t);
    const TT want = run1(c.op, c.attrs, ptrs);
    Created k = create_op(c.op, c.attrs, ptrs, 1);
    const TT& x = c.inputs[c.alias];
    ASSERT_TRUE(kes::is_inplace_input(c.op, c.alias, 1, x.dtype, x.shape, k.outputs[0].dtype, k.outputs[0].shape))
        << "the case is not one the rule allows";
    ASSERT_EQ(want.bytes.size(), x.bytes.size());
    std::vector<uint8_t> shared = x.bytes;
    shared.push_back(0xCD);  // never a null pointer; must stay untouched
    std::vector<const void*> in_ptrs;
    for (size_t i = 0; i < c.inputs.size(); ++i)
        in_ptrs.push_back(i == c.alias ? shared.data() : static_cast<const void*>(c.inputs[i].bytes.data()));
    void* out_ptrs[1] = {shared.data()};
    k.kernel->run(in_ptrs.data(), out_ptrs);
    EXPECT_EQ(shared.back(), 0xCD);
    shared.pop_back();
    EXPECT_EQ(shared, want.bytes);
}

std::vector<Case> all_cases() {
    std::vector<Case> cases;
    uint32_t seed = 100;
    auto full = [&](kes_dtype dt, double lo = -3, double hi = 3) { return random_tensor(dt, kFull, ++seed, lo, hi); };
    auto small = [&](kes_dtype dt, Shape s, double lo = -3, double hi = 3) {
        return random_tensor(dt, std::move(s), ++seed, lo, hi);
    };

    // Unary math on f32, each inside its domain.
    const std::vector<std::pair<const char*, std::pair<double, double>>> unary = {
        {"Relu", {-3, 3}},     {"Abs", {-3, 3}},       {"Neg", {-3, 3}},         {"Sigmoid", {-9, 9}},
        {"Tanh", {-3, 3}},     {"Sqrt", {0.1, 9}},     {"Exp", {-3, 3}},         {"Log", {0.1, 9}},
        {"Floor", {-3, 3}},    {"Ceil", {-3, 3}},      {"Round", {-3, 3}},       {"Reciprocal", {0.2, 4}},
        {"Erf", {-3, 3}},      {"HardSwish", {-5, 5}}, {"HardSigmoid", {-5, 5}}, {"LeakyRelu", {-3, 3}},
        {"Elu", {-3, 3}},      {"Selu", {-3, 3}},      {"Celu", {-3, 3}},        {"ThresholdedRelu", {-3, 3}},
        {"Softplus", {-9, 9}}, {"Softsign", {-3, 3}},  {"Sign", {-3, 3}},        {"Sin", {-3, 3}},
        {"Cos", {-3, 3}},      {"Tan", {-1.2, 1.2}},   {"Sinh", {-3, 3}},        {"Cosh", {-3, 3}},
        {"Asin", {-0.9, 0.9}}, {"Acos", {-0.9, 0.9}},  {"Atan", {-3, 3}},        {"Asinh", {-3, 3}},
        {"Acosh", {1.1, 4}},   {"Atanh", {-0.9, 0.9}}, {"Shrink", {-3, 3}}};
    for (const auto& [op, range] : unary) cases.push_back({op, A(), {full(KES_F32, range.first, range.second)}, 0});
    for (const char* op : {"Relu", "Abs", "Neg", "Sign"})
        for (kes_dtype dt : {KES_I8, KES_I32, KES_I64}) cases.push_back({op, A(), {full(dt, -100, 100)}, 0});
    cases.push_back({"Not", A(), {full(KES_BOOL)}, 0});
    cases.push_back({"Dropout", A(), {full(KES_F32)}, 0});
    cases.push_back({"Clip", A(), {full(KES_F32), konst(f32({}, {-1.0f})), f32({}, {1.5f})}, 0});
    cases.push_back({"Clip", A(), {full(KES_I32, -50, 50), i32({}, {-7}), i32({}, {9})}, 0});
    cases.push_back({"Clip", A(), {full(KES_U8, 0, 200)}, 0});

    // Casts between dtypes of one size.
    const std::vector<std::pair<kes_dtype, int64_t>> casts = {
        {KES_F32, 6}, {KES_I32, 1}, {KES_U32, 1},  {KES_F32, 12}, {KES_F16, 5},  {KES_I16, 10},
        {KES_I8, 2},  {KES_U8, 9},  {KES_BOOL, 3}, {KES_F64, 7},  {KES_I64, 11}, {KES_U64, 11}};
    for (const auto& [from, to] : casts) cases.push_back({"Cast", A().i("to", to), {full(from, 0, 100)}, 0});
    cases.push_back({"Cast", A().i("to", 1), {full(KES_F32)}, 0});
    cases.push_back({"CastLike", A(), {full(KES_F32, -100, 100), small(KES_I32, {5})}, 0});

    cases.push_back({"BatchNormalization",
                     A().f("epsilon", 1e-3f),
                     {full(KES_F32), konst(small(KES_F32, {3})), konst(small(KES_F32, {3})), konst(small(KES_F32, {3})),
                      konst(small(KES_F32, {3}, 0.5, 2))},
                     0});

    // Variadic: input 0 carries the output's shape; the others broadcast or not.
    for (const char* op : {"Max", "Min", "Sum", "Mean"}) {
        for (kes_dtype dt : {KES_F32, KES_I32, KES_F16}) {
            cases.push_back({op, A(), {full(dt, -50, 50)}, 0});
            cases.push_back({op, A(), {full(dt, -50, 50), small(dt, {3, 1}, -50, 50), full(dt, -50, 50)}, 0});
        }
    }

    // Binary: the output on input 0 (input 1 broadcast or full) and on input 1 (input 0 broadcast).
    auto binary = [&](const char* op, const A& attrs, kes_dtype da, kes_dtype db, double lo, double hi, double lo_b,
                      double hi_b) {
        cases.push_back({op, attrs, {full(da, lo, hi), small(db, {3, 1}, lo_b, hi_b)}, 0});
        cases.push_back({op, attrs, {full(da, lo, hi), full(db, lo_b, hi_b)}, 0});
        cases.push_back({op, attrs, {full(da, lo, hi), full(db, lo_b, hi_b)}, 1});
        if (std::string(op) != "PRelu")  // its output takes X's shape: X never broadcasts
            cases.push_back({op, attrs, {small(da, {4}, lo, hi), full(db, lo_b, hi_b)}, 1});
    };
    for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
        binary(op, A(), KES_F32, KES_F32, -3, 3, 0.5, 3);
        binary(op, A().s("activation", "Relu"), KES_F32, KES_F32, -3, 3, 0.5, 3);
        binary(op, A(), KES_I32, KES_I32, -100, 100, 1, 9);
        binary(op, A(), KES_U8, KES_U8, 0, 200, 1, 9);
        binary(op, A(), KES_F16, KES_F16, -3, 3, 0.5, 3);
    }
    binary("Mod", A().i("fmod", 1), KES_F32, KES_F32, -9, 9, 1, 4);
    binary("Mod", A(), KES_I32, KES_I32, -90, 90, 1, 7);
    binary("Pow", A(), KES_F32, KES_F32, 0.5, 3, -2, 2);
    binary("Pow", A(), KES_F32, KES_I32, 0.5, 3, -3, 3);  // an i32 exponent: the same size as the f32 output
    binary("Pow", A(), KES_I64, KES_F64, -5, 5, 0, 3);
    binary("PRelu", A(), KES_F32, KES_F32, -3, 3, 0, 1);
    binary("BitShift", A().s("direction", "LEFT"), KES_U8, KES_U8, 0, 255, 0, 9);
    binary("BitShift", A().s("direction", "RIGHT"), KES_U32, KES_U32, 0, 1e9, 0, 33);
    for (const char* op : {"Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"}) {
        binary(op, A(), KES_U8, KES_U8, 0, 4, 0, 4);
        binary(op, A(), KES_I8, KES_I8, -3, 3, -3, 3);
    }
    binary("Equal", A(), KES_BOOL, KES_BOOL, 0, 1, 0, 1);
    for (const char* op : {"And", "Or", "Xor"}) binary(op, A(), KES_BOOL, KES_BOOL, 0, 1, 0, 1);
    return cases;
}

TEST(OpsInplace, EveryListedKernelGivesTheSameBytesInPlace) {
    for (const Case& c : all_cases()) expect_inplace_matches(c);
}

// A kernel added to the list without a case here would go untested: every (op, input) the rule allows
// for same-sized, same-shaped tensors must have one.
TEST(OpsInplace, EveryListedOpInputIsCovered) {
    std::set<std::pair<std::string, size_t>> covered;
    for (const Case& c : all_cases()) covered.emplace(c.op, c.alias);
    size_t listed = 0;
    for (const std::string& op : kes::registered_op_names())
        for (size_t input = 0; input < std::min<size_t>(kes::find_op(op)->max_inputs, 4); ++input)
            if (kes::is_inplace_input(op, input, 1, KES_F32, kFull, KES_F32, kFull)) {
                ++listed;
                EXPECT_TRUE(covered.count({op, input})) << op << " input " << input << " has no in-place case";
            }
    EXPECT_GT(listed, 40u);
}

TEST(OpsInplace, RuleRefusesBroadcastSizeChangesAndOtherOps) {
    using kes::is_inplace_input;
    EXPECT_TRUE(is_inplace_input("Add", 1, 1, KES_F32, kFull, KES_F32, kFull));
    EXPECT_FALSE(is_inplace_input("Add", 0, 1, KES_F32, {3, 1}, KES_F32, kFull));      // broadcast input
    EXPECT_FALSE(is_inplace_input("Relu", 0, 1, KES_F32, {24}, KES_F32, kFull));       // same count, other shape
    EXPECT_FALSE(is_inplace_input("Cast", 0, 1, KES_F32, kFull, KES_F16, kFull));      // element size changes
    EXPECT_FALSE(is_inplace_input("Greater", 0, 1, KES_F32, kFull, KES_BOOL, kFull));  // f32 in, bool out
    EXPECT_FALSE(is_inplace_input("Sum", 1, 1, KES_F32, kFull, KES_F32, kFull));       // input 0 is copied first
    EXPECT_FALSE(is_inplace_input("Clip", 1, 1, KES_F32, {}, KES_F32, {}));            // the bound, not X
    EXPECT_FALSE(is_inplace_input("Dropout", 0, 2, KES_F32, kFull, KES_F32, kFull));   // with its mask output
    for (const char* op : {"Conv", "Softmax", "Where", "Transpose", "MatMul", "Concat", "Reshape", "IsNaN"})
        EXPECT_FALSE(is_inplace_input(op, 0, 1, KES_F32, kFull, KES_F32, kFull)) << op;
}

}  // namespace
}  // namespace kes_test
