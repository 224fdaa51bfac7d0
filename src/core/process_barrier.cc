#include "core/process_barrier.h"

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace ag {

#if defined(__linux__)
bool register_process_barrier() noexcept {
  static const bool ok = syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  return ok;
}

void process_barrier() noexcept {
  if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
  // Not registered in this process (a fork's child): register and retry,
  // else the global command, slower but always allowed once registered.
  if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
      syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) {
    return;
  }
  syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
}
#else
bool register_process_barrier() noexcept { return false; }
void process_barrier() noexcept {}
#endif

}  // namespace ag
