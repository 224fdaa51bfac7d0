#include "engine/engine.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <string>
#include <queue>
#include <vector>

#include "autograd/accumulate_grad.h"
#include "autograd/grad_math.h"
#include "autograd/grad_mode.h"
#include "autograd/hooks.h"
#include "autograd/node.h"
#include "core/context.h"
#include "core/profiler.h"
#include "core/recorder.h"
#include "core/shape.h"
#include "engine/anomaly.h"
#include "engine/node_map.h"
#include "engine/run_loop_parts.h"

namespace ag {

namespace {

using engine_detail::ProfileSpan;
using engine_detail::StepBudget;
using engine_detail::Unbudgeted;

// One gradient contribution to a node input, ordered by who produced it.
struct Contribution {
  Contribution(uint32_t in, uint32_t edge, uint64_t seq, Tensor&& g)
      : input_nr(in), producer_edge(edge), producer_seq(seq), grad(std::move(g)) {}
  uint32_t input_nr;
  uint32_t producer_edge;
  uint64_t producer_seq;
  Tensor grad;
};

// Gradients waiting for one node, for all of its inputs in one list (nodes
// almost always get exactly one). They are kept until the node is ready and
// then summed per input in a fixed order (producer sequence_nr, then edge),
// so the result does not depend on the order in which producers ran; a pass
// that receives them in that order sums them on arrival (fold_).
struct NodeTask {
  explicit NodeTask(Node* n) : node(n) {}
  NodeTask(NodeTask&&) noexcept = default;
  Node* node;
  int32_t dependencies = 0;
  SmallVector<Contribution, 1> contributions;
};

struct ReadyEntry {
  uint64_t priority;
  uint32_t task;
  bool operator<(const ReadyEntry& o) const { return priority < o.priority; }
};

// Sums several contributions into grads in the fixed order (out of line:
// chains never get here). On one thread they arrive in that order already
// (producers run newest first): checking costs n comparisons, sorting
// n log n.
[[gnu::noinline]] void sum_in_order(SmallVector<Contribution, 1>& c, TensorList& grads) {
  const auto before = [](const Contribution& a, const Contribution& b) {
    if (a.input_nr != b.input_nr) return a.input_nr < b.input_nr;
    return a.producer_seq != b.producer_seq ? a.producer_seq > b.producer_seq : a.producer_edge < b.producer_edge;
  };
  if (!std::is_sorted(c.begin(), c.end(), before)) std::sort(c.begin(), c.end(), before);
  for (Contribution& k : c) {
    Tensor& total = grads[k.input_nr];
    total = total ? grad_sum(std::move(total), k.grad) : std::move(k.grad);
  }
}

// Sums the contributions into grads (one entry per node input) in the fixed
// order; a single one (a chain) is moved in place.
inline void sum_contributions(SmallVector<Contribution, 1>& c, TensorList& grads) {
  if (c.size() == 1) {
    grads[c[0].input_nr] = std::move(c[0].grad);
  } else if (c.size() > 1) {
    sum_in_order(c, grads);
  }
  c.clear();
}

// Throws: a node returned a gradient that does not fit the input it goes to.
[[noreturn, gnu::noinline, gnu::cold]] void gradient_mismatch(const Node& target, uint32_t input_nr, const Tensor& g) {
  const InputMeta& m = target.input_meta(input_nr);
  fail(AG_ERR_INTERNAL, "returned a gradient of dtype ", dtype_name(g->dtype()), " and shape ", shape_str(g->shape()),
       " for an input of ", target.name(), " that expects dtype ", dtype_name(m.dtype), " and shape ",
       shape_str(m.shape()));
}

std::atomic<uint64_t> g_nodes_run_as_tasks{0};

// Ids of backward passes, never 0 (0 = a node slot nobody ever owned).
std::atomic<uint64_t> g_next_task_id{1};
// Passes running now, in all threads. A pass that starts while no other
// runs owns every node slot it meets: any id found there belongs to a pass
// that ended, and a pass starting later sees this one running and keeps
// its own bookkeeping in its map, never writing a slot. So slots are
// claimed with plain stores and never reset at the end of a pass.
std::atomic<uint32_t> g_active_passes{0};

// The capacity of the last pass's task list on this thread, kept so that
// the next pass reuses it instead of growing a fresh vector; the holder is
// made once per thread (empty while a pass has taken its capacity).
thread_local std::vector<NodeTask>* tl_spare_tasks = nullptr;
struct SpareTasksGuard {
  ~SpareTasksGuard() {
    delete tl_spare_tasks;
    tl_spare_tasks = nullptr;
  }
};
thread_local SpareTasksGuard tl_spare_guard;

class GraphTask;
thread_local GraphTask* tl_current_task = nullptr;

// A leaf's gradient held back by a budgeted pass until its end.
struct DeferredLeaf {
  Ref<Node> node;  // the leaf's AccumulateGrad
  Tensor grad;
};

class GraphTask {
 public:
  explicit GraphTask(const BackwardOptions& opts)
      : opts_(opts),
        id_(g_next_task_id.fetch_add(1, std::memory_order_relaxed)),
        // Acquire: sees the slot writes of every pass that ended before.
        owns_slots_(g_active_passes.fetch_add(1, std::memory_order_acq_rel) == 0) {
    if (tl_spare_tasks) tasks_.swap(*tl_spare_tasks);
  }

  // Keeps the task list's capacity for the next pass. The node slots keep
  // this pass's id: once it is no longer counted as running, they are free.
  ~GraphTask() {
    tasks_.clear();
    if (tasks_.capacity() <= kMaxSpareTasks) {
      if (!tl_spare_tasks) {
        (void)&tl_spare_guard;  // constructs the guard on this thread
        tl_spare_tasks = new (std::nothrow) std::vector<NodeTask>();
      }
      // A pass nested in this one may have left its capacity there already.
      if (tl_spare_tasks && tl_spare_tasks->capacity() == 0) tl_spare_tasks->swap(tasks_);
    }
    // Release: the next pass to own the slots sees this one's writes.
    g_active_passes.fetch_sub(1, std::memory_order_acq_rel);
  }
  GraphTask(const GraphTask&) = delete;
  GraphTask& operator=(const GraphTask&) = delete;

  // Restricts the pass to the nodes on a path to `targets` (edges of the
  // wanted inputs; an unreachable one simply gets no gradient). Call after
  // count_dependencies.
  void restrict_to(const std::vector<Edge>& targets, bool accumulate) {
    restricted_ = true;
    const size_t n = tasks_.size();
    std::vector<char> is_target(n, 0);
    captures_.resize(n);
    for (size_t k = 0; k < targets.size(); ++k) {
      const uint32_t idx = find(targets[k].fn.get());
      if (idx == NodeMap::kMissing) continue;
      is_target[idx] = 1;
      if (!(accumulate && targets[k].fn->is_accumulate_grad())) {
        captures_[idx].push_back({targets[k].input_nr, static_cast<uint32_t>(k)});
      }
    }
    captured_.resize(targets.size());
    // reach = a target or a parent of one; a node runs if one of its
    // children is in reach (or it is a leaf target of backward).
    const std::vector<uint32_t> order = topological_order();
    std::vector<char> reach(n, 0);
    exec_.assign(n, 0);
    for (size_t j = order.size(); j-- > 0;) {
      const uint32_t t = order[j];
      Node* node = tasks_[t].node;
      bool child = false;
      for (size_t i = 0; i < node->num_outputs(); ++i) {
        Node* next = node->next_edge(i).fn.get();
        if (next && reach[find(next)]) child = true;
      }
      reach[t] = child || is_target[t];
      exec_[t] = child || (is_target[t] && accumulate && node->is_accumulate_grad());
    }
  }

  std::vector<Tensor>& captured() { return captured_; }

  // The root runs first; then a node that became ready while nothing else
  // waits runs next without going through the queue: a chain never touches it.
  void start() {
    next_ = 0;
    have_next_ = true;
  }

  // Makes this the pass that queue_final_callback reaches, for a scope.
  struct Current {
    explicit Current(GraphTask* t) : outer(tl_current_task) { tl_current_task = t; }
    ~Current() { tl_current_task = outer; }
    GraphTask* outer;
  };

  // Makes execute start with run_chain instead of a walk the caller did.
  void start_with_chain(Node& graph_root) { chain_root_ = &graph_root; }
  bool profiling() const { return profiler_ != nullptr; }

  void execute() {
    Current current(this);
    if (chain_root_) run_chain(*chain_root_);
    if (profiler_) return execute_profiled();
    Unbudgeted unbudgeted;
    run_ready(unbudgeted);
    run_callbacks();
  }

  // Runs ready nodes until none is left (returns true) or the budget is spent.
  template <class Budget>
  bool run_ready(Budget& budget) {
    // Between two nodes both lists hold only null entries, so that a node
    // with as many inputs and outputs as the one before (a chain) resizes
    // nothing.
    TensorList grads, out;
    for (;;) {
      // Expensive nodes gather until two or more can run side by side, or
      // nothing else is left to run.
      if (heavy_.size() >= 2) {
        const size_t n = heavy_.size();
        run_wave();
        if (budget.spent(n)) break;
        continue;
      }
      uint32_t index;
      if (have_next_) {
        index = next_;
        have_next_ = false;
      } else if (!ready_.empty()) {
        index = ready_.top().task;
        ready_.pop();
      } else if (!heavy_.empty()) {
        index = heavy_.back();
        heavy_.clear();
      } else {
        break;
      }
      if (profiler_) {
        run_node_profiled(index, grads, out);
      } else {
        run_node(index, grads, out);
      }
      send_outputs(index, out);
      if (budget.spent(1)) break;
    }
    return !(have_next_ || !ready_.empty() || !heavy_.empty());
  }

  void run_callbacks() {
    // Callbacks may queue more callbacks.
    for (size_t i = 0; i < callbacks_.size(); ++i) {
      try {
        callbacks_[i]->run();
      } catch (const Error& e) {
        throw Error(e.code(), str("a callback queued during backward failed: ", e.message()));
      }
    }
  }

  // Lets expensive independent nodes run as tasks in ctx's arena (off for
  // one thread and under create_graph, whose recorded nodes take sequence
  // numbers from the thread that records them).
  void enable_parallel(Context* ctx) { parallel_ctx_ = ctx; }

  void queue(std::unique_ptr<FinalCallback> cb) { callbacks_.push_back(std::move(cb)); }

  // Buffers what the pass would write into .grad (leaves, retained
  // gradients) until apply_deferred: a budgeted pass.
  void enable_defer() { defer_ = true; }

  // Sums the buffered gradients in, as the nodes would have, and runs the
  // leaves' post-accumulate hooks.
  void apply_deferred() {
    for (DeferredGrad& d : deferred_retained_) store_retained(*d.tensor, d.grad);
    deferred_retained_.clear();
    TensorList grads(1), out;
    for (DeferredLeaf& d : deferred_leaves_) {
      Node& node = *d.node;
      grads[0] = std::move(d.grad);
      try {
        node.apply(grads, out);
        if (node.hooks()) run_node_post_hooks(node, out, grads);
      } catch (const Error& e) {
        started_ = true;
        throw interrupted(node, e);
      }
    }
    deferred_leaves_.clear();
  }

  // Whether the pass walked node n (a budgeted pass's hold on its graph).
  bool holds(const Node* n) const { return find(n) != NodeMap::kMissing; }
  // Throws AG_ERR_GRAPH if a node of this pass other than a leaf's
  // AccumulateGrad is walked by `other`.
  void check_disjoint(const GraphTask& other) const {
    for (size_t i = 1; i < tasks_.size(); ++i) {
      const Node* n = tasks_[i].node;
      if (!n->is_accumulate_grad() && other.holds(n)) {
        fail(AG_ERR_GRAPH, "the graph's node ", n->name(),
             " is held by an unfinished budgeted backward (ag_backward_begin); end or cancel that job first");
      }
    }
  }

  // Iterative walk over every node reachable from the root; counts the edges
  // that point into each node (walk_dependencies).
  void count_dependencies(Node& graph_root) {
    graph_root_ = &graph_root;
    add_task(&graph_root);
    walk_dependencies();
  }

  // Runs the nodes from the graph root on while each has at most one edge
  // that leads on, without walking the graph first. The node such an edge
  // leads to has no other producer in this pass: every node the pass
  // reaches is either one of the chain's (whose one edge leads to the next)
  // or reachable from that node, and a graph has no cycles. So it is ready
  // at once. Where a node has two edges or more, the rest of the graph, all
  // reachable from that node, is walked and then run as usual.
  //
  // In a plain pass (no hooks, recording, anomaly checks, restriction or
  // deferred leaves) a chain node with its gradient and no hooks of its own
  // runs here directly, the gradient handed on in `pending` rather than
  // through the task's list of contributions; any other node goes through
  // run_node, with the pending gradient in that list.
  void run_chain(Node& graph_root) {
    graph_root_ = &graph_root;
    NodeTask& slot = tasks_.emplace_back(&graph_root);  // each chain node in turn
    TensorList grads, out;
    const bool plain = !restricted_ && !defer_ && !opts_.detect_anomaly && recording() == nullptr;
    Tensor pending;  // for input pending_nr of slot.node, sent by its edge pending_edge
    uint32_t pending_nr = 0, pending_edge = 0;
    uint64_t pending_seq = 0;
    for (;;) {
      Node& node = *slot.node;
      const size_t edge = only_edge(node);
      const bool direct = plain && pending && edge != kSeveral && node.hooks() == nullptr;
      if (pending && !direct) slot.contributions.emplace_back(pending_nr, pending_edge, pending_seq, std::move(pending));
      if (edge == kSeveral) break;
      if (direct) {
        grads.resize(node.num_inputs());
        grads[pending_nr] = std::move(pending);
        out.resize(node.num_outputs());
        try {
          node.apply(grads, out);
          check_outputs(node, out);
        } catch (const Error& e) {
          throw interrupted(node, e);
        }
        started_ = true;
        for (Tensor& g : grads) g.reset();
        if (!opts_.retain_graph) node.release_variables();
      } else {
        run_node(0, grads, out);
      }
      if (edge == kNone) {
        for (Tensor& g : out) g.reset();
        return;  // nothing is left to run
      }
      for (size_t i = 0; i < out.size(); ++i) {
        if (i != edge) out[i].reset();  // (no edge leads there)
      }
      const Edge& e = node.next_edge(edge);
      pending = std::move(out[edge]);
      pending_nr = e.input_nr;
      pending_edge = static_cast<uint32_t>(edge);
      pending_seq = node.sequence_nr();
      slot.node = e.fn.get();
    }
    register_task(0);
    walk_dependencies();
    start();
  }

 private:
  static constexpr size_t kNone = SIZE_MAX, kSeveral = SIZE_MAX - 1;
  // The index of n's only valid edge, or kNone / kSeveral.
  static size_t only_edge(const Node& n) {
    size_t found = kNone;
    for (size_t i = 0; i < n.num_outputs(); ++i) {
      if (!n.next_edge(i).valid()) continue;
      if (found != kNone) return kSeveral;
      found = i;
    }
    return found;
  }

  // Counts the edges into every node reachable from the listed tasks (the
  // list doubles as the walk's stack: tasks [walked, size) are found but not
  // yet walked). Also decides whether gradients are summed as they arrive
  // (fold_).
  void walk_dependencies() {
    bool descending = true;
    size_t max_fan = 0;
    for (size_t walked = 0; walked < tasks_.size(); ++walked) {
      Node* n = tasks_[walked].node;
      const uint64_t seq = n->sequence_nr();
      for (size_t i = 0; i < n->num_outputs(); ++i) {
        Node* next = n->next_edge(i).fn.get();
        if (!next) continue;
        uint32_t idx = find(next);
        if (idx == NodeMap::kMissing) idx = add_task(next);
        ++tasks_[idx].dependencies;
        descending &= next->sequence_nr() < seq || next->num_outputs() == 0;
        if (parallel_ctx_) max_edge_numel_ = std::max<int64_t>(max_edge_numel_, n->next_edge(i).grad_numel);
      }
      if (parallel_ctx_) max_fan = std::max(max_fan, n->num_inputs() + n->num_outputs());
    }
    // Nodes run one at a time, highest sequence_nr first (no node is
    // expensive enough for a task, even with its gradients summed): if every
    // edge also leads to a lower sequence_nr (or to a node that sends
    // nothing on), every node runs after all the nodes that send to it with
    // a higher one, so gradients arrive in the order sum_in_order sorts them
    // into, and summing each on arrival adds alike. Not under create_graph,
    // whose sums are recorded nodes.
    fold_ = descending && !opts_.create_graph &&
            (!parallel_ctx_ || static_cast<int64_t>(max_fan) * max_edge_numel_ < kParallelNodeElements);
    if (fold_) parallel_ctx_ = nullptr;
  }

  struct Capture {
    uint32_t input_nr;
    uint32_t target;
  };

  // Task lists up to this capacity are kept for the next pass.
  static constexpr size_t kMaxSpareTasks = size_t{1} << 20;
  // Elements (gradients in plus gradients out) from which a node is worth
  // an arena task of its own: some 40 us of elementwise work, well above
  // what waking a sleeping worker costs (bench_branches measures it).
  static constexpr int64_t kParallelNodeElements = int64_t{1} << 17;

  // Runs one node on this thread: sums its gradients, runs its hooks, stores
  // captured gradients, applies it, and releases its saved tensors.
  [[gnu::always_inline]] void run_node(uint32_t index, TensorList& grads, TensorList& out) {
    NodeTask& task = tasks_[index];
    Node& node = *task.node;
    // Every contribution carries a gradient, so the node has one if any came.
    const bool any = !task.contributions.empty();
    grads.resize(node.num_inputs());
    sum_contributions(task.contributions, grads);
    out.resize(node.num_outputs());
    const bool is_root = &node == graph_root_;
    const bool run = is_root || !restricted_ || exec_[index];
    if (any || is_root) {
      try {
        // Hooks and captures: one pointer check per node when there are none.
        const bool hooked = node.hooks() != nullptr;
        Recorder* rec = recording();
        if (rec) [[unlikely]] check_recordable(*rec, node, hooked);
        if (hooked) run_tensor_hooks(node, grads, defer_ ? &deferred_retained_ : nullptr);
        if (restricted_) {
          for (const Capture& c : captures_[index]) captured_[c.target] = grads[c.input_nr];
        }
        if (run) {
          if (hooked) run_node_pre_hooks(node, grads);
          if (defer_ && node.is_accumulate_grad()) {
            defer_leaf(node, grads);  // its post-hooks run with apply_deferred
          } else {
            node.apply(grads, out);
            if (hooked) run_node_post_hooks(node, out, grads);
          }
          check_outputs(node, out);
          if (rec) [[unlikely]] rec->check_fresh(node.name());
        }
      } catch (const Error& e) {
        throw interrupted(node, e);
      }
      // Outside the try: the message names the node itself.
      if (run && opts_.detect_anomaly) check_finite_gradients(node, out);
      started_ = started_ || (!is_root && run);
    }
    for (Tensor& g : grads) g.reset();
    if (run && !opts_.retain_graph) node.release_variables();
  }

  // Nodes that run host code (hooks, custom functions) cannot be replayed.
  [[gnu::noinline]] static void check_recordable(Recorder& r, const Node& node, bool hooked) {
    if (hooked || node.runs_user_code()) {
      r.refuse(AG_ERR_UNSUPPORTED, str(node.name(), " cannot be recorded: it runs ",
                                       hooked ? "hooks" : "a custom function", " (host code replay would not repeat)"));
    }
  }

  [[gnu::noinline]] void defer_leaf(Node& node, TensorList& grads) {
    if (grads[0]) deferred_leaves_.push_back({Ref<Node>::share(&node), std::move(grads[0])});
  }

  // One node of a wave: its gradients out, or how it failed.
  struct WaveJob {
    TensorList out;
    bool failed = false;
    ag_status code = AG_OK;
    std::string message;
    std::exception_ptr other;
  };

  // Runs the gathered expensive nodes as tasks in the arena, then, in a
  // fixed order on this thread, reports the first failure or hands their
  // gradients on. Each node's result depends only on its own inputs (summed
  // in a fixed order) and kernels chunk independently of the thread count,
  // so the bits are those of a serial run.
  [[gnu::noinline]] void run_wave() {
    std::vector<uint32_t> wave;
    wave.swap(heavy_);
    std::sort(wave.begin(), wave.end(), [this](uint32_t a, uint32_t b) {
      return tasks_[a].node->sequence_nr() > tasks_[b].node->sequence_nr();
    });
    std::vector<WaveJob> jobs(wave.size());
    // One level of parallelism: nodes side by side when there are at least
    // as many as threads, else one after another with parallel kernels
    // (a kernel inside a node that runs as a task runs inline).
    const auto count = static_cast<int64_t>(wave.size());
    const bool side_by_side = count >= parallel_ctx_->concurrency();
    if (side_by_side) g_nodes_run_as_tasks.fetch_add(wave.size(), std::memory_order_relaxed);
    parallel_ctx_->parallel_chunks(count, side_by_side ? 1 : count, [&](int64_t b, int64_t e) {
      for (int64_t j = b; j < e; ++j) {
        const uint32_t index = wave[static_cast<size_t>(j)];
        if (profiler_) {
          ProfileSpan span(*profiler_, "node", tasks_[index].node->name(), tasks_[index].node->tag(),
                           tasks_[index].node->sequence_nr(), id_);
          run_task(index, jobs[static_cast<size_t>(j)]);
        } else {
          run_task(index, jobs[static_cast<size_t>(j)]);
        }
      }
    });
    for (WaveJob& job : jobs) {
      if (job.other) std::rethrow_exception(job.other);
    }
    for (size_t j = 0; j < wave.size(); ++j) {
      Node& node = *tasks_[wave[j]].node;
      if (jobs[j].failed) {
        // Other nodes of the wave may have run: leaves may hold their share.
        started_ = started_ || wave.size() > 1;
        throw interrupted(node, Error(jobs[j].code, jobs[j].message));
      }
    }
    for (size_t j = 0; j < wave.size(); ++j) {
      Node& node = *tasks_[wave[j]].node;
      if (opts_.detect_anomaly) check_finite_gradients(node, jobs[j].out);
      started_ = true;
      if (!opts_.retain_graph) node.release_variables();
      send_outputs(wave[j], jobs[j].out);
    }
  }

  // The body of one arena task (any thread): no hooks, captures or user
  // code reach here (see is_heavy).
  void run_task(uint32_t index, WaveJob& job) {
    Node& node = *tasks_[index].node;
    try {
      GradModeGuard mode(false);
      TensorList grads;
      grads.resize(node.num_inputs());
      sum_contributions(tasks_[index].contributions, grads);
      job.out.resize(node.num_outputs());
      node.apply(grads, job.out);
      check_outputs(node, job.out);
    } catch (const Error& e) {
      job.failed = true;
      job.code = e.code();
      job.message = e.message();
    } catch (...) {
      job.other = std::current_exception();
    }
  }

  Error interrupted(const Node& node, const Error& e) const {
    // Before any node finished nothing has changed; after, leaves may
    // already hold their share of the gradient.
    return Error(e.code(), str(started_ ? "backward interrupted at " : "", node.name(), ": ", e.message()));
  }

  [[gnu::always_inline]] static void check_outputs(const Node& node, const TensorList& out) {
    for (size_t i = 0; i < node.num_outputs(); ++i) {
      const Edge& e = node.next_edge(i);
      if (!e.valid() || !out[i]) continue;
      const InputMeta& m = e.fn->input_meta(e.input_nr);
      if (!m.fits(out[i]->dtype(), out[i]->shape())) gradient_mismatch(*e.fn, e.input_nr, out[i]);
    }
  }

  // Hands the node's gradients to the nodes its edges point to, and queues
  // those that have now received all of theirs. Leaves `out` all null.
  [[gnu::always_inline]] void send_outputs(uint32_t index, TensorList& out) {
    Node& node = *tasks_[index].node;
    for (size_t i = 0; i < node.num_outputs(); ++i) {
      const Edge& e = node.next_edge(i);
      if (!e.valid()) {
        out[i].reset();  // a gradient nobody wants
        continue;
      }
      const uint32_t target = find(e.fn.get());
      NodeTask& t = tasks_[target];
      if (out[i]) {
        if (fold_ && !t.contributions.empty()) {
          fold(t, e.input_nr, static_cast<uint32_t>(i), node.sequence_nr(), std::move(out[i]));
        } else {
          t.contributions.emplace_back(e.input_nr, static_cast<uint32_t>(i), node.sequence_nr(), std::move(out[i]));
        }
      }
      if (--t.dependencies == 0) make_ready(target);
    }
  }

  // Sums g into the gradient already waiting for the same input, if any
  // (fold_): a fan-in keeps one gradient per input instead of every branch's.
  // Out of line: a chain's nodes get one gradient each and never come here.
  [[gnu::noinline]] static void fold(NodeTask& t, uint32_t input_nr, uint32_t edge, uint64_t seq, Tensor&& g) {
    for (Contribution& c : t.contributions) {
      if (c.input_nr == input_nr) {
        c.grad = grad_sum(std::move(c.grad), g);
        return;
      }
    }
    t.contributions.emplace_back(input_nr, edge, seq, std::move(g));
  }

  // Whether is_heavy may hold: every gradient in or out of a node has at
  // most max_edge_numel_ elements. One multiply, so that the small nodes of
  // a parallel pass (almost all of them) skip is_heavy's walk.
  bool maybe_heavy(uint32_t target) const {
    const NodeTask& t = tasks_[target];
    return static_cast<int64_t>(t.contributions.size() + t.node->num_outputs()) * max_edge_numel_ >=
           kParallelNodeElements;
  }

  [[gnu::always_inline]] void make_ready(uint32_t target) {
    if (parallel_ctx_ && maybe_heavy(target) && is_heavy(target)) {
      heavy_.push_back(target);
    } else if (have_next_) {
      // next_ stays the first of all ready nodes (the queue holds none
      // before it); the other one waits in the queue. A node that makes two
      // ready (an add's backward) so costs one push, not two and a pop.
      const uint64_t mine = tasks_[next_].node->sequence_nr(), theirs = tasks_[target].node->sequence_nr();
      if (theirs > mine) {
        ready_.push({mine, next_});
        next_ = target;
      } else {
        ready_.push({theirs, target});
      }
    } else if (ready_.empty() || tasks_[target].node->sequence_nr() > ready_.top().priority) {
      // First of all ready nodes: the queue would hand it out next anyway
      // (in a fan-in, every branch's nodes while an add waits).
      next_ = target;
      have_next_ = true;
    } else {
      ready_.push({tasks_[target].node->sequence_nr(), target});
    }
  }

  // Whether a ready node may run as an arena task: it has gradients to work
  // on, no hooks, captures or user code, and enough elements in and out to
  // pay for handing it to another thread.
  [[gnu::noinline]] bool is_heavy(uint32_t index) const {
    const NodeTask& t = tasks_[index];
    const Node& node = *t.node;
    if (t.contributions.empty() || node.hooks() != nullptr || node.runs_user_code()) return false;
    if (defer_ && node.is_accumulate_grad()) return false;
    if (restricted_ && (!exec_[index] || !captures_[index].empty())) return false;
    int64_t elements = 0;
    for (const Contribution& c : t.contributions) elements += c.grad->numel();
    for (size_t i = 0; i < node.num_outputs(); ++i) {
      const Edge& e = node.next_edge(i);
      if (e.valid()) elements += e.grad_numel;
    }
    return elements >= kParallelNodeElements;
  }

  // Parents before children (Kahn's algorithm on the dependency counts).
  std::vector<uint32_t> topological_order() {
    std::vector<int32_t> deps(tasks_.size());
    for (size_t i = 0; i < tasks_.size(); ++i) deps[i] = tasks_[i].dependencies;
    std::vector<uint32_t> order{0};
    order.reserve(tasks_.size());
    for (size_t j = 0; j < order.size(); ++j) {
      Node* n = tasks_[order[j]].node;
      for (size_t i = 0; i < n->num_outputs(); ++i) {
        Node* next = n->next_edge(i).fn.get();
        if (!next) continue;
        const uint32_t idx = find(next);
        if (--deps[idx] == 0) order.push_back(idx);
      }
    }
    return order;
  }

  // The node's task index in this pass, or kMissing. Only this pass ever
  // writes its id into a slot, so reading our own id back is race-free.
  uint32_t find(const Node* n) const {
    if (!owns_slots_) return map_.find(n);
    const Node::EngineSlot& s = n->engine_slot();
    if (s.owner.load(std::memory_order_relaxed) == id_) return s.index;
    return NodeMap::kMissing;
  }

  uint32_t add_task(Node* n) {
    const uint32_t idx = static_cast<uint32_t>(tasks_.size());
    tasks_.emplace_back(n);
    register_task(idx);
    return idx;
  }

  // Makes find() see task idx.
  void register_task(uint32_t idx) {
    Node* n = tasks_[idx].node;
    if (owns_slots_) {
      Node::EngineSlot& s = n->engine_slot();
      s.owner.store(id_, std::memory_order_relaxed);
      s.index = idx;
    } else {
      map_.insert(n, idx);  // other passes run: their slots are theirs
    }
  }

  // --- Profiling (ag/profile.h). Without a profiler on the context the
  // only cost is the null test of profiler_ per node and per pass.
 public:
  void enable_profiling(std::shared_ptr<Profiler> p) { profiler_ = std::move(p); }

 private:
  [[gnu::noinline]] void execute_profiled() {
    ProfileSpan span(*profiler_, "backward", "backward", nullptr, UINT64_MAX, id_);
    Unbudgeted unbudgeted;
    run_ready(unbudgeted);
    run_callbacks();
  }
  // Spans only the nodes that run (not the graph root, nor nodes that get
  // no gradient or lie off the wanted inputs' paths).
  [[gnu::noinline]] void run_node_profiled(uint32_t index, TensorList& grads, TensorList& out) {
    const NodeTask& task = tasks_[index];
    if (index == 0 || task.contributions.empty() || (restricted_ && !exec_[index])) {
      run_node(index, grads, out);
      return;
    }
    const Node& node = *task.node;
    ProfileSpan span(*profiler_, "node", node.name(), node.tag(), node.sequence_nr(), id_);
    run_node(index, grads, out);
  }
  std::shared_ptr<Profiler> profiler_;

  BackwardOptions opts_;
  const uint64_t id_;
  const bool owns_slots_;  // no other pass ran when this one started
  std::vector<NodeTask> tasks_;
  NodeMap map_;
  bool restricted_ = false;
  std::vector<char> exec_;
  std::vector<std::vector<Capture>> captures_;
  std::vector<Tensor> captured_;
  std::vector<std::unique_ptr<FinalCallback>> callbacks_;
  // The ready nodes: the priority queue (highest sequence_nr first), the one
  // node that runs next without it (when set, it comes before every queued
  // node), and the expensive ones gathered for a wave.
  std::priority_queue<ReadyEntry> ready_;
  uint32_t next_ = 0;
  bool have_next_ = false;
  std::vector<uint32_t> heavy_;
  Context* parallel_ctx_ = nullptr;  // set: expensive nodes may run as tasks
  int64_t max_edge_numel_ = 0;       // over the graph's edges (count_dependencies)
  bool fold_ = false;                // gradients are summed on arrival (count_dependencies)
  bool started_ = false;             // a node other than the root ran
  Node* graph_root_ = nullptr;
  Node* chain_root_ = nullptr;       // start_with_chain
  bool defer_ = false;               // a budgeted pass: .grad writes wait
  std::vector<DeferredLeaf> deferred_leaves_;
  std::vector<DeferredGrad> deferred_retained_;
};

// The open budgeted passes, whose graphs other passes must not walk.
std::mutex g_jobs_mu;
std::vector<const GraphTask*> g_jobs;  // guarded by g_jobs_mu
std::atomic<int> g_num_jobs{0};

// Throws if `task` walked a node an open job holds; registers it as a job
// itself if `job`.
void check_jobs(const GraphTask& task, bool job) {
  if (!job && g_num_jobs.load(std::memory_order_acquire) == 0) return;
  std::lock_guard<std::mutex> lock(g_jobs_mu);
  for (const GraphTask* other : g_jobs) task.check_disjoint(*other);
  if (job) {
    g_jobs.push_back(&task);
    g_num_jobs.fetch_add(1, std::memory_order_release);
  }
}

void unregister_job(const GraphTask& task) {
  std::lock_guard<std::mutex> lock(g_jobs_mu);
  g_jobs.erase(std::find(g_jobs.begin(), g_jobs.end(), &task));
  g_num_jobs.fetch_sub(1, std::memory_order_release);
}

BackwardOptions effective_options(const ExecuteRequest& req) {
  BackwardOptions o = req.opts;
  if (o.create_graph) o.retain_graph = true;
  if (!req.roots.empty()) o.detect_anomaly = req.roots[0]->context()->anomaly_mode();
  return o;
}

Ref<Node> make_graph_root(const ExecuteRequest& req) {
  return make_ref<GraphRoot>(req.roots.begin(), req.seeds.begin(), req.roots.size());
}

// Sets the pass up: parallel nodes, profiling, deferred writes (a job).
void configure(GraphTask& task, const ExecuteRequest& req, const BackwardOptions& o, bool job) {
  if (!req.roots.empty() && !o.create_graph) {
    Context* ctx = req.roots[0]->context();
    // Recording for replay: one thread appends the steps, in order.
    if (ctx->concurrency() > 1 && !recording()) task.enable_parallel(ctx);
  }
  if (profiling_anywhere() && !req.roots.empty()) {
    if (std::shared_ptr<Profiler> p = profiler_of(req.roots[0]->context())) task.enable_profiling(std::move(p));
  }
  if (job) task.enable_defer();
}

// Whether the pass may start with a chain (GraphTask::run_chain) instead of
// walking the graph first: every node may run (no inputs), no profiler
// (whose spans follow the walk's indexes) and no open job (whose graph this
// pass must not run into; check_jobs needs the walk).
bool may_start_with_chain(const GraphTask& task, const ExecuteRequest& req) {
  return req.inputs.empty() && !task.profiling() &&
         g_num_jobs.load(std::memory_order_acquire) == 0;
}

// Walks the graph and restricts the pass to the inputs' paths; a job is
// checked against and registered with the open jobs.
void prepare(GraphTask& task, const ExecuteRequest& req, Node& graph_root, bool job) {
  task.count_dependencies(graph_root);
  if (!req.inputs.empty()) {
    std::vector<Edge> targets;
    targets.reserve(req.inputs.size());
    for (const Tensor& t : req.inputs) targets.push_back(gradient_edge(*t));
    task.restrict_to(targets, req.accumulate);
  }
  task.start();
  check_jobs(task, job);  // last: a registered job is unregistered by its owner
}

// After the pass: the inputs' gradients, or, for backward with inputs, their
// accumulation into non-leaf inputs' .grad.
std::vector<Tensor> collect(GraphTask& task, const ExecuteRequest& req, const BackwardOptions& o) {
  std::vector<Tensor> result;
  if (req.inputs.empty()) return result;
  result = std::move(task.captured());
  result.resize(req.inputs.size());
  if (req.accumulate) {
    // Non-leaf inputs of backward: their gradient goes to their .grad.
    GradModeGuard mode(o.create_graph);
    for (size_t k = 0; k < req.inputs.size(); ++k) {
      if (result[k]) accumulate_into(*req.inputs[k], result[k]);
    }
    result.clear();
  }
  return result;
}

}  // namespace

std::vector<Tensor> execute(const ExecuteRequest& req) {
  Ref<Node> graph_root = make_graph_root(req);
  const BackwardOptions o = effective_options(req);
  GraphTask task(o);
  configure(task, req, o, false);
  if (may_start_with_chain(task, req)) {
    task.start_with_chain(*graph_root);
  } else {
    prepare(task, req, *graph_root, false);
  }
  {
    // Nodes run here, on the calling thread, so that user callbacks and
    // thread-local state (grad mode) belong to the caller; expensive nodes
    // without hooks or user code, and kernels that go parallel, enter the
    // context's arena. The arena's workers, once woken by the pass, stay
    // awake until it ends instead of sleeping between nodes.
    GradModeGuard mode(o.create_graph);
    Context* ctx = req.roots.empty() ? nullptr : req.roots[0]->context();
    Context::WorkersHeld held(ctx && ctx->concurrency() > 1 ? ctx : nullptr);
    task.execute();
  }
  return collect(task, req, o);
}

struct BackwardJob::Impl {
  explicit Impl(ExecuteRequest r)
      : req(std::move(r)), opts(effective_options(req)), graph_root(make_graph_root(req)), task(opts) {}
  ~Impl() {
    if (registered) unregister_job(task);
  }
  ExecuteRequest req;  // keeps roots, seeds and inputs alive
  BackwardOptions opts;
  Ref<Node> graph_root;  // keeps the graph alive
  GraphTask task;
  bool registered = false;
  bool done = false;
};

BackwardJob::BackwardJob(ExecuteRequest req) : impl_(std::make_unique<Impl>(std::move(req))) {
  configure(impl_->task, impl_->req, impl_->opts, true);
  prepare(impl_->task, impl_->req, *impl_->graph_root, true);
  impl_->registered = true;
}

BackwardJob::~BackwardJob() = default;

bool BackwardJob::step(int64_t max_nodes, int64_t max_ns) {
  Impl& j = *impl_;
  if (j.done) return true;
  StepBudget budget(max_nodes, max_ns);
  GraphTask::Current current(&j.task);
  GradModeGuard mode(j.opts.create_graph);
  j.done = j.task.run_ready(budget);
  return j.done;
}

void BackwardJob::finish() {
  Impl& j = *impl_;
  GraphTask::Current current(&j.task);
  GradModeGuard mode(j.opts.create_graph);
  if (!j.done) {
    Unbudgeted unbudgeted;
    j.done = j.task.run_ready(unbudgeted);
  }
  j.task.apply_deferred();
  j.task.run_callbacks();
  collect(j.task, j.req, j.opts);
}

void run_backward(const Tensor& root, const Tensor& seed, const BackwardOptions& opts) {
  ExecuteRequest req;
  req.roots.push_back(root);
  req.seeds.push_back(seed);
  req.opts = opts;
  execute(req);
}

uint64_t nodes_run_as_tasks() { return g_nodes_run_as_tasks.load(std::memory_order_relaxed); }

bool queue_final_callback(std::unique_ptr<FinalCallback>& cb) {
  if (!tl_current_task) return false;
  tl_current_task->queue(std::move(cb));
  return true;
}

}  // namespace ag
