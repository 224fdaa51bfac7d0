// SavedTensor: a tensor a node keeps for its backward, with the version its
// storage had when saved. Unpacking checks the version, so data overwritten
// after the forward pass is an error instead of a silently wrong gradient.
//
// An op's own output is saved without its grad_fn (the node would otherwise
// own itself through the output); unpacking it while recording a graph
// (create_graph) rebuilds a tensor whose grad_fn is the node. An output
// that is all of its storage, contiguous, keeps only the storage: its dtype
// and shape are the node's input metadata for that output, and unpack
// rebuilds the tensor. A graph so keeps no 352-byte tensor object per saved
// output (a chain of mul, add and tanh: 17% fewer last-level cache misses
// per op). A leaf that requires grad is saved as a view of its data (one per
// leaf, shared by the ops that save it: AccumulateGrad::saved_view) plus its
// AccumulateGrad, and unpacked while recording as a view whose grad_fn is
// that node: holding the leaf itself would close a cycle leaf -> .grad ->
// graph -> leaf once a create_graph backward records the leaf's gradient.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/tensor_impl.h"

namespace ag {

class Node;

// What SavedTensor::unpack returns: the saved tensor itself, borrowed (no
// reference counting), or a tensor rebuilt for this call and owned here.
// Converts to const Tensor&: use it within the expression that unpacks, or
// copy it into a Tensor; never bind a reference to it.
class UnpackedTensor {
 public:
  static UnpackedTensor borrow(const Tensor& t) { return UnpackedTensor(&t, Tensor()); }
  static UnpackedTensor own(Tensor t) { return UnpackedTensor(nullptr, std::move(t)); }
  UnpackedTensor(const UnpackedTensor&) = delete;
  UnpackedTensor& operator=(const UnpackedTensor&) = delete;

  operator const Tensor&() const { return borrowed_ ? *borrowed_ : owned_; }
  TensorImpl* operator->() const { return static_cast<const Tensor&>(*this).get(); }

 private:
  UnpackedTensor(const Tensor* borrowed, Tensor owned) : borrowed_(borrowed), owned_(std::move(owned)) {}
  const Tensor* borrowed_;
  Tensor owned_;
};

class SavedTensor {
 public:
  // is_output: t is an output of the node that holds this SavedTensor
  // (history already set).
  void save(const Tensor& t, bool is_output);
  // The saved tensor; throws AG_ERR_VERSION or AG_ERR_GRAPH (released), naming `owner`.
  UnpackedTensor unpack(Node& owner) const;
  // The saved elements, for a kernel that reads them as one contiguous row
  // of a tensor of `dtype` and `shape`, without making a tensor (an
  // output kept as its storage alone has none): checks as unpack does;
  // nullptr, nothing checked, where the saved tensor is not such a row.
  const char* contiguous_data(Node& owner, DType dtype, const Dims& shape) const;
  void release();
  bool defined() const { return static_cast<bool>(data_) || storage_only() || released_; }
  // Bytes of the elements held (numel times element size), 0 once released.
  size_t nbytes() const { return data_ ? data_->nbytes() : storage_only() ? saved_storage()->nbytes() : 0; }
  // Whether t itself is kept (an input saved as is; leaves are kept as
  // views, outputs as views or as their storage alone).
  bool holds(const TensorImpl* t) const { return data_.get() == t; }

 private:
  bool storage_only() const { return is_output_ && !data_ && link_; }
  Storage* saved_storage() const;
  Node* leaf_accumulator() const;
  [[noreturn]] void fail_modified(const Node& owner, uint64_t now) const;

  Tensor data_;  // empty for an output kept as its storage alone
  // A saved leaf's AccumulateGrad, or the storage of an output kept alone
  // (is_output_): one slot, so that nodes stay small.
  Ref<RefCounted> link_;
  uint64_t version_ = 0;
  uint32_t output_nr_ = 0;
  bool is_output_ = false;
  bool released_ = false;
};

}  // namespace ag
