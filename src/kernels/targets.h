// Highway target selection for the kernel translation units, and hooks that
// let tests see which target the kernels dispatch to. Not part of kernels.h:
// the ops never need it.
//
// Every foreach_target TU under src/kernels/ includes this header first, so
// all of them compile the same target list: AVX3_DL (with -DHWY_WANT_AVX3_DL
// from src/meson.build), AVX3, AVX2, SSE4 and the SCALAR fallback. SSSE3 is
// dropped to save compile time: a CPU without SSE4 runs the SCALAR code.
#pragma once

#include <cstdint>

#ifndef HWY_DISABLED_TARGETS
#define HWY_DISABLED_TARGETS HWY_SSSE3
#endif

namespace ag::kernels {

// HWY_TARGETS of the kernel TUs (bit set of HWY_* target values).
int64_t compiled_targets();

// The HWY_TARGET that unary/binary (elementwise_target) and sum_to
// (reduce_target), softmax (softmax_target), reduce_dim
// (reduce_dim_target), norm_rows (norm_target) dispatch to under the
// current hwy::SupportedTargets(), including any
// hwy::SetSupportedTargetsForTest mock.
int64_t elementwise_target();
int64_t reduce_target();
int64_t softmax_target();
int64_t reduce_dim_target();
int64_t select_target();  // compare, where, lerp
int64_t norm_target();

}  // namespace ag::kernels
