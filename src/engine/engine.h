// The backward engine: walks the graph from the roots, counting how many
// gradients each node waits for, then runs nodes as they become ready,
// summing the gradients of each node input in a fixed order.
#pragma once

#include "core/tensor_impl.h"

namespace ag {

struct BackwardOptions {
  bool retain_graph = false;
  bool create_graph = false;
};

// Backward from `root`, seeded with `seed` (same shape and dtype, already
// checked by the caller). Runs on the calling thread inside root's context
// arena. Throws ag::Error; a failure inside a node names the node.
void run_backward(const Tensor& root, const Tensor& seed, const BackwardOptions& opts);

}  // namespace ag
