// Introspection of recorded nodes and graph export. Node handles are
// borrowed Node pointers: no reference is taken or dropped here.
#include <cstring>
#include <string>

#include "ag/graph.h"
#include "api/guard.h"
#include "autograd/node.h"
#include "engine/graph_export.h"

using namespace ag;

namespace {

const ag_node* handle_of(const Node* n) { return reinterpret_cast<const ag_node*>(n); }
const Node* node_of(const ag_node* n) { return reinterpret_cast<const Node*>(n); }

}  // namespace

extern "C" {

AG_API ag_status ag_tensor_grad_fn(const ag_node** out, const ag_tensor* t) noexcept {
  return api::call("ag_tensor_grad_fn", [&] {
    api::check_out(out);
    const TensorImpl& x = api::tensor_arg(t, "t");
    *out = handle_of(grad_fn_of(x));
  });
}

AG_API const char* ag_node_name(const ag_node* node) noexcept { return node ? node_of(node)->name() : nullptr; }

AG_API uint64_t ag_node_sequence_nr(const ag_node* node) noexcept {
  return node ? node_of(node)->sequence_nr() : UINT64_MAX;
}

AG_API int64_t ag_node_topological_nr(const ag_node* node) noexcept {
  return node ? static_cast<int64_t>(node_of(node)->topological_nr()) : -1;
}

AG_API int32_t ag_node_num_next_edges(const ag_node* node) noexcept {
  return node ? static_cast<int32_t>(node_of(node)->num_outputs()) : 0;
}

AG_API ag_status ag_node_next_edge(const ag_node* node, int32_t i, const ag_node** next, int32_t* input_nr) noexcept {
  return api::call("ag_node_next_edge", [&] {
    if (node == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "node is NULL");
    if (next == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "next is NULL");
    const Node& n = *node_of(node);
    const size_t count = n.num_outputs();
    if (i < 0 || static_cast<size_t>(i) >= count) {
      fail(AG_ERR_INVALID_ARGUMENT, "edge ", i, " is out of range: ", n.name(), " has ", count, " next edge",
           count == 1 ? "" : "s");
    }
    const Edge& e = n.next_edge(static_cast<size_t>(i));
    *next = handle_of(e.fn.get());
    if (input_nr) *input_nr = e.valid() ? static_cast<int32_t>(e.input_nr) : 0;
  });
}

AG_API size_t ag_node_saved_bytes(const ag_node* node) noexcept { return node ? node_of(node)->saved_bytes() : 0; }

AG_API const char* ag_node_tag(const ag_node* node) noexcept { return node ? node_of(node)->tag() : nullptr; }

AG_API ag_status ag_graph_export(const ag_tensor* root, int32_t format, char* buf, size_t capacity,
                                 size_t* needed) noexcept {
  return api::call("ag_graph_export", [&] {
    const TensorImpl& r = api::tensor_arg(root, "root");
    if (needed == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "needed is NULL");
    if (buf == nullptr && capacity > 0) fail(AG_ERR_INVALID_ARGUMENT, "buf is NULL but capacity is ", capacity);
    if (format != AG_GRAPH_DOT && format != AG_GRAPH_JSON) {
      fail(AG_ERR_INVALID_ARGUMENT, "format ", format, " is not AG_GRAPH_DOT (1) or AG_GRAPH_JSON (2)");
    }
    const Edge edge = gradient_edge(r);
    if (!edge.valid()) fail(AG_ERR_GRAPH, "root", tag_suffix(r), " requires no grad: it has no graph");
    const std::string text = export_graph(*edge.fn, format == AG_GRAPH_DOT ? GraphFormat::Dot : GraphFormat::Json);
    api::copy_text(text, buf, capacity, needed, "the graph");
  });
}

}  // extern "C"
