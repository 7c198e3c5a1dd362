// rnn.cpp — the recurrent layers LSTM, GRU and RNN (ONNX opset 14 semantics, f32).
//
// Choices:
// - direction forward / reverse / bidirectional; layout 0 (X [T, B, I], Y [T, D, B, H], states [D, B, H])
//   and 1 (X [B, T, I], Y [B, T, D, H], states [B, D, H]). hidden_size defaults to R's last dim.
// - activations: Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu,
//   Softsign, Softplus (any case). ONNX's string list arrives as one comma-separated String attribute
//   "activations" (onnx_import.cpp: Kestrel attributes have no string lists). Either one set per
//   direction or, bidirectional, one set that both directions use. activation_alpha/_beta are taken in
//   list order by the functions that have parameters; missing ones default as in ONNX Runtime
//   (LeakyRelu 0.01, HardSigmoid 0.2/0.5, Elu 1.0, otherwise 0). ThresholdedRelu is x >= alpha ? x : 0
//   (the RNN operators' own definition).
// - clip (> 0) bounds every gate's pre-activation, peepholes included, as ONNX Runtime; input_forget
//   makes f = 1 - i. GRU linear_before_reset 0 and 1.
// - sequence_lens (i32 or i64, constant or not): each batch row runs its first len steps (reverse:
//   len-1 down to 0); Y is zero from step len on, and a row of length 0 has zero Y_h / Y_c (ONNX Runtime;
//   ONNX leaves it open). A length outside [0, T] fails: at create() when constant, else in run().
// - The dot products accumulate in float (the reference kernels' habit); the weights may be runtime
//   tensors.
//
// State without scratch (run() may not allocate, and contexts of one model run a kernel concurrently, so
// nothing may live in the kernel): Y always has memory — an ONNX output left out by name is still a
// tensor in Kestrel (onnx_import.cpp names it), trailing ones excepted and Y is output 0. So h_{t-1} is
// read from Y's previous step, and what a step needs beside it goes into Y's next step, which is not
// yet written: LSTM's c_t (when Y_c is absent) and GRU's r ⊙ h_{t-1} (linear_before_reset 0; every
// h_t[j] needs all of it). The last step has no next slot: there c_t is only needed in Y_c, and
// r ⊙ h_{t-1} goes into Y_h (overwritten by the final copy), an unused Y step past a short sequence, or,
// for a GRU that outputs only Y, a stack array — hence that one case is limited to kMaxStackHidden
// units (KES_ERR_UNSUPPORTED above).
#include <array>
#include <cctype>
#include <cmath>
#include <cstring>

#include "op_util.hpp"
#include "ops.hpp"

namespace kes {

namespace {

// GRU with linear_before_reset 0 and no Y_h output: 8 KiB of stack for r ⊙ h_{t-1} at the last step.
constexpr int64_t kMaxStackHidden = 2048;

enum class Cell : uint8_t { Rnn, Gru, Lstm };

enum class ActKind : uint8_t {
    Relu,
    Tanh,
    Sigmoid,
    Affine,
    LeakyRelu,
    ThresholdedRelu,
    ScaledTanh,
    HardSigmoid,
    Elu,
    Softsign,
    Softplus
};

struct ActFn {
    ActKind kind = ActKind::Tanh;
    float alpha = 0.0f, beta = 0.0f;

    float operator()(float x) const {
        switch (kind) {
            case ActKind::Relu: return x > 0.0f ? x : 0.0f;
            case ActKind::Tanh: return std::tanh(x);
            case ActKind::Sigmoid: return 1.0f / (1.0f + std::exp(-x));
            case ActKind::Affine: return alpha * x + beta;
            case ActKind::LeakyRelu: return x >= 0.0f ? x : alpha * x;
            case ActKind::ThresholdedRelu: return x >= alpha ? x : 0.0f;
            case ActKind::ScaledTanh: return alpha * std::tanh(beta * x);
            case ActKind::HardSigmoid: return std::fmin(std::fmax(alpha * x + beta, 0.0f), 1.0f);
            case ActKind::Elu: return x >= 0.0f ? x : alpha * (std::exp(x) - 1.0f);
            case ActKind::Softsign: return x / (1.0f + std::fabs(x));
            case ActKind::Softplus: return x > 20.0f ? x : std::log1p(std::exp(x));  // exp overflows past ~88
        }
        return x;
    }
};

struct ActInfo {
    const char* name;
    ActKind kind;
    int params;  // how many of alpha, beta it takes
    float alpha, beta;
};
constexpr ActInfo kActs[] = {
    {"relu", ActKind::Relu, 0, 0.0f, 0.0f},
    {"tanh", ActKind::Tanh, 0, 0.0f, 0.0f},
    {"sigmoid", ActKind::Sigmoid, 0, 0.0f, 0.0f},
    {"affine", ActKind::Affine, 2, 0.0f, 0.0f},
    {"leakyrelu", ActKind::LeakyRelu, 1, 0.01f, 0.0f},
    {"thresholdedrelu", ActKind::ThresholdedRelu, 1, 0.0f, 0.0f},
    {"scaledtanh", ActKind::ScaledTanh, 2, 0.0f, 0.0f},
    {"hardsigmoid", ActKind::HardSigmoid, 2, 0.2f, 0.5f},
    {"elu", ActKind::Elu, 1, 1.0f, 0.0f},
    {"softsign", ActKind::Softsign, 0, 0.0f, 0.0f},
    {"softplus", ActKind::Softplus, 0, 0.0f, 0.0f},
};

std::vector<std::string> split_names(const std::string& s) {
    std::vector<std::string> names;
    std::string cur;
    for (char ch : s) {
        if (ch == ',') {
            names.push_back(cur);
            cur.clear();
        } else if (ch != ' ') {
            cur += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        }
    }
    names.push_back(cur);
    return names;
}

constexpr int kMaxActs = 3;  // per direction: LSTM f, g, h; GRU f, g; RNN f

// The gates of one cell type: their count in W/R/B and the activation defaults.
struct CellInfo {
    const char* op;
    int gates;
    int acts;
    ActKind defaults[kMaxActs];
};
CellInfo cell_info(Cell cell) {
    switch (cell) {
        case Cell::Lstm: return {"LSTM", 4, 3, {ActKind::Sigmoid, ActKind::Tanh, ActKind::Tanh}};
        case Cell::Gru: return {"GRU", 3, 2, {ActKind::Sigmoid, ActKind::Tanh, ActKind::Tanh}};
        case Cell::Rnn: break;
    }
    return {"RNN", 1, 1, {ActKind::Tanh, ActKind::Tanh, ActKind::Tanh}};
}

struct Geom {
    Cell cell = Cell::Rnn;
    int64_t steps = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
    bool reverse = false;  // direction "reverse" (dirs == 1)
    bool has_clip = false;
    float clip = 0.0f;
    bool input_forget = false;
    bool linear_before_reset = false;
    ActFn act[2][kMaxActs];
    // element strides
    int64_t x_t = 0, x_b = 0;
    int64_t y_t = 0, y_d = 0, y_b = 0;
    int64_t s_d = 0, s_b = 0;  // Y_h, Y_c, initial_h, initial_c
    bool has_bias = false, has_seq = false, has_h0 = false, has_c0 = false, has_peep = false;
    bool seq_i64 = false;
    size_t outputs = 1;
};

inline float clipped(const Geom& g, float x) {
    if (!g.has_clip) return x;
    return x > g.clip ? g.clip : (x < -g.clip ? -g.clip : x);
}

inline float dot(const float* a, const float* b, int64_t n) {
    float acc = 0.0f;
    for (int64_t k = 0; k < n; ++k) acc += a[k] * b[k];
    return acc;
}

// One direction's weights, already offset to that direction.
struct DirWeights {
    const float* w = nullptr;     // [gates*H, I]
    const float* r = nullptr;     // [gates*H, H]
    const float* wb = nullptr;    // [gates*H] or null
    const float* rb = nullptr;    // [gates*H] or null
    const float* peep = nullptr;  // [3H] (i, o, f) or null
    const ActFn* act = nullptr;
};

// Pre-activation of gate `gate`, unit j: W x + R h_prev (+ biases). h_prev null means zeros.
inline float gate_input(const Geom& g, const DirWeights& dw, int gate, int64_t j, const float* x, const float* h_prev) {
    const int64_t row = gate * g.hidden + j;
    float v = dot(dw.w + row * g.input, x, g.input);
    if (h_prev) v += dot(dw.r + row * g.hidden, h_prev, g.hidden);
    if (dw.wb) v += dw.wb[row] + dw.rb[row];
    return v;
}

// LSTM step. c_prev may be null (zeros) and may equal h_out (c_{t-1} parked in this step's Y slot):
// unit j reads c_prev[j] before writing h_out[j]. c_out null: c_t is not needed after this step.
void lstm_step(const Geom& g, const DirWeights& dw, const float* x, const float* h_prev, const float* c_prev,
               float* h_out, float* c_out) {
    const ActFn& f = dw.act[0];
    const ActFn& gg = dw.act[1];
    const ActFn& h = dw.act[2];
    const int64_t H = g.hidden;
    for (int64_t j = 0; j < H; ++j) {
        const float cp = c_prev ? c_prev[j] : 0.0f;
        float xi = gate_input(g, dw, 0, j, x, h_prev);
        float xo = gate_input(g, dw, 1, j, x, h_prev);
        float xc = gate_input(g, dw, 3, j, x, h_prev);
        if (dw.peep) xi += dw.peep[j] * cp;
        const float i = f(clipped(g, xi));
        float fg;
        if (g.input_forget) {
            fg = 1.0f - i;
        } else {
            float xf = gate_input(g, dw, 2, j, x, h_prev);
            if (dw.peep) xf += dw.peep[2 * H + j] * cp;
            fg = f(clipped(g, xf));
        }
        const float c = fg * cp + i * gg(clipped(g, xc));
        if (dw.peep) xo += dw.peep[H + j] * c;
        const float o = f(clipped(g, xo));
        h_out[j] = o * h(c);
        if (c_out) c_out[j] = c;
    }
}

// GRU step. rh: room for r ⊙ h_prev (linear_before_reset 0 with h_prev given), else unused.
void gru_step(const Geom& g, const DirWeights& dw, const float* x, const float* h_prev, float* rh, float* h_out) {
    const ActFn& f = dw.act[0];
    const ActFn& gg = dw.act[1];
    const int64_t H = g.hidden;
    if (!g.linear_before_reset && h_prev) {
        for (int64_t k = 0; k < H; ++k) rh[k] = f(clipped(g, gate_input(g, dw, 1, k, x, h_prev))) * h_prev[k];
    }
    for (int64_t j = 0; j < H; ++j) {
        const float z = f(clipped(g, gate_input(g, dw, 0, j, x, h_prev)));
        const int64_t row = 2 * H + j;
        float xn = dot(dw.w + row * g.input, x, g.input);
        if (dw.wb) xn += dw.wb[row];
        if (g.linear_before_reset) {
            const float r = f(clipped(g, gate_input(g, dw, 1, j, x, h_prev)));
            float rn = h_prev ? dot(dw.r + row * H, h_prev, H) : 0.0f;
            if (dw.rb) rn += dw.rb[row];
            xn += r * rn;
        } else {
            if (h_prev) xn += dot(dw.r + row * H, rh, H);
            if (dw.rb) xn += dw.rb[row];
        }
        const float n = gg(clipped(g, xn));
        const float hp = h_prev ? h_prev[j] : 0.0f;
        h_out[j] = (1.0f - z) * n + z * hp;
    }
}

void rnn_step(const Geom& g, const DirWeights& dw, const float* x, const float* h_prev, float* h_out) {
    for (int64_t j = 0; j < g.hidden; ++j) h_out[j] = dw.act[0](clipped(g, gate_input(g, dw, 0, j, x, h_prev)));
}

// The GRU's last step when no output has room for r ⊙ h_prev (see the top of this file).
void gru_step_on_stack(const Geom& g, const DirWeights& dw, const float* x, const float* h_prev, float* h_out) {
    std::array<float, kMaxStackHidden> rh;
    gru_step(g, dw, x, h_prev, rh.data(), h_out);
}

void run_rnn(const Geom& g, const void* const* in, void* const* out) {
    const float* px = in_as<float>(in, 0);
    const float* pw = in_as<float>(in, 1);
    const float* pr = in_as<float>(in, 2);
    const float* pb = g.has_bias ? in_as<float>(in, 3) : nullptr;
    const float* ph0 = g.has_h0 ? in_as<float>(in, 5) : nullptr;
    const float* pc0 = g.has_c0 ? in_as<float>(in, 6) : nullptr;
    const float* pp = g.has_peep ? in_as<float>(in, 7) : nullptr;
    float* py = out_as<float>(out, 0);
    float* pyh = g.outputs > 1 ? out_as<float>(out, 1) : nullptr;
    float* pyc = g.cell == Cell::Lstm && g.outputs > 2 ? out_as<float>(out, 2) : nullptr;
    const CellInfo info = cell_info(g.cell);
    const int64_t H = g.hidden, G = info.gates;

    // Lengths are checked before anything is written.
    auto length = [&](int64_t b) -> int64_t {
        if (!g.has_seq) return g.steps;
        return g.seq_i64 ? in_as<int64_t>(in, 4)[b] : in_as<int32_t>(in, 4)[b];
    };
    for (int64_t b = 0; b < g.batch; ++b) {
        const int64_t len = length(b);
        if (len < 0 || len > g.steps)
            fail(KES_ERR_INVALID_ARGUMENT, "%s: sequence_lens[%lld] is %lld; must be in [0, %lld]", info.op,
                 static_cast<long long>(b), static_cast<long long>(len), static_cast<long long>(g.steps));
    }

    for (int64_t d = 0; d < g.dirs; ++d) {
        const bool reverse = g.reverse || d == 1;
        DirWeights dw;
        dw.w = pw + d * G * H * g.input;
        dw.r = pr + d * G * H * H;
        if (pb) dw.wb = pb + d * 2 * G * H, dw.rb = dw.wb + G * H;
        if (pp) dw.peep = pp + d * 3 * H;
        dw.act = g.act[d];
        for (int64_t b = 0; b < g.batch; ++b) {
            const int64_t len = length(b);
            auto y_at = [&](int64_t t) { return py + t * g.y_t + d * g.y_d + b * g.y_b; };
            const int64_t state = d * g.s_d + b * g.s_b;
            float* yh = pyh ? pyh + state : nullptr;
            float* yc = pyc ? pyc + state : nullptr;
            const float* h_prev = ph0 ? ph0 + state : nullptr;
            const float* c_prev = pc0 ? pc0 + state : nullptr;
            for (int64_t s = 0; s < len; ++s) {
                const int64_t t = reverse ? len - 1 - s : s;
                const bool last = s + 1 == len;
                float* next = last ? nullptr : y_at(reverse ? t - 1 : t + 1);  // free until the next step
                float* h_out = y_at(t);
                const float* x = px + t * g.x_t + b * g.x_b;
                if (g.cell == Cell::Lstm) {
                    float* c_out = yc ? yc : next;
                    lstm_step(g, dw, x, h_prev, c_prev, h_out, c_out);
                    c_prev = c_out;
                } else if (g.cell == Cell::Gru) {
                    float* rh = next ? next : (yh ? yh : (len < g.steps ? y_at(len) : nullptr));
                    if (rh || g.linear_before_reset || !h_prev)
                        gru_step(g, dw, x, h_prev, rh, h_out);
                    else
                        gru_step_on_stack(g, dw, x, h_prev, h_out);
                } else {
                    rnn_step(g, dw, x, h_prev, h_out);
                }
                h_prev = h_out;
            }
            for (int64_t t = len; t < g.steps; ++t) std::memset(y_at(t), 0, static_cast<size_t>(H) * sizeof(float));
            if (len == 0) {
                if (yh) std::memset(yh, 0, static_cast<size_t>(H) * sizeof(float));
                if (yc) std::memset(yc, 0, static_cast<size_t>(H) * sizeof(float));
            } else if (yh) {
                std::memcpy(yh, h_prev, static_cast<size_t>(H) * sizeof(float));
            }
        }
    }
}

void require_shape(const TensorDesc& t, const Shape& want, const char* what) {
    if (t.shape != want)
        fail(KES_ERR_INVALID_ARGUMENT, "%s has shape %s; expected %s", what, shape_string(t.shape).c_str(),
             shape_string(want).c_str());
}

void parse_activations(const NodeDesc& node, const CellInfo& info, Geom& g) {
    for (int d = 0; d < 2; ++d)
        for (int k = 0; k < kMaxActs; ++k) g.act[d][k].kind = info.defaults[k];
    if (!node.attrs.has("activations")) return;
    const std::vector<std::string> names = split_names(node.attrs.require_string("activations"));
    const size_t per_dir = static_cast<size_t>(info.acts);
    if (names.size() != per_dir * static_cast<size_t>(g.dirs) && !(g.dirs == 2 && names.size() == per_dir))
        fail(KES_ERR_INVALID_ARGUMENT, "attribute 'activations' lists %zu functions; expected %zu (%zu per direction)",
             names.size(), per_dir * static_cast<size_t>(g.dirs), per_dir);
    const std::vector<float> alphas = node.attrs.get_floats("activation_alpha");
    const std::vector<float> betas = node.attrs.get_floats("activation_beta");
    size_t next_alpha = 0, next_beta = 0;
    for (size_t k = 0; k < names.size(); ++k) {
        const ActInfo* found = nullptr;
        for (const ActInfo& a : kActs)
            if (names[k] == a.name) found = &a;
        if (!found)
            fail(KES_ERR_UNSUPPORTED,
                 "activation '%s' is not supported (Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, "
                 "ScaledTanh, HardSigmoid, Elu, Softsign, Softplus)",
                 names[k].c_str());
        ActFn fn{found->kind, found->alpha, found->beta};
        if (found->params >= 1 && next_alpha < alphas.size()) fn.alpha = alphas[next_alpha++];
        if (found->params >= 2 && next_beta < betas.size()) fn.beta = betas[next_beta++];
        g.act[k / per_dir][k % per_dir] = fn;
    }
    if (names.size() == per_dir)
        for (size_t k = 0; k < per_dir; ++k) g.act[1][k] = g.act[0][k];
}

std::unique_ptr<Kernel> create_recurrent(Cell cell, const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    const CellInfo info = cell_info(cell);
    Geom g;
    g.cell = cell;
    g.outputs = node.output_count;
    const TensorDesc& x = *node.inputs[0];
    const TensorDesc& w = *node.inputs[1];
    const TensorDesc& r = *node.inputs[2];
    const TensorDesc* b = node.input(3);
    const TensorDesc* seq = node.input(4);
    const TensorDesc* h0 = node.input(5);
    const TensorDesc* c0 = cell == Cell::Lstm ? node.input(6) : nullptr;
    const TensorDesc* peep = cell == Cell::Lstm ? node.input(7) : nullptr;
    require_dtype(x, KES_F32, "input X");
    require_dtype(w, KES_F32, "input W");
    require_dtype(r, KES_F32, "input R");
    if (x.rank() != 3)
        fail(KES_ERR_INVALID_ARGUMENT, "input X has shape %s; expected rank 3", shape_string(x.shape).c_str());
    if (w.rank() != 3 || r.rank() != 3)
        fail(KES_ERR_INVALID_ARGUMENT, "inputs W %s and R %s must have rank 3", shape_string(w.shape).c_str(),
             shape_string(r.shape).c_str());

    const std::string direction =
        get_choice(node.attrs, "direction", "forward", {"forward", "reverse", "bidirectional"});
    g.dirs = direction == "bidirectional" ? 2 : 1;
    g.reverse = direction == "reverse";
    const int64_t layout = node.attrs.get_int("layout", 0);
    if (layout != 0 && layout != 1)
        fail(KES_ERR_INVALID_ARGUMENT, "attribute 'layout' is %lld; expected 0 or 1", static_cast<long long>(layout));
    g.steps = layout == 0 ? x.shape[0] : x.shape[1];
    g.batch = layout == 0 ? x.shape[1] : x.shape[0];
    g.input = x.shape[2];
    g.hidden = node.attrs.get_int("hidden_size", r.shape[2]);
    if (g.hidden < 1)
        fail(KES_ERR_INVALID_ARGUMENT, "attribute 'hidden_size' is %lld; must be >= 1",
             static_cast<long long>(g.hidden));
    check_geometry("hidden_size", g.hidden, 1);
    const int64_t D = g.dirs, H = g.hidden, G = info.gates;
    require_shape(w, {D, G * H, g.input}, "input W");
    require_shape(r, {D, G * H, H}, "input R");
    if (b) {
        require_dtype(*b, KES_F32, "input B");
        require_shape(*b, {D, 2 * G * H}, "input B");
        g.has_bias = true;
    }
    if (seq) {
        if (seq->dtype != KES_I32 && seq->dtype != KES_I64)
            unsupported_dtype("input sequence_lens", seq->dtype, "i32, i64");
        require_shape(*seq, {g.batch}, "input sequence_lens");
        g.has_seq = true;
        g.seq_i64 = seq->dtype == KES_I64;
        if (seq->is_const())
            for (int64_t len : const_ints(*seq, "input sequence_lens"))
                if (len < 0 || len > g.steps)
                    fail(KES_ERR_INVALID_ARGUMENT, "sequence_lens holds %lld; must be in [0, %lld]",
                         static_cast<long long>(len), static_cast<long long>(g.steps));
    }
    const Shape state = layout == 0 ? Shape{D, g.batch, H} : Shape{g.batch, D, H};
    if (h0) {
        require_dtype(*h0, KES_F32, "input initial_h");
        require_shape(*h0, state, "input initial_h");
        g.has_h0 = true;
    }
    if (c0) {
        require_dtype(*c0, KES_F32, "input initial_c");
        require_shape(*c0, state, "input initial_c");
        g.has_c0 = true;
    }
    if (peep) {
        require_dtype(*peep, KES_F32, "input P");
        require_shape(*peep, {D, 3 * H}, "input P");
        g.has_peep = true;
    }

    if (node.attrs.has("clip")) {
        g.clip = node.attrs.get_float("clip", 0.0f);
        if (!(g.clip > 0.0f)) fail(KES_ERR_INVALID_ARGUMENT, "attribute 'clip' is %g; must be > 0", double(g.clip));
        g.has_clip = true;
    }
    if (cell == Cell::Lstm) {
        const int64_t input_forget = node.attrs.get_int("input_forget", 0);
        if (input_forget != 0 && input_forget != 1)
            fail(KES_ERR_INVALID_ARGUMENT, "attribute 'input_forget' is %lld; expected 0 or 1",
                 static_cast<long long>(input_forget));
        g.input_forget = input_forget == 1;
    }
    if (cell == Cell::Gru) {
        const int64_t lbr = node.attrs.get_int("linear_before_reset", 0);
        if (lbr != 0 && lbr != 1)
            fail(KES_ERR_INVALID_ARGUMENT, "attribute 'linear_before_reset' is %lld; expected 0 or 1",
                 static_cast<long long>(lbr));
        g.linear_before_reset = lbr == 1;
        if (!g.linear_before_reset && g.outputs < 2 && H > kMaxStackHidden)
            fail(KES_ERR_UNSUPPORTED,
                 "GRU with linear_before_reset 0 and hidden_size %lld needs the Y_h output (without it at most %lld "
                 "units are supported)",
                 static_cast<long long>(H), static_cast<long long>(kMaxStackHidden));
    }
    parse_activations(node, info, g);

    if (layout == 0) {
        g.x_t = g.batch * g.input, g.x_b = g.input;
        g.y_t = D * g.batch * H, g.y_d = g.batch * H, g.y_b = H;
        g.s_d = g.batch * H, g.s_b = H;
    } else {
        g.x_b = g.steps * g.input, g.x_t = g.input;
        g.y_b = g.steps * D * H, g.y_t = D * H, g.y_d = H;
        g.s_b = D * H, g.s_d = H;
    }
    outputs[0].dtype = KES_F32;
    outputs[0].shape = layout == 0 ? Shape{g.steps, D, g.batch, H} : Shape{g.batch, g.steps, D, H};
    shape_elements(outputs[0].shape);
    for (size_t k = 1; k < outputs.size(); ++k) {
        outputs[k].dtype = KES_F32;
        outputs[k].shape = state;
    }
    return make_kernel([g](const void* const* in, void* const* out) { run_rnn(g, in, out); });
}

std::unique_ptr<Kernel> create_lstm(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    return create_recurrent(Cell::Lstm, node, outputs);
}
std::unique_ptr<Kernel> create_gru(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    return create_recurrent(Cell::Gru, node, outputs);
}
std::unique_ptr<Kernel> create_rnn(const NodeDesc& node, std::vector<TensorDesc>& outputs) {
    return create_recurrent(Cell::Rnn, node, outputs);
}

}  // namespace

void add_rnn_ops(OpList& ops) {
    ops.push_back({"LSTM", 3, 8, 1, 3, create_lstm});
    ops.push_back({"GRU", 3, 6, 1, 2, create_gru});
    ops.push_back({"RNN", 3, 6, 1, 2, create_rnn});
}

}  // namespace kes
