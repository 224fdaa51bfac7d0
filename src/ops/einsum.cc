// einsum: the equation is parsed into labels per operand dim (letters, and
// internal labels for the dims of an ellipsis, aligned from the right), then
// computed with differentiable ops only: repeated labels of one operand
// become diagonals, labels of one operand that nothing else needs are summed
// out, and operands are contracted left to right as batched products
// (permute, reshape, bmm). Size-1 dims broadcast, as in PyTorch.
#include <string>
#include <vector>

#include "ops/reduce_dims.h"

namespace ag::ops {

namespace {

constexpr int kLetters = 52;  // A-Z then a-z; ellipsis dims use kLetters + i

int letter_label(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}

struct Term {
  std::vector<int> labels;  // one per dim
  bool ellipsis = false;
  int letters = 0;  // explicit letters
};

// The term of eq in [begin, end); positions in messages count in eq.
Term parse_term(const std::string& eq, size_t begin, size_t end) {
  Term t;
  for (size_t i = begin; i < end; ++i) {
    const char c = eq[i];
    if (c == '.') {
      if (t.ellipsis || i + 3 > end || eq.compare(i, 3, "...") != 0) {
        fail(AG_ERR_INVALID_ARGUMENT, "equation \"", eq, "\": invalid ellipsis at position ", i);
      }
      t.ellipsis = true;
      t.labels.push_back(-1);  // placeholder, expanded per operand
      i += 2;
    } else if (c == ' ') {
      continue;
    } else if (letter_label(c) < 0) {
      fail(AG_ERR_INVALID_ARGUMENT, "equation \"", eq, "\": invalid character '", c, "' at position ", i,
           " (subscripts are letters a-z, A-Z and ...)");
    } else {
      t.labels.push_back(letter_label(c));
      ++t.letters;
    }
  }
  return t;
}

// The labels of an operand of ndim dims: the ellipsis placeholder replaced
// by the labels of its last ndim - letters ellipsis dims (of `span` in all).
std::vector<int> expand_labels(const Term& t, int ndim, int span) {
  std::vector<int> out;
  for (int l : t.labels) {
    if (l >= 0) {
      out.push_back(l);
      continue;
    }
    const int e = ndim - t.letters;
    for (int i = 0; i < e; ++i) out.push_back(kLetters + span - e + i);
  }
  return out;
}

struct Operand {
  Tensor x;
  std::vector<int> labels;
};

int find(const std::vector<int>& v, int l) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == l) return static_cast<int>(i);
  }
  return -1;
}

// Repeated labels of one operand become one diagonal dim (moved last).
void take_diagonals(Operand& o) {
  for (size_t i = 0; i < o.labels.size(); ++i) {
    for (size_t j = i + 1; j < o.labels.size(); ++j) {
      if (o.labels[i] != o.labels[j]) continue;
      const int l = o.labels[i];
      if (o.x->shape()[i] != o.x->shape()[j]) {
        fail(AG_ERR_SHAPE, "subscript repeated in one operand has sizes ", o.x->shape()[i], " and ", o.x->shape()[j]);
      }
      o.x = diagonal(o.x, 0, static_cast<int64_t>(i), static_cast<int64_t>(j));
      o.labels.erase(o.labels.begin() + j);
      o.labels.erase(o.labels.begin() + i);
      o.labels.push_back(l);
      take_diagonals(o);
      return;
    }
  }
}

// Sums out the dims whose labels `keep` does not hold.
void sum_unneeded(Operand& o, const std::vector<bool>& keep) {
  Dims dims;
  std::vector<int> rest;
  for (size_t i = 0; i < o.labels.size(); ++i) {
    if (keep[o.labels[i]]) {
      rest.push_back(o.labels[i]);
    } else {
      dims.push_back(static_cast<int64_t>(i));
    }
  }
  if (dims.size() == 0) return;
  o.x = sum_dims(o.x, dims, false);
  o.labels = rest;
}

int64_t size_of(const Operand& o, int l) {
  const int i = find(o.labels, l);
  return i < 0 ? 1 : o.x->shape()[i];
}

// a and b contracted over the labels both have and `later` does not need.
Operand contract(const Operand& a, const Operand& b, const std::vector<bool>& later) {
  std::vector<int> batch, left, right, inner;
  for (int l : a.labels) {
    if (find(b.labels, l) < 0) {
      left.push_back(l);
    } else {
      (later[l] ? batch : inner).push_back(l);
    }
  }
  for (int l : b.labels) {
    if (find(a.labels, l) < 0) right.push_back(l);
  }
  const size_t dims = batch.size() + left.size() + right.size();
  if (dims > kMaxDims) {
    fail(AG_ERR_SHAPE, "the product of two operands would have ", dims, " dims, more than ", kMaxDims);
  }
  // Common sizes (size 1 broadcasts) and the grouped shapes.
  auto group = [&](const Operand& o, const std::vector<int>& g1, const std::vector<int>& g2,
                   const std::vector<int>& g3, int64_t& n1, int64_t& n2, int64_t& n3) {
    Dims perm, shape;
    auto add = [&](const std::vector<int>& g, int64_t& n) {
      const int begin = shape.size();
      for (int l : g) {
        perm.push_back(find(o.labels, l));
        const int64_t s = std::max(size_of(a, l), size_of(b, l));
        const int64_t mine = size_of(o, l);
        if (mine != s && mine != 1) {
          fail(AG_ERR_SHAPE, "a subscript has sizes ", size_of(a, l), " and ", size_of(b, l), " in two operands");
        }
        shape.push_back(s);
      }
      // Saturated: the sizes overflow only for an empty operand (its matrix
      // is empty then) or a product too large for any shape.
      n = saturating_product(shape, begin, shape.size());
    };
    add(g1, n1);
    add(g2, n2);
    add(g3, n3);
    Tensor p = permute(o.x, perm);
    if (p->shape() != shape) p = expand(p, shape);
    return reshape(p, Dims{n1, n2, n3});
  };
  int64_t nb = 1, nl = 1, nk = 1, nr = 1, tmp1 = 1, tmp2 = 1;
  const Tensor ma = group(a, batch, left, inner, nb, nl, nk);
  const Tensor mb = group(b, batch, inner, right, tmp1, tmp2, nr);
  Operand r;
  Dims shape;
  for (int l : batch) shape.push_back(std::max(size_of(a, l), size_of(b, l)));
  for (int l : left) shape.push_back(size_of(a, l));
  for (int l : right) shape.push_back(size_of(b, l));
  r.x = reshape(bmm(ma, mb), shape);
  r.labels = batch;
  r.labels.insert(r.labels.end(), left.begin(), left.end());
  r.labels.insert(r.labels.end(), right.begin(), right.end());
  return r;
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  if (operands.empty()) fail(AG_ERR_INVALID_ARGUMENT, "einsum needs at least one operand");
  for (const Tensor& t : operands) {
    check_same(*operands[0], *t);
    check_floating(*t);
  }
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<Term> terms;
  size_t begin = 0;
  while (true) {
    const size_t comma = lhs.find(',', begin);
    terms.push_back(parse_term(equation, begin, comma == std::string::npos ? lhs.size() : comma));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  if (terms.size() != operands.size()) {
    fail(AG_ERR_INVALID_ARGUMENT, "equation \"", equation, "\" has ", terms.size(), " operands, got ",
         operands.size(), " tensors");
  }
  int span = 0;  // ellipsis dims of the broadcast result
  std::vector<Operand> ops;
  for (size_t k = 0; k < terms.size(); ++k) {
    const Term& t = terms[k];
    const int nd = operands[k]->ndim();
    if (t.ellipsis ? nd < t.letters : nd != t.letters) {
      fail(AG_ERR_SHAPE, "operand ", k, " has ", nd, " dims but its subscripts name ", t.letters,
           t.ellipsis ? " or more" : "");
    }
    if (t.ellipsis) span = std::max(span, nd - t.letters);
  }
  std::vector<int> count(static_cast<size_t>(kLetters + span), 0);
  for (size_t k = 0; k < terms.size(); ++k) {
    ops.push_back({operands[k], expand_labels(terms[k], operands[k]->ndim(), span)});
    for (int l : ops.back().labels) ++count[l];
  }
  std::vector<int> out;
  if (arrow == std::string::npos) {  // implicit: ellipsis dims, then labels seen once, sorted
    for (int i = 0; i < span; ++i) out.push_back(kLetters + i);
    for (int l = 0; l < kLetters; ++l) {
      if (count[l] == 1) out.push_back(l);
    }
  } else {
    const Term t = parse_term(equation, arrow + 2, equation.size());
    out = expand_labels(t, t.letters + span, span);
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] < kLetters && count[out[i]] == 0) {
        fail(AG_ERR_INVALID_ARGUMENT, "equation \"", equation, "\": output subscript ", i,
             " appears in no operand");
      }
      if (find(std::vector<int>(out.begin(), out.begin() + i), out[i]) >= 0) {
        fail(AG_ERR_INVALID_ARGUMENT, "equation \"", equation, "\": output subscript ", i, " appears twice");
      }
    }
  }
  // Left to right: each step keeps what the output and later operands need.
  for (Operand& o : ops) take_diagonals(o);
  auto needed_after = [&](size_t k) {
    std::vector<bool> need(count.size(), false);
    for (int l : out) need[l] = true;
    for (size_t j = k + 1; j < ops.size(); ++j) {
      for (int l : ops[j].labels) need[l] = true;
    }
    return need;
  };
  Operand acc = ops[0];
  {
    std::vector<bool> keep = needed_after(0);
    if (ops.size() > 1) {
      for (int l : ops[1].labels) keep[l] = true;
    }
    sum_unneeded(acc, keep);
  }
  for (size_t k = 1; k < ops.size(); ++k) {
    std::vector<bool> later = needed_after(k);
    std::vector<bool> keep_b = later;
    for (int l : acc.labels) keep_b[l] = true;
    sum_unneeded(ops[k], keep_b);
    acc = contract(acc, ops[k], later);
  }
  std::vector<bool> keep(count.size(), false);
  for (int l : out) keep[l] = true;
  sum_unneeded(acc, keep);
  Dims perm;
  for (int l : out) perm.push_back(find(acc.labels, l));
  return permute(acc.x, perm);
}

}  // namespace ag::ops
