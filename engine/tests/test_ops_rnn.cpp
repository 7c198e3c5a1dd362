// LSTM, GRU and RNN (ops/rnn.cpp) against a double-precision reference written from the ONNX equations:
// whole gate vectors per step, time-major; layout 1 is checked by transposing the layout-0 data.
#include "op_test_util.hpp"

namespace kes_test {
namespace {

// An activation with its parameters, as the reference applies it.
struct RefAct {
    std::string name;
    double alpha = 0.0, beta = 0.0;
};

double apply(const RefAct& a, double x) {
    if (a.name == "Sigmoid") return 1.0 / (1.0 + std::exp(-x));
    if (a.name == "Tanh") return std::tanh(x);
    if (a.name == "Relu") return std::max(0.0, x);
    if (a.name == "Affine") return a.alpha * x + a.beta;
    if (a.name == "LeakyRelu") return x >= 0 ? x : a.alpha * x;
    if (a.name == "ThresholdedRelu") return x >= a.alpha ? x : 0.0;
    if (a.name == "ScaledTanh") return a.alpha * std::tanh(a.beta * x);
    if (a.name == "HardSigmoid") return std::min(1.0, std::max(0.0, a.alpha * x + a.beta));
    if (a.name == "Elu") return x >= 0 ? x : a.alpha * (std::exp(x) - 1.0);
    if (a.name == "Softsign") return x / (1.0 + std::fabs(x));
    if (a.name == "Softplus") return std::log(1.0 + std::exp(x));
    ADD_FAILURE() << "reference has no activation " << a.name;
    return 0.0;
}

struct RnnCase {
    std::string op;  // LSTM, GRU, RNN
    int64_t steps = 4, batch = 2, input = 3, hidden = 4;
    std::string direction = "forward";
    int64_t layout = 0;
    bool bias = true, h0 = false, c0 = false, peep = false;
    std::vector<int32_t> lens;  // empty: no sequence_lens
    bool lens_const = false;
    float clip = 0.0f;  // 0: no clip attribute
    int64_t input_forget = 0, linear_before_reset = 0;
    std::string activations;  // "" = defaults; comma-separated as onnx_import writes it
    std::vector<float> alphas, betas;
    std::vector<RefAct> ref_acts;  // per direction, what the reference applies (empty = defaults)
    size_t outputs = 1;
    const char* what = "";
};

int gates_of(const std::string& op) {
    return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
}

std::vector<RefAct> default_acts(const std::string& op) {
    if (op == "LSTM") return {{"Sigmoid"}, {"Tanh"}, {"Tanh"}};
    if (op == "GRU") return {{"Sigmoid"}, {"Tanh"}};
    return {{"Tanh"}};
}

// Canonical (layout 0) data of a case.
struct RefData {
    std::vector<float> x, w, r, b, h0, c0, p;
};
struct RefOut {
    std::vector<double> y, yh, yc;  // [T, D, B, H], [D, B, H], [D, B, H]
};

RefOut reference(const RnnCase& c, const RefData& in) {
    const int64_t T = c.steps, B = c.batch, I = c.input, H = c.hidden, G = gates_of(c.op);
    const int64_t D = c.direction == "bidirectional" ? 2 : 1;
    const size_t per_dir = default_acts(c.op).size();
    RefOut out;
    out.y.assign(static_cast<size_t>(T * D * B * H), 0.0);
    out.yh.assign(static_cast<size_t>(D * B * H), 0.0);
    out.yc.assign(static_cast<size_t>(D * B * H), 0.0);
    auto at = [](const std::vector<float>& v, int64_t i) { return static_cast<double>(v[static_cast<size_t>(i)]); };
    for (int64_t d = 0; d < D; ++d) {
        std::vector<RefAct> acts = default_acts(c.op);
        if (!c.ref_acts.empty())
            for (size_t k = 0; k < per_dir; ++k)
                acts[k] = c.ref_acts[c.ref_acts.size() == per_dir ? k : static_cast<size_t>(d) * per_dir + k];
        auto clip = [&](double v) { return c.clip > 0 ? std::min<double>(c.clip, std::max<double>(-c.clip, v)) : v; };
        const bool reverse = c.direction == "reverse" || d == 1;
        for (int64_t b = 0; b < B; ++b) {
            const int64_t len = c.lens.empty() ? T : c.lens[static_cast<size_t>(b)];
            std::vector<double> h(static_cast<size_t>(H), 0.0), cell(static_cast<size_t>(H), 0.0);
            for (int64_t j = 0; j < H; ++j) {
                if (c.h0) h[static_cast<size_t>(j)] = at(in.h0, (d * B + b) * H + j);
                if (c.c0) cell[static_cast<size_t>(j)] = at(in.c0, (d * B + b) * H + j);
            }
            for (int64_t s = 0; s < len; ++s) {
                const int64_t t = reverse ? len - 1 - s : s;
                // xw[g*H + j] = x W^T + Wb, hr[g*H + j] = h R^T + Rb
                std::vector<double> xw(static_cast<size_t>(G * H)), hr(static_cast<size_t>(G * H));
                for (int64_t row = 0; row < G * H; ++row) {
                    double a = c.bias ? at(in.b, d * 2 * G * H + row) : 0.0;
                    double e = c.bias ? at(in.b, d * 2 * G * H + G * H + row) : 0.0;
                    for (int64_t k = 0; k < I; ++k)
                        a += at(in.x, (t * B + b) * I + k) * at(in.w, (d * G * H + row) * I + k);
                    for (int64_t k = 0; k < H; ++k)
                        e += h[static_cast<size_t>(k)] * at(in.r, (d * G * H + row) * H + k);
                    xw[static_cast<size_t>(row)] = a;
                    hr[static_cast<size_t>(row)] = e;
                }
                std::vector<double> h_new(static_cast<size_t>(H));
                auto gate = [&](int g, int64_t j) {
                    return xw[static_cast<size_t>(g * H + j)] + hr[static_cast<size_t>(g * H + j)];
                };
                if (c.op == "RNN") {
                    for (int64_t j = 0; j < H; ++j) h_new[static_cast<size_t>(j)] = apply(acts[0], clip(gate(0, j)));
                } else if (c.op == "GRU") {
                    std::vector<double> z(static_cast<size_t>(H)), r(static_cast<size_t>(H));
                    for (int64_t j = 0; j < H; ++j) {
                        z[static_cast<size_t>(j)] = apply(acts[0], clip(gate(0, j)));
                        r[static_cast<size_t>(j)] = apply(acts[0], clip(gate(1, j)));
                    }
                    for (int64_t j = 0; j < H; ++j) {
                        double pre = xw[static_cast<size_t>(2 * H + j)];
                        if (c.linear_before_reset) {
                            pre += r[static_cast<size_t>(j)] * hr[static_cast<size_t>(2 * H + j)];
                        } else {
                            double rh = c.bias ? at(in.b, d * 2 * G * H + G * H + 2 * H + j) : 0.0;
                            for (int64_t k = 0; k < H; ++k)
                                rh += r[static_cast<size_t>(k)] * h[static_cast<size_t>(k)] *
                                      at(in.r, (d * G * H + 2 * H + j) * H + k);
                            pre += rh;
                        }
                        const double n = apply(acts[1], clip(pre));
                        const double zj = z[static_cast<size_t>(j)];
                        h_new[static_cast<size_t>(j)] = (1 - zj) * n + zj * h[static_cast<size_t>(j)];
                    }
                } else {  // LSTM, gate order i, o, f, c; P order i, o, f
                    auto peep = [&](int k, int64_t j) { return c.peep ? at(in.p, d * 3 * H + k * H + j) : 0.0; };
                    for (int64_t j = 0; j < H; ++j) {
                        const double cp = cell[static_cast<size_t>(j)];
                        const double i = apply(acts[0], clip(gate(0, j) + peep(0, j) * cp));
                        const double f = c.input_forget ? 1.0 - i : apply(acts[0], clip(gate(2, j) + peep(2, j) * cp));
                        const double g = apply(acts[1], clip(gate(3, j)));
                        const double cn = f * cp + i * g;
                        const double o = apply(acts[0], clip(gate(1, j) + peep(1, j) * cn));
                        cell[static_cast<size_t>(j)] = cn;
                        h_new[static_cast<size_t>(j)] = o * apply(acts[2], cn);
                    }
                }
                h = h_new;
                for (int64_t j = 0; j < H; ++j)
                    out.y[static_cast<size_t>(((t * D + d) * B + b) * H + j)] = h[static_cast<size_t>(j)];
            }
            if (len > 0)
                for (int64_t j = 0; j < H; ++j) {
                    out.yh[static_cast<size_t>((d * B + b) * H + j)] = h[static_cast<size_t>(j)];
                    out.yc[static_cast<size_t>((d * B + b) * H + j)] = cell[static_cast<size_t>(j)];
                }
        }
    }
    return out;
}

std::vector<double> transpose_d(const std::vector<double>& v, const Shape& s, const std::vector<size_t>& perm) {
    Shape o(perm.size());
    for (size_t k = 0; k < perm.size(); ++k) o[k] = s[perm[k]];
    std::vector<double> out(v.size());
    for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
        const std::vector<int64_t> oi = unravel(i, o);
        std::vector<int64_t> ii(s.size());
        for (size_t k = 0; k < perm.size(); ++k) ii[perm[k]] = oi[k];
        out[static_cast<size_t>(i)] = v[static_cast<size_t>(ravel(ii, s))];
    }
    return out;
}

// Builds the node's inputs (in the case's layout), runs the op and compares every output.
void check_case(const RnnCase& c, uint32_t seed) {
    SCOPED_TRACE(std::string(c.op) + ": " + c.what);
    const int64_t T = c.steps, B = c.batch, I = c.input, H = c.hidden, G = gates_of(c.op);
    const int64_t D = c.direction == "bidirectional" ? 2 : 1;
    RefData in;
    in.x = random_floats(static_cast<size_t>(T * B * I), seed, -2.0f, 2.0f);
    in.w = random_floats(static_cast<size_t>(D * G * H * I), seed + 1);
    in.r = random_floats(static_cast<size_t>(D * G * H * H), seed + 2);
    in.b = random_floats(static_cast<size_t>(D * 2 * G * H), seed + 3);
    in.h0 = random_floats(static_cast<size_t>(D * B * H), seed + 4);
    in.c0 = random_floats(static_cast<size_t>(D * B * H), seed + 5, -2.0f, 2.0f);
    in.p = random_floats(static_cast<size_t>(D * 3 * H), seed + 6);
    const RefOut want = reference(c, in);

    const bool bw = c.layout == 1;
    Shape xs;
    const TT x = bw ? f32(Shape{B, T, I}, transpose_ref(in.x, {T, B, I}, {1, 0, 2}, &xs)) : f32({T, B, I}, in.x);
    const TT w = konst(f32({D, G * H, I}, in.w));
    const TT r = konst(f32({D, G * H, H}, in.r));
    const TT b = konst(f32({D, 2 * G * H}, in.b));
    Shape ss;
    auto state = [&](const std::vector<float>& v) {
        return bw ? f32(Shape{B, D, H}, transpose_ref(v, {D, B, H}, {1, 0, 2}, &ss)) : f32({D, B, H}, v);
    };
    const TT h0 = state(in.h0), c0 = state(in.c0);
    const TT p = konst(f32({D, 3 * H}, in.p));
    TT lens = i32({B}, c.lens.empty() ? std::vector<int32_t>(static_cast<size_t>(B), 0) : c.lens, c.lens_const);

    std::vector<const TT*> inputs = {
        &x, &w, &r, c.bias ? &b : nullptr, c.lens.empty() ? nullptr : &lens, c.h0 ? &h0 : nullptr};
    if (c.op == "LSTM") {
        inputs.push_back(c.c0 ? &c0 : nullptr);
        inputs.push_back(c.peep ? &p : nullptr);
    }
    while (!inputs.empty() && !inputs.back()) inputs.pop_back();

    A attrs;
    attrs.i("hidden_size", H).s("direction", c.direction);
    if (c.layout) attrs.i("layout", c.layout);
    if (c.clip > 0) attrs.f("clip", c.clip);
    if (c.input_forget) attrs.i("input_forget", c.input_forget);
    if (c.linear_before_reset) attrs.i("linear_before_reset", c.linear_before_reset);
    if (!c.activations.empty()) attrs.s("activations", c.activations);
    if (!c.alphas.empty()) attrs.fs("activation_alpha", c.alphas);
    if (!c.betas.empty()) attrs.fs("activation_beta", c.betas);

    const std::vector<TT> outs = run_op(c.op, attrs, inputs, c.outputs);
    ASSERT_EQ(outs.size(), c.outputs);
    const double tol = 2e-5;
    if (bw) {
        ASSERT_EQ(outs[0].shape, (Shape{B, T, D, H}));
        expect_near_all(outs[0].f(), transpose_d(want.y, {T, D, B, H}, {2, 0, 1, 3}), tol, "Y");
    } else {
        ASSERT_EQ(outs[0].shape, (Shape{T, D, B, H}));
        expect_near_all(outs[0].f(), want.y, tol, "Y");
    }
    const Shape state_shape = bw ? Shape{B, D, H} : Shape{D, B, H};
    for (size_t k = 1; k < c.outputs; ++k) {
        ASSERT_EQ(outs[k].shape, state_shape);
        const std::vector<double>& s = k == 1 ? want.yh : want.yc;
        expect_near_all(outs[k].f(), bw ? transpose_d(s, {D, B, H}, {1, 0, 2}) : s, tol, k == 1 ? "Y_h" : "Y_c");
    }
}

TEST(OpsLstm, MatchesReferenceAcrossConfigurations) {
    std::vector<RnnCase> cases;
    RnnCase c;
    c.op = "LSTM";
    c.outputs = 3;
    c.what = "forward, bias, all outputs";
    cases.push_back(c);

    c = RnnCase{};
    c.op = "LSTM", c.direction = "bidirectional", c.h0 = c.c0 = c.peep = true, c.outputs = 3;
    c.what = "bidirectional, initial states, peepholes";
    cases.push_back(c);

    c = RnnCase{};
    c.op = "LSTM", c.direction = "reverse", c.bias = false, c.steps = 5, c.outputs = 1;
    c.what = "reverse, no bias, only Y (c_t parked in Y)";
    cases.push_back(c);

    c = RnnCase{};
    c.op = "LSTM", c.direction = "bidirectional", c.layout = 1, c.h0 = true, c.c0 = true, c.outputs = 2;
    c.what = "layout 1, bidirectional, Y and Y_h";
    cases.push_back(c);

    c = RnnCase{};
    c.op = "LSTM", c.clip = 0.6f, c.input_forget = 1, c.peep = true, c.c0 = true, c.outputs = 3;
    c.activations = "HardSigmoid,LeakyRelu,Affine";
    c.alphas = {0.3f, 0.05f, 0.7f}, c.betas = {0.4f, 0.1f};
    c.ref_acts = {{"HardSigmoid", 0.3, 0.4}, {"LeakyRelu", 0.05}, {"Affine", 0.7, 0.1}};
    c.what = "clip, input_forget, parameterised activations";
    cases.push_back(c);

    c = RnnCase{};
    c.op = "LSTM", c.direction = "bidirectional", c.batch = 3, c.steps = 5, c.peep = true, c.h0 = true;
    c.lens = {5, 0, 3}, c.outputs = 3;
    c.what = "runtime sequence_lens with a 0 and a short row";
    cases.push_back(c);

    c = RnnCase{};
    c.op = "LSTM", c.steps = 1, c.batch = 1, c.input = 5, c.hidden = 7, c.h0 = true, c.outputs = 2;
    c.what = "one step";
    cases.push_back(c);

    c = RnnCase{};
    c.op = "LSTM", c.direction = "bidirectional", c.steps = 3, c.outputs = 3;
    c.activations = "Relu,Tanh,Sigmoid,Sigmoid,Softsign,ScaledTanh";
    c.alphas = {1.5f}, c.betas = {0.5f};
    c.ref_acts = {{"Relu"}, {"Tanh"}, {"Sigmoid"}, {"Sigmoid"}, {"Softsign"}, {"ScaledTanh", 1.5, 0.5}};
    c.what = "activations per direction";
    cases.push_back(c);

    uint32_t seed = 100;
    for (const RnnCase& k : cases) check_case(k, seed += 10);
}

TEST(OpsGru, MatchesReferenceAcrossConfigurations) {
    std::vector<RnnCase> cases;
    RnnCase c;
    c.op = "GRU", c.outputs = 2;
    c.what = "forward, bias, Y and Y_h";
    cases.push_back(c);

    c = RnnCase{};
    c.op = "GRU", c.linear_before_reset = 1, c.direction = "bidirectional", c.h0 = true, c.outputs = 2;
    c.what = "linear_before_reset, bidirectional, initial_h";
    cases.push_back(c);

    c = RnnCase{};
    c.op = "GRU", c.direction = "reverse", c.h0 = true, c.steps = 5, c.outputs = 1;
    c.what = "reverse, only Y (last step on the stack)";
    cases.push_back(c);

    c = RnnCase{};
    c.op = "GRU", c.layout = 1, c.h0 = true, c.bias = false, c.lens = {4, 2}, c.lens_const = true;
    c.outputs = 1;
    c.what = "layout 1, constant sequence_lens, no bias, only Y";
    cases.push_back(c);

    c = RnnCase{};
    c.op = "GRU", c.clip = 0.5f, c.h0 = true, c.outputs = 2, c.linear_before_reset = 1;
    c.activations = "Softsign,Elu";
    c.alphas = {0.8f};
    c.ref_acts = {{"Softsign"}, {"Elu", 0.8}};
    c.what = "clip and activations";
    cases.push_back(c);

    c = RnnCase{};
    c.op = "GRU", c.direction = "bidirectional", c.layout = 1, c.h0 = true, c.lens = {1, 4, 3};
    c.batch = 3, c.outputs = 2;
    c.activations = "Sigmoid,Softplus";
    c.ref_acts = {{"Sigmoid"}, {"Softplus"}};
    c.what = "bidirectional, layout 1, runtime sequence_lens, one set of activations for both directions";
    cases.push_back(c);

    uint32_t seed = 300;
    for (const RnnCase& k : cases) check_case(k, seed += 10);
}

TEST(OpsRnn, MatchesReferenceAcrossConfigurations) {
    std::vector<RnnCase> cases;
    RnnCase c;
    c.op = "RNN", c.outputs = 2;
    c.what = "forward, bias";
    cases.push_back(c);

    c = RnnCase{};
    c.op = "RNN", c.direction = "bidirectional", c.layout = 1, c.h0 = true, c.outputs = 2;
    c.activations = "Relu,ThresholdedRelu", c.alphas = {0.1f};
    c.ref_acts = {{"Relu"}, {"ThresholdedRelu", 0.1}};
    c.what = "bidirectional, layout 1, activations";
    cases.push_back(c);

    c = RnnCase{};
    c.op = "RNN", c.direction = "reverse", c.bias = false, c.clip = 0.3f, c.lens = {2, 4}, c.outputs = 1;
    c.what = "reverse, clip, runtime sequence_lens";
    cases.push_back(c);

    uint32_t seed = 500;
    for (const RnnCase& k : cases) check_case(k, seed += 10);
}

// A rank-3 f32 tensor with a shape only (create() never reads a runtime input's data).
TT shape_only(Shape s) {
    TT t;
    t.shape = std::move(s);
    return t;
}

TEST(OpsRnn, RefusesWhatItCannotRun) {
    const TT x = shape_only({2, 1, 3});
    const TT w = shape_only({1, 16, 3}), r = shape_only({1, 16, 4});
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "activation 'gelu'", "LSTM",
                        A().i("hidden_size", 4).s("activations", "Sigmoid,Gelu,Tanh"), {&x, &w, &r}, 1);
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "expected 3", "LSTM",
                        A().i("hidden_size", 4).s("activations", "Sigmoid,Tanh"), {&x, &w, &r}, 1);
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "input W", "LSTM", A().i("hidden_size", 5), {&x, &w, &r}, 1);
    const TT r5 = shape_only({1, 16, 5});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "input R", "LSTM", A().i("hidden_size", 4), {&x, &w, &r5}, 1);
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "input W", "LSTM",
                        A().i("hidden_size", 4).s("direction", "bidirectional"), {&x, &w, &r}, 1);
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "clip", "LSTM", A().f("clip", -1.0f), {&x, &w, &r}, 1);
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "layout", "LSTM", A().i("layout", 2), {&x, &w, &r}, 1);
    const TT rnn_w = shape_only({1, 4, 3}), rnn_r = shape_only({1, 4, 4});
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "direction", "RNN", A().s("direction", "both"), {&x, &rnn_w, &rnn_r},
                        1);
    const TT bad_lens = i32({1}, {3}, true);
    EXPECT_CREATE_FAILS(KES_ERR_INVALID_ARGUMENT, "sequence_lens", "LSTM", A(), {&x, &w, &r, nullptr, &bad_lens}, 1);
    const TT x64 = make_tensor<double>(KES_F64, {2, 1, 3}, std::vector<double>(6), false);
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "f64", "LSTM", A(), {&x64, &w, &r}, 1);

    // GRU linear_before_reset 0 needs room for r ⊙ h beside Y beyond kMaxStackHidden units.
    const int64_t big = 2049;
    const TT gw = shape_only({1, 3 * big, 3}), gr = shape_only({1, 3 * big, big});
    EXPECT_CREATE_FAILS(KES_ERR_UNSUPPORTED, "Y_h", "GRU", A(), {&x, &gw, &gr}, 1);
    EXPECT_NO_THROW(create_op("GRU", A(), {&x, &gw, &gr}, 2));
    EXPECT_NO_THROW(create_op("GRU", A().i("linear_before_reset", 1), {&x, &gw, &gr}, 1));
}

TEST(OpsRnn, RuntimeSequenceLengthOutOfRangeFails) {
    const TT x = f32({2, 2, 1}, {1, 2, 3, 4});
    const TT w = konst(f32({1, 1, 1}, {0.5f})), r = konst(f32({1, 1, 1}, {0.25f}));
    const TT lens = i32({2}, {2, 3});
    Created c = create_op("RNN", A(), {&x, &w, &r, nullptr, &lens}, 2);
    std::vector<float> y(4), yh(2);
    const void* in[] = {x.bytes.data(), w.bytes.data(), r.bytes.data(), nullptr, lens.bytes.data()};
    void* out[] = {y.data(), yh.data()};
    try {
        c.kernel->run(in, out);
        ADD_FAILURE() << "a length of 3 for 2 steps was accepted";
    } catch (const kes::Error& e) {
        EXPECT_EQ(e.status(), KES_ERR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(e.what()).find("sequence_lens[1]"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace kes_test
