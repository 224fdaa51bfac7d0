/*
 * ag/ops_conv.h - convolution and pooling (PyTorch's torch.nn.functional
 * conv1d, conv2d, unfold, fold, max_pool2d, avg_pool2d, adaptive_avg_pool2d).
 *
 * The rules of ag/ops.h hold: `*out` is a new reference written only on
 * success; tensor inputs share one context (AG_ERR_CONTEXT) and one floating
 * dtype, AG_F32 or AG_F64 (AG_ERR_DTYPE); a NULL or released handle is
 * AG_ERR_INVALID_ARGUMENT. Messages name the function and the facts:
 * "[ag_op_conv2d] input of shape (2,4,5,5) has 4 channels but weight of
 * shape (6,3,3,3) with groups 1 expects 3".
 *
 * Images are (N, C, H, W), or unbatched (C, H, W) which gives an unbatched
 * result; a batch of N = 0 gives an empty result, while C, H or W of 0 is
 * AG_ERR_SHAPE (as in PyTorch). Spatial arguments are arrays of two int64_t,
 * (height, width); NULL takes the default named in each function. Inputs may
 * be any strided views. Window sizes follow PyTorch:
 *   out = floor((in + 2*padding - dilation*(kernel-1) - 1) / stride) + 1.
 * Errors common to all: kernel_size, stride, dilation not positive, padding
 * negative, or window arguments whose sizes (dilated kernel, padded input,
 * transposed output) overflow int64 is AG_ERR_INVALID_ARGUMENT; a dilated
 * kernel larger than the padded input is AG_ERR_SHAPE.
 *
 * Convolution is unfold (im2col) followed by one batched GEMM over groups;
 * unfold and fold are each other's gradient, so gradients of every order
 * exist. Results are bitwise the same for any thread count.
 */
#ifndef AG_OPS_CONV_H
#define AG_OPS_CONV_H

#include "ag/common.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS
/** Modes of ag_op_interpolate (frozen values). */
#define AG_INTERP_NEAREST 0
#define AG_INTERP_LINEAR 1
#define AG_INTERP_BILINEAR 2


/**
 * Sliding local blocks (F.unfold, im2col): x (N, C, H, W) gives
 * (N, C*kh*kw, L) where column l holds the window at position l (row-major
 * over the (out_h, out_w) positions), rows ordered (c, i, j); positions in
 * the zero padding read 0. A 3-D x (C, H, W) gives (C*kh*kw, L).
 * kernel_size is required; dilation NULL = (1,1), padding NULL = (0,0),
 * stride NULL = (1,1). Gradient: fold.
 * @return AG_ERR_INVALID_ARGUMENT for a NULL kernel_size or a bad window
 *         argument; AG_ERR_SHAPE for x not 3-D or 4-D, a zero C, H or W, or
 *         a kernel larger than the padded input; also DTYPE.
 */
AG_API ag_status ag_op_unfold(ag_tensor **out, const ag_tensor *x, const int64_t kernel_size[2],
                              const int64_t dilation[2], const int64_t padding[2],
                              const int64_t stride[2]) AG_NOEXCEPT;

/**
 * Combines sliding blocks into an image (F.fold, col2im), the adjoint of
 * unfold: x (N, C*kh*kw, L) gives (N, C, H, W) with (H, W) = output_size,
 * values of overlapping blocks summed (in a fixed order), padding dropped.
 * A 2-D x (C*kh*kw, L) gives (C, H, W). output_size and kernel_size are
 * required; dilation, padding and stride may be NULL (defaults as in
 * ag_op_unfold). Gradient: unfold.
 * @return AG_ERR_INVALID_ARGUMENT for a NULL output_size or kernel_size, a
 *         non-positive output_size or a bad window argument; AG_ERR_SHAPE for
 *         x not 2-D or 3-D, a channel dim not divisible by kh*kw, L other
 *         than the number of window positions of output_size; also DTYPE.
 */
AG_API ag_status ag_op_fold(ag_tensor **out, const ag_tensor *x, const int64_t output_size[2],
                            const int64_t kernel_size[2], const int64_t dilation[2],
                            const int64_t padding[2], const int64_t stride[2]) AG_NOEXCEPT;

/**
 * 2-D convolution (cross-correlation, F.conv2d): x (N, C, H, W), weight
 * (OC, C/groups, kH, kW), bias (OC) or NULL; y (N, OC, out_h, out_w) with
 * y[n,o] = bias[o] + sum over the C/groups channels of o's group and the
 * kernel of weight[o,c,i,j] * x[n, c', h*stride - padding + i*dilation, ...],
 * zero padding. stride NULL = (1,1), padding NULL = (0,0), dilation NULL =
 * (1,1); groups >= 1 splits channels into groups convolved separately.
 * A 3-D x gives a 3-D y.
 * @return AG_ERR_INVALID_ARGUMENT for groups < 1 or a bad window argument;
 *         AG_ERR_SHAPE for weight not 4-D, x not 3-D or 4-D, OC not divisible
 *         by groups, C other than weight dim 1 times groups, bias not (OC),
 *         a kernel larger than the padded input; also DTYPE, CONTEXT.
 */
AG_API ag_status ag_op_conv2d(ag_tensor **out, const ag_tensor *x, const ag_tensor *weight,
                              const ag_tensor *bias, const int64_t stride[2], const int64_t padding[2],
                              const int64_t dilation[2], int64_t groups) AG_NOEXCEPT;

/**
 * 1-D convolution (F.conv1d): x (N, C, L) or (C, L), weight (OC, C/groups,
 * k), bias (OC) or NULL; y (N, OC, out) or (OC, out), as ag_op_conv2d along
 * one dim (PyTorch defaults: stride 1, padding 0, dilation 1, groups 1).
 * @return AG_ERR_INVALID_ARGUMENT for stride, dilation or groups < 1 or a
 *         negative padding; AG_ERR_SHAPE for weight not 3-D, x not 2-D or
 *         3-D, the channel and bias mismatches of conv2d, a kernel longer than
 *         the padded input; also DTYPE, CONTEXT.
 */
AG_API ag_status ag_op_conv1d(ag_tensor **out, const ag_tensor *x, const ag_tensor *weight,
                              const ag_tensor *bias, int64_t stride, int64_t padding,
                              int64_t dilation, int64_t groups) AG_NOEXCEPT;

/**
 * 2-D max pooling (F.max_pool2d): the maximum of each dilated window of x
 * (N, C, H, W) or (C, H, W), padding counting as -inf. kernel_size is
 * required; stride NULL = kernel_size, padding NULL = (0,0), dilation NULL =
 * (1,1). ceil_mode != 0 rounds the window count up (a last window must still
 * start inside the input or its left padding). Ties: the first maximum in
 * row-major window order; a NaN in a window is the result. Gradient: g added
 * at each window's maximum.
 * @return AG_ERR_INVALID_ARGUMENT for a NULL kernel_size, a bad window
 *         argument, padding above half the dilated kernel; AG_ERR_SHAPE for x
 *         not 3-D or 4-D, a zero C, H or W, an output size below 1; also DTYPE.
 */
AG_API ag_status ag_op_max_pool2d(ag_tensor **out, const ag_tensor *x, const int64_t kernel_size[2],
                                  const int64_t stride[2], const int64_t padding[2],
                                  const int64_t dilation[2], int32_t ceil_mode) AG_NOEXCEPT;

/**
 * ag_op_max_pool2d that also returns `*indices`, an AG_I64 tensor of y's
 * shape holding each maximum's flat position h*W + w within its (H, W)
 * plane (PyTorch's return_indices). Both outputs are written only on
 * success. Errors as ag_op_max_pool2d, plus AG_ERR_INVALID_ARGUMENT for a
 * NULL indices.
 */
AG_API ag_status ag_op_max_pool2d_with_indices(ag_tensor **out, ag_tensor **indices, const ag_tensor *x,
                                               const int64_t kernel_size[2], const int64_t stride[2],
                                               const int64_t padding[2], const int64_t dilation[2],
                                               int32_t ceil_mode) AG_NOEXCEPT;

/**
 * 2-D average pooling (F.avg_pool2d) of x (N, C, H, W) or (C, H, W): each
 * window's sum (zero padding) divided by divisor_override if > 0, else by
 * the window's size clipped to the padded input (count_include_pad != 0,
 * PyTorch's default) or to the input (count_include_pad = 0). kernel_size
 * is required; stride NULL = kernel_size, padding NULL = (0,0); ceil_mode as
 * in ag_op_max_pool2d.
 * @return AG_ERR_INVALID_ARGUMENT for a NULL kernel_size, a bad window
 *         argument, padding above half the kernel, a negative
 *         divisor_override; AG_ERR_SHAPE as ag_op_max_pool2d; also DTYPE.
 */
AG_API ag_status ag_op_avg_pool2d(ag_tensor **out, const ag_tensor *x, const int64_t kernel_size[2],
                                  const int64_t stride[2], const int64_t padding[2], int32_t ceil_mode,
                                  int32_t count_include_pad, int64_t divisor_override) AG_NOEXCEPT;

/**
 * Adaptive average pooling (F.adaptive_avg_pool2d): x (N, C, H, W) or
 * (C, H, W) to spatial size output_size (OH, OW); cell (i, j) averages rows
 * floor(i*H/OH) .. ceil((i+1)*H/OH)-1 and the same range of columns.
 * output_size is required; a 0 gives an empty result.
 * @return AG_ERR_INVALID_ARGUMENT for a NULL or negative output_size;
 *         AG_ERR_SHAPE for x not 3-D or 4-D or a zero C, H or W; also DTYPE.
 */
AG_API ag_status ag_op_adaptive_avg_pool2d(ag_tensor **out, const ag_tensor *x,
                                           const int64_t output_size[2]) AG_NOEXCEPT;

/**
 * 2-D transposed convolution (F.conv_transpose2d), the gradient of conv2d
 * in its input: x (N, C, H, W) or (C, H, W), weight (C, OC/groups, kH, kW),
 * bias (OC) or NULL; y (N, OC, OH, OW) with OH = (H-1)*stride - 2*padding +
 * dilation*(kH-1) + output_padding + 1 (W likewise). Pairs are (height,
 * width); NULL takes PyTorch's default (stride 1, padding 0, output_padding
 * 0, dilation 1). Note PyTorch's argument order: groups before dilation.
 * Gradients of every order (matmul and fold).
 * @return AG_ERR_INVALID_ARGUMENT for stride, dilation or groups < 1, a
 *         negative padding, output_padding not below stride nor dilation,
 *         sizes that overflow int64; AG_ERR_SHAPE
 *         for weight not 4-D, x not 3-D or 4-D, channels that do not match
 *         weight dim 0 or are not divisible by groups, a bias of another
 *         size, an output size below 1; also DTYPE, CONTEXT.
 */
AG_API ag_status ag_op_conv_transpose2d(ag_tensor **out, const ag_tensor *x, const ag_tensor *weight,
                                        const ag_tensor *bias, const int64_t stride[2],
                                        const int64_t padding[2], const int64_t output_padding[2],
                                        int64_t groups, const int64_t dilation[2]) AG_NOEXCEPT;

/**
 * 1-D transposed convolution (F.conv_transpose1d): x (N, C, L) or (C, L),
 * weight (C, OC/groups, k), bias (OC) or NULL, as ag_op_conv_transpose2d
 * along one dim.
 * @return as ag_op_conv_transpose2d (weight must be 3-D, x 2-D or 3-D).
 */
AG_API ag_status ag_op_conv_transpose1d(ag_tensor **out, const ag_tensor *x, const ag_tensor *weight,
                                        const ag_tensor *bias, int64_t stride, int64_t padding,
                                        int64_t output_padding, int64_t groups,
                                        int64_t dilation) AG_NOEXCEPT;

/**
 * Resamples x (N, C, spatial...) (F.interpolate): to `size` (ndim = 1, used
 * for every spatial dim, or one per spatial dim) or, with ndim = 0, by
 * scale_factor > 0 for every spatial dim (output size floor(in *
 * scale_factor), source positions from the factor, as PyTorch without
 * recompute_scale_factor). mode: AG_INTERP_NEAREST (1 to 3 spatial dims;
 * source index floor(out * scale)), AG_INTERP_LINEAR (x 3-D) or
 * AG_INTERP_BILINEAR (x 4-D), with align_corners != 0 mapping the corner
 * pixels onto each other (linear modes only). No antialiasing. Gradients
 * of every order (selections and constant weights).
 * @return AG_ERR_INVALID_ARGUMENT for another mode, both or neither of size
 *         and scale_factor, a size count that fits neither rule,
 *         align_corners with nearest, a scaled size beyond int64; AG_ERR_SHAPE for an input rank the
 *         mode does not take, an output size below 1; AG_ERR_DTYPE.
 */
AG_API ag_status ag_op_interpolate(ag_tensor **out, const ag_tensor *x, const int64_t *size,
                                   int32_t ndim, double scale_factor, int32_t mode,
                                   int32_t align_corners) AG_NOEXCEPT;

/**
 * (*, C*r*r, H, W) -> (*, C, H*r, W*r) (F.pixel_shuffle) with r =
 * upscale_factor: a reshape and permute (a copy). Gradient: unshuffled.
 * @return AG_ERR_INVALID_ARGUMENT for r < 1 or sizes (r*r, H*r, W*r) that
 *         overflow int64; AG_ERR_SHAPE for fewer than 3 dims or channels not
 *         divisible by r*r.
 */
AG_API ag_status ag_op_pixel_shuffle(ag_tensor **out, const ag_tensor *x,
                                     int64_t upscale_factor) AG_NOEXCEPT;

/**
 * (*, C, H*r, W*r) -> (*, C*r*r, H, W) (F.pixel_unshuffle), the inverse of
 * ag_op_pixel_shuffle with r = downscale_factor.
 * @return AG_ERR_INVALID_ARGUMENT for r < 1 or C*r*r overflowing int64;
 *         AG_ERR_SHAPE for fewer than 3 dims or H, W not divisible by r.
 */
AG_API ag_status ag_op_pixel_unshuffle(ag_tensor **out, const ag_tensor *x,
                                       int64_t downscale_factor) AG_NOEXCEPT;

/**
 * 1-D max pooling (F.max_pool1d) of x (N, C, L) or (C, L): ag_op_max_pool2d
 * along one dim; stride 0 = kernel_size (PyTorch's default).
 * @return as ag_op_max_pool2d; AG_ERR_SHAPE for x not 2-D or 3-D.
 */
AG_API ag_status ag_op_max_pool1d(ag_tensor **out, const ag_tensor *x, int64_t kernel_size,
                                  int64_t stride, int64_t padding, int64_t dilation,
                                  int32_t ceil_mode) AG_NOEXCEPT;

/**
 * 1-D average pooling (F.avg_pool1d) of x (N, C, L) or (C, L):
 * ag_op_avg_pool2d along one dim; stride 0 = kernel_size.
 * @return as ag_op_avg_pool2d; AG_ERR_SHAPE for x not 2-D or 3-D.
 */
AG_API ag_status ag_op_avg_pool1d(ag_tensor **out, const ag_tensor *x, int64_t kernel_size,
                                  int64_t stride, int64_t padding, int32_t ceil_mode,
                                  int32_t count_include_pad) AG_NOEXCEPT;

/**
 * Adaptive 2-D max pooling (F.adaptive_max_pool2d, values only) of x
 * (N, C, H, W) or (C, H, W) to output_size (oh, ow): output (i, j) is the
 * maximum over rows [floor(i*H/oh), ceil((i+1)*H/oh)) and the columns
 * likewise. Gradient: to the maximum of each window (a NaN is the maximum).
 * @return AG_ERR_INVALID_ARGUMENT for a NULL or non-positive output_size;
 *         AG_ERR_SHAPE for x not 3-D or 4-D or with an empty spatial dim;
 *         AG_ERR_DTYPE.
 */
AG_API ag_status ag_op_adaptive_max_pool2d(ag_tensor **out, const ag_tensor *x,
                                           const int64_t output_size[2]) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_OPS_CONV_H */
