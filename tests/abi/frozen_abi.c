/*
 * Test 'frozen-abi': the values of the public constants and the layout of the
 * option structs, frozen. abidiff sees neither #define values nor a struct
 * whose change keeps every exported signature, so this file is the record.
 * Compiled at test time (C11 _Static_assert); it has no run-time part.
 *
 * Editing a line here is an ABI decision: constants are append-only and never
 * renumbered; structs only grow at the end (ABI.md, sections 2, 4 and 7).
 * A new constant or field gets a new line.
 */
#include <stddef.h>

#include "ag/ag.h"

#define FROZEN(expr) _Static_assert(expr, #expr)

/* Status codes. */
FROZEN(AG_OK == 0);
FROZEN(AG_ERR_INVALID_ARGUMENT == -1);
FROZEN(AG_ERR_SHAPE == -2);
FROZEN(AG_ERR_DTYPE == -3);
FROZEN(AG_ERR_OUT_OF_MEMORY == -4);
FROZEN(AG_ERR_CONTEXT == -5);
FROZEN(AG_ERR_GRAPH == -6);
FROZEN(AG_ERR_VERSION == -7);
FROZEN(AG_ERR_CALLBACK == -8);
FROZEN(AG_ERR_BUFFER_TOO_SMALL == -9);
FROZEN(AG_ERR_UNSUPPORTED == -10);
FROZEN(AG_ERR_INTERNAL == -11);

/* dtypes and limits. */
FROZEN(AG_F32 == 1);
FROZEN(AG_F64 == 2);
FROZEN(AG_I64 == 3);
FROZEN(AG_BOOL == 4);
FROZEN(AG_MAX_DIMS == 16);

/* Scalar typedefs: fixed width, never C enums. */
FROZEN(sizeof(ag_status) == 4 && (ag_status)-1 < 0);
FROZEN(sizeof(ag_dtype) == 4 && (ag_dtype)-1 < 0);

/* ag_context_options: struct_size, num_threads (0.1, 8 bytes); alloc, free,
 * user, destroy (0.2). */
FROZEN(offsetof(ag_context_options, struct_size) == 0);
FROZEN(offsetof(ag_context_options, num_threads) == 4);
FROZEN(offsetof(ag_context_options, alloc) == 8);
FROZEN(offsetof(ag_context_options, free) == 8 + sizeof(void *));
FROZEN(offsetof(ag_context_options, user) == 8 + 2 * sizeof(void *));
FROZEN(offsetof(ag_context_options, destroy) == 8 + 3 * sizeof(void *));
FROZEN(offsetof(ag_context_options, enqueue_task) == 8 + 4 * sizeof(void *));
FROZEN(offsetof(ag_context_options, finish_task) == 8 + 5 * sizeof(void *));
FROZEN(offsetof(ag_context_options, task_user) == 8 + 6 * sizeof(void *));
FROZEN(offsetof(ag_context_options, worker_count) == 8 + 7 * sizeof(void *));
FROZEN(offsetof(ag_context_options, reserved) == 12 + 7 * sizeof(void *));
FROZEN(sizeof(ag_context_options) == 16 + 7 * sizeof(void *));

/* ag_backward_options: struct_size, retain_graph, create_graph, num_inputs, inputs. */
FROZEN(offsetof(ag_backward_options, struct_size) == 0);
FROZEN(offsetof(ag_backward_options, retain_graph) == 4);
FROZEN(offsetof(ag_backward_options, create_graph) == 8);
FROZEN(offsetof(ag_backward_options, num_inputs) == 12);
FROZEN(offsetof(ag_backward_options, inputs) == 16);
FROZEN(sizeof(ag_backward_options) == 16 + sizeof(void *));

/* ag_grad_options: struct_size, retain_graph, create_graph, allow_unused. */
FROZEN(sizeof(ag_grad_options) == 16);
FROZEN(offsetof(ag_grad_options, struct_size) == 0);
FROZEN(offsetof(ag_grad_options, retain_graph) == 4);
FROZEN(offsetof(ag_grad_options, create_graph) == 8);
FROZEN(offsetof(ag_grad_options, allow_unused) == 12);

/* ag_function_def: struct_size, flags, then pointers. */
FROZEN(offsetof(ag_function_def, struct_size) == 0);
FROZEN(offsetof(ag_function_def, flags) == 4);
FROZEN(offsetof(ag_function_def, name) == 8);
FROZEN(offsetof(ag_function_def, forward) == 8 + sizeof(void *));
FROZEN(offsetof(ag_function_def, backward) == 8 + 2 * sizeof(void *));
FROZEN(offsetof(ag_function_def, user_data) == 8 + 3 * sizeof(void *));
FROZEN(offsetof(ag_function_def, destroy) == 8 + 4 * sizeof(void *));
FROZEN(sizeof(ag_function_def) == 8 + 5 * sizeof(void *));
FROZEN(AG_FUNCTION_ONCE_DIFFERENTIABLE == 1);

/* Op arguments. */
FROZEN(AG_REDUCTION_NONE == 0);
FROZEN(AG_REDUCTION_MEAN == 1);
FROZEN(AG_REDUCTION_SUM == 2);
FROZEN(AG_IGNORE_INDEX_DEFAULT == -100);
FROZEN(AG_PAD_CONSTANT == 0);
FROZEN(AG_PAD_REFLECT == 1);
FROZEN(AG_EMBEDDING_BAG_SUM == 0);
FROZEN(AG_EMBEDDING_BAG_MEAN == 1);
FROZEN(AG_EMBEDDING_BAG_MAX == 2);

/* ag_memory_stats: struct_size, reserved, then five int64_t counters. */
FROZEN(sizeof(ag_memory_stats) == 48);
FROZEN(offsetof(ag_memory_stats, struct_size) == 0);
FROZEN(offsetof(ag_memory_stats, reserved) == 4);
FROZEN(offsetof(ag_memory_stats, bytes_in_use) == 8);
FROZEN(offsetof(ag_memory_stats, peak_bytes_in_use) == 16);
FROZEN(offsetof(ag_memory_stats, bytes_cached) == 24);
FROZEN(offsetof(ag_memory_stats, allocations) == 32);
FROZEN(offsetof(ag_memory_stats, cache_hits) == 40);

/* The generator's default seed (ag/random.h). */
FROZEN(AG_RNG_DEFAULT_SEED == 0x9E3779B97F4A7C15ull);

/* Graph export formats. */
FROZEN(AG_GRAPH_DOT == 1);
FROZEN(AG_GRAPH_JSON == 2);
/* ag_functional_options: struct_size, create_graph, strict. */
FROZEN(sizeof(ag_functional_options) == 12);
FROZEN(offsetof(ag_functional_options, struct_size) == 0);
FROZEN(offsetof(ag_functional_options, create_graph) == 4);
FROZEN(offsetof(ag_functional_options, strict) == 8);

/* ag_gradcheck_options: struct_size, reserved, eps, atol, rtol. */
FROZEN(sizeof(ag_gradcheck_options) == 32);
FROZEN(offsetof(ag_gradcheck_options, struct_size) == 0);
FROZEN(offsetof(ag_gradcheck_options, reserved) == 4);
FROZEN(offsetof(ag_gradcheck_options, eps) == 8);
FROZEN(offsetof(ag_gradcheck_options, atol) == 16);
FROZEN(offsetof(ag_gradcheck_options, rtol) == 24);

/* ag_gradcheck_result: struct_size, passed, indices, elements, values, count. */
FROZEN(sizeof(ag_gradcheck_result) == 56);
FROZEN(offsetof(ag_gradcheck_result, struct_size) == 0);
FROZEN(offsetof(ag_gradcheck_result, passed) == 4);
FROZEN(offsetof(ag_gradcheck_result, input_index) == 8);
FROZEN(offsetof(ag_gradcheck_result, output_index) == 12);
FROZEN(offsetof(ag_gradcheck_result, input_element) == 16);
FROZEN(offsetof(ag_gradcheck_result, output_element) == 24);
FROZEN(offsetof(ag_gradcheck_result, analytical) == 32);
FROZEN(offsetof(ag_gradcheck_result, numerical) == 40);
FROZEN(offsetof(ag_gradcheck_result, num_compared) == 48);

/* Host memory and DLPack (interop.h, 0.2); the DLPack values are dlpack.h's.
 * The ag_dlpack_* layouts are asserted against dlpack.h in
 * tests/c_api/test_interop_dlpack.c and src/api/interop_api.cc. */
FROZEN(AG_BUFFER_READ_ONLY == 1);
FROZEN(AG_DLPACK_MAJOR_VERSION == 1);
FROZEN(AG_DLPACK_MINOR_VERSION == 0);
FROZEN(AG_DLPACK_DEVICE_CPU == 1);
FROZEN(AG_DLPACK_CODE_INT == 0);
FROZEN(AG_DLPACK_CODE_UINT == 1);
FROZEN(AG_DLPACK_CODE_FLOAT == 2);
FROZEN(AG_DLPACK_CODE_BOOL == 6);
FROZEN(AG_DLPACK_FLAG_READ_ONLY == 1);
FROZEN(AG_DLPACK_FLAG_IS_COPIED == 2);
