/*
 * tests/c_api/test_errors_options.c - versioned option and statistics structs
 * in the C API: a bad struct_size, nonzero unknown trailing bytes, bad values
 * and NULL pointers are rejected and change nothing.
 */
#include "harness.h"

static void test_context_bad_options(void) {
  ag_context *out = SENT_C;
  ag_context_options o = AG_CONTEXT_OPTIONS_INIT;
  o.struct_size = 0;
  CHECK_ERR(ag_context_create(&out, &o), AG_ERR_INVALID_ARGUMENT, "ag_context_create");
  CHECK(out == SENT_C);
  o.struct_size = 3;
  CHECK_ERR(ag_context_create(&out, &o), AG_ERR_INVALID_ARGUMENT, "ag_context_create");
  CHECK(out == SENT_C);
  o = (ag_context_options)AG_CONTEXT_OPTIONS_INIT;
  o.num_threads = -1;
  CHECK_ERR(ag_context_create(&out, &o), AG_ERR_INVALID_ARGUMENT, "ag_context_create");
  CHECK_MSG_HAS("-1");
  CHECK(out == SENT_C);
  {
    /* a larger struct whose unknown trailing bytes are not zero */
    struct {
      ag_context_options base;
      uint32_t future;
    } big;
    memset(&big, 0, sizeof big);
    big.base.struct_size = (uint32_t)sizeof big;
    big.future = 1;
    CHECK_ERR(ag_context_create(&out, &big.base), AG_ERR_INVALID_ARGUMENT, "ag_context_create");
    CHECK(out == SENT_C);
  }
}

static void test_backward_bad_struct_size(void) {
  h_squares f;
  ag_backward_options o = AG_BACKWARD_OPTIONS_INIT;
  REQUIRE(SQUARE_OF_SCALAR(&f, 2.0));
  o.struct_size = 0;
  CHECK_ERR(ag_backward(f.y, NULL, &o), AG_ERR_INVALID_ARGUMENT, "ag_backward");
  o.struct_size = 3;
  CHECK_ERR(ag_backward(f.y, NULL, &o), AG_ERR_INVALID_ARGUMENT, "ag_backward");
  CHECK_NO_GRAD(f.x);
  h_squares_drop(&f);
}

/* Backward options: a larger struct with zero trailing bytes is accepted,
 * nonzero unknown bytes are rejected (and change nothing). */
static void test_backward_options_extension(void) {
  h_squares f;
  ag_tensor *g;
  struct {
    ag_backward_options base;
    uint32_t future;
    uint32_t future2;
  } big;
  REQUIRE(SQUARE_OF_SCALAR(&f, 2.0));
  memset(&big, 0, sizeof big);
  big.base.struct_size = (uint32_t)sizeof big;
  big.base.retain_graph = 1;
  big.future2 = 5;
  CHECK_ERR(ag_backward(f.y, NULL, &big.base), AG_ERR_INVALID_ARGUMENT, "ag_backward");
  CHECK_NO_GRAD(f.x);
  big.future2 = 0;
  CHECK_OK(ag_backward(f.y, NULL, &big.base));
  CHECK_OK(ag_backward(f.y, NULL, &big.base)); /* retain_graph was read */
  g = GRAD(f.x);
  CHECK_CLOSE(ITEM(g), 8.0, 0);
  REL(g);
  h_squares_drop(&f);
}

static void test_memory_stats_errors(void) {
  ag_context *ctx = NEW_CTX();
  ag_memory_stats st;
  REQUIRE(ctx);
  CHECK_ERR(ag_memory_stats_init(NULL), AG_ERR_INVALID_ARGUMENT, "ag_memory_stats_init");
  st = (ag_memory_stats)AG_MEMORY_STATS_INIT;
  st.bytes_in_use = -42;
  CHECK_ERR(ag_context_memory_stats(NULL, &st), AG_ERR_INVALID_ARGUMENT,
            "ag_context_memory_stats");
  CHECK(st.bytes_in_use == -42);
  CHECK_ERR(ag_context_memory_stats(ctx, NULL), AG_ERR_INVALID_ARGUMENT,
            "ag_context_memory_stats");
  st.struct_size = 3;
  CHECK_ERR(ag_context_memory_stats(ctx, &st), AG_ERR_INVALID_ARGUMENT,
            "ag_context_memory_stats");
  CHECK(st.bytes_in_use == -42);
  CHECK(st.struct_size == 3);
  CHECK_ERR(ag_context_trim(NULL), AG_ERR_INVALID_ARGUMENT, "ag_context_trim");
  CHECK_ERR(ag_context_reset_peak_memory(NULL), AG_ERR_INVALID_ARGUMENT,
            "ag_context_reset_peak_memory");
  ag_context_release(ctx);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_backward_bad_struct_size);
  RUN(test_context_bad_options);
  RUN(test_memory_stats_errors);
  RUN(test_backward_options_extension);
  return h_finish();
}
