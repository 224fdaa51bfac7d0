/* Hand-written helpers of package ag, beside the generated zshim.h. */
#ifndef AGX_H
#define AGX_H

#include <stdint.h>
#include <stdlib.h>

#include "zshim.h"

/* cgo.Handle values travel as user_data pointers; converting in C keeps
 * go vet's unsafe.Pointer check quiet. */
static inline void *agx_handle_ptr(uintptr_t h) { return (void *)h; }

/* Calls a DLPack export's deleter, if any. */
void agx_dlpack_delete(ag_dlpack_managed_tensor_versioned *m);
void agx_dlpack_delete_legacy(ag_dlpack_managed_tensor *m);

#endif
