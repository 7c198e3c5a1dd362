// dtype_codes.cpp — see dtype_codes.hpp.
#include "dtype_codes.hpp"

#include "kes/error.hpp"

namespace kes {

kes_dtype onnx_to_kes_dtype(int64_t onnx_type) {
    switch (onnx_type) {
        case 1: return KES_F32;
        case 2: return KES_U8;
        case 3: return KES_I8;
        case 4: return KES_U16;
        case 5: return KES_I16;
        case 6: return KES_I32;
        case 7: return KES_I64;
        case 9: return KES_BOOL;
        case 10: return KES_F16;
        case 11: return KES_F64;
        case 12: return KES_U32;
        case 13: return KES_U64;
        default: fail(KES_ERR_UNSUPPORTED, "ONNX data type %lld is not supported", static_cast<long long>(onnx_type));
    }
}

int64_t kes_dtype_to_onnx(kes_dtype dtype) {
    switch (dtype) {
        case KES_F32: return 1;
        case KES_U8: return 2;
        case KES_I8: return 3;
        case KES_U16: return 4;
        case KES_I16: return 5;
        case KES_I32: return 6;
        case KES_I64: return 7;
        case KES_BOOL: return 9;
        case KES_F16: return 10;
        case KES_F64: return 11;
        case KES_U32: return 12;
        case KES_U64: return 13;
    }
    fail(KES_ERR_UNSUPPORTED, "dtype %s has no ONNX equivalent", kes_dtype_name(dtype));
}

}  // namespace kes
