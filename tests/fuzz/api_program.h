/*
 * tests/fuzz/api_program.h - runs a byte string as a program over ag's C API.
 *
 * One interpreter serves the libFuzzer harness (fuzz_api_program.c) and the
 * replay of the programs kept in tests/regress (tests/c_api/
 * test_regress_programs.c). The byte format is described in api_program.c.
 */
#ifndef AG_TESTS_API_PROGRAM_H
#define AG_TESTS_API_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

/* Runs the program and releases everything it made. Returns NULL, or a
 * static description of the first breach of the ABI contract the
 * interpreter saw (a status outside the list, an out-parameter written on
 * failure, a message without "[function]", host memory freed with another
 * size or left allocated, a destroy callback not run exactly once). Crashes
 * and sanitizer reports are the caller's to catch. */
const char *ag_fuzz_run_program(const uint8_t *data, size_t size);

/* Number of functions the interpreter calls generically (from ag-api.json). */
int ag_fuzz_generic_calls(void);

#endif /* AG_TESTS_API_PROGRAM_H */
