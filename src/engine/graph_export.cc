#include "engine/graph_export.h"

#include <algorithm>
#include <unordered_map>

#include "autograd/accumulate_grad.h"

namespace ag {

std::string quoted(const char* s) {
  std::string out = "\"";
  for (const char* p = s; *p; ++p) {
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += *p;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20) {
      static const char hex[] = "0123456789abcdef";
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += *p;
    }
  }
  return out + "\"";
}

namespace {

using Ids = std::unordered_map<const Node*, size_t>;

std::string json_string_or_null(const char* s) { return s ? quoted(s) : "null"; }

std::string json_shape(const Dims& d) {
  std::string out = "[";
  for (int i = 0; i < d.size(); ++i) out += (i ? ", " : "") + std::to_string(d[i]);
  return out + "]";
}

const char* tag_of(const TensorImpl& t) {
  const AutogradMeta* m = meta_of(t);
  return m && m->tag ? m->tag->c_str() : nullptr;
}

// The leaf behind an AccumulateGrad (null once released, or for other nodes).
Tensor leaf_of(const Node& n) {
  return n.is_accumulate_grad() ? static_cast<const AccumulateGrad&>(n).variable() : Tensor();
}

std::string to_json(const std::vector<const Node*>& nodes, const Ids& ids) {
  std::string out = "{\"root\": 0, \"nodes\": [";
  for (size_t k = 0; k < nodes.size(); ++k) {
    const Node& n = *nodes[k];
    out += k ? ",\n  " : "\n  ";
    out += str("{\"id\": ", k, ", \"name\": ", quoted(n.name()), ", \"sequence_nr\": ",
               n.is_accumulate_grad() ? std::string("null") : std::to_string(n.sequence_nr()),
               ", \"topological_nr\": ", n.topological_nr(), ", \"saved_bytes\": ", n.saved_bytes(),
               ", \"tag\": ", json_string_or_null(n.tag()), ", \"inputs\": [");
    for (size_t i = 0; i < n.num_inputs(); ++i) {
      out += str(i ? ", " : "", "{\"dtype\": \"", dtype_name(n.input_meta(i).dtype),
                 "\", \"shape\": ", json_shape(n.input_meta(i).shape()), "}");
    }
    out += "], \"leaf\": ";
    const Tensor leaf = leaf_of(n);
    out += leaf ? str("{\"tag\": ", json_string_or_null(tag_of(*leaf)), ", \"dtype\": \"", dtype_name(leaf->dtype()),
                      "\", \"shape\": ", json_shape(leaf->shape()), "}")
                : std::string("null");
    out += ", \"next_edges\": [";
    for (size_t i = 0; i < n.num_outputs(); ++i) {
      const Edge& e = n.next_edge(i);
      if (i) out += ", ";
      out += e.valid() ? str("{\"to\": ", ids.at(e.fn.get()), ", \"input_nr\": ", e.input_nr, "}")
                       : std::string("null");
    }
    out += "]}";
  }
  return out + "\n]}\n";
}

// One line of a node's box: "<label text>" with the units spelled out, so the
// picture reads without the documentation.
std::string node_label(const Node& n) {
  std::string label = n.name();
  if (n.is_accumulate_grad()) {
    const Tensor leaf = leaf_of(n);
    label += leaf ? str("\nwrites .grad of leaf", tag_suffix(*leaf), ": ", dtype_name(leaf->dtype()), " ",
                        shape_str(leaf->shape()))
                  : std::string("\nleaf released");
    return label;
  }
  label += str("\nop #", n.sequence_nr(), " recorded, ", n.topological_nr(), " step",
               n.topological_nr() == 1 ? "" : "s", " above the leaves");
  if (n.tag()) label += str("\nin scope ", n.tag());
  label += str("\nkeeps ", n.saved_bytes(), " B for backward");
  for (size_t i = 0; i < n.num_inputs(); ++i) {
    label += str("\ngets grad of output ", i, ": ", dtype_name(n.input_meta(i).dtype), " ",
                 shape_str(n.input_meta(i).shape()));
  }
  return label;
}

std::string to_dot(const std::vector<const Node*>& nodes, const Ids& ids) {
  std::string out =
      "digraph ag {\n"
      "  // The backward graph, root first (n0). Each box is a node that computes gradients; an\n"
      "  // arrow carries the gradient for one input of its forward op to where that input came\n"
      "  // from; a dashed arrow ends at an input that needs no gradient (a constant). A box\n"
      "  // around nodes is a scope: a tag scope, or the composite op (mse_loss, ...) that recorded them.\n"
      "  node [shape=box, fontname=\"monospace\"];\n";
  for (size_t k = 0; k < nodes.size(); ++k) {
    out += str("  n", k, " [label=", quoted(node_label(*nodes[k]).c_str()), "];\n");
  }
  // Scopes, in order of first appearance (a tag is interned: its pointer names it).
  std::vector<const char*> tags;
  for (const Node* n : nodes) {
    if (n->tag() && std::find(tags.begin(), tags.end(), n->tag()) == tags.end()) tags.push_back(n->tag());
  }
  for (size_t t = 0; t < tags.size(); ++t) {
    out += str("  subgraph cluster_", t, " { label=", quoted(tags[t]), "; style=dashed;");
    for (size_t k = 0; k < nodes.size(); ++k) {
      if (nodes[k]->tag() == tags[t]) out += str(" n", k, ";");
    }
    out += " }\n";
  }
  for (size_t k = 0; k < nodes.size(); ++k) {
    const Node& n = *nodes[k];
    for (size_t i = 0; i < n.num_outputs(); ++i) {
      const Edge& e = n.next_edge(i);
      if (e.valid()) {
        out += str("  n", k, " -> n", ids.at(e.fn.get()), " [label=\"grad for input ", i);
        if (e.input_nr != 0) out += str(" (output ", e.input_nr, " there)");
        out += "\"];\n";
      } else if (!n.is_accumulate_grad()) {
        out += str("  c", k, "_", i, " [shape=plain, label=\"constant\"];\n  n", k, " -> c", k, "_", i,
                   " [style=dashed, label=\"input ", i, ": no grad\"];\n");
      }
    }
  }
  return out + "}\n";
}

}  // namespace

std::vector<const Node*> graph_nodes(const Node& root) {
  // Dependency counts over the nodes reachable from root, then Kahn's order.
  std::unordered_map<const Node*, int64_t> deps{{&root, 0}};
  std::vector<const Node*> stack{&root};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    for (size_t i = 0; i < n->num_outputs(); ++i) {
      const Node* next = n->next_edge(i).fn.get();
      if (!next) continue;
      auto it = deps.find(next);
      if (it == deps.end()) {
        deps.emplace(next, 1);
        stack.push_back(next);
      } else {
        ++it->second;
      }
    }
  }
  std::vector<const Node*> order{&root};
  order.reserve(deps.size());
  for (size_t j = 0; j < order.size(); ++j) {
    const Node* n = order[j];
    for (size_t i = 0; i < n->num_outputs(); ++i) {
      const Node* next = n->next_edge(i).fn.get();
      if (next && --deps[next] == 0) order.push_back(next);
    }
  }
  return order;
}

std::string export_graph(const Node& root, GraphFormat format) {
  const std::vector<const Node*> nodes = graph_nodes(root);
  Ids ids;
  for (size_t k = 0; k < nodes.size(); ++k) ids.emplace(nodes[k], k);
  return format == GraphFormat::Dot ? to_dot(nodes, ids) : to_json(nodes, ids);
}

}  // namespace ag
