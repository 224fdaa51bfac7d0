/*
 * Tests 'struct-init' and the version checks: every AG_X_INIT macro writes
 * the same bytes as its ag_x_init() function (languages that cannot expand
 * macros call the function), and the header version macros agree with the
 * loaded library and with the project version the build was configured with.
 *
 * A new option struct gets a line in INIT_STRUCTS; the 'exports' test fails
 * while an AG_X_INIT macro of the headers is missing here.
 */
#include "../c_api/harness.h"

/* type, init macro, init function */
#define INIT_STRUCTS(X)                                                   \
  X(ag_context_options, AG_CONTEXT_OPTIONS_INIT, ag_context_options_init) \
  X(ag_backward_options, AG_BACKWARD_OPTIONS_INIT, ag_backward_options_init) \
  X(ag_memory_stats, AG_MEMORY_STATS_INIT, ag_memory_stats_init)         \
  X(ag_grad_options, AG_GRAD_OPTIONS_INIT, ag_grad_options_init)         \
  X(ag_function_def, AG_FUNCTION_DEF_INIT, ag_function_def_init)         \
  X(ag_functional_options, AG_FUNCTIONAL_OPTIONS_INIT, ag_functional_options_init) \
  X(ag_gradcheck_options, AG_GRADCHECK_OPTIONS_INIT, ag_gradcheck_options_init) \
  X(ag_gradcheck_result, AG_GRADCHECK_RESULT_INIT, ag_gradcheck_result_init) \
  X(ag_optimizer_options, AG_OPTIMIZER_OPTIONS_INIT, ag_optimizer_options_init) \
  X(ag_profiler_options, AG_PROFILER_OPTIONS_INIT, ag_profiler_options_init)

/* The macro and the function give the same bytes, whatever the memory held
 * before; struct_size is the size of the struct and every other byte is 0. */
#define TEST_INIT(type, MACRO, init_fn)                                       \
  static void test_##type(void) {                                             \
    type from_macro = MACRO;                                                  \
    type from_fn, expected;                                                   \
    memset(&from_fn, 0xA5, sizeof from_fn);                                   \
    memset(&expected, 0, sizeof expected);                                    \
    expected.struct_size = (uint32_t)sizeof(type);                            \
    CHECK_STATUS(init_fn(&from_fn), AG_OK);                                   \
    CHECK(memcmp(&from_macro, &from_fn, sizeof(type)) == 0);                  \
    CHECK(memcmp(&from_macro, &expected, sizeof(type)) == 0);                 \
    CHECK_STATUS(init_fn(NULL), AG_ERR_INVALID_ARGUMENT);                     \
  }
INIT_STRUCTS(TEST_INIT)

static void test_version_macros_match_library(void) {
  char expected[32];
  CHECK(AG_VERSION_NUMBER == AG_VERSION_MAJOR * 10000 + AG_VERSION_MINOR * 100 + AG_VERSION_PATCH);
  CHECK(ag_version_number() == AG_VERSION_NUMBER);
  snprintf(expected, sizeof expected, "%d.%d.%d", AG_VERSION_MAJOR, AG_VERSION_MINOR, AG_VERSION_PATCH);
  REQUIRE(ag_version_string() != NULL);
  CHECK(strcmp(ag_version_string(), expected) == 0);
  /* The project version of the build (meson.build) is the headers' too. */
  CHECK(strcmp(AG_PROJECT_VERSION, expected) == 0);
  if (strcmp(AG_PROJECT_VERSION, expected) != 0 || strcmp(ag_version_string(), expected) != 0)
    printf("# headers %s, library %s, project %s\n", expected, ag_version_string(), AG_PROJECT_VERSION);
}

int main(int argc, char **argv) {
  h_init(argc, argv);
#define RUN_INIT(type, MACRO, init_fn) RUN(test_##type);
  INIT_STRUCTS(RUN_INIT)
  RUN(test_version_macros_match_library);
  return h_finish();
}
