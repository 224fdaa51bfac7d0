// safetensors files (ag/io.h): the header is parsed with nlohmann::json's
// SAX parser and written by hand (strings escaped by nlohmann::json); data is
// memory-mapped on load and wrapped without copies.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "ag/io.h"
#include "api/guard.h"
#include "autograd/grad_math.h"
#include "autograd/grad_mode.h"
#include "core/storage.h"

using namespace ag;
using json = nlohmann::json;

namespace {

// The dtypes of the format; the first four are ag's.
struct DtypeName {
  const char* name;
  int ag;  // 0: ag lacks it
  size_t size;
};
constexpr DtypeName kDtypes[] = {
    {"F32", AG_F32, 4}, {"F64", AG_F64, 8}, {"I64", AG_I64, 8}, {"BOOL", AG_BOOL, 1},
    {"F16", 0, 2},      {"BF16", 0, 2},     {"I8", 0, 1},       {"U8", 0, 1},
    {"I16", 0, 2},      {"U16", 0, 2},      {"I32", 0, 4},      {"U32", 0, 4},
    {"U64", 0, 8},      {"F8_E4M3", 0, 1},  {"F8_E5M2", 0, 1},  {"C64", 0, 8},
};

const DtypeName* find_dtype(const std::string& s) {
  for (const auto& d : kDtypes) {
    if (s == d.name) return &d;
  }
  return nullptr;
}

const char* format_name(DType dt) {
  switch (dt) {
    case DType::F32: return "F32";
    case DType::F64: return "F64";
    case DType::I64: return "I64";
    case DType::Bool: return "BOOL";
  }
  return "?";
}

// The mapped file, shared by the handle and every tensor wrapping it.
struct Mapping {
  void* base = nullptr;
  size_t size = 0;
  std::atomic<int64_t> refs{1};
  void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      if (base) munmap(base, size);
      delete this;
    }
  }
};

void release_mapping(void*, void* ctx) { static_cast<Mapping*>(ctx)->release(); }

struct Entry {
  std::string name;
  const DtypeName* dtype;
  Dims shape;
  uint64_t begin, end;  // relative to the data section
};

constexpr uint32_t kFileTag = 0x5AFE7E45u;

struct File {
  uint32_t tag = kFileTag;
  // The file keeps its context alive as a storage does.
  explicit File(Context* c) : ctx(c), owner_side(c->retain_storage_ref()) {}
  Context* ctx;
  bool owner_side;
  Mapping* map = nullptr;
  const char* data = nullptr;  // start of the data section
  std::vector<Entry> entries;  // by begin offset
  std::map<std::string, std::string> metadata;
  ~File() {
    tag = 0;
    if (map) map->release();
    ctx->release_storage_ref(owner_side);
  }
};

File& file_arg(const ag_safetensors* f) {
  if (f == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "file is NULL");
  File* p = reinterpret_cast<File*>(const_cast<ag_safetensors*>(f));
  if (p->tag != kFileTag) fail(AG_ERR_INVALID_ARGUMENT, "file is not a live handle (already released?)");
  return *p;
}

[[noreturn]] void bad_file(const char* path, const std::string& what) {
  fail(AG_ERR_INVALID_ARGUMENT, "'", path, "' is not a valid safetensors file: ", what);
}

// The header as far as the format needs it, read with nlohmann's SAX
// parser into plain containers: a json DOM would do, but destroying one
// allocates (its iterative teardown), so running out of memory while it goes
// would end the process.
struct Value {
  enum Kind { kMissing, kString, kArray, kOther } kind = kMissing;
  std::string str;
  std::vector<uint64_t> nums;  // the array's entries that are non-negative integers
  size_t count = 0;            // the array's entries
};
struct RawEntry {
  bool is_object = false;
  bool other_key = false;
  Value dtype, shape, offsets;
};
struct RawHeader {
  bool is_object = false;
  bool has_metadata = false, metadata_is_object = false;
  std::map<std::string, Value> metadata;
  std::map<std::string, RawEntry> tensors;  // by name, as a json object iterates
};

class HeaderReader : public nlohmann::json_sax<json> {
 public:
  explicit HeaderReader(RawHeader& h) : h_(h) {}
  std::string error;  // the parser's message, when it fails

  bool null() override { return scalar(false, 0, false); }
  bool boolean(bool) override { return scalar(false, 0, false); }
  bool number_integer(number_integer_t) override { return scalar(false, 0, false); }
  bool number_unsigned(number_unsigned_t v) override { return scalar(false, v, true); }
  bool number_float(number_float_t, const string_t&) override { return scalar(false, 0, false); }
  bool string(string_t& v) override {
    str_ = &v;
    return scalar(true, 0, false);
  }
  bool binary(binary_t&) override { return scalar(false, 0, false); }
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    key_[stack_.size()] = k;
    if (top() == kEntry && k != "dtype" && k != "shape" && k != "data_offsets") entry_->other_key = true;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    error = e.what();
    return false;
  }

 private:
  enum Where { kTop, kRoot, kMeta, kEntry, kShape, kOffsets, kSkip };
  Where top() const { return stack_.empty() ? kTop : stack_.back(); }
  const std::string& key() const { return key_[stack_.size()]; }
  Value* entry_field() {
    if (key() == "dtype") return &entry_->dtype;
    if (key() == "shape") return &entry_->shape;
    if (key() == "data_offsets") return &entry_->offsets;
    return nullptr;
  }
  // A value that is not a container, at the current place.
  bool scalar(bool is_string, uint64_t v, bool is_unsigned) {
    Value* field = nullptr;
    switch (top()) {
      case kTop: break;  // not an object
      case kRoot:
        if (key() == "__metadata__") {
          h_.has_metadata = true;
          h_.metadata_is_object = false;
        } else {
          h_.tensors[key()] = RawEntry();
        }
        break;
      case kMeta: field = &h_.metadata[key()]; break;
      case kEntry: field = entry_field(); break;
      case kShape:
      case kOffsets: {
        Value& a = top() == kShape ? entry_->shape : entry_->offsets;
        a.count++;
        if (is_unsigned) a.nums.push_back(v);
        break;
      }
      case kSkip: break;
    }
    if (field) {
      *field = Value();
      field->kind = is_string ? Value::kString : Value::kOther;
      if (is_string) field->str = *str_;
    }
    return true;
  }
  bool open(bool object) {
    Where next = kSkip;
    switch (top()) {
      case kTop:
        h_.is_object = object;
        if (object) next = kRoot;
        break;
      case kRoot:
        if (key() == "__metadata__") {
          h_.has_metadata = true;
          h_.metadata_is_object = object;
          h_.metadata.clear();
          if (object) next = kMeta;
        } else {
          entry_ = &(h_.tensors[key()] = RawEntry());
          entry_->is_object = object;
          if (object) next = kEntry;
        }
        break;
      case kMeta: h_.metadata[key()] = Value{Value::kOther, {}, {}, 0}; break;
      case kEntry: {
        Value* field = entry_field();
        if (field) {
          *field = Value();
          field->kind = object ? Value::kOther : Value::kArray;
          if (!object) next = key() == "shape" ? kShape : kOffsets;
        }
        break;
      }
      case kShape:
      case kOffsets: (top() == kShape ? entry_->shape : entry_->offsets).count++; break;
      case kSkip: break;
    }
    stack_.push_back(next);
    if (key_.size() <= stack_.size()) key_.resize(stack_.size() + 1);
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  RawHeader& h_;
  std::vector<Where> stack_;
  std::vector<std::string> key_ = std::vector<std::string>(2);  // the current key at each depth
  RawEntry* entry_ = nullptr;
  std::string* str_ = nullptr;
};

// Parses and checks the header; entries come out sorted by offset.
void parse_header(File& f, const char* path, const char* header, size_t header_len, uint64_t data_size) {
  RawHeader h;
  HeaderReader reader(h);
  if (!json::sax_parse(header, header + header_len, &reader)) {
    bad_file(path, "invalid JSON header: " + reader.error);
  }
  if (!h.is_object) bad_file(path, "the header is not a JSON object");
  if (h.has_metadata) {
    if (!h.metadata_is_object) bad_file(path, "__metadata__ is not an object");
    for (const auto& [key, value] : h.metadata) {
      if (value.kind != Value::kString) bad_file(path, "__metadata__ entry '" + key + "' is not a string");
      f.metadata[key] = value.str;
    }
  }
  for (const auto& [name, v] : h.tensors) {
    const std::string where = "tensor '" + name + "'";
    if (!v.is_object) bad_file(path, where + " is not an object");
    Entry e;
    e.name = name;
    if (v.dtype.kind != Value::kString) bad_file(path, where + " has no dtype string");
    e.dtype = find_dtype(v.dtype.str);
    if (!e.dtype) bad_file(path, where + " has dtype '" + v.dtype.str + "', which is not a safetensors dtype");
    if (v.shape.kind != Value::kArray) bad_file(path, where + " has no shape array");
    if (v.shape.count > static_cast<size_t>(kMaxDims)) {
      bad_file(path, where + " has " + std::to_string(v.shape.count) + " dimensions (ag's limit is " +
                         std::to_string(kMaxDims) + ")");
    }
    if (v.shape.nums.size() != v.shape.count) {
      bad_file(path, where + " has a shape entry that is not a non-negative integer");
    }
    // numel * itemsize, checked for overflow against the data size.
    uint64_t bytes = e.dtype->size;
    bool too_big = false;
    for (const uint64_t n : v.shape.nums) {
      if (n > static_cast<uint64_t>(INT64_MAX)) bad_file(path, where + " has a size beyond int64");
      e.shape.push_back(static_cast<int64_t>(n));
      if (n != 0 && bytes > data_size / n) too_big = true;
      bytes = too_big ? 0 : bytes * n;
    }
    if (v.offsets.kind != Value::kArray || v.offsets.count != 2 || v.offsets.nums.size() != 2) {
      bad_file(path, where + " has no data_offsets [begin, end] of non-negative integers");
    }
    e.begin = v.offsets.nums[0];
    e.end = v.offsets.nums[1];
    if (e.begin > e.end || e.end > data_size) {
      bad_file(path, where + " has data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                         "] outside the " + std::to_string(data_size) + " data bytes");
    }
    if (too_big || e.end - e.begin != bytes) {
      bad_file(path, where + " has shape and dtype " + e.dtype->name + " that need a different byte count than its " +
                         std::to_string(e.end - e.begin) + " bytes");
    }
    if (v.other_key) bad_file(path, where + " has keys other than dtype, shape and data_offsets");
    f.entries.push_back(std::move(e));
  }
  if (f.entries.size() > static_cast<size_t>(INT32_MAX)) bad_file(path, "too many tensors");
  std::sort(f.entries.begin(), f.entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  for (size_t i = 1; i < f.entries.size(); ++i) {
    const Entry &a = f.entries[i - 1], &b = f.entries[i];
    if (b.begin < a.end) bad_file(path, "the data of tensors '" + a.name + "' and '" + b.name + "' overlap");
  }
}

// A JSON string literal of s; json::type_error for invalid UTF-8. (A json
// string, unlike an object or array, is destroyed without allocating.)
std::string quoted(const char* s) { return json(s).dump(); }

std::string sys_error(const char* what, const char* path) {
  return std::string(what) + " '" + path + "': " + std::strerror(errno);
}

// Closes a descriptor on every path.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

void write_all(int fd, const char* p, size_t n, const std::string& path) {
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail(AG_ERR_INVALID_ARGUMENT, sys_error("cannot write", path.c_str()));
    p += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace

extern "C" {

AG_API ag_status ag_safetensors_save(const char* path, const char* const* names, const ag_tensor* const* tensors,
                                     int32_t num_tensors, const char* const* metadata_keys,
                                     const char* const* metadata_values, int32_t num_metadata) noexcept {
  return api::call("ag_safetensors_save", [&] {
    if (path == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "path is NULL");
    if (num_tensors < 0) fail(AG_ERR_INVALID_ARGUMENT, "num_tensors ", num_tensors, " is negative");
    if (num_tensors > 0 && (names == nullptr || tensors == nullptr)) {
      fail(AG_ERR_INVALID_ARGUMENT, "names or tensors is NULL but num_tensors is ", num_tensors);
    }
    if (num_metadata < 0) fail(AG_ERR_INVALID_ARGUMENT, "num_metadata ", num_metadata, " is negative");
    if (num_metadata > 0 && (metadata_keys == nullptr || metadata_values == nullptr)) {
      fail(AG_ERR_INVALID_ARGUMENT, "metadata_keys or metadata_values is NULL but num_metadata is ", num_metadata);
    }
    GradModeGuard off(false);
    // name -> its JSON value; a std::map writes them sorted, as a json object would.
    std::map<std::string, std::string> entries;
    std::vector<Tensor> data;
    uint64_t offset = 0;
    for (int32_t i = 0; i < num_tensors; ++i) {
      if (names[i] == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "names[", i, "] is NULL");
      const std::string name = names[i];
      if (name == "__metadata__") fail(AG_ERR_INVALID_ARGUMENT, "names[", i, "] is the reserved \"__metadata__\"");
      if (entries.count(name)) fail(AG_ERR_INVALID_ARGUMENT, "names[", i, "] \"", name, "\" appears twice");
      const std::string what = "tensors[" + std::to_string(i) + "]";
      const Tensor t = api::tensor_ref(tensors[i], what.c_str());
      const uint64_t bytes = t->nbytes();
      std::string shape;
      for (const int64_t d : t->shape()) shape += (shape.empty() ? "" : ",") + std::to_string(d);
      entries[name] = str("{\"dtype\":\"", format_name(t->dtype()), "\",\"shape\":[", shape,
                          "],\"data_offsets\":[", offset, ",", offset + bytes, "]}");
      offset += bytes;
      data.push_back(t->is_contiguous() ? t : grad_clone(t));
    }
    if (num_metadata > 0) {
      std::map<std::string, std::string> m;
      for (int32_t i = 0; i < num_metadata; ++i) {
        if (metadata_keys[i] == nullptr || metadata_values[i] == nullptr) {
          fail(AG_ERR_INVALID_ARGUMENT, "metadata key or value ", i, " is NULL");
        }
        if (m.count(metadata_keys[i])) {
          fail(AG_ERR_INVALID_ARGUMENT, "metadata key \"", metadata_keys[i], "\" appears twice");
        }
        m[metadata_keys[i]] = metadata_values[i];
      }
      std::string text;
      try {
        for (const auto& [k, v] : m) text += (text.empty() ? "{" : ",") + quoted(k.c_str()) + ":" + quoted(v.c_str());
      } catch (const json::type_error& e) {
        fail(AG_ERR_INVALID_ARGUMENT, "a name or metadata string is not valid UTF-8 (", e.what(), ")");
      }
      entries["__metadata__"] = text + "}";
    }
    std::string header;
    try {
      for (const auto& [k, v] : entries) header += (header.empty() ? "{" : ",") + quoted(k.c_str()) + ":" + v;
    } catch (const json::type_error& e) {
      fail(AG_ERR_INVALID_ARGUMENT, "a name or metadata string is not valid UTF-8 (", e.what(), ")");
    }
    header += header.empty() ? "{}" : "}";
    // Pad with spaces so the data starts 8-byte aligned (as the reference
    // implementation does), which lets a load share it.
    header.append((8 - header.size() % 8) % 8, ' ');
    unsigned char len[8];
    for (int b = 0; b < 8; ++b) len[b] = static_cast<unsigned char>(static_cast<uint64_t>(header.size()) >> (8 * b));
    const std::string tmp = std::string(path) + ".tmp";
    Fd fd;
    fd.fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd.fd < 0) fail(AG_ERR_INVALID_ARGUMENT, sys_error("cannot create", tmp.c_str()));
    try {
      write_all(fd.fd, reinterpret_cast<const char*>(len), 8, tmp);
      write_all(fd.fd, header.data(), header.size(), tmp);
      for (const Tensor& t : data) write_all(fd.fd, t->data(), t->nbytes(), tmp);
      const int rc = close(fd.fd);
      fd.fd = -1;
      if (rc != 0) fail(AG_ERR_INVALID_ARGUMENT, sys_error("cannot write", tmp.c_str()));
      if (std::rename(tmp.c_str(), path) != 0) fail(AG_ERR_INVALID_ARGUMENT, sys_error("cannot rename to", path));
    } catch (...) {
      std::remove(tmp.c_str());
      throw;
    }
  });
}

AG_API ag_status ag_safetensors_load(ag_safetensors** out, ag_context* ctx, const char* path) noexcept {
  return api::call("ag_safetensors_load", [&] {
    api::check_out(out);
    Context& c = api::context_arg(ctx);
    if (path == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "path is NULL");
    auto f = std::make_unique<File>(&c);
    Fd fd;
    fd.fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd.fd < 0) fail(AG_ERR_INVALID_ARGUMENT, sys_error("cannot open", path));
    struct stat st;
    if (fstat(fd.fd, &st) != 0) fail(AG_ERR_INVALID_ARGUMENT, sys_error("cannot stat", path));
    if (!S_ISREG(st.st_mode)) fail(AG_ERR_INVALID_ARGUMENT, "'", path, "' is not a regular file");
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (size < 8) bad_file(path, "it has " + std::to_string(size) + " bytes, fewer than the 8 of the header length");
    void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd.fd, 0);
    if (base == MAP_FAILED) fail(AG_ERR_INVALID_ARGUMENT, sys_error("cannot map", path));
    f->map = new (std::nothrow) Mapping;
    if (!f->map) {
      munmap(base, size);
      throw std::bad_alloc();
    }
    f->map->base = base;
    f->map->size = size;
    const unsigned char* bytes = static_cast<const unsigned char*>(base);
    uint64_t header_len = 0;
    for (int b = 7; b >= 0; --b) header_len = (header_len << 8) | bytes[b];
    if (header_len > size - 8) {
      bad_file(path, "the header length " + std::to_string(header_len) + " exceeds the " + std::to_string(size - 8) +
                         " bytes after it (truncated?)");
    }
    parse_header(*f, path, reinterpret_cast<const char*>(bytes + 8), header_len, size - 8 - header_len);
    f->data = reinterpret_cast<const char*>(bytes + 8 + header_len);
    *out = reinterpret_cast<ag_safetensors*>(f.release());
  });
}

AG_API void ag_safetensors_release(ag_safetensors* file) noexcept {
  if (file == nullptr) return;
  api::call("ag_safetensors_release", [&] { delete &file_arg(file); });
}

AG_API int32_t ag_safetensors_count(const ag_safetensors* file) noexcept {
  int32_t n = -1;
  api::call("ag_safetensors_count", [&] { n = static_cast<int32_t>(file_arg(file).entries.size()); });
  return n;
}

AG_API const char* ag_safetensors_name(const ag_safetensors* file, int32_t index) noexcept {
  const char* s = nullptr;
  api::call("ag_safetensors_name", [&] {
    const File& f = file_arg(file);
    if (index < 0 || static_cast<size_t>(index) >= f.entries.size()) {
      fail(AG_ERR_INVALID_ARGUMENT, "index ", index, " is outside 0..", static_cast<int64_t>(f.entries.size()) - 1);
    }
    s = f.entries[static_cast<size_t>(index)].name.c_str();
  });
  return s;
}

AG_API ag_status ag_safetensors_get(const ag_safetensors* file, const char* name, ag_tensor** out) noexcept {
  return api::call("ag_safetensors_get", [&] {
    const File& f = file_arg(file);
    api::check_out(out);
    if (name == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "name is NULL");
    const Entry* e = nullptr;
    for (const Entry& x : f.entries) {
      if (x.name == name) e = &x;
    }
    if (!e) fail(AG_ERR_INVALID_ARGUMENT, "the file has no tensor named '", name, "'");
    if (e->dtype->ag == 0) {
      fail(AG_ERR_DTYPE, "tensor '", name, "' has dtype ", e->dtype->name, ", which ag does not support (F32, F64, I64, BOOL)");
    }
    const DType dt = static_cast<DType>(e->dtype->ag);
    char* data = const_cast<char*>(f.data) + e->begin;
    const size_t nbytes = static_cast<size_t>(e->end - e->begin);
    if (dt == DType::Bool) {
      for (size_t i = 0; i < nbytes; ++i) {
        if (static_cast<unsigned char>(data[i]) > 1) {
          fail(AG_ERR_INVALID_ARGUMENT, "tensor '", name, "' (BOOL) has byte ", static_cast<int>(static_cast<unsigned char>(data[i])),
               " at element ", i, "; BOOL bytes must be 0 or 1");
        }
      }
    }
    const Dims strides = contiguous_strides(e->shape);
    f.map->retain();  // given back by `lent` at once when the data is copied
    LentMemory lent(HostDeleter{&release_mapping, data, f.map});
    Ref<Storage> s = Storage::wrap_or_copy(f.ctx, data, nbytes, itemsize(dt), lent, false);
    *out = api::to_handle(Tensor::adopt(new TensorImpl(std::move(s), dt, e->shape, strides, 0)));
  });
}

AG_API const char* ag_safetensors_metadata(const ag_safetensors* file, const char* key) noexcept {
  const char* s = nullptr;
  api::call("ag_safetensors_metadata", [&] {
    const File& f = file_arg(file);
    if (key == nullptr) fail(AG_ERR_INVALID_ARGUMENT, "key is NULL");
    const auto it = f.metadata.find(key);
    if (it != f.metadata.end()) s = it->second.c_str();
  });
  return s;
}

}  // extern "C"
