#include "engine/engine.h"

#include <algorithm>
#include <deque>
#include <queue>
#include <vector>

#include "autograd/accumulate_grad.h"
#include "autograd/grad_math.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "engine/node_map.h"

namespace ag {

namespace {

// One gradient contribution to a node input, ordered by who produced it.
struct Contribution {
  uint64_t producer_seq;
  uint32_t producer_edge;
  Tensor grad;
};

// Gradients waiting for one node. Contributions are kept until the node is
// ready and then summed in a fixed order (producer sequence_nr, then edge), so
// the result does not depend on the order in which producers ran.
struct NodeTask {
  Node* node = nullptr;
  int32_t dependencies = 0;
  SmallVector<SmallVector<Contribution, 1>, 1> inputs;
};

struct ReadyEntry {
  uint64_t priority;
  uint32_t task;
  bool operator<(const ReadyEntry& o) const { return priority < o.priority; }
};

// Sums the contributions of one input in the fixed order.
Tensor sum_contributions(SmallVector<Contribution, 1>& c) {
  if (c.size() == 0) return Tensor();
  if (c.size() > 1) {
    std::sort(c.begin(), c.end(), [](const Contribution& a, const Contribution& b) {
      return a.producer_seq != b.producer_seq ? a.producer_seq > b.producer_seq
                                              : a.producer_edge < b.producer_edge;
    });
  }
  Tensor total = std::move(c[0].grad);
  for (size_t i = 1; i < c.size(); ++i) total = grad_sum(total, c[i].grad);
  c.clear();
  return total;
}

void check_gradient(const Node& target, uint32_t input_nr, const Tensor& g) {
  const InputMeta& m = target.input_meta(input_nr);
  if (g->dtype() != m.dtype || g->shape() != m.shape) {
    fail(AG_ERR_INTERNAL, "returned a gradient of dtype ", dtype_name(g->dtype()), " and shape ",
         shape_str(g->shape()), " for an input of ", target.name(), " that expects dtype ", dtype_name(m.dtype),
         " and shape ", shape_str(m.shape));
  }
}

class GraphTask {
 public:
  GraphTask(const BackwardOptions& opts) : opts_(opts) {}

  void execute(Node& graph_root) {
    count_dependencies(graph_root);
    std::priority_queue<ReadyEntry> ready;
    ready.push({Node::kMaxSequenceNr, 0});
    bool started = false;
    TensorList grads, out;
    while (!ready.empty()) {
      const uint32_t index = ready.top().task;
      ready.pop();
      Node& node = *tasks_[index].node;
      grads.resize(node.num_inputs());
      bool any = false;
      for (size_t i = 0; i < node.num_inputs(); ++i) {
        grads[i] = sum_contributions(tasks_[index].inputs[i]);
        any = any || static_cast<bool>(grads[i]);
      }
      out.clear();
      out.resize(node.num_outputs());
      if (any || index == 0) {
        try {
          node.apply(grads, out);
          for (size_t i = 0; i < node.num_outputs(); ++i) {
            const Edge& e = node.next_edge(i);
            if (e.valid() && out[i]) check_gradient(*e.fn, e.input_nr, out[i]);
          }
        } catch (const Error& e) {
          // Before any node finished nothing has changed; after, leaves may
          // already hold their share of the gradient.
          throw Error(e.code(), str(started ? "backward interrupted at " : "", node.name(), ": ", e.message()));
        }
        started = started || index != 0;
      }
      grads.clear();
      if (!opts_.retain_graph) node.release_variables();
      for (size_t i = 0; i < node.num_outputs(); ++i) {
        const Edge& e = node.next_edge(i);
        if (!e.valid()) continue;
        const uint32_t target = map_.find(e.fn.get());
        NodeTask& t = tasks_[target];
        if (out[i]) {
          t.inputs[e.input_nr].push_back(Contribution{node.sequence_nr(), static_cast<uint32_t>(i), std::move(out[i])});
        }
        if (--t.dependencies == 0) ready.push({e.fn->sequence_nr(), target});
      }
    }
  }

 private:
  // Iterative walk over every node reachable from the root; counts the edges
  // that point into each node.
  void count_dependencies(Node& graph_root) {
    add_task(&graph_root);
    std::vector<Node*> stack{&graph_root};
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (size_t i = 0; i < n->num_outputs(); ++i) {
        Node* next = n->next_edge(i).fn.get();
        if (!next) continue;
        uint32_t idx = map_.find(next);
        if (idx == NodeMap::kMissing) {
          idx = add_task(next);
          stack.push_back(next);
        }
        ++tasks_[idx].dependencies;
      }
    }
  }

  uint32_t add_task(Node* n) {
    const uint32_t idx = static_cast<uint32_t>(tasks_.size());
    NodeTask& t = tasks_.emplace_back();
    t.node = n;
    t.inputs.resize(n->num_inputs());
    map_.insert(n, idx);
    return idx;
  }

  BackwardOptions opts_;
  std::deque<NodeTask> tasks_;  // a deque: growing it moves no task
  NodeMap map_;
};

}  // namespace

void run_backward(const Tensor& root, const Tensor& seed, const BackwardOptions& opts) {
  Edge edge = gradient_edge(*root);
  Ref<Node> graph_root = make_ref<GraphRoot>(edge, seed);
  BackwardOptions o = opts;
  if (o.create_graph) o.retain_graph = true;
  // Nodes run here, on the calling thread, so that user callbacks and
  // thread-local state (grad mode) belong to the caller; kernels that go
  // parallel enter the context's arena themselves.
  GradModeGuard mode(o.create_graph);
  GraphTask task(o);
  task.execute(*graph_root);
}

}  // namespace ag
