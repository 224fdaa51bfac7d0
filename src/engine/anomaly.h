// Anomaly mode: the check the engine runs on the gradients a node produced.
#pragma once

#include "autograd/node.h"

namespace ag {

// Throws AG_ERR_GRAPH naming the node, its tag, the input whose gradient
// holds a NaN or infinity and where that gradient goes; nothing when every
// floating gradient in `out` (one per next edge, null where none) is finite.
void check_finite_gradients(const Node& node, const TensorList& out);

}  // namespace ag
