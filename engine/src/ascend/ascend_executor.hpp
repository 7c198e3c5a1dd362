// ascend_executor.hpp — the Ascend backend behind executor.hpp: a .om model on the NPU through AscendCL.
//
// The sdk loads AscendCL at run time and owns aclInit, the device and Kestrel's context (kes/ascend.hpp);
// this executor only loads models and runs them, every call under acl::ScopedContext. On a machine (or
// a build, or KES_BACKEND=cpu) without the runtime, loading a .om fails with KES_ERR_UNSUPPORTED saying
// why, and .kom files still run on the CPU executor: the app's code is the same either way.
//
// What the app sees of a .om (kestrel/engine.h is unchanged):
//   - Sizes: aclmdlQuerySizeFromMem. *_with_mem loads take caller work and weight memory, which must
//     then be DEVICE memory (kes_mem_alloc(KES_MEM_DEVICE) or a kes_mem_pool with backend
//     KES_MEM_DEVICE): the NPU cannot use host memory. Without caller memory the executor allocates
//     both with kes_mem_alloc(KES_MEM_DEVICE) (aclrtMalloc).
//   - Inputs and outputs: aclmdlGetDesc, at the largest gear, without the runtime's hidden inputs
//     (ascend_mbatch_shape_data, ascend_dynamic_aipp_data). Batch gears and image sizes come from
//     aclmdlGetDynamicBatch / aclmdlGetDynamicHW when the loaded library has them (resolved here: the
//     sdk's table does not carry them).
//   - An input of dtype UINT8 on a .om is a static-AIPP input (ATC's --insert_op_conf makes the input
//     the raw image buffer): kes_model_execute_images feeds it the images' bytes, AIPP runs inside the
//     model on the NPU. Its descriptor is [batch, bytes per image] U8 ND. The aipp_op text is compiled
//     into the model and AscendCL does not return it: kes_model_input_aipp reports the mode only.
//   - Dynamic AIPP (a hidden ascend_dynamic_aipp_data input): the image input takes the images' bytes
//     (max_src_image_size per item) and the parameters of kes_model_context_set_dynamic_aipp go through
//     aclmdlCreateAIPP, the aclmdlSetAIPP* setters and aclmdlSetInputAIPP at every execution (optional
//     symbols: a runtime without them gives KES_ERR_UNSUPPORTED naming them).
//   - Contexts: one stream, device buffers for every input and output (hidden ones included) and the
//     two datasets, made once; a context's work memory, when the caller gives it, holds those device
//     buffers (kes_model_context_io_bytes is not public: the size asked is in the error message).
//   - Synchronisation waits KES_ASCEND_SYNC_TIMEOUT_MS milliseconds (default 60000; -1 forever) where
//     the runtime has aclrtSynchronizeStreamWithTimeout, else without limit.
//   - Per-layer profile and the node observer: KES_ERR_UNSUPPORTED (the NPU reports no per-layer times
//     through AscendCL; msprof does, outside the app).
#pragma once

#include "../executor.hpp"

namespace kes {

const ExecutorFactory& ascend_executor_factory();

}  // namespace kes
