// A vector that keeps its first N elements inline: nodes have one or two
// edges almost always, so recording an op allocates no edge array.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

namespace ag {

template <class T, size_t N>
class SmallVector {
 public:
  SmallVector() = default;
  explicit SmallVector(size_t n) { resize(n); }
  SmallVector(const SmallVector&) = delete;
  SmallVector& operator=(const SmallVector&) = delete;
  SmallVector(SmallVector&& o) noexcept {
    if (o.data_ == o.inline_ptr()) {
      for (size_t i = 0; i < o.size_; ++i) new (data_ + i) T(std::move(o.data_[i]));
      size_ = o.size_;
      o.clear();
    } else {
      data_ = o.data_;
      size_ = o.size_;
      cap_ = o.cap_;
      o.data_ = o.inline_ptr();
      o.size_ = 0;
      o.cap_ = N;
    }
  }
  ~SmallVector() {
    clear();
    if (data_ != inline_ptr()) ::operator delete(data_);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }

  void reserve(size_t n) {
    if (n <= cap_) return;
    T* p = static_cast<T*>(::operator new(n * sizeof(T)));
    for (size_t i = 0; i < size_; ++i) {
      new (p + i) T(std::move(data_[i]));
      data_[i].~T();
    }
    if (data_ != inline_ptr()) ::operator delete(data_);
    data_ = p;
    cap_ = static_cast<uint32_t>(n);
  }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == cap_) grow();
    T* p = new (data_ + size_) T(std::forward<Args>(args)...);
    ++size_;
    return *p;
  }
  void push_back(T v) { emplace_back(std::move(v)); }
  void resize(size_t n) {
    if (n > size_) {
      reserve(n);
      while (size_ < n) new (data_ + size_++) T();
    } else {
      truncate(n);
    }
  }
  void clear() { truncate(0); }

 private:
  // Out of line: the common append, into free inline room, stays small.
  [[gnu::noinline]] void grow() { reserve(cap_ * 2); }
  void truncate(size_t n) {
    while (size_ > n) data_[--size_].~T();
  }
  T* inline_ptr() { return reinterpret_cast<T*>(inline_); }
  // The pointer and counts first: readers touch them and the first
  // elements, both next to whatever precedes the vector in its object.
  T* data_ = reinterpret_cast<T*>(inline_);
  // 32-bit counts: a node holds two of these, and 8 bytes less keeps the
  // common nodes inside their pool size class.
  uint32_t size_ = 0;
  uint32_t cap_ = N;
  alignas(T) unsigned char inline_[N * sizeof(T)];
};

}  // namespace ag
