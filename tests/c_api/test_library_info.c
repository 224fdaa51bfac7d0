/*
 * tests/c_api/test_library_info.c - what the C API says about itself: the
 * version, status and dtype names, the op list (each an exported function),
 * and the INIT macros of the option structs against their init functions.
 */
#include "harness.h"

#include <dlfcn.h>

/* ---- library info ---------------------------------------------------------------- */

static void test_version(void) {
  char want[64];
  CHECK(ag_version_number() == AG_VERSION_NUMBER);
  CHECK(AG_VERSION_NUMBER == AG_VERSION_MAJOR * 10000 + AG_VERSION_MINOR * 100 + AG_VERSION_PATCH);
  snprintf(want, sizeof want, "%d.%d.%d", AG_VERSION_MAJOR, AG_VERSION_MINOR, AG_VERSION_PATCH);
  REQUIRE(ag_version_string() != NULL);
  CHECK_STR(ag_version_string(), want);
  /* static string: the same pointer every time */
  CHECK(ag_version_string() == ag_version_string());
}

static void test_status_names(void) {
  static const struct {
    ag_status s;
    const char *name;
  } table[] = {
      {AG_OK, "AG_OK"},
      {AG_ERR_INVALID_ARGUMENT, "AG_ERR_INVALID_ARGUMENT"},
      {AG_ERR_SHAPE, "AG_ERR_SHAPE"},
      {AG_ERR_DTYPE, "AG_ERR_DTYPE"},
      {AG_ERR_OUT_OF_MEMORY, "AG_ERR_OUT_OF_MEMORY"},
      {AG_ERR_CONTEXT, "AG_ERR_CONTEXT"},
      {AG_ERR_GRAPH, "AG_ERR_GRAPH"},
      {AG_ERR_VERSION, "AG_ERR_VERSION"},
      {AG_ERR_CALLBACK, "AG_ERR_CALLBACK"},
      {AG_ERR_BUFFER_TOO_SMALL, "AG_ERR_BUFFER_TOO_SMALL"},
      {AG_ERR_UNSUPPORTED, "AG_ERR_UNSUPPORTED"},
      {AG_ERR_INTERNAL, "AG_ERR_INTERNAL"},
  };
  size_t i;
  /* pinned values */
  CHECK(AG_OK == 0);
  CHECK(AG_ERR_INVALID_ARGUMENT == -1);
  CHECK(AG_ERR_INTERNAL == -11);
  for (i = 0; i < sizeof table / sizeof table[0]; i++) {
    CHECK(table[i].s == -(ag_status)i);
    CHECK_STR(ag_status_name(table[i].s), table[i].name);
  }
  CHECK_STR(ag_status_name(1), "AG_ERR_UNKNOWN");
  CHECK_STR(ag_status_name(-12), "AG_ERR_UNKNOWN");
  CHECK_STR(ag_status_name(12345), "AG_ERR_UNKNOWN");
  CHECK_STR(ag_status_name(INT32_MIN), "AG_ERR_UNKNOWN");
  CHECK_STR(ag_status_name(INT32_MAX), "AG_ERR_UNKNOWN");
}

static void test_dtype_info(void) {
  CHECK(AG_F32 == 1 && AG_F64 == 2 && AG_I64 == 3 && AG_BOOL == 4);
  CHECK(ag_dtype_size(AG_F32) == 4);
  CHECK(ag_dtype_size(AG_F64) == 8);
  CHECK(ag_dtype_size(AG_I64) == 8);
  CHECK(ag_dtype_size(AG_BOOL) == 1);
  CHECK(ag_dtype_size(0) == 0);
  CHECK(ag_dtype_size(5) == 0);
  CHECK(ag_dtype_size(-1) == 0);
  CHECK(ag_dtype_size(INT32_MAX) == 0);
  CHECK_STR(ag_dtype_name(AG_F32), "f32");
  CHECK_STR(ag_dtype_name(AG_F64), "f64");
  CHECK_STR(ag_dtype_name(AG_I64), "i64");
  CHECK_STR(ag_dtype_name(AG_BOOL), "bool");
  CHECK_STR(ag_dtype_name(0), "invalid");
  CHECK_STR(ag_dtype_name(5), "invalid");
  CHECK_STR(ag_dtype_name(-3), "invalid");
}

static void test_op_introspection(void) {
  static const char *declared[] = {"neg", "exp",  "log", "tanh", "pow_scalar",  "add",  "sub",
                                   "mul", "div",  "sum", "mean", "expand", "sum_to_size", "cast"};
  int32_t n = ag_op_count(), i, j;
  size_t k;
  void *self = dlopen(NULL, RTLD_NOW);
  CHECK(self != NULL);
  CHECK(n >= (int32_t)(sizeof declared / sizeof declared[0]));
  for (i = 0; i < n; i++) {
    const char *name = ag_op_name(i);
    char sym[128];
    if (!CHECK(name != NULL))
      continue;
    CHECK(name[0] != '\0');
    CHECK(strncmp(name, "ag_op_", 6) != 0);
    for (j = 0; j < i; j++) {
      const char *other = ag_op_name(j);
      if (other && strcmp(other, name) == 0) {
        CHECK(!"op names must be unique");
        printf("#   duplicate op name \"%s\" at %d and %d\n", name, (int)j, (int)i);
      }
    }
    /* every listed op is an exported ag_op_<name> function */
    snprintf(sym, sizeof sym, "ag_op_%s", name);
    if (self && !CHECK(dlsym(self, sym) != NULL))
      printf("#   op %d \"%s\": no exported symbol %s\n", (int)i, name, sym);
  }
  /* every op declared in ops.h is listed */
  for (k = 0; k < sizeof declared / sizeof declared[0]; k++) {
    int found = 0;
    for (i = 0; i < n; i++) {
      const char *name = ag_op_name(i);
      if (name && strcmp(name, declared[k]) == 0)
        found = 1;
    }
    if (!CHECK(found))
      printf("#   op \"%s\" is declared in ops.h but not listed by ag_op_name\n", declared[k]);
  }
  CHECK(ag_op_name(-1) == NULL);
  CHECK(ag_op_name(n) == NULL);
  CHECK(ag_op_name(n + 1) == NULL);
  CHECK(ag_op_name(INT32_MAX) == NULL);
  CHECK(ag_op_name(INT32_MIN) == NULL);
  if (self)
    dlclose(self);
}

/* ---- options --------------------------------------------------------------------- */

static void test_context_options_init(void) {
  ag_context_options a = AG_CONTEXT_OPTIONS_INIT;
  CHECK_INIT_GIVES(ag_context_options, ag_context_options_init, 0xAB, a);
  CHECK(a.struct_size == sizeof(ag_context_options));
  CHECK(a.num_threads == 0);
  CHECK(a.alloc == NULL && a.free == NULL && a.user == NULL && a.destroy == NULL);
  CHECK(a.enqueue_task == NULL && a.finish_task == NULL && a.task_user == NULL && a.worker_count == 0 &&
        a.reserved == 0);
  CHECK(sizeof(ag_context_options) == 16 + 7 * sizeof(void *)); /* no padding, pinned layout */
}

static void test_backward_options_init(void) {
  ag_backward_options a = AG_BACKWARD_OPTIONS_INIT;
  CHECK_INIT_GIVES(ag_backward_options, ag_backward_options_init, 0xCD, a);
  CHECK(a.struct_size == sizeof(ag_backward_options));
  CHECK(a.retain_graph == 0 && a.create_graph == 0 && a.num_inputs == 0 && a.inputs == NULL);
  CHECK(sizeof(ag_backward_options) == 16 + sizeof(void *)); /* no padding */
}

int main(int argc, char **argv) {
  h_init(argc, argv);
  RUN(test_version);
  RUN(test_status_names);
  RUN(test_dtype_info);
  RUN(test_op_introspection);
  RUN(test_context_options_init);
  RUN(test_backward_options_init);
  return h_finish();
}
