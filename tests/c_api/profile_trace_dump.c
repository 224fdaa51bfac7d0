/*
 * tests/c_api/profile_trace_dump.c - profiles forward calls and two
 * backward passes of a small MLP-like graph with a branch big enough for
 * arena workers (2 threads), writes the Chrome trace to argv[1], and prints
 * the names of the graph's nodes (ag_node_name), one per line, for
 * check_profile_trace.py.
 */
#include <stdio.h>
#include <string.h>

#include "ag/ag.h"

#define TRY(call)                                                         \
  do {                                                                    \
    if ((call) != AG_OK) {                                                \
      fprintf(stderr, "%s failed: %s\n", #call, ag_last_error_message()); \
      return 1;                                                           \
    }                                                                     \
  } while (0)

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s TRACE.json\n", argv[0]);
    return 2;
  }
  ag_context_options co = AG_CONTEXT_OPTIONS_INIT;
  ag_profiler_options po = AG_PROFILER_OPTIONS_INIT;
  ag_context *ctx = NULL;
  ag_profile *profile = NULL;
  ag_scope *scope = NULL;
  ag_tensor *x, *w, *b, *h, *a, *big, *t1, *t2, *s1, *s2, *loss;
  const int64_t xs[2] = {64, 32}, ws[2] = {16, 32}, bs[1] = {16}, n = 1 << 19;
  co.num_threads = 2;
  po.record_calls = 1;
  TRY(ag_context_create(&ctx, &co));
  TRY(ag_scope_begin(&scope));
  TRY(ag_op_uniform(&x, ctx, AG_F32, xs, 2, -1, 1));
  TRY(ag_op_uniform(&w, ctx, AG_F32, ws, 2, -1, 1));
  TRY(ag_op_uniform(&b, ctx, AG_F32, bs, 1, -1, 1));
  TRY(ag_op_uniform(&big, ctx, AG_F32, &n, 1, -1, 1));
  TRY(ag_tensor_requires_grad(w, 1));
  TRY(ag_tensor_requires_grad(b, 1));
  TRY(ag_tensor_requires_grad(big, 1));
  TRY(ag_profiler_start(ctx, &po));
  TRY(ag_tag_scope_push("layer \"1\""));
  TRY(ag_op_linear(&h, x, w, b));
  TRY(ag_op_relu(&a, h));
  TRY(ag_tag_scope_pop());
  TRY(ag_op_tanh(&t1, big));
  TRY(ag_op_sin(&t2, big));
  TRY(ag_op_mean(&s1, t1));
  TRY(ag_op_mean(&s2, t2));
  TRY(ag_op_sum(&loss, a));
  TRY(ag_op_add_(loss, s1));
  TRY(ag_op_add_(loss, s2));
  ag_backward_options retain = AG_BACKWARD_OPTIONS_INIT;
  retain.retain_graph = 1;
  TRY(ag_backward(loss, NULL, &retain));
  TRY(ag_backward(loss, NULL, NULL));
  TRY(ag_profiler_stop(&profile, ctx));
  TRY(ag_profile_write_chrome_trace(profile, argv[1]));
  ag_profile_release(profile);
  /* The graph's nodes, each once. */
  const ag_node *nodes[64];
  int count = 0;
  TRY(ag_tensor_grad_fn(&nodes[0], loss));
  count = 1;
  for (int i = 0; i < count; ++i) {
    printf("%s\n", ag_node_name(nodes[i]));
    for (int32_t e = 0; e < ag_node_num_next_edges(nodes[i]); ++e) {
      const ag_node *next = NULL;
      TRY(ag_node_next_edge(nodes[i], e, &next, NULL));
      int seen = next == NULL;
      for (int j = 0; j < count && !seen; ++j) seen = nodes[j] == next;
      if (!seen && count < 64) nodes[count++] = next;
    }
  }
  ag_scope_end(scope);
  ag_context_release(ctx);
  return 0;
}
