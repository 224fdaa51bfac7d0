// A memory barrier on every running thread of the process, for the
// asymmetric handshakes where one thread (an owner) counts with plain loads
// and stores and another, rarely, must take over: the owner publishes
// "busy" and then reads the mode with no fence of its own; the other
// thread changes the mode, calls process_barrier() and then reads "busy"
// (core/refcount.h, the context's storage references in core/context.h).
#pragma once

namespace ag {

// Registers the process for process_barrier (once; later calls return the
// first answer). False where the kernel or a sandbox refuses it: then no
// owner may count plainly.
bool register_process_barrier() noexcept;
// The barrier (membarrier(2)); only after register_process_barrier() gave true.
void process_barrier() noexcept;

}  // namespace ag
