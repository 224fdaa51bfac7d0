package ag

/*
#include "agx.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Node is a node of a recorded graph. It keeps a reference to the tensor
// it was reached from, so its graph stays alive while the Node is used.
type Node struct {
	p    *C.ag_node
	root *Tensor
}

// GradFn is the node that produced t, or nil for a leaf or a tensor outside any graph.
func (t *Tensor) GradFn() (*Node, error) {
	p, err := tensorArg("ag_tensor_grad_fn", "t", t, false)
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(t)
	var out *C.ag_node
	if err := c_ag_tensor_grad_fn(&out, p); err != nil {
		return nil, err
	}
	if out == nil {
		return nil, nil
	}
	root, err := t.Retain()
	if err != nil {
		return nil, err
	}
	return &Node{p: out, root: root}, nil
}

// Name of the node ("MulBackward", ...).
func (n *Node) Name() string {
	defer runtime.KeepAlive(n.root)
	return goStringOrEmpty(c_ag_node_name(n.p))
}

// Tag is the tag scope the node was recorded in ("" for none).
func (n *Node) Tag() string {
	defer runtime.KeepAlive(n.root)
	return goStringOrEmpty(c_ag_node_tag(n.p))
}

// SequenceNr is the node's order of creation.
func (n *Node) SequenceNr() uint64 {
	defer runtime.KeepAlive(n.root)
	return uint64(c_ag_node_sequence_nr(n.p))
}

// TopologicalNr is the node's longest distance to a leaf node.
func (n *Node) TopologicalNr() int64 {
	defer runtime.KeepAlive(n.root)
	return int64(c_ag_node_topological_nr(n.p))
}

// SavedBytes the node still keeps for backward.
func (n *Node) SavedBytes() uint64 {
	defer runtime.KeepAlive(n.root)
	return uint64(c_ag_node_saved_bytes(n.p))
}

// NumNextEdges is the number of inputs of the forward op.
func (n *Node) NumNextEdges() int {
	defer runtime.KeepAlive(n.root)
	return int(c_ag_node_num_next_edges(n.p))
}

// NextEdge i: the node input i's gradient goes to (nil if none) and which of its inputs it feeds.
func (n *Node) NextEdge(i int) (*Node, int, error) {
	defer runtime.KeepAlive(n.root)
	var next *C.ag_node
	var nr C.int32_t
	if err := c_ag_node_next_edge(n.p, C.int32_t(i), &next, &nr); err != nil {
		return nil, 0, err
	}
	if next == nil {
		return nil, 0, nil
	}
	return &Node{p: next, root: n.root}, int(nr), nil
}

// Release drops the Node's reference to its root tensor. Idempotent.
func (n *Node) Release() { n.root.Release() }

// ExportGraph writes t's graph as GraphDot or GraphJson text.
func (t *Tensor) ExportGraph(format int) (string, error) {
	p, err := tensorArg("ag_graph_export", "root", t, false)
	if err != nil {
		return "", err
	}
	defer runtime.KeepAlive(t)
	var needed C.size_t
	// A NULL buffer of capacity 0 asks for the size.
	err = c_ag_graph_export(p, C.int32_t(format), nil, 0, &needed)
	for isBufferTooSmall(err) {
		buf := make([]byte, int(needed))
		err = c_ag_graph_export(p, C.int32_t(format), (*C.char)(unsafe.Pointer(&buf[0])), needed, &needed)
		if err == nil {
			return string(buf[:len(buf)-1]), nil
		}
	}
	return "", err
}
