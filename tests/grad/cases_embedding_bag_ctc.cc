// Gradient-check cases of embedding_bag and ctc_loss. ctc_loss is checked
// through a log_softmax of free logits: its gradient for log_probs is
// PyTorch's (the exact one plus exp(log_probs)), which is the exact gradient
// once composed with log_softmax.
#include <cstdint>

#include "gradcheck.h"

namespace gradcheck {

namespace {

using X = const std::vector<ag_tensor*>&;

// ctc_loss(log_softmax(x[0], -1), x[1], x[2], x[3], blank, ...).
ag_status ctc_of_logits(ag_tensor** out, X x, int64_t blank, int32_t reduction, int32_t zero_infinity) {
  ag_tensor* lp = nullptr;
  ag_status st = ag_op_log_softmax(&lp, x[0], -1);
  if (st == AG_OK) st = ag_op_ctc_loss(out, lp, x[1], x[2], x[3], blank, reduction, zero_infinity);
  ag_tensor_release(lp);
  return st;
}

}  // namespace

Cases cases_embedding_bag() {
  Cases c;
  // bags [4, 0], [] (empty), [2, 4, 1]; per-sample weights
  c.push_back({"embedding_bag(sum, offsets, empty bag, per_sample_weights)",
               {Input{{5, 3}}, index({5}, {4, 0, 2, 4, 1}), index({3}, {0, 2, 2}), Input{{5}}},
               [](ag_tensor** out, X x) {
                 return ag_op_embedding_bag(out, x[0], x[1], x[2], AG_EMBEDDING_BAG_SUM, x[3], 0, -1);
               }});
  c.push_back({"embedding_bag(mean, 2-D, padding_idx 1)", {Input{{4, 2}}, index({3, 2}, {1, 3, 0, 0, 1, 1})},
               [](ag_tensor** out, X x) {
                 return ag_op_embedding_bag(out, x[0], x[1], nullptr, AG_EMBEDDING_BAG_MEAN, nullptr, 0, 1);
               }});
  // offsets (0, 2, 5) with the last as the end: bags [3, 1], [0, 3, 2]; the sixth index is left out
  c.push_back({"embedding_bag(max, include_last_offset)",
               {Input{{4, 3}}, index({6}, {3, 1, 0, 3, 2, 1}), index({3}, {0, 2, 5})},
               [](ag_tensor** out, X x) {
                 return ag_op_embedding_bag(out, x[0], x[1], x[2], AG_EMBEDDING_BAG_MAX, nullptr, 1, -1);
               }});
  c.push_back(squared(c.front()));
  c.push_back(squared(c[1]));
  return c;
}

Cases cases_ctc_loss() {
  Cases c;
  // targets (1, 1) (a repeat: needs a blank between) and (2); input lengths 5 and 4
  c.push_back({"ctc_loss(padded targets, repeat, mean)",
               {Input{{5, 2, 4}}, index({2, 2}, {1, 1, 2, 0}), index({2}, {5, 4}), index({2}, {2, 1})},
               [](ag_tensor** out, X x) { return ctc_of_logits(out, x, 0, AG_REDUCTION_MEAN, 0); }});
  // concatenated targets (3, 1) and (2, 2); sample 1 has 2 frames for 2 repeats: no alignment -> 0
  c.push_back({"ctc_loss(concatenated targets, blank 2, zero_infinity)",
               {Input{{4, 2, 4}}, index({4}, {3, 1, 1, 1}), index({2}, {4, 2}), index({2}, {2, 2})},
               [](ag_tensor** out, X x) { return ctc_of_logits(out, x, 2, AG_REDUCTION_NONE, 1); }});
  c.push_back({"ctc_loss(unbatched, empty target, sum)",
               {Input{{3, 3}}, index({1}, {1}), index({}, {3}), index({}, {0})},
               [](ag_tensor** out, X x) { return ctc_of_logits(out, x, 0, AG_REDUCTION_SUM, 0); }});
  return c;
}

}  // namespace gradcheck
