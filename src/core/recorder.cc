#include "core/recorder.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace ag {

StepList::~StepList() {
  for (Block& b : blocks_) {
    for (size_t off = 0; off < b.used;) {
      unsigned char* base = b.bytes.get() + off;
      const Header* h = reinterpret_cast<const Header*>(base);
      if (h->payload_at != sizeof(Header)) {
        Destroy destroy;
        std::memcpy(&destroy, base + sizeof(Header), sizeof destroy);
        destroy(base + h->payload_at);
      }
      off += h->bytes;
    }
  }
}

void* StepList::reserve(size_t bytes) {
  if (blocks_.empty() || blocks_.back().capacity - blocks_.back().used < bytes) {
    Block b;
    b.capacity = std::max(bytes, kBlockBytes);
    // operator new[] aligns to max_align_t (16 on the supported targets).
    b.bytes.reset(new unsigned char[b.capacity]);
    blocks_.push_back(std::move(b));
  }
  return blocks_.back().bytes.get() + blocks_.back().used;
}

void StepList::run() const {
  for (const Block& b : blocks_) {
    unsigned char* p = b.bytes.get();
    unsigned char* const end = p + b.used;
    while (p < end) {
      const Header* h = reinterpret_cast<const Header*>(p);
      h->run(p + h->payload_at);
      p += h->bytes;
    }
  }
}

Recorder::Recorder(Context* ctx) : ctx_(Ref<Context>::share(ctx)) {}
Recorder::~Recorder() = default;

void Recorder::refuse(int32_t code, const std::string& message) {
  if (status_ == 0) {
    status_ = code;
    message_ = message;
  }
  fail(code, message);
}

void Recorder::note_write(const Storage&) {
  if (status_ != 0) return;  // the first refusal is the one reported
  status_ = AG_ERR_UNSUPPORTED;
  message_ = str(call ? call : "a call", " cannot be recorded: it writes into an existing tensor in place, which replay would not repeat");
}

void Recorder::check_fresh(const char* what) {
  for (const Ref<Storage>& s : fresh_) {
    if (!wrote(s.get())) {
      fresh_.clear();
      refuse(AG_ERR_UNSUPPORTED, str(what, " cannot be recorded: it computes a tensor without a replayable kernel "
                                           "(random draws, data-dependent shapes and untraced ops are refused)"));
    }
  }
  fresh_.clear();
}

void Recorder::note_leaf_grad(const Tensor& leaf) {
  for (const Tensor& t : leaves_) {
    if (t.get() == leaf.get()) return;
  }
  leaves_.push_back(leaf);
}

std::atomic<int> g_recording_threads{0};

namespace {
thread_local Recorder* tl_recorder = nullptr;
}  // namespace

Recorder* thread_recorder() { return tl_recorder; }

void note_write_while_recording(const Storage& s) {
  if (Recorder* r = tl_recorder) r->note_write(s);
}

void set_thread_recorder(Recorder* r) {
  if (r && !tl_recorder) g_recording_threads.fetch_add(1, std::memory_order_relaxed);
  if (!r && tl_recorder) g_recording_threads.fetch_sub(1, std::memory_order_relaxed);
  tl_recorder = r;
}

}  // namespace ag
