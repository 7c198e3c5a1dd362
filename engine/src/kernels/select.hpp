// select.hpp — the kernel registry's second half: which implementation runs a node.
//
// The op registry (op.hpp, kernels/ref/) gives every node its reference kernel: validation, shape
// inference and the oracle implementation. When a model loads, select_kernel() offers each node to the
// fast kernels of its op (kernels/common/, over the per-ISA microkernel table of this CPU); the first
// that covers the node replaces the reference kernel. The converter never calls it: constant folding
// runs the reference kernels, so a converted file does not depend on the machine that converted it.
#pragma once

#include <memory>
#include <vector>

#include "../op.hpp"

namespace kes {

namespace kernels {
struct Microkernels;
}

// The fast kernel for `node` (already validated: `outputs` are its inferred outputs), or nullptr.
// KES_KERNELS=reference in the environment turns every fast kernel off (to compare against the
// oracle, e.g. with kes-compare); KES_CPU_DISABLE picks a slower microkernel table.
std::unique_ptr<Kernel> select_kernel(const NodeDesc& node, const std::vector<TensorDesc>& outputs);

// The same over one named microkernel table (one of kernels::microkernels_available()), whatever
// KES_KERNELS says: tests and benchmarks run every table of this CPU in one process this way.
std::unique_ptr<Kernel> select_kernel(const NodeDesc& node, const std::vector<TensorDesc>& outputs,
                                      const kernels::Microkernels& table);

// The microkernel table fast kernels created now use ("avx512", "avx2", "neon", "scalar"), or
// "reference" when KES_KERNELS=reference.
const char* kernel_set_name();

}  // namespace kes
