/*
 * ag/graph.h - introspection of the recorded graph and its export to
 * Graphviz DOT and JSON.
 *
 * Nodes. A tensor produced by a recorded op has a grad_fn: the node that
 * computes the gradients of the op's inputs in backward. Its next edges lead
 * to the nodes of those inputs (one edge per input of the forward op, in
 * argument order), each to one input of the next node (input_nr: which
 * output of that node's op the tensor was). A leaf that requires grad ends
 * in an "AccumulateGrad" node; an input that needs no gradient has no edge.
 *
 * Borrowing. An ag_node is a borrowed handle, never released: a grad_fn is
 * valid while its tensor lives and keeps that grad_fn (an in-place op or
 * ag_tensor_set_tag do not change it; releasing the tensor may free the
 * graph), and every node reached through next edges is valid as long as the
 * node it was reached from. Using a node handle after its graph was freed is
 * undefined behaviour: it cannot be detected. What can be checked (NULL,
 * index ranges) is.
 *
 * Threading: reading nodes is safe while no backward runs on the graph.
 */
#ifndef AG_GRAPH_H
#define AG_GRAPH_H

#include "ag/common.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

typedef struct ag_node ag_node;

/**
 * The node that produced `t` (borrowed, see above), or NULL with AG_OK for a
 * leaf (also one that requires grad) and a tensor outside any graph.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL out, NULL or invalid t).
 */
AG_API ag_status ag_tensor_grad_fn(const ag_node **out, const ag_tensor *t) AG_NOEXCEPT;

/**
 * Name of the node ("MulBackward", "AccumulateGrad", a custom function's
 * def->name, ...); NULL for NULL. Valid as long as the node.
 */
AG_API const char *ag_node_name(const ag_node *node) AG_NOEXCEPT;

/**
 * Order of creation on the recording thread: a node recorded later has a
 * larger number, and backward runs ready nodes largest first.
 * AccumulateGrad nodes have UINT64_MAX (they run as soon as they are ready);
 * NULL gives UINT64_MAX too.
 */
AG_API uint64_t ag_node_sequence_nr(const ag_node *node) AG_NOEXCEPT;

/**
 * Length of the longest path from the node to a leaf's AccumulateGrad or an
 * input that needs no gradient: 0 for AccumulateGrad and for nodes with no
 * next edge, else one more than the largest of the next nodes; -1 for NULL.
 */
AG_API int64_t ag_node_topological_nr(const ag_node *node) AG_NOEXCEPT;

/** Number of next edges (= inputs of the forward op); 0 for NULL. */
AG_API int32_t ag_node_num_next_edges(const ag_node *node) AG_NOEXCEPT;

/**
 * Next edge i of `node`: the node the gradient of forward input i goes to
 * (borrowed; NULL for an input that needs no gradient) and which of its
 * inputs it feeds.
 * @param[out] next      receives the node or NULL.
 * @param[out] input_nr  receives the input of *next (0 when *next is NULL);
 *                       may be NULL.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL node or next; i outside
 *         0..num_next_edges-1). Out-params untouched on failure.
 */
AG_API ag_status ag_node_next_edge(const ag_node *node, int32_t i, const ag_node **next,
                                   int32_t *input_nr) AG_NOEXCEPT;

/**
 * Bytes of the tensors the node still keeps for its backward (elements
 * times element size, summed over the saved tensors; views count their own
 * elements, not their storage). 0 after a backward without retain_graph
 * released them, for nodes that save nothing, and for NULL.
 */
AG_API size_t ag_node_saved_bytes(const ag_node *node) AG_NOEXCEPT;

/**
 * The tag scope (ag/anomaly.h) that was open when the node's op was recorded,
 * e.g. "loss/normalize"; NULL for none, for AccumulateGrad and for NULL.
 * The nodes that a composite op records (the losses of ag/ops_nn.h, made of
 * several ops) carry its name as an inner scope: "mse_loss", or
 * "loss/mse_loss" inside the user's scope "loss".
 * Valid for the life of the process.
 */
AG_API const char *ag_node_tag(const ag_node *node) AG_NOEXCEPT;

/* Formats of ag_graph_export. */
#define AG_GRAPH_DOT 1
#define AG_GRAPH_JSON 2

/**
 * Write the graph of `root` as text: every node reachable from root's
 * grad_fn (or its AccumulateGrad, for a leaf that requires grad), in
 * topological order from the root (a node after every node that sends it a
 * gradient); ids 0, 1, ... in that order, so the root is 0. The output is
 * deterministic for a given graph.
 *
 * Each node shows: id, name, sequence_nr, topological_nr, saved bytes, tag,
 * and the dtype and shape of each of its inputs (the forward op's outputs);
 * an AccumulateGrad node shows its leaf's tag, dtype and shape instead (no
 * leaf once the leaf was released). Each next edge shows the forward input
 * (the edge's index) and the input_nr of the node it goes to.
 *
 * DOT: "digraph ag { ... }", one box per node ("n<id>") whose label spells
 * these out ("op #7 recorded, 2 steps above the leaves", "keeps 24 B for
 * backward", "gets grad of output 0: f32 (3)", "writes .grad of leaf 'w'");
 * edges "n<from> -> n<to>" labelled "grad for input <index>" (plus
 * "(output <input_nr> there)" when input_nr is not 0); an input that needs
 * no gradient is a dashed edge to a "constant"; the nodes of one tag, such
 * as a tag scope or a composite op, are boxed together under its name.
 *
 * JSON (UTF-8, strings escaped):
 *   {"root": 0, "nodes": [{"id": 0, "name": "SumBackward", "sequence_nr": 5,
 *     "topological_nr": 2, "saved_bytes": 0, "tag": null,
 *     "inputs": [{"dtype": "f64", "shape": []}], "leaf": null,
 *     "next_edges": [{"to": 1, "input_nr": 0}, null]}, ...]}
 *   sequence_nr is null for AccumulateGrad; "leaf" is null except for
 *   AccumulateGrad, where it is {"tag": ..., "dtype": ..., "shape": [...]}
 *   or null once the leaf was released; a null next edge is an input that
 *   needs no gradient.
 *
 * Buffer protocol: with AG_OK and AG_ERR_BUFFER_TOO_SMALL, *needed receives
 * the bytes the text needs, including the terminating NUL (on other
 * failures it is untouched). If capacity >= *needed the text and a NUL
 * are written to buf; otherwise the call fails with AG_ERR_BUFFER_TOO_SMALL
 * and buf is untouched (call with buf NULL and capacity 0 to ask for the
 * size).
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT (NULL or invalid root, NULL needed,
 *         NULL buf with capacity > 0, unknown format); AG_ERR_GRAPH (root
 *         requires no grad: there is no graph); AG_ERR_BUFFER_TOO_SMALL;
 *         AG_ERR_OUT_OF_MEMORY.
 */
AG_API ag_status ag_graph_export(const ag_tensor *root, int32_t format, char *buf, size_t capacity,
                                 size_t *needed) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_GRAPH_H */
