// Open-addressing map from node pointer to task index: where a backward pass
// keeps the task index of a node whose own slot (Node::EngineSlot) another
// pass holds, as happens when passes share nodes (concurrent backward calls
// into shared leaves, a pass started from a hook).
#pragma once

#include <cstdint>
#include <vector>

namespace ag {

class Node;

class NodeMap {
 public:
  static constexpr uint32_t kMissing = UINT32_MAX;

  uint32_t find(const Node* n) const {
    if (keys_.empty()) return kMissing;
    for (size_t i = slot(n);; i = (i + 1) & mask_) {
      if (keys_[i] == n) return values_[i];
      if (keys_[i] == nullptr) return kMissing;
    }
  }

  void insert(const Node* n, uint32_t value) {
    if ((size_ + 1) * 2 > keys_.size()) grow();
    size_t i = slot(n);
    while (keys_[i] != nullptr) i = (i + 1) & mask_;
    keys_[i] = n;
    values_[i] = value;
    ++size_;
  }

 private:
  size_t slot(const Node* n) const {
    uint64_t h = reinterpret_cast<uintptr_t>(n) >> 4;
    h *= 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h >> 32) & mask_;
  }

  void grow() {
    std::vector<const Node*> keys = std::move(keys_);
    std::vector<uint32_t> values = std::move(values_);
    const size_t cap = keys.empty() ? 16 : keys.size() * 2;
    keys_.assign(cap, nullptr);
    values_.assign(cap, 0);
    mask_ = cap - 1;
    size_ = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i]) insert(keys[i], values[i]);
    }
  }

  std::vector<const Node*> keys_;
  std::vector<uint32_t> values_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace ag
