// The backward engine: walks the graph from the roots, counting how many
// gradients each node waits for, then runs nodes as they become ready,
// summing the gradients of each node input in a fixed order.
#pragma once

#include <memory>
#include <vector>

#include "autograd/small_vector.h"
#include "core/tensor_impl.h"

namespace ag {

struct BackwardOptions {
  bool retain_graph = false;
  bool create_graph = false;
  // Check every gradient a node produces for NaN/Inf (the roots' context's
  // anomaly mode, read once per pass).
  bool detect_anomaly = false;
};

// Backward from `root`, seeded with `seed` (same shape and dtype, already
// checked by the caller). Runs on the calling thread inside root's context
// arena. Throws ag::Error; a failure inside a node names the node.
void run_backward(const Tensor& root, const Tensor& seed, const BackwardOptions& opts);

// One call of backward or grad: seeds for several roots, and optionally the
// tensors whose gradients are wanted.
struct ExecuteRequest {
  // Inline for one root (a backward call allocates no list for it).
  SmallVector<Tensor, 1> roots;
  SmallVector<Tensor, 1> seeds;  // one per root, checked by the caller
  // Empty: every leaf reached accumulates (plain backward). Otherwise only
  // the nodes on a path to these run.
  std::vector<Tensor> inputs;
  // true: inputs' gradients accumulate into their .grad (backward with
  // inputs); false: they are returned and no .grad changes (grad).
  bool accumulate = true;
  BackwardOptions opts;
};

// Runs the pass; for accumulate == false returns the gradient of each input
// (null where none flowed). Throws ag::Error.
std::vector<Tensor> execute(const ExecuteRequest& req);

// A backward pass run in budgeted steps (ag/budget.h). It holds its graph
// (a pass through one of its nodes fails meanwhile) and buffers what the
// pass would write into .grad until finish(); destroying it unfinished
// (cancel) writes nothing. One thread at a time.
class BackwardJob {
 public:
  // Walks the graph; runs no node. Throws ag::Error.
  explicit BackwardJob(ExecuteRequest req);
  ~BackwardJob();
  BackwardJob(const BackwardJob&) = delete;
  BackwardJob& operator=(const BackwardJob&) = delete;
  // Runs nodes until none is left (returns true) or max_nodes nodes ran or
  // max_ns nanoseconds passed (0 = no limit; at least one node runs).
  // Throws ag::Error.
  bool step(int64_t max_nodes, int64_t max_ns);
  // Runs what remains, sums the buffered gradients into .grad, runs the
  // post-accumulate hooks and queued callbacks. Throws ag::Error.
  void finish();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Nodes run as arena tasks beside other ready nodes since the process
// started, over all passes (for tests and diagnostics).
uint64_t nodes_run_as_tasks();

// Work queued by a hook or custom function to run once the current pass
// finished successfully (dropped if it fails).
class FinalCallback {
 public:
  virtual ~FinalCallback() = default;
  virtual void run() = 0;  // throws ag::Error
};

// Queues cb on the pass running on this thread; false (cb untouched) when no
// pass runs on this thread.
bool queue_final_callback(std::unique_ptr<FinalCallback>& cb);

}  // namespace ag
