// Text renderings of a recorded graph (Graphviz DOT, JSON) for inspection.
#pragma once

#include <string>
#include <vector>

#include "autograd/node.h"

namespace ag {

enum class GraphFormat { Dot, Json };

// Every node reachable from root, parents before children (Kahn's order over
// the edges, ties in edge order), so the result depends only on the graph.
std::vector<const Node*> graph_nodes(const Node& root);

// The graph of root in `format` (see ag_graph_export in ag/graph.h).
std::string export_graph(const Node& root, GraphFormat format);

// s as a quoted JSON string (also a DOT quoted string: "\n" is a line break).
std::string quoted(const char* s);

}  // namespace ag
