// Gradient-check cases of the nn ops added in 0.2 (transposed convolution,
// interpolate, pixel shuffles, 1-D and adaptive max pooling, instance and
// local response norm, attention, losses). Class-like targets (+-1) are
// constants of the dtype under test made inside the call; "squared"
// variants run the second-order check through each op's backward.
#include <cstdint>
#include <string>

#include "gradcheck.h"

namespace gradcheck {

namespace {

using X = const std::vector<ag_tensor*>&;

}  // namespace

Cases cases_conv_transpose2d() {
  Cases c;
  const int64_t s2[2] = {2, 2}, p1[2] = {1, 0}, op1[2] = {1, 1}, d2[2] = {2, 1};
  c.push_back({"conv_transpose2d(stride 2, padding, output_padding, groups 2, bias)",
               {Input{{2, 4, 3, 3}}, Input{{4, 3, 2, 2}}, Input{{6}}},
               [=](ag_tensor** out, X x) { return ag_op_conv_transpose2d(out, x[0], x[1], x[2], s2, p1, op1, 2, nullptr); }});
  c.push_back({"conv_transpose2d(dilation, unbatched)", {Input{{2, 3, 2}}, Input{{2, 3, 2, 2}}},
               [=](ag_tensor** out, X x) { return ag_op_conv_transpose2d(out, x[0], x[1], nullptr, nullptr, nullptr, nullptr, 1, d2); }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_conv_transpose1d() {
  Cases c;
  c.push_back({"conv_transpose1d(stride 2, padding 1, output_padding 1, bias)", {Input{{2, 2, 4}}, Input{{2, 3, 3}}, Input{{3}}},
               [](ag_tensor** out, X x) { return ag_op_conv_transpose1d(out, x[0], x[1], x[2], 2, 1, 1, 1, 1); }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_interpolate() {
  Cases c;
  const int64_t s57[2] = {5, 7}, s45[2] = {4, 5};
  c.push_back({"interpolate(nearest size)", {Input{{1, 2, 3, 4}}},
               [=](ag_tensor** out, X x) { return ag_op_interpolate(out, x[0], s57, 2, 0.0, AG_INTERP_NEAREST, 0); }});
  c.push_back({"interpolate(linear scale 1.7)", {Input{{2, 2, 4}}},
               [](ag_tensor** out, X x) { return ag_op_interpolate(out, x[0], nullptr, 0, 1.7, AG_INTERP_LINEAR, 0); }});
  c.push_back({"interpolate(bilinear align_corners)", {Input{{1, 2, 3, 3}}},
               [=](ag_tensor** out, X x) { return ag_op_interpolate(out, x[0], s45, 2, 0.0, AG_INTERP_BILINEAR, 1); }});
  c.push_back({"interpolate(bilinear down)", {Input{{1, 1, 5, 4}}},
               [](ag_tensor** out, X x) { return ag_op_interpolate(out, x[0], nullptr, 0, 0.6, AG_INTERP_BILINEAR, 0); }});
  c.push_back(squared(c[2]));
  return c;
}

Cases cases_pixel_shuffle() {
  Cases c;
  c.push_back({"pixel_shuffle(2)", {Input{{1, 8, 2, 3}}}, [](ag_tensor** out, X x) { return ag_op_pixel_shuffle(out, x[0], 2); }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_pixel_unshuffle() {
  Cases c;
  c.push_back({"pixel_unshuffle(2)", {Input{{2, 4, 6}}}, [](ag_tensor** out, X x) { return ag_op_pixel_unshuffle(out, x[0], 2); }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_max_pool1d() {
  Cases c;
  c.push_back({"max_pool1d(3, stride 2, padding 1)", {Input{{2, 3, 7}}},
               [](ag_tensor** out, X x) { return ag_op_max_pool1d(out, x[0], 3, 2, 1, 1, 0); }});
  c.push_back({"max_pool1d(2, dilation 2, ceil, unbatched)", {Input{{2, 6}}},
               [](ag_tensor** out, X x) { return ag_op_max_pool1d(out, x[0], 2, 0, 0, 2, 1); }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_avg_pool1d() {
  Cases c;
  c.push_back({"avg_pool1d(3, stride 2, padding 1)", {Input{{2, 3, 7}}},
               [](ag_tensor** out, X x) { return ag_op_avg_pool1d(out, x[0], 3, 2, 1, 0, 1); }});
  c.push_back({"avg_pool1d(3, ceil, exclude pad)", {Input{{2, 8}}},
               [](ag_tensor** out, X x) { return ag_op_avg_pool1d(out, x[0], 3, 2, 1, 1, 0); }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_adaptive_max_pool2d() {
  Cases c;
  const int64_t o34[2] = {3, 4}, o21[2] = {2, 1};
  c.push_back({"adaptive_max_pool2d(5x7 to 3x4)", {Input{{2, 5, 7}}},
               [=](ag_tensor** out, X x) { return ag_op_adaptive_max_pool2d(out, x[0], o34); }});
  c.push_back({"adaptive_max_pool2d(batched to 2x1)", {Input{{1, 2, 4, 3}}},
               [=](ag_tensor** out, X x) { return ag_op_adaptive_max_pool2d(out, x[0], o21); }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_instance_norm() {
  Cases c;
  c.push_back({"instance_norm(weight, bias)", {Input{{2, 3, 4}}, Input{{3}}, Input{{3}}},
               [](ag_tensor** out, X x) { return ag_op_instance_norm(out, x[0], nullptr, nullptr, x[1], x[2], 1, 0.1, 1e-5); }});
  c.push_back({"instance_norm(2-D spatial)", {Input{{1, 2, 2, 3}}},
               [](ag_tensor** out, X x) { return ag_op_instance_norm(out, x[0], nullptr, nullptr, nullptr, nullptr, 1, 0.1, 1e-5); }});
  c.push_back(squared(c.back()));
  return c;
}

Cases cases_local_response_norm() {
  Cases c;
  c.push_back({"local_response_norm(3)", {Input{{2, 5, 3}}},
               [](ag_tensor** out, X x) { return ag_op_local_response_norm(out, x[0], 3, 0.5, 0.75, 1.0); }});
  c.push_back({"local_response_norm(2, 4-D)", {Input{{1, 4, 2, 2}}},
               [](ag_tensor** out, X x) { return ag_op_local_response_norm(out, x[0], 2, 0.3, 0.6, 2.0); }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_scaled_dot_product_attention() {
  Cases c;
  c.push_back({"scaled_dot_product_attention(plain)", {Input{{2, 3, 4}}, Input{{2, 5, 4}}, Input{{2, 5, 2}}},
               [](ag_tensor** out, X x) { return ag_op_scaled_dot_product_attention(out, x[0], x[1], x[2], nullptr, 0.0, 0, 0.0); }});
  c.push_back({"scaled_dot_product_attention(causal, scale)", {Input{{3, 4}}, Input{{3, 4}}, Input{{3, 2}}},
               [](ag_tensor** out, X x) { return ag_op_scaled_dot_product_attention(out, x[0], x[1], x[2], nullptr, 0.0, 1, 0.7); }});
  c.push_back({"scaled_dot_product_attention(bool mask)",
               {Input{{2, 3}}, Input{{4, 3}}, Input{{4, 2}}, fixed_input(AG_BOOL, {2, 4}, {1, 0, 1, 1, 0, 0, 1, 0})},
               [](ag_tensor** out, X x) { return ag_op_scaled_dot_product_attention(out, x[0], x[1], x[2], x[3], 0.0, 0, 0.0); }});
  c.push_back({"scaled_dot_product_attention(float mask)", {Input{{2, 3}}, Input{{4, 3}}, Input{{4, 2}}, Input{{4}}},
               [](ag_tensor** out, X x) { return ag_op_scaled_dot_product_attention(out, x[0], x[1], x[2], x[3], 0.0, 0, 0.0); }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_kl_div() {
  Cases c;
  for (int32_t r = 0; r < 3; ++r) {
    c.push_back({"kl_div(reduction " + std::to_string(r) + ")", {Input{{2, 3}}, Input{{2, 3}, 0.1, 1.0}},
                 [=](ag_tensor** out, X x) { return ag_op_kl_div(out, x[0], x[1], r, 0); }});
  }
  c.push_back({"kl_div(log_target)", {Input{{2, 3}}, Input{{2, 3}}},
               [](ag_tensor** out, X x) { return ag_op_kl_div(out, x[0], x[1], AG_REDUCTION_SUM, 1); }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_poisson_nll_loss() {
  Cases c;
  c.push_back({"poisson_nll_loss(log_input)", {Input{{2, 3}}, Input{{2, 3}, 0.0, 3.0}},
               [](ag_tensor** out, X x) { return ag_op_poisson_nll_loss(out, x[0], x[1], 1, 0, 1e-8, AG_REDUCTION_MEAN); }});
  c.push_back({"poisson_nll_loss(rate, full)", {Input{{2, 3}, 0.3, 2.0}, Input{{2, 3}, 0.5, 3.0}},
               [](ag_tensor** out, X x) { return ag_op_poisson_nll_loss(out, x[0], x[1], 0, 1, 1e-8, AG_REDUCTION_NONE); }});
  c.push_back(squared(c.back()));
  return c;
}

Cases cases_gaussian_nll_loss() {
  Cases c;
  c.push_back({"gaussian_nll_loss(same shape, full)", {Input{{2, 3}}, Input{{2, 3}}, Input{{2, 3}, 0.5, 2.0}},
               [](ag_tensor** out, X x) { return ag_op_gaussian_nll_loss(out, x[0], x[1], x[2], 1, 1e-6, AG_REDUCTION_MEAN); }});
  c.push_back({"gaussian_nll_loss(var one dim less)", {Input{{2, 3}}, Input{{2, 3}}, Input{{2}, 0.5, 2.0}},
               [](ag_tensor** out, X x) { return ag_op_gaussian_nll_loss(out, x[0], x[1], x[2], 0, 1e-6, AG_REDUCTION_NONE); }});
  c.push_back(squared(c.back()));
  return c;
}

Cases cases_margin_ranking_loss() {
  Cases c;
  c.push_back({"margin_ranking_loss(0.3)", {Input{{4}}, Input{{4}}}, [](ag_tensor** out, X x) {
                 return with_constant(out, x[0], {4}, {1, -1, 1, -1}, [&](ag_tensor** o, ag_tensor* t) {
                   return ag_op_margin_ranking_loss(o, x[0], x[1], t, 0.3, AG_REDUCTION_NONE);
                 });
               }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_cosine_embedding_loss() {
  Cases c;
  c.push_back({"cosine_embedding_loss(0.2)", {Input{{4, 3}}, Input{{4, 3}}}, [](ag_tensor** out, X x) {
                 return with_constant(out, x[0], {4}, {1, -1, -1, 1}, [&](ag_tensor** o, ag_tensor* t) {
                   return ag_op_cosine_embedding_loss(o, x[0], x[1], t, -0.9, AG_REDUCTION_MEAN);
                 });
               }});
  c.push_back(squared(c.front()));
  return c;
}

Cases cases_triplet_margin_loss() {
  Cases c;
  c.push_back({"triplet_margin_loss(p 2)", {Input{{3, 4}}, Input{{3, 4}}, Input{{3, 4}}},
               [](ag_tensor** out, X x) { return ag_op_triplet_margin_loss(out, x[0], x[1], x[2], 5.0, 2.0, 1e-6, 0, AG_REDUCTION_NONE); }});
  c.push_back({"triplet_margin_loss(p 1.5, swap)", {Input{{3, 4}}, Input{{3, 4}}, Input{{3, 4}}},
               [](ag_tensor** out, X x) { return ag_op_triplet_margin_loss(out, x[0], x[1], x[2], 5.0, 1.5, 1e-6, 1, AG_REDUCTION_MEAN); }});
  c.push_back(squared(c.front()));
  return c;
}

}  // namespace gradcheck
