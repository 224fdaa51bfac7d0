// embedding_bag and ctc_loss, composed of differentiable ops (index_select,
// index_add, gather; logaddexp, pad, where), so gradients of
// every order follow from theirs. Both read their integer inputs (indices,
// offsets, targets, lengths) on the host to build constant index and mask
// tensors, so neither can be recorded for replay.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/grad_mode.h"
#include "ops/index_common.h"
#include "ops/ops.h"

namespace ag::ops {

namespace {

void refuse_recording(const char* op, const char* why) {
  if (Recorder* rec = recording()) [[unlikely]] {
    rec->refuse(AG_ERR_UNSUPPORTED, std::string(op) + " cannot be recorded: " + why);
  }
}

// A tensor of like's dtype and `shape` holding v (like i64_tensor, a host
// constant: written by no recorded step).
Tensor values_like(const Tensor& like, const Dims& shape, const std::vector<double>& v) {
  Tensor t = empty(like->context(), like->dtype(), shape);
  visit_floating(t->dtype(), [&](auto z) {
    using T = decltype(z);
    std::transform(v.begin(), v.end(), t->data_as<T>(), [](double x) { return static_cast<T>(x); });
  });
  return t;
}

Tensor bool_tensor(Context* ctx, const Dims& shape, const std::vector<uint8_t>& v) {
  Tensor t = empty(ctx, DType::Bool, shape);
  std::copy(v.begin(), v.end(), t->data_as<uint8_t>());
  return t;
}

// The values of an i64 tensor, row-major.
std::vector<int64_t> i64_values(const Tensor& t, const char* what) {
  if (t->dtype() != DType::I64) fail(AG_ERR_DTYPE, what, " must be i64, got ", dtype_name(t->dtype()));
  const Tensor c = contiguous_data(t);
  const int64_t* p = c->data_as<int64_t>();
  return std::vector<int64_t>(p, p + c->numel());
}

}  // namespace

// ---- embedding_bag ----
// The rows of weight picked by the indices of each bag, reduced per bag:
// rows = index_select(weight, indices) (times per_sample_weights), then
// index_add into zeros (sum; mean divides by the bag's size) or a gather of
// each column's first maximum (max). Entries equal to
// padding_idx are left out before (so they count in no mean), and empty bags
// keep the zeros, as in PyTorch.
Tensor embedding_bag(const Tensor& weight, const Tensor& indices, const Tensor& offsets, EmbeddingBagMode mode,
                     const Tensor& per_sample_weights, bool include_last_offset, int64_t padding_idx) {
  check_floating(*weight);
  if (weight->ndim() != 2) fail(AG_ERR_SHAPE, "weight must be 2-D (V, D), got shape ", shape_str(weight->shape()));
  check_index_dtype(*indices, *weight, "indices");
  const int64_t V = weight->shape()[0], D = weight->shape()[1];
  if (mode != EmbeddingBagMode::Sum && mode != EmbeddingBagMode::Mean && mode != EmbeddingBagMode::Max) {
    fail(AG_ERR_INVALID_ARGUMENT, "mode ", static_cast<int32_t>(mode),
         " is not one of AG_EMBEDDING_BAG_SUM (0), AG_EMBEDDING_BAG_MEAN (1), AG_EMBEDDING_BAG_MAX (2)");
  }
  if (padding_idx < -1 || padding_idx >= V) {
    fail(AG_ERR_INVALID_ARGUMENT, "padding_idx ", padding_idx, " is outside -1..", V - 1,
         " (-1: none; weight has ", V, " rows)");
  }
  // Bag b covers positions starts[b] .. starts[b + 1] - 1 of the flat
  // indices; of 2-D indices, row b (not listed: rows of no indices may be
  // more than could be).
  const int64_t n = indices->numel();
  std::vector<int64_t> starts;
  int64_t bags = 0, len = 0;
  if (indices->ndim() == 2) {
    if (offsets) fail(AG_ERR_INVALID_ARGUMENT, "offsets must be NULL for 2-D indices (each row is a bag)");
    // PyTorch makes offsets 0, len, 2 len, ...; include_last_offset then reads the last as an end.
    len = indices->shape()[1];
    bags = indices->shape()[0] - (include_last_offset ? 1 : 0);
    if (bags < 0) {
      fail(AG_ERR_SHAPE, "indices must have at least one row with include_last_offset (its start is the end of the "
           "last bag)");
    }
  } else if (indices->ndim() == 1) {
    if (!offsets) fail(AG_ERR_INVALID_ARGUMENT, "offsets must be given for 1-D indices");
    if (offsets->ndim() != 1) fail(AG_ERR_SHAPE, "offsets must be 1-D, got shape ", shape_str(offsets->shape()));
    check_index_dtype(*offsets, *weight, "offsets");
    starts = i64_values(offsets, "offsets");
    if (include_last_offset && starts.empty()) {
      fail(AG_ERR_SHAPE, "offsets must hold at least one value with include_last_offset (the end of the last bag)");
    }
    if (!starts.empty() && starts[0] != 0) fail(AG_ERR_INVALID_ARGUMENT, "offsets[0] is ", starts[0], ", must be 0");
    for (size_t b = 0; b < starts.size(); ++b) {
      if (starts[b] > n || (b > 0 && starts[b] < starts[b - 1])) {
        fail(AG_ERR_INVALID_ARGUMENT, "offsets[", b, "] = ", starts[b], " must be in ", b > 0 ? starts[b - 1] : 0,
             "..", n, " (non-decreasing, at most the ", n, " indices)");
      }
    }
    if (!include_last_offset) starts.push_back(n);
    bags = static_cast<int64_t>(starts.size()) - 1;
  } else {
    fail(AG_ERR_SHAPE, "indices must be 1-D (with offsets) or 2-D (bags of equal size), got shape ",
         shape_str(indices->shape()));
  }
  if (per_sample_weights) {
    if (mode != EmbeddingBagMode::Sum) {
      fail(AG_ERR_INVALID_ARGUMENT, "per_sample_weights is only supported with AG_EMBEDDING_BAG_SUM");
    }
    check_same(*weight, *per_sample_weights);
    if (per_sample_weights->shape() != indices->shape()) {
      fail(AG_ERR_SHAPE, "per_sample_weights ", shape_str(per_sample_weights->shape()),
           " must have the shape of indices ", shape_str(indices->shape()));
    }
  }
  check_range(indices, V, "weight's " + std::to_string(V) + " rows");
  refuse_recording("embedding_bag", "its bags are read from indices and offsets on the host");

  const std::vector<int64_t> idx = i64_values(indices, "indices");
  std::vector<int64_t> kept_idx, kept_pos, kept_bag;
  auto visit = [&](int64_t p, int64_t b) {
    if (idx[p] == padding_idx) return;
    kept_idx.push_back(idx[p]), kept_pos.push_back(p), kept_bag.push_back(b);
  };
  if (indices->ndim() == 2) {
    for (int64_t p = 0; p < bags * len; ++p) visit(p, p / len);
  } else {
    for (int64_t b = 0; b < bags; ++b) {
      for (int64_t p = starts[b]; p < starts[b + 1]; ++p) visit(p, b);
    }
  }
  // Arrays of one entry per bag are tensors from here on: their allocation
  // bounds the bags.
  Context* ctx = weight->context();
  const int64_t kept = static_cast<int64_t>(kept_idx.size());
  const Tensor bag = i64_tensor(ctx, Dims{kept}, kept_bag);
  Tensor rows = index_select(weight, 0, i64_tensor(ctx, Dims{kept}, kept_idx));
  if (per_sample_weights) {
    const Tensor w = index_select(reshape(per_sample_weights, Dims{-1}), 0, i64_tensor(ctx, Dims{kept}, kept_pos));
    rows = mul(rows, unsqueeze(w, 1));
  }
  if (mode == EmbeddingBagMode::Max) {
    // Each column's maximum per bag, its position read on the host (the
    // first of ties, NaN only when first, as PyTorch's loop), then gathered;
    // empty bags gather an appended zero row.
    Tensor pos_t = empty(ctx, DType::I64, Dims{bags, D});
    int64_t* pos = pos_t->data_as<int64_t>();
    std::fill_n(pos, pos_t->numel(), kept);
    const Tensor vals = contiguous_data(rows);
    visit_floating(vals->dtype(), [&](auto z) {
      using T = decltype(z);
      const T* v = vals->data_as<T>();
      for (int64_t p = 0; p < kept; ++p) {
        for (int64_t d = 0; d < D; ++d) {
          int64_t& q = pos[kept_bag[p] * D + d];
          if (q == kept || v[p * D + d] > v[q * D + d]) q = p;
        }
      }
    });
    const Tensor padded = concat({rows, full(ctx, weight->dtype(), Dims{1, D}, 0.0)}, 0);
    return gather(padded, 0, pos_t);
  }
  const Tensor zeros = full(ctx, weight->dtype(), Dims{bags, D}, 0.0);
  const Tensor sums = index_add(zeros, 0, bag, rows);
  if (mode == EmbeddingBagMode::Sum || D == 0) return sums;  // D = 0: nothing to divide, for any number of bags
  Tensor count = full_for_writes(ctx, weight->dtype(), Dims{bags, 1}, 0.0);
  visit_floating(count->dtype(), [&](auto z) {
    using T = decltype(z);
    T* c = count->data_as<T>();
    for (int64_t b : kept_bag) c[b] += T(1);
    for (int64_t b = 0; b < bags; ++b) c[b] = std::max(c[b], T(1));  // empty bags: 0 / 1
  });
  return div(sums, count);
}

// ---- ctc_loss ----
// -log p(target | log_probs) summed over the alignments, by the forward (alpha)
// recursion over the extended target l' = (blank, l1, blank, l2, ..., blank)
// of length L = 2 S + 1, for all samples and positions at once per time step:
//   alpha_0 = lp_0(l') on s < 2, else "unreachable"
//   alpha_t(s) = lp_t(l'_s) + logaddexp(alpha_{t-1}(s), alpha_{t-1}(s-1),
//                                       alpha_{t-1}(s-2) where l'_s != blank, l'_{s-2})
//   loss = -logaddexp(alpha_{T_n-1}(2 S_n), alpha_{T_n-1}(2 S_n - 1)).
// Unreachable states hold kUnreachable, a finite stand-in for log 0 (an -inf
// would give NaN gradients through logaddexp(-inf, -inf)); losses that come
// out near -kUnreachable are inf. After a sample's input length its alphas
// are frozen (a where per step), so the last step holds alpha_{T_n-1}.
// Cost: one gather of (T, N, L), then per step one select, two pads, two
// logaddexp, two adds and a where over (N, L).
namespace {

constexpr double kUnreachable = -1e30;

}  // namespace

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank, Reduction r, bool zero_infinity) {
  check_floating(*log_probs);
  if (log_probs->ndim() != 3 && log_probs->ndim() != 2) {
    fail(AG_ERR_SHAPE, "log_probs must be (T, N, C) or unbatched (T, C), got shape ", shape_str(log_probs->shape()));
  }
  const bool batched = log_probs->ndim() == 3;
  const Tensor lp = batched ? log_probs : unsqueeze(log_probs, 1);
  const int64_t T = lp->shape()[0], N = lp->shape()[1], C = lp->shape()[2];
  if (blank < 0 || blank >= C) fail(AG_ERR_INVALID_ARGUMENT, "blank ", blank, " is outside 0..", C - 1, " (", C, " classes)");
  check_index_dtype(*targets, *log_probs, "targets");
  check_index_dtype(*input_lengths, *log_probs, "input_lengths");
  check_index_dtype(*target_lengths, *log_probs, "target_lengths");
  const auto check_lengths = [&](const Tensor& t, const char* what) {
    const bool ok = batched ? t->ndim() == 1 && t->shape()[0] == N : t->ndim() <= 1 && t->numel() == 1;
    if (!ok) {
      fail(AG_ERR_SHAPE, what, " must be ", batched ? "(N) with N = " + std::to_string(N) : std::string("() or (1)"),
           ", got shape ", shape_str(t->shape()));
    }
  };
  check_lengths(input_lengths, "input_lengths");
  check_lengths(target_lengths, "target_lengths");
  const std::vector<int64_t> il = i64_values(input_lengths, "input_lengths");
  const std::vector<int64_t> tl = i64_values(target_lengths, "target_lengths");
  for (int64_t i = 0; i < N; ++i) {
    if (il[i] < 0 || il[i] > T) {
      fail(AG_ERR_INVALID_ARGUMENT, "input_lengths[", i, "] = ", il[i], " is outside 0..", T, " (T = ", T, ")");
    }
    if (tl[i] < 0) fail(AG_ERR_INVALID_ARGUMENT, "target_lengths[", i, "] = ", tl[i], " is negative");
  }
  // Each sample's labels: rows of (N, S) padded targets, or runs of the concatenated 1-D targets.
  const std::vector<int64_t> tv = i64_values(targets, "targets");
  std::vector<int64_t> start(N, 0);
  const bool padded = targets->ndim() == 2 || !batched;
  if (padded) {
    const bool ok = batched ? targets->shape()[0] == N : targets->ndim() == 1;
    if (!ok) {
      fail(AG_ERR_SHAPE, "targets must be ", batched ? "(N, S) with N = " + std::to_string(N) + ", or 1-D" : "(S)",
           ", got shape ", shape_str(targets->shape()));
    }
    const int64_t S = targets->shape()[targets->ndim() - 1];
    for (int64_t i = 0; i < N; ++i) {
      if (tl[i] > S) fail(AG_ERR_INVALID_ARGUMENT, "target_lengths[", i, "] = ", tl[i], " exceeds the ", S, " target columns");
      start[i] = i * S;
    }
  } else {
    if (targets->ndim() != 1) {
      fail(AG_ERR_SHAPE, "targets must be (N, S) padded or 1-D concatenated, got shape ", shape_str(targets->shape()));
    }
    int64_t total = 0;
    for (int64_t i = 0; i < N; ++i) {
      start[i] = total;
      if (__builtin_add_overflow(total, tl[i], &total)) {
        fail(AG_ERR_SHAPE, "target_lengths sum past int64 but the concatenated targets hold ", targets->numel());
      }
    }
    if (total > targets->numel()) {
      fail(AG_ERR_SHAPE, "target_lengths sum to ", total, " but the concatenated targets hold ", targets->numel());
    }
  }
  for (int64_t i = 0; i < N; ++i) {
    for (int64_t k = 0; k < tl[i]; ++k) {
      const int64_t c = tv[start[i] + k];
      if (c < 0 || c >= C || c == blank) {
        fail(AG_ERR_INVALID_ARGUMENT, "target ", c, " (sample ", i, ", position ", k, ") is outside 0..", C - 1,
             " or is the blank ", blank);
      }
    }
  }
  refuse_recording("ctc_loss", "its alignment masks are read from targets and lengths on the host");

  // Host constants: l' (blank past each target's end), the skip and start
  // biases, the frozen steps, the end positions.
  Context* ctx = log_probs->context();
  int64_t s_max = 0;
  for (int64_t i = 0; i < N; ++i) s_max = std::max(s_max, tl[i]);
  const int64_t L = 2 * s_max + 1;
  std::vector<int64_t> ext(N * L, blank), ends(N * 2);
  std::vector<double> skip(N * L, kUnreachable), init(N * L, kUnreachable), end_bias(N * 2, 0.0);
  for (int64_t i = 0; i < N; ++i) {
    for (int64_t k = 0; k < tl[i]; ++k) ext[i * L + 2 * k + 1] = tv[start[i] + k];
    for (int64_t s = 0; s < L; ++s) {
      if (s % 2 == 1 && s >= 3 && ext[i * L + s] != ext[i * L + s - 2]) skip[i * L + s] = 0.0;
      if (s < 2) init[i * L + s] = 0.0;
    }
    ends[2 * i] = 2 * tl[i];
    ends[2 * i + 1] = std::max<int64_t>(2 * tl[i] - 1, 0);
    if (tl[i] == 0) end_bias[2 * i + 1] = kUnreachable;
  }
  int64_t t_max = 0;
  for (int64_t i = 0; i < N; ++i) t_max = std::max(t_max, il[i]);
  std::vector<uint8_t> live(std::max<int64_t>(t_max, 1) * N, 0);
  for (int64_t t = 0; t < t_max; ++t) {
    for (int64_t i = 0; i < N; ++i) live[t * N + i] = t < il[i];
  }

  // lpe[t, n, s] = log_probs[t, n, l'_s], never below kUnreachable.
  Tensor nll;
  if (t_max > 0) {
    const Tensor ext_t = i64_tensor(ctx, Dims{1, N, L}, ext);
    const Tensor lpe = clamp(gather(lp, 2, expand(ext_t, Dims{T, N, L})), kUnreachable, std::nan(""));
    const Tensor skip_t = values_like(lp, Dims{N, L}, skip);
    const Tensor live_t = bool_tensor(ctx, Dims{t_max, N, 1}, live);
    Tensor alpha = add(select(lpe, 0, 0), values_like(lp, Dims{N, L}, init));
    for (int64_t t = 1; t < t_max; ++t) {
      const Tensor s1 = pad(alpha, {1, -1}, PadMode::Constant, kUnreachable);
      const Tensor s2 = add(pad(alpha, {2, -2}, PadMode::Constant, kUnreachable), skip_t);
      const Tensor next = add(logaddexp(logaddexp(alpha, s1), s2), select(lpe, 0, t));
      alpha = where(select(live_t, 0, t), next, alpha);
    }
    const Tensor last = add(gather(alpha, 1, i64_tensor(ctx, Dims{N, 2}, ends)), values_like(lp, Dims{N, 2}, end_bias));
    nll = neg(logsumexp_dims(last, Dims{1}, false));
    if (should_record({log_probs.get()})) {
      // PyTorch's gradient for log_probs is exp(log_probs) - (the occupation
      // probabilities) at t < T_n: the exact gradient of the loss plus
      // exp(log_probs), which log_softmax's gradient maps to 0. A term of value
      // 0 with that gradient: exp(lp) - (exp(lp) without graph).
      const Tensor used = narrow(lp, 0, 0, t_max);
      Tensor e_const;
      {
        GradModeGuard off(false);
        e_const = exp(used);
      }
      const Tensor live_f = values_like(lp, Dims{t_max, N, 1}, std::vector<double>(live.begin(), live.end()));
      const Tensor term = mul(sub(exp(used), e_const), live_f);
      nll = add(nll, sum_dims(term, Dims{0, 2}, false));
    }
  } else {
    nll = full(ctx, lp->dtype(), Dims{N}, 0.0);
  }
  // Input length 0: probability 1 for an empty target, else 0.
  std::vector<uint8_t> no_input(N), empty_target(N);
  bool any_no_input = false;
  for (int64_t i = 0; i < N; ++i) {
    no_input[i] = il[i] == 0, empty_target[i] = tl[i] == 0;
    any_no_input = any_no_input || il[i] == 0;
  }
  const Tensor inf = scalar_like(nll, std::numeric_limits<double>::infinity());
  if (any_no_input) {
    const Tensor z = where(bool_tensor(ctx, Dims{N}, empty_target), scalar_like(nll, 0.0), inf);
    nll = where(bool_tensor(ctx, Dims{N}, no_input), z, nll);
  }
  const Tensor impossible = gt(nll, scalar_like(nll, -kUnreachable / 2));
  nll = where(impossible, zero_infinity ? scalar_like(nll, 0.0) : inf, nll);
  if (!batched) nll = reshape(nll, Dims{});
  switch (r) {
    case Reduction::None: return nll;
    case Reduction::Sum: return sum(nll);
    case Reduction::Mean: {
      std::vector<double> len(N);
      for (int64_t i = 0; i < N; ++i) len[i] = static_cast<double>(std::max<int64_t>(tl[i], 1));
      return mean(div(nll, values_like(nll, batched ? Dims{N} : Dims{}, len)));
    }
  }
  return nll;
}

}  // namespace ag::ops
