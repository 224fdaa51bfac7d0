/*
 * Helper of roundtrip_torch.py: loads IN with ag, then saves to OUT every
 * tensor it holds, each floating one also doubled (by ag) as "<name>.times2",
 * the "source" metadata entry copied and "writer": "ag" added.
 * Usage: st_roundtrip IN OUT. Exit 0 on success, 1 with a message otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ag/ag.h"

#define MAX_T 64

int main(int argc, char **argv) {
  ag_context *ctx = NULL;
  ag_safetensors *file = NULL;
  ag_tensor *tensors[2 * MAX_T];
  char *names[2 * MAX_T];
  int n = 0;
  if (argc != 3) return 1;
  if (ag_context_create(&ctx, NULL) != AG_OK || ag_safetensors_load(&file, ctx, argv[1]) != AG_OK) goto fail;
  for (int i = 0; i < ag_safetensors_count(file) && i < MAX_T; ++i) {
    const char *name = ag_safetensors_name(file, i);
    ag_tensor *t = NULL;
    if (ag_safetensors_get(file, name, &t) != AG_OK) goto fail;
    names[n] = strdup(name);
    tensors[n++] = t;
    const ag_dtype dt = ag_tensor_dtype(t);
    if (dt == AG_F32 || dt == AG_F64) {
      ag_tensor *twice = NULL;
      if (ag_op_add(&twice, t, t) != AG_OK) goto fail;
      names[n] = malloc(strlen(name) + 8);
      sprintf(names[n], "%s.times2", name);
      tensors[n++] = twice;
    }
  }
  const char *keys[2] = {"writer", "source"};
  const char *vals[2] = {"ag", ag_safetensors_metadata(file, "source")};
  if (ag_safetensors_save(argv[2], (const char *const *)names, (const ag_tensor *const *)tensors, n, keys, vals,
                          vals[1] ? 2 : 1) != AG_OK)
    goto fail;
  for (int i = 0; i < n; ++i) {
    ag_tensor_release(tensors[i]);
    free(names[i]);
  }
  ag_safetensors_release(file);
  ag_context_release(ctx);
  return 0;
fail:
  fprintf(stderr, "st_roundtrip: %s\n", ag_last_error_message());
  return 1;
}
