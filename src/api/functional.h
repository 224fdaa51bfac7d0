// Derivatives of whole user functions (ag/functional.h): calling the user's
// ag_fn, and the reverse passes that the functional helpers and the gradient
// checks share.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ag/functional.h"
#include "api/guard.h"

namespace ag::api {

using Tensors = std::vector<Tensor>;

// The user's function and the number of outputs it is asked for.
struct UserFn {
  ag_fn fn;
  void* user_data;
  int32_t num_outputs;
};

// Checks fn and num_outputs of a call.
UserFn user_fn(ag_fn fn, void* user_data, int32_t num_outputs);

// The inputs of a call: at least one, live, of one context; floating ones
// only when `floating` is set.
Tensors input_args(const ag_tensor* const* inputs, int32_t n, bool floating);

// Runs fn on inputs under the current grad mode and takes over its outputs:
// live, of the inputs' context, floating (else AG_ERR_CALLBACK).
Tensors call_fn(const UserFn& f, const Tensors& inputs);

// What fn differentiates: each input as a new tensor sharing its data that
// requires grad; with create_graph, an input that requires grad stays
// connected to the caller's graph through a view.
Tensors differentiable_inputs(const Tensors& xs, bool create_graph);

// Gradients of sum_k <outputs[k], seeds[k]> with respect to inputs (which
// require grad), keeping the graph; null for an input no gradient reaches.
// Outputs that require no grad contribute nothing.
Tensors grads_of(const Tensors& outputs, const Tensors& seeds, const Tensors& inputs, bool create_graph);

// Message for an (output, input) pair without dependence under strict.
using StrictMessage = std::function<std::string(size_t out, size_t in)>;

// Jacobian blocks, [o * inputs.size() + i] of shape outputs[o].shape +
// inputs[i].shape and inputs[i]'s dtype: one reverse pass per output element.
// With `strict` set, a pair that no gradient connects is AG_ERR_GRAPH.
Tensors jacobian_of(const Tensors& outputs, const Tensors& inputs, bool create_graph, const StrictMessage& strict);

}  // namespace ag::api
