/*
 * graph_dot: graph export (ag/graph.h). Records a small two-layer model
 * with a named loss, then writes its backward graph as Graphviz DOT to
 * stdout (or to the file given as the first argument):
 *
 *     graph_dot graph.dot && dot -Tsvg graph.dot > graph.svg
 *
 * Tag scopes (ag/anomaly.h) name parts of the model: every node records the
 * tag open when its op ran, and the export boxes each tag's nodes under its
 * name. A composite op names its own nodes the same way: the Sub, Mul and
 * Mean nodes of mse_loss sit in a box "loss/mse_loss". Inputs that need no
 * gradient (x, the target) show as dashed "constant" edges. Also walks the
 * graph by hand from the loss's grad_fn; prints "nodes: N, boxes in the DOT
 * text: N (root ..., tag ...)" and exits 0 when the export and walk agree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ag/ag.h"

#define TRY(call)                                                         \
  do {                                                                    \
    ag_status st_ = (call);                                               \
    if (st_ != AG_OK) {                                                   \
      fprintf(stderr, "%s failed: %s\n", #call, ag_last_error_message()); \
      return 1;                                                           \
    }                                                                     \
  } while (0)

/* Counts the nodes reachable from `node` (a small graph: a linear scan for duplicates will do). */
static int walk(const ag_node *node, const ag_node **seen, int count) {
  for (int i = 0; i < count; ++i)
    if (seen[i] == node) return count;
  seen[count++] = node;
  for (int32_t e = 0; e < ag_node_num_next_edges(node); ++e) {
    const ag_node *next = NULL;
    if (ag_node_next_edge(node, e, &next, NULL) == AG_OK && next != NULL) count = walk(next, seen, count);
  }
  return count;
}

int main(int argc, char **argv) {
  ag_context *ctx;
  TRY(ag_context_create(&ctx, NULL));
  ag_scope *scope;
  TRY(ag_scope_begin(&scope)); /* releases every tensor below at the end */

  const int64_t xs[2] = {4, 3}, ws[2] = {3, 2}, ts[2] = {4, 2};
  ag_tensor *x, *w, *b, *target, *h, *hb, *y, *loss;
  TRY(ag_tensor_ones(&x, ctx, AG_F32, xs, 2));
  TRY(ag_tensor_full(&w, ctx, AG_F32, ws, 2, 0.1));
  TRY(ag_tensor_zeros(&b, ctx, AG_F32, &ws[1], 1));
  TRY(ag_tensor_zeros(&target, ctx, AG_F32, ts, 2));
  TRY(ag_tensor_requires_grad(w, 1));
  TRY(ag_tensor_requires_grad(b, 1));
  TRY(ag_tensor_set_tag(w, "layer.weight")); /* leaf tags show on their AccumulateGrad nodes */
  TRY(ag_tensor_set_tag(b, "layer.bias"));

  TRY(ag_tag_scope_push("layer"));
  TRY(ag_op_matmul(&h, x, w));
  TRY(ag_op_add(&hb, h, b));
  TRY(ag_op_relu(&y, hb));
  TRY(ag_tag_scope_pop());
  TRY(ag_tag_scope_push("loss"));
  TRY(ag_op_mse_loss(&loss, y, target, AG_REDUCTION_MEAN));
  TRY(ag_tag_scope_pop());

  /* Buffer protocol: ask for the size (AG_ERR_BUFFER_TOO_SMALL), then write. */
  size_t needed = 0;
  if (ag_graph_export(loss, AG_GRAPH_DOT, NULL, 0, &needed) != AG_ERR_BUFFER_TOO_SMALL) return 1;
  char *dot = malloc(needed);
  if (dot == NULL) return 1;
  TRY(ag_graph_export(loss, AG_GRAPH_DOT, dot, needed, &needed));
  FILE *out = argc > 1 ? fopen(argv[1], "w") : stdout;
  if (out == NULL) return 1;
  fputs(dot, out);
  if (out != stdout) fclose(out);

  /* The same graph by hand: count the nodes and the boxes of the DOT text. */
  const ag_node *root = NULL, *seen[64];
  TRY(ag_tensor_grad_fn(&root, loss));
  const int nodes = walk(root, seen, 0);
  int boxes = 0; /* lines "  n<id> [label=...]"; edges are "  n<a> -> n<b> [...]" */
  for (const char *line = dot; line != NULL; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    const char *end = strchr(line, '\n');
    const char *arrow = strstr(line, "->");
    const int is_node = strncmp(line, "  n", 3) == 0 && line[3] >= '0' && line[3] <= '9';
    if (is_node && (arrow == NULL || (end != NULL && arrow > end))) ++boxes;
  }
  printf("nodes: %d, boxes in the DOT text: %d (root %s, tag %s)\n", nodes, boxes, ag_node_name(root),
         ag_node_tag(root) ? ag_node_tag(root) : "-");

  free(dot);
  TRY(ag_scope_end(scope));
  ag_context_release(ctx);
  return nodes >= 5 && nodes == boxes ? 0 : 1;
}
