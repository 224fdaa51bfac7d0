// Replays PyTorch's OpInfo sample inputs (fixtures written by gen_opinfo.py,
// one file per op family) through ag's C ABI: each case names an ag_op_*
// function and its arguments; the call goes through the table generated
// from the API description (gen_calls.py), so no op is listed here. Checks
// the outputs, the gradients of sum(output * c) and the second-order
// products (the gradient of sum(gradient * w)) against PyTorch's, in f64,
// within each case's rtol/atol (|ag - torch| <= atol + rtol |torch|; NaN
// and infinities must match exactly).
#include <ag/ag.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <iterator>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// One argument of a case: a tensor (index into the case's tensors), NULL,
// a tensor list, an int64 array, an integer or a double.
struct Arg {
  enum Kind { Tensor = 0, Null = 1, List = 2, Array = 3, Integer = 4, Number = 5 } kind;
  uint32_t index = 0;
  std::vector<ag_tensor*> list;
  std::vector<int64_t> array;
  int64_t integer = 0;
  double number = 0;
};

// The arguments as the generated callers read them (by in-parameter position).
struct OpArgs {
  std::vector<Arg> args;
  std::vector<ag_tensor*> tensors;
  ag_context* ctx = nullptr;
  const ag_tensor* tensor(int k) const { return args[k].kind == Arg::Null ? nullptr : tensors[args[k].index]; }
  ag_tensor* mutable_tensor(int k) const { return args[k].kind == Arg::Null ? nullptr : tensors[args[k].index]; }
  const ag_tensor* const* list(int k) const { return args[k].list.data(); }
  const int64_t* array(int k) const { return args[k].kind == Arg::Null ? nullptr : args[k].array.data(); }
  size_t count(int k) const { return args[k].kind == Arg::List ? args[k].list.size() : args[k].array.size(); }
  int64_t integer(int k) const { return args[k].integer; }
  double number(int k) const { return args[k].number; }
};

struct OpCall {
  const char* name;
  int outputs;
  ag_status (*call)(const OpArgs&, ag_tensor**);
};

#include "opinfo_calls.h"

const OpCall* find_call(const std::string& name) {
  for (const OpCall& c : kCalls) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

// A tensor as stored in a fixture.
struct Data {
  int32_t dtype = AG_F64;
  bool requires_grad = false;
  std::vector<int64_t> shape;
  std::vector<double> f64;
  std::vector<int64_t> i64;
  std::vector<uint8_t> b8;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

class Reader {
 public:
  explicit Reader(const std::string& path) {
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f) throw std::runtime_error("cannot open " + path);
    char buf[1 << 16];
    int n;
    while ((n = gzread(f, buf, sizeof buf)) > 0) bytes_.insert(bytes_.end(), buf, buf + n);
    gzclose(f);
    if (n < 0) throw std::runtime_error("cannot read " + path);
  }
  template <class T>
  T get() {
    T v;
    need(sizeof v);
    std::memcpy(&v, bytes_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::string str() {
    const uint32_t n = get<uint32_t>();
    need(n);
    std::string s(bytes_.begin() + pos_, bytes_.begin() + pos_ + n);
    pos_ += n;
    return s;
  }
  Data tensor() {
    Data d;
    const uint8_t code = get<uint8_t>();
    d.dtype = code == 0 ? AG_F64 : code == 1 ? AG_I64 : AG_BOOL;
    d.requires_grad = get<uint8_t>() != 0;
    const uint8_t ndim = get<uint8_t>();
    for (int i = 0; i < ndim; ++i) d.shape.push_back(get<int64_t>());
    for (int64_t i = 0; i < d.numel(); ++i) {
      if (code == 0) d.f64.push_back(get<double>());
      if (code == 1) d.i64.push_back(get<int64_t>());
      if (code == 2) d.b8.push_back(get<uint8_t>());
    }
    return d;
  }
  bool done() const { return pos_ == bytes_.size(); }

 private:
  void need(size_t n) const {
    if (pos_ + n > bytes_.size()) throw std::runtime_error("fixture truncated");
  }
  std::vector<char> bytes_;
  size_t pos_ = 0;
};

// Handles released at the end of a case.
struct Owned {
  std::vector<ag_tensor*> all;
  ag_tensor* keep(ag_tensor* t) {
    if (t) all.push_back(t);
    return t;
  }
  ~Owned() {
    for (ag_tensor* t : all) ag_tensor_release(t);
  }
};

std::string last_error() {
  const char* m = ag_last_error_message();
  return m ? m : "";
}

ag_tensor* make(ag_context* ctx, const Data& d, Owned& own) {
  const void* data = d.dtype == AG_F64 ? static_cast<const void*>(d.f64.data())
                     : d.dtype == AG_I64 ? static_cast<const void*>(d.i64.data())
                                         : static_cast<const void*>(d.b8.data());
  ag_tensor* t = nullptr;
  if (ag_tensor_create(&t, ctx, d.dtype, d.shape.data(), static_cast<int32_t>(d.shape.size()), data) != AG_OK) {
    throw std::runtime_error("ag_tensor_create: " + last_error());
  }
  own.keep(t);
  if (d.requires_grad) ag_tensor_requires_grad(t, 1);
  return t;
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::ostringstream o;
  o << "(";
  for (size_t i = 0; i < s.size(); ++i) o << (i ? "," : "") << s[i];
  o << ")";
  return o.str();
}

// "" if t matches d within the tolerance, else what differs.
std::string compare(const ag_tensor* t, const Data& d, double rtol, double atol) {
  if (t == nullptr) return "missing";
  std::vector<int64_t> shape(static_cast<size_t>(ag_tensor_ndim(t)));
  ag_tensor_shape(t, shape.data(), static_cast<int32_t>(shape.size()));
  if (shape != d.shape) return "shape " + shape_str(shape) + ", PyTorch " + shape_str(d.shape);
  if (ag_tensor_dtype(t) != d.dtype) return "dtype " + std::to_string(ag_tensor_dtype(t));
  const size_t n = static_cast<size_t>(d.numel());
  std::ostringstream o;
  if (d.dtype == AG_F64) {
    std::vector<double> v(n);
    ag_tensor_copy_data(t, v.data(), n * sizeof(double));
    for (size_t i = 0; i < n; ++i) {
      const double a = v[i], e = d.f64[i];
      const bool same_special = (std::isnan(a) && std::isnan(e)) || (std::isinf(e) && a == e);
      if (!same_special && !(std::fabs(a - e) <= atol + rtol * std::fabs(e))) {
        o.precision(17);
        o << "element " << i << ": ag " << a << ", PyTorch " << e;
        return o.str();
      }
    }
  } else {
    std::vector<uint8_t> v(n * (d.dtype == AG_I64 ? 8 : 1));
    ag_tensor_copy_data(t, v.data(), v.size());
    const void* e = d.dtype == AG_I64 ? static_cast<const void*>(d.i64.data()) : d.b8.data();
    if (!v.empty() && std::memcmp(v.data(), e, v.size()) != 0) return "integer or bool values differ";
  }
  return "";
}

struct Case {
  std::string function, label;
  double rtol = 0, atol = 0;
  bool gradgrad = false;
  std::vector<Data> inputs;
  OpArgs args;
  std::vector<Data> outputs, cotangents;
  std::vector<bool> has_cotangent;
  std::vector<Data> grads, ws, seconds;
};

Case read_case(Reader& r) {
  Case c;
  c.function = r.str();
  c.label = r.str();
  c.rtol = r.get<double>();
  c.atol = r.get<double>();
  c.gradgrad = r.get<uint8_t>() != 0;
  const uint32_t nt = r.get<uint32_t>();
  for (uint32_t i = 0; i < nt; ++i) c.inputs.push_back(r.tensor());
  const uint32_t na = r.get<uint32_t>();
  std::vector<std::vector<uint32_t>> lists(na);
  for (uint32_t i = 0; i < na; ++i) {
    Arg a;
    a.kind = static_cast<Arg::Kind>(r.get<uint8_t>());
    switch (a.kind) {
      case Arg::Tensor: a.index = r.get<uint32_t>(); break;
      case Arg::Null: break;
      case Arg::List: {
        const uint32_t n = r.get<uint32_t>();
        for (uint32_t k = 0; k < n; ++k) lists[i].push_back(r.get<uint32_t>());
        break;
      }
      case Arg::Array: {
        const uint32_t n = r.get<uint32_t>();
        for (uint32_t k = 0; k < n; ++k) a.array.push_back(r.get<int64_t>());
        break;
      }
      case Arg::Integer: a.integer = r.get<int64_t>(); break;
      case Arg::Number: a.number = r.get<double>(); break;
      default: throw std::runtime_error("bad argument kind");
    }
    c.args.args.push_back(a);
  }
  c.args.args.shrink_to_fit();
  for (uint32_t i = 0; i < na; ++i) {
    for (uint32_t idx : lists[i]) c.args.args[i].list.push_back(reinterpret_cast<ag_tensor*>(uintptr_t{idx}));
  }
  const uint32_t no = r.get<uint32_t>();
  for (uint32_t i = 0; i < no; ++i) {
    const bool has = r.get<uint8_t>() != 0;
    c.has_cotangent.push_back(has);
    c.outputs.push_back(r.tensor());
    c.cotangents.push_back(has ? r.tensor() : Data{});
  }
  for (const Data& in : c.inputs) {
    if (!in.requires_grad) continue;
    c.grads.push_back(r.tensor());
    if (c.gradgrad) {
      c.ws.push_back(r.tensor());
      c.seconds.push_back(r.tensor());
    }
  }
  return c;
}

// Runs one case; returns "" or the first difference.
std::string replay(ag_context* ctx, Case& c) {
  const OpCall* call = find_call(c.function);
  if (!call) return "no caller for " + c.function;
  Owned own;
  std::vector<ag_tensor*> diff;
  for (const Data& d : c.inputs) {
    c.args.tensors.push_back(make(ctx, d, own));
    if (d.requires_grad) diff.push_back(c.args.tensors.back());
  }
  for (Arg& a : c.args.args) {
    for (ag_tensor*& t : a.list) t = c.args.tensors[reinterpret_cast<uintptr_t>(t)];
  }
  c.args.ctx = ctx;
  if (static_cast<size_t>(call->outputs) != c.outputs.size()) {
    return "ag returns " + std::to_string(call->outputs) + " outputs, PyTorch " + std::to_string(c.outputs.size());
  }
  std::vector<ag_tensor*> out(c.outputs.size(), nullptr);
  if (call->call(c.args, out.data()) != AG_OK) return "call failed: " + last_error();
  for (ag_tensor* t : out) own.keep(t);
  for (size_t i = 0; i < out.size(); ++i) {
    const std::string d = compare(out[i], c.outputs[i], c.rtol, c.atol);
    if (!d.empty()) return "output " + std::to_string(i) + ": " + d;
  }
  if (diff.empty()) return "";
  std::vector<const ag_tensor*> roots, seeds;
  for (size_t i = 0; i < out.size(); ++i) {
    if (c.has_cotangent[i] && ag_tensor_get_requires_grad(out[i])) {
      roots.push_back(out[i]);
      seeds.push_back(make(ctx, c.cotangents[i], own));
    }
  }
  std::vector<ag_tensor*> grads(diff.size(), nullptr);
  ag_grad_options opts = AG_GRAD_OPTIONS_INIT;
  opts.create_graph = c.gradgrad ? 1 : 0;
  opts.allow_unused = 1;
  if (!roots.empty()) {
    if (ag_grad(grads.data(), roots.data(), seeds.data(), static_cast<int32_t>(roots.size()),
                const_cast<const ag_tensor* const*>(diff.data()), static_cast<int32_t>(diff.size()), &opts) != AG_OK) {
      return "ag_grad failed: " + last_error();
    }
  }
  for (ag_tensor* g : grads) own.keep(g);
  // An input no gradient reaches has gradient 0 (PyTorch's None, stored as zeros).
  auto or_zeros = [&](ag_tensor* g, size_t i) {
    if (g) return g;
    ag_tensor* z = nullptr;
    std::vector<int64_t>& s = c.grads[i].shape;
    ag_tensor_zeros(&z, ctx, AG_F64, s.data(), static_cast<int32_t>(s.size()));
    return own.keep(z);
  };
  for (size_t i = 0; i < diff.size(); ++i) {
    const std::string d = compare(or_zeros(grads[i], i), c.grads[i], c.rtol, c.atol);
    if (!d.empty()) return "gradient of input " + std::to_string(i) + ": " + d;
  }
  if (!c.gradgrad) return "";
  ag_tensor* total = nullptr;
  for (size_t i = 0; i < diff.size(); ++i) {
    if (!grads[i] || !ag_tensor_get_requires_grad(grads[i])) continue;
    ag_tensor *prod = nullptr, *term = nullptr;
    if (ag_op_mul(&prod, grads[i], make(ctx, c.ws[i], own)) != AG_OK || ag_op_sum(&term, own.keep(prod)) != AG_OK) {
      return "sum(gradient * w) failed: " + last_error();
    }
    own.keep(term);
    if (total) {
      ag_tensor* s = nullptr;
      if (ag_op_add(&s, total, term) != AG_OK) return "add failed: " + last_error();
      term = own.keep(s);
    }
    total = term;
  }
  std::vector<ag_tensor*> second(diff.size(), nullptr);
  if (total) {
    const ag_tensor* root = total;
    ag_grad_options o2 = AG_GRAD_OPTIONS_INIT;
    o2.allow_unused = 1;
    if (ag_grad(second.data(), &root, nullptr, 1, const_cast<const ag_tensor* const*>(diff.data()),
                static_cast<int32_t>(diff.size()), &o2) != AG_OK) {
      return "second ag_grad failed: " + last_error();
    }
  }
  for (ag_tensor* g : second) own.keep(g);
  for (size_t i = 0; i < diff.size(); ++i) {
    const std::string d = compare(or_zeros(second[i], i), c.seconds[i], c.rtol, c.atol);
    if (!d.empty()) return "second-order product for input " + std::to_string(i) + ": " + d;
  }
  return "";
}

class OpInfoReplay : public ::testing::TestWithParam<std::string> {};

TEST_P(OpInfoReplay, MatchesPyTorch) {
  const std::string path = std::string(AG_OPINFO_FIXTURES) + "/" + GetParam() + ".bin.gz";
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    std::fclose(f);
  } else {
    GTEST_SKIP() << "no OpInfo samples for the family " << GetParam();
  }
  Reader r(path);
  char magic[8];
  for (char& ch : magic) ch = r.get<char>();
  ASSERT_EQ(std::string(magic, 8), "AGOPINFO");
  ASSERT_EQ(r.get<uint32_t>(), 1u) << "fixture version";
  const uint32_t n = r.get<uint32_t>();
  ASSERT_GT(n, 0u);
  ag_context* ctx = nullptr;
  ASSERT_EQ(ag_context_create(&ctx, nullptr), AG_OK);
  int failed = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Case c = read_case(r);
    const std::string why = replay(ctx, c);
    if (!why.empty()) {
      ++failed;
      ADD_FAILURE() << c.function << " on " << c.label << ": " << why;
    }
  }
  EXPECT_TRUE(r.done()) << "trailing bytes in " << path;
  ag_context_release(ctx);
  std::printf("%s: %u cases replayed, %d differ\n", GetParam().c_str(), n, failed);
}

INSTANTIATE_TEST_SUITE_P(Families, OpInfoReplay,
                         ::testing::ValuesIn(std::vector<std::string>(std::begin(kFamilies), std::end(kFamilies))),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
