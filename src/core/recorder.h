// The recording of a forward and backward for replay (ag/replay.h).
//
// While a thread records, each traced helper of the ops (a kernel call over
// the buffers it just resolved) runs as usual and appends a closure that
// repeats the same call over the same buffers: a Step. Replay runs the steps
// in order, with no allocation, no node and no shape logic.
//
// What keeps a recording honest: every storage allocated inside an op or a
// backward node must be the output of a step by the time the op or node
// returns (else the op computed something replay would not repeat: a random
// draw, an untraced kernel), and no storage may be written outside a step
// (in-place ops bump versions). The first violation poisons the recording.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/refcount.h"
#include "core/storage.h"
#include "core/tensor_impl.h"

namespace ag {

// Closures of any size, stored back to back in blocks (no per-step heap
// block, no move after push) and run in the order pushed. A step is a
// 16-byte header, the closure's destructor when it has one, and the
// closure: replay streams through them, so they are kept small (the tensors
// a step's buffers belong to are kept alive by Recorder::keep instead).
class StepList {
 public:
  StepList() = default;
  StepList(const StepList&) = delete;
  StepList& operator=(const StepList&) = delete;
  ~StepList();

  template <class F>
  void push(F&& f) {
    using Fn = std::decay_t<F>;
    static_assert(alignof(Fn) <= kAlign, "step closures are at most 8-byte aligned");
    constexpr bool trivial = std::is_trivially_destructible_v<Fn>;
    constexpr size_t at = trivial ? sizeof(Header) : sizeof(Header) + sizeof(Destroy);
    const size_t bytes = round_up(at + sizeof(Fn));
    Header* h = static_cast<Header*>(reserve(bytes));
    unsigned char* base = reinterpret_cast<unsigned char*>(h);
    new (base + at) Fn(std::forward<F>(f));
    h->run = [](void* p) { (*static_cast<Fn*>(p))(); };
    h->bytes = static_cast<uint32_t>(bytes);
    h->payload_at = static_cast<uint32_t>(at);
    if constexpr (!trivial) {
      const Destroy destroy = [](void* p) { static_cast<Fn*>(p)->~Fn(); };
      std::memcpy(base + sizeof(Header), &destroy, sizeof destroy);
    }
    commit(bytes);
  }
  // Runs every step in order; throws what a step throws.
  void run() const;
  size_t size() const { return count_; }

 private:
  using Destroy = void (*)(void*);
  struct Header {
    void (*run)(void*);
    uint32_t bytes;       // of the whole step: the next one follows
    uint32_t payload_at;  // offset of the closure; a destructor sits before it unless 16
  };
  static constexpr size_t kAlign = 8;
  static constexpr size_t round_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
  static constexpr size_t kBlockBytes = size_t{64} << 10;

  struct Block {
    std::unique_ptr<unsigned char[]> bytes;
    size_t capacity = 0, used = 0;
  };
  void* reserve(size_t bytes);
  void commit(size_t bytes) {
    blocks_.back().used += bytes;
    ++count_;
  }

  std::vector<Block> blocks_;
  size_t count_ = 0;
};

class Recorder {
 public:
  explicit Recorder(Context* ctx);
  ~Recorder();
  Context* context() const { return ctx_.get(); }

  // Appends step f, which repeats the kernel call that just wrote `out`.
  template <class F>
  void add(const TensorImpl& out, F&& f) {
    steps_.push(std::forward<F>(f));
    written_.insert(out.storage());
  }
  // Keeps t (and so its buffer) alive as long as the recording, for a step
  // that holds only raw pointers into it.
  void keep(const Tensor& t) { kept_.push_back(t); }
  // Whether a step of this recording writes s.
  bool wrote(const Storage* s) const { return written_.count(s) != 0; }

  void note_allocation(Storage& s) { fresh_.push_back(Ref<Storage>::share(&s)); }
  // A write into s that is no step (an in-place op, a host write).
  void note_write(const Storage& s);
  // Fails (and poisons the recording) if a storage allocated since the last
  // check is no step's output: `what` (an op or node) computed something
  // that replay would not repeat.
  void check_fresh(const char* what);
  // The storages allocated since the last check are constants (tensors the
  // host made while recording): replay keeps their values.
  void drop_fresh() { fresh_.clear(); }

  // Fails with code and message and poisons the recording: ending it then
  // fails with the same.
  [[noreturn]] void refuse(int32_t code, const std::string& message);
  int32_t status() const { return status_; }
  const std::string& message() const { return message_; }

  // A leaf whose .grad the recorded backward writes (the engine's
  // accumulation): replay writes it again.
  void note_leaf_grad(const Tensor& leaf);
  const std::vector<Tensor>& leaves_with_grad() const { return leaves_; }

  StepList& steps() { return steps_; }
  // The C call being recorded (for messages), and the nesting of C calls.
  const char* call = nullptr;
  int call_depth = 0;
  // status() when the outermost call began: a call fails at its end only for
  // a refusal of its own.
  int32_t status_at_call = 0;

 private:
  Ref<Context> ctx_;
  std::vector<Tensor> kept_;
  StepList steps_;
  std::unordered_set<const Storage*> written_;
  std::vector<Ref<Storage>> fresh_;
  std::vector<Tensor> leaves_;
  int32_t status_ = 0;
  std::string message_;
};

// Threads recording now, over the process: the one relaxed load that every
// hook below costs while nobody records.
extern std::atomic<int> g_recording_threads;
Recorder* thread_recorder();
// The calling thread's recorder, or null.
inline Recorder* recording() {
  return g_recording_threads.load(std::memory_order_relaxed) != 0 ? thread_recorder() : nullptr;
}
// Starts (r owned by the caller, who keeps it alive) or stops recording on
// the calling thread.
void set_thread_recorder(Recorder* r);

// Traces the kernel call that just wrote `out`, when the thread records:
// replay calls the step again. make_step() returns the step, a callable that
// captures its tensors by value (they stay alive); it is called only while
// recording, so that other calls pay no reference counting for captures.
template <class MakeStep>
inline void trace(const TensorImpl& out, MakeStep&& make_step) {
  if (Recorder* r = recording()) [[unlikely]] r->add(out, make_step());
}

}  // namespace ag
