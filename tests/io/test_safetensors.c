/*
 * safetensors save/load (ag/io.h): round trips of every dtype, zero-copy
 * sharing of aligned data and copies of misaligned data, metadata, and a
 * crafted file for each way a file can be bad (clear error, no crash).
 *
 * Usage: test_safetensors TMPDIR [FILTER]
 */
#include "../c_api/harness.h"

#include <unistd.h>

static const char *g_dir;
static ag_context *g_ctx;

static void path_of(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", g_dir, name); }

/* Writes an 8-byte length, the header, and `data_len` bytes of data. */
static void write_raw(const char *path, const char *header, uint64_t header_len_field, const void *data,
                      size_t data_len) {
  FILE *f = fopen(path, "wb");
  unsigned char len[8];
  for (int b = 0; b < 8; ++b) len[b] = (unsigned char)(header_len_field >> (8 * b));
  fwrite(len, 1, 8, f);
  fwrite(header, 1, strlen(header), f);
  if (data_len) fwrite(data, 1, data_len, f);
  fclose(f);
}

static void test_round_trip(void) {
  char path[512];
  path_of(path, sizeof path, "round.safetensors");
  const int64_t s23[2] = {2, 3}, s4[1] = {4};
  const float f[6] = {1.5f, -2.0f, 3.25f, 0.0f, -0.0f, 1e-30f};
  const double d[4] = {1.0 / 3.0, -1e300, 4.0, 5.5};
  const int64_t i[4] = {-1, INT64_MAX, INT64_MIN, 7};
  const uint8_t b[4] = {1, 0, 0, 1};
  ag_tensor *t[5] = {NULL};
  ag_tensor_create(&t[0], g_ctx, AG_F32, s23, 2, f);
  ag_tensor_create(&t[1], g_ctx, AG_F64, s4, 1, d);
  ag_tensor_create(&t[2], g_ctx, AG_I64, s4, 1, i);
  ag_tensor_create(&t[3], g_ctx, AG_BOOL, s4, 1, b);
  ag_op_transpose(&t[4], t[0], 0, 1); /* strided: written row-major */
  const char *names[5] = {"w", "d", "idx", "mask", "w.T"};
  const char *keys[2] = {"format", "note"}, *vals[2] = {"pt", "ünïcode"};
  REQUIRE_OK(ag_safetensors_save(path, names, (const ag_tensor *const *)t, 5, keys, vals, 2));

  ag_safetensors *file = NULL;
  REQUIRE_OK(ag_safetensors_load(&file, g_ctx, path));
  CHECK(ag_safetensors_count(file) == 5);
  CHECK_STR(ag_safetensors_name(file, 0), "w"); /* by offset: the order saved */
  CHECK_STR(ag_safetensors_name(file, 4), "w.T");
  CHECK(ag_safetensors_name(file, 5) == NULL);
  CHECK_STR(ag_safetensors_metadata(file, "note"), "ünïcode");
  CHECK(ag_safetensors_metadata(file, "absent") == NULL);
  for (int k = 0; k < 5; ++k) {
    ag_tensor *x = NULL, *contig = NULL;
    REQUIRE_OK(ag_safetensors_get(file, names[k], &x));
    CHECK(ag_tensor_dtype(x) == ag_tensor_dtype(t[k]));
    CHECK(ag_tensor_ndim(x) == ag_tensor_ndim(t[k]));
    CHECK(ag_tensor_is_leaf(x) == 1 && ag_tensor_get_requires_grad(x) == 0);
    unsigned char want[64], got[64];
    ag_tensor_contiguous(&contig, t[k]);
    const size_t bytes = (size_t)ag_tensor_numel(x) * ag_dtype_size(ag_tensor_dtype(x));
    CHECK_OK(ag_tensor_copy_data(contig, want, sizeof want));
    CHECK_OK(ag_tensor_copy_data(x, got, sizeof got));
    CHECK(memcmp(want, got, bytes) == 0);
    ag_tensor_release(contig);
    ag_tensor_release(x);
  }
  /* Aligned data is shared with the mapping: it outlives the handle, and
   * writes stay private (the file keeps its bytes). */
  ag_tensor *w = NULL, *w2 = NULL;
  REQUIRE_OK(ag_safetensors_get(file, "w", &w));
  REQUIRE_OK(ag_safetensors_get(file, "w", &w2));
  CHECK(ag_tensor_data(w) == ag_tensor_data(w2)); /* one mapping, no copy */
  ag_safetensors_release(file);
  ag_tensor *two = NULL;
  ag_tensor_scalar(&two, g_ctx, AG_F32, 2.0);
  CHECK_OK(ag_op_mul_(w, two));
  float back[6];
  ag_tensor_copy_data(w2, back, sizeof back);
  CHECK(back[0] == 3.0f); /* same memory */
  ag_tensor_release(two);
  ag_tensor_release(w);
  ag_tensor_release(w2);
  REQUIRE_OK(ag_safetensors_load(&file, g_ctx, path));
  REQUIRE_OK(ag_safetensors_get(file, "w", &w));
  ag_tensor_copy_data(w, back, sizeof back);
  CHECK(back[0] == 1.5f); /* the file is untouched */
  ag_tensor_release(w);
  ag_safetensors_release(file);
  for (int k = 0; k < 5; ++k) ag_tensor_release(t[k]);
  unlink(path);
}

/* A header whose length is not a multiple of the element size puts the
 * data at a misaligned address: it is copied, and still right. */
static void test_misaligned_copied(void) {
  char path[512];
  path_of(path, sizeof path, "misaligned.safetensors");
  const char *header = "{\"x\":{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[0,16]}}"; /* 55 bytes */
  const double v[2] = {2.5, -7.0};
  write_raw(path, header, strlen(header), v, sizeof v);
  ag_safetensors *file = NULL;
  REQUIRE_OK(ag_safetensors_load(&file, g_ctx, path));
  ag_tensor *x = NULL;
  REQUIRE_OK(ag_safetensors_get(file, "x", &x));
  CHECK(((uintptr_t)ag_tensor_data(x)) % 8 == 0);
  double got[2];
  ag_tensor_copy_data(x, got, sizeof got);
  CHECK(got[0] == 2.5 && got[1] == -7.0);
  ag_tensor_release(x);
  ag_safetensors_release(file);
  unlink(path);
}

/* Each bad file fails with its status and a message containing `needle`. */
static void expect_bad(const char *what, const char *header, uint64_t len_field, size_t data_len, ag_status status,
                       const char *needle) {
  char path[512];
  static unsigned char zeros[256];
  path_of(path, sizeof path, "bad.safetensors");
  write_raw(path, header, len_field, zeros, data_len);
  ag_safetensors *file = NULL;
  const ag_status st = ag_safetensors_load(&file, g_ctx, path);
  if (!CHECK_STATUS(st, status) || !CHECK_CONTAINS(ag_last_error_message(), needle))
    printf("# case: %s\n", what);
  CHECK(file == NULL);
  unlink(path);
}

static void test_bad_files(void) {
  char path[512];
  ag_safetensors *file = NULL;
  path_of(path, sizeof path, "short.safetensors");
  FILE *f = fopen(path, "wb");
  fwrite("abc", 1, 3, f);
  fclose(f);
  CHECK_ERR(ag_safetensors_load(&file, g_ctx, path), AG_ERR_INVALID_ARGUMENT, "ag_safetensors_load");
  CHECK_MSG_HAS("fewer than the 8");
  unlink(path);
  path_of(path, sizeof path, "does-not-exist.safetensors");
  CHECK_ERR(ag_safetensors_load(&file, g_ctx, path), AG_ERR_INVALID_ARGUMENT, "ag_safetensors_load");
  CHECK_MSG_HAS("cannot open");

  const char *ok = "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
  expect_bad("header length past the end", ok, 1u << 20, 8, AG_ERR_INVALID_ARGUMENT, "exceeds");
  expect_bad("truncated data", ok, strlen(ok), 4, AG_ERR_INVALID_ARGUMENT, "outside the 4 data bytes");
  expect_bad("invalid JSON", "{\"x\": [1, 2", 11, 0, AG_ERR_INVALID_ARGUMENT, "invalid JSON");
  expect_bad("not an object", "[1, 2, 3]   ", 12, 0, AG_ERR_INVALID_ARGUMENT, "not a JSON object");
  const char *h;
  h = "{\"x\":{\"dtype\":\"F33\",\"shape\":[2],\"data_offsets\":[0,8]}}";
  expect_bad("wrong dtype string", h, strlen(h), 8, AG_ERR_INVALID_ARGUMENT, "'F33', which is not a safetensors dtype");
  h = "{\"x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}";
  expect_bad("shape/size mismatch", h, strlen(h), 8, AG_ERR_INVALID_ARGUMENT, "different byte count");
  h = "{\"x\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}";
  expect_bad("negative size", h, strlen(h), 8, AG_ERR_INVALID_ARGUMENT, "non-negative integer");
  h = "{\"x\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],\"data_offsets\":[0,8]}}";
  expect_bad("overflowing shape", h, strlen(h), 8, AG_ERR_INVALID_ARGUMENT, "different byte count");
  h = "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}";
  expect_bad("reversed offsets", h, strlen(h), 8, AG_ERR_INVALID_ARGUMENT, "outside");
  h = "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"y\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}";
  expect_bad("overlapping offsets", h, strlen(h), 12, AG_ERR_INVALID_ARGUMENT, "overlap");
  h = "{\"x\":{\"dtype\":\"F32\",\"shape\":[2]}}";
  expect_bad("missing offsets", h, strlen(h), 8, AG_ERR_INVALID_ARGUMENT, "no data_offsets");
  h = "{\"__metadata__\":{\"a\":1}}";
  expect_bad("non-string metadata", h, strlen(h), 0, AG_ERR_INVALID_ARGUMENT, "not a string");
  h = "{\"x\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}";
  expect_bad("too many dims", h, strlen(h), 4, AG_ERR_INVALID_ARGUMENT, "17 dimensions");
}

/* A dtype ag lacks loads, and get names the tensor. BOOL bytes are checked. */
static void test_unsupported_dtype_and_bool(void) {
  char path[512];
  path_of(path, sizeof path, "f16.safetensors");
  const char *h = "{\"half\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]},"
                  "\"flag\":{\"dtype\":\"BOOL\",\"shape\":[2],\"data_offsets\":[4,6]}}";
  const unsigned char data[6] = {0, 0x3c, 0, 0x40, 1, 2};
  write_raw(path, h, strlen(h), data, 6);
  ag_safetensors *file = NULL;
  REQUIRE_OK(ag_safetensors_load(&file, g_ctx, path));
  ag_tensor *x = NULL;
  CHECK_ERR(ag_safetensors_get(file, "half", &x), AG_ERR_DTYPE, "ag_safetensors_get");
  CHECK_MSG_HAS("tensor 'half' has dtype F16");
  CHECK_ERR(ag_safetensors_get(file, "flag", &x), AG_ERR_INVALID_ARGUMENT, "ag_safetensors_get");
  CHECK_MSG_HAS("byte 2");
  CHECK_ERR(ag_safetensors_get(file, "nope", &x), AG_ERR_INVALID_ARGUMENT, "ag_safetensors_get");
  CHECK(x == NULL);
  ag_safetensors_release(file);
  unlink(path);
}

static void test_save_errors(void) {
  char path[512];
  path_of(path, sizeof path, "save.safetensors");
  ag_tensor *t = NULL;
  const int64_t n = 1;
  ag_tensor_zeros(&t, g_ctx, AG_F32, &n, 1);
  const ag_tensor *ts[2] = {t, t};
  const char *dup[2] = {"a", "a"}, *reserved[1] = {"__metadata__"}, *bad_utf8[1] = {"\xff\xfe"};
  CHECK_ERR(ag_safetensors_save(path, dup, ts, 2, NULL, NULL, 0), AG_ERR_INVALID_ARGUMENT, "ag_safetensors_save");
  CHECK_MSG_HAS("appears twice");
  CHECK_ERR(ag_safetensors_save(path, reserved, ts, 1, NULL, NULL, 0), AG_ERR_INVALID_ARGUMENT,
            "ag_safetensors_save");
  CHECK_ERR(ag_safetensors_save(path, bad_utf8, ts, 1, NULL, NULL, 0), AG_ERR_INVALID_ARGUMENT,
            "ag_safetensors_save");
  CHECK_MSG_HAS("UTF-8");
  CHECK(access(path, F_OK) != 0); /* nothing written */
  CHECK_ERR(ag_safetensors_save("/nonexistent-dir/x.safetensors", dup, ts, 1, NULL, NULL, 0),
            AG_ERR_INVALID_ARGUMENT, "ag_safetensors_save");
  CHECK_MSG_HAS("cannot create");
  CHECK_ERR(ag_safetensors_save(NULL, dup, ts, 1, NULL, NULL, 0), AG_ERR_INVALID_ARGUMENT, "ag_safetensors_save");
  /* An empty file (no tensors) round-trips. */
  ag_safetensors *file = NULL;
  CHECK_OK(ag_safetensors_save(path, NULL, NULL, 0, NULL, NULL, 0));
  CHECK_OK(ag_safetensors_load(&file, g_ctx, path));
  CHECK(ag_safetensors_count(file) == 0);
  ag_safetensors_release(file);
  CHECK(ag_safetensors_count(NULL) == -1);
  ag_tensor_release(t);
  unlink(path);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    printf("Bail out! usage: test_safetensors TMPDIR\n");
    return 1;
  }
  g_dir = argv[1];
  h_init(argc - 1, argv + 1);
  if (ag_context_create(&g_ctx, NULL) != AG_OK) return 1;
  RUN(test_round_trip);
  RUN(test_misaligned_copied);
  RUN(test_bad_files);
  RUN(test_unsupported_dtype_and_bool);
  RUN(test_save_errors);
  ag_context_release(g_ctx);
  return h_finish();
}
