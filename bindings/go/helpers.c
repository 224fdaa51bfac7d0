#include "agx.h"

void agx_dlpack_delete(ag_dlpack_managed_tensor_versioned *m) {
  if (m && m->deleter) m->deleter(m);
}

void agx_dlpack_delete_legacy(ag_dlpack_managed_tensor *m) {
  if (m && m->deleter) m->deleter(m);
}
