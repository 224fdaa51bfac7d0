/*
 * tests/c_api/graph_json_dump.c - prints the JSON export of a small graph
 * with shared nodes, a multi-use leaf, a constant, nested tag scopes and
 * tags that need escaping, for check_graph_json.py to parse and check.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ag/ag.h"

#define TRY(call)                                                      \
  do {                                                                 \
    if ((call) != AG_OK) {                                             \
      fprintf(stderr, "%s failed: %s\n", #call, ag_last_error_message()); \
      return 1;                                                        \
    }                                                                  \
  } while (0)

int main(void) {
  ag_context *ctx = NULL;
  ag_tensor *x = NULL, *w = NULL, *c = NULL, *a = NULL, *b = NULL, *m = NULL, *s = NULL;
  const int64_t shape[2] = {2, 3};
  size_t needed = 0;
  char *buf;
  TRY(ag_context_create(&ctx, NULL));
  TRY(ag_tensor_ones(&x, ctx, AG_F64, shape, 2));
  TRY(ag_tensor_ones(&w, ctx, AG_F64, shape + 1, 1));
  TRY(ag_tensor_ones(&c, ctx, AG_F64, shape + 1, 1));
  TRY(ag_tensor_requires_grad(x, 1));
  TRY(ag_tensor_requires_grad(w, 1));
  TRY(ag_tensor_set_tag(x, "input \"x\"\n\\"));
  TRY(ag_tensor_set_tag(w, "w\xc3\xa9"));
  TRY(ag_tag_scope_push("layer"));
  TRY(ag_tag_scope_push("mul"));
  TRY(ag_op_mul(&a, x, w)); /* broadcast (2,3) * (3) */
  TRY(ag_tag_scope_pop());
  TRY(ag_op_add(&b, a, c));
  TRY(ag_tag_scope_pop());
  TRY(ag_op_mul(&m, b, x)); /* x used twice */
  TRY(ag_op_sum(&s, m));
  if (ag_graph_export(s, AG_GRAPH_JSON, NULL, 0, &needed) != AG_ERR_BUFFER_TOO_SMALL) return 1;
  buf = (char *)malloc(needed);
  if (!buf) return 1;
  TRY(ag_graph_export(s, AG_GRAPH_JSON, buf, needed, &needed));
  fputs(buf, stdout);
  free(buf);
  ag_tensor_release(s);
  ag_tensor_release(m);
  ag_tensor_release(b);
  ag_tensor_release(a);
  ag_tensor_release(c);
  ag_tensor_release(w);
  ag_tensor_release(x);
  ag_context_release(ctx);
  return 0;
}
