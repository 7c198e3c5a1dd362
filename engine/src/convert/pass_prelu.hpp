// pass_prelu.hpp — rewrites TFLite's spelled-out PReLU into one PRelu node (a converter pass, see
// passes.hpp for the pipeline).
//
// TensorFlow models written before PReLU was a TFLite builtin (MobileFaceNet among them) compute it as
//     y = relu(x) + c · (x − |x|)            = relu(x) + 2c · min(x, 0)
// with c = α/2 already folded, or as relu(x) + (c · (x − |x|)) · k with a scalar k (usually 0.5).
// The pass matches Relu(x), Abs(x), Sub(x, Abs), Mul(c, Sub) [, Mul(·, k)], Add(Relu, Mul) where c
// (and k) are f32 constants, every intermediate has that one consumer and is no graph output, and
// the slope broadcasts onto x; it replaces them with PRelu(x, slope) with slope = 2·c (·k), keeping
// the Add's output tensor. Sub(|x|, x) is matched too (slope = −2·c). MTCNN's TFLite files spell it
//     y = relu(x) + c · (−relu(−x))          = relu(x) + c · min(x, 0)
// (Relu, Neg, Relu, Neg, Mul, Add): slope = c. Needs inferred shapes.
#pragma once

#include "passes.hpp"

namespace kes::ir {

PassStats fuse_prelu_pattern(Graph& g);

}  // namespace kes::ir
