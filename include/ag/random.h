/*
 * ag/random.h - random tensors, dropout, and the context's generator.
 *
 * The generator. Each context has its own counter-based generator,
 * Philox4x32-10 (Salmon et al., SC'11), with a state of two numbers: a
 * 64-bit seed (the Philox key) and a 64-bit offset, the next free counter
 * block (one block gives four 32-bit words). A new context starts at seed
 * AG_RNG_DEFAULT_SEED and offset 0, so programs are reproducible by default.
 * A random op reserves the blocks it needs by advancing the offset, and
 * element e of its result depends only on the seed and one block: offset +
 * e / 4 for f32 values and for Bernoulli draws of either dtype (one word
 * each), offset + e / 2 for f64 and i64 values (two words each); an op of n
 * elements reserves ceil(n / 4) or ceil(n / 2) blocks. So:
 * - the same state and the same calls give bitwise the same tensors, for any
 *   num_threads (large tensors are drawn in parallel chunks);
 * - a saved state (ag_context_rng_state) restored later
 *   (ag_context_set_rng_state) replays the same numbers;
 * - ops that fail leave the state unchanged.
 * Thread safety: random ops on one context from several threads at once are
 * safe and draw disjoint blocks, but which thread gets which blocks depends
 * on the order in which they arrive.
 *
 * Values. Uniform values take the top 24 bits of a word (f32) or the top 53
 * bits of two words (f64) as a number in [0, 1). Bernoulli draws (bernoulli,
 * bernoulli_scalar, dropout) compare a whole word w, as w / 2^32, with the
 * probability in double, so f32 and f64 draw the same 0/1 pattern. Normal values come from
 * Box-Muller on two such uniforms u1, u2 (log of 1 - u1, never of 0), so
 * they are always finite: |z| < 5.8 in f32 and < 8.6 in f64. Box-Muller
 * runs in double on SIMD math within a few ulp of the C library's, so
 * normal values may differ in the last bits between SIMD targets (CPUs);
 * uniform, Bernoulli and integer values are the same on every target.
 *
 * The random ops' results are new contiguous leaves that do not require
 * grad; their shapes are given as (shape, ndim) as in ag_tensor_zeros.
 * Errors name the function and the facts ("[ag_op_uniform] low 2 is above
 * high 1"). Every function returns AG_ERR_INVALID_ARGUMENT for a NULL `out`
 * or a NULL or released context or tensor, and every op that takes a shape
 * returns AG_ERR_INVALID_ARGUMENT for an ndim outside 0..16, a NULL shape
 * with ndim > 0 or a negative size, and AG_ERR_OUT_OF_MEMORY when the
 * result does not fit in memory. Zero-size dims give empty tensors (and
 * reserve no blocks).
 */
#ifndef AG_RANDOM_H
#define AG_RANDOM_H

#include "ag/common.h"
#include "ag/context.h"
#include "ag/tensor.h"

AG_BEGIN_DECLS

/** The seed of a new context (its offset starts at 0). */
#define AG_RNG_DEFAULT_SEED UINT64_C(0x9E3779B97F4A7C15)

/**
 * Seed the generator of `ctx` and reset its offset to 0 (PyTorch's
 * manual_seed). Thread-safe.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT for a NULL or released ctx.
 */
AG_API ag_status ag_context_manual_seed(ag_context *ctx, uint64_t seed) AG_NOEXCEPT;

/**
 * Read the seed of the generator of `ctx` (the last one set, or
 * AG_RNG_DEFAULT_SEED) into `*seed` (PyTorch's initial_seed). Thread-safe.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT for a NULL or released ctx, or a
 *         NULL seed.
 */
AG_API ag_status ag_context_seed(const ag_context *ctx, uint64_t *seed) AG_NOEXCEPT;

/**
 * Read the whole generator state of `ctx`, seed and offset, as one snapshot.
 * Thread-safe.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT for a NULL or released ctx, or a
 *         NULL seed or offset (then nothing is written).
 */
AG_API ag_status ag_context_rng_state(const ag_context *ctx, uint64_t *seed, uint64_t *offset) AG_NOEXCEPT;

/**
 * Set the generator state of `ctx` (as read by ag_context_rng_state): the
 * random ops that follow replay the numbers drawn from that state.
 * Thread-safe.
 * @return AG_OK; AG_ERR_INVALID_ARGUMENT for a NULL or released ctx.
 */
AG_API ag_status ag_context_set_rng_state(ag_context *ctx, uint64_t seed, uint64_t offset) AG_NOEXCEPT;

/**
 * y = values uniform in [0, 1), of `dtype` AG_F32 or AG_F64.
 * @return AG_ERR_DTYPE for another dtype; the shape errors above.
 */
AG_API ag_status ag_op_rand(ag_tensor **out, ag_context *ctx, ag_dtype dtype, const int64_t *shape,
                            int32_t ndim) AG_NOEXCEPT;

/**
 * y = standard normal values (mean 0, variance 1), of AG_F32 or AG_F64.
 * @return AG_ERR_DTYPE for another dtype; the shape errors above.
 */
AG_API ag_status ag_op_randn(ag_tensor **out, ag_context *ctx, ag_dtype dtype, const int64_t *shape,
                             int32_t ndim) AG_NOEXCEPT;

/**
 * y = values uniform in [low, high): low + (high - low) u for u of
 * ag_op_rand, computed in double, rounded to the dtype and kept below high
 * (low == high gives low everywhere). AG_F32 or AG_F64.
 * @return AG_ERR_DTYPE; AG_ERR_INVALID_ARGUMENT for a low or high that is
 *         not finite, low > high, or high - low overflowing; the shape errors.
 */
AG_API ag_status ag_op_uniform(ag_tensor **out, ag_context *ctx, ag_dtype dtype, const int64_t *shape,
                               int32_t ndim, double low, double high) AG_NOEXCEPT;

/**
 * y = normal values mean + std z for z of ag_op_randn. AG_F32 or AG_F64.
 * @return AG_ERR_DTYPE; AG_ERR_INVALID_ARGUMENT for a mean or std that is
 *         not finite or a negative std; the shape errors.
 */
AG_API ag_status ag_op_normal(ag_tensor **out, ag_context *ctx, ag_dtype dtype, const int64_t *shape,
                              int32_t ndim, double mean, double std) AG_NOEXCEPT;

/**
 * y[i] = 1 with probability p[i], else 0 (u_i < p[i] for u of ag_op_rand):
 * y has p's shape and floating dtype (as PyTorch's bernoulli), and the
 * context of p. p may be any view. Not differentiable: y never requires grad.
 * @return AG_ERR_DTYPE for a p that is not f32 or f64;
 *         AG_ERR_INVALID_ARGUMENT for a probability outside [0, 1] or NaN,
 *         naming the value and its flat index.
 */
AG_API ag_status ag_op_bernoulli(ag_tensor **out, const ag_tensor *p) AG_NOEXCEPT;

/**
 * y = values that are 1 with probability p, else 0, of AG_F32 or AG_F64.
 * @return AG_ERR_DTYPE; AG_ERR_INVALID_ARGUMENT for p outside [0, 1] or NaN;
 *         the shape errors.
 */
AG_API ag_status ag_op_bernoulli_scalar(ag_tensor **out, ag_context *ctx, ag_dtype dtype, const int64_t *shape,
                                        int32_t ndim, double p) AG_NOEXCEPT;

/**
 * y = AG_I64 values uniform in [low, high): low + (r mod (high - low)) for a
 * 64-bit random r (a bias below 2^-32 for ranges under 2^32).
 * @return AG_ERR_INVALID_ARGUMENT for low >= high; the shape errors.
 */
AG_API ag_status ag_op_randint(ag_tensor **out, ag_context *ctx, const int64_t *shape, int32_t ndim, int64_t low,
                               int64_t high) AG_NOEXCEPT;

/**
 * Dropout (PyTorch's functional dropout). With training != 0 and p > 0:
 * y = x * m, where m has x's shape and dtype and m[i] = 1 / (1 - p) with
 * probability 1 - p, else 0, drawn from the context of x. p = 1 gives
 * x * 0 (zeros, NaN where x is not finite) and draws nothing. y is recorded as a product with the
 * mask saved: the gradient is g * m with the same mask, and higher
 * derivatives work. With training == 0 or p == 0, y is x itself (a new
 * reference to the same tensor, no copy) and no random numbers are drawn.
 * x is f32 or f64, any view.
 * @return AG_ERR_DTYPE for a non-floating x; AG_ERR_INVALID_ARGUMENT for p
 *         outside [0, 1] or NaN.
 */
AG_API ag_status ag_op_dropout(ag_tensor **out, const ag_tensor *x, double p, int32_t training) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_RANDOM_H */
