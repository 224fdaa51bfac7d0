/*
 * tests/fuzz/fuzz_api_program.c - libFuzzer entry: each input is a program
 * over ag's C API (api_program.c). A crash, a sanitizer report, a breach of
 * the contract the interpreter checks, or any byte the library writes to
 * stdout or stderr is a finding.
 *
 * Built by the `fuzz` meson option with clang (tests/fuzz/run.sh).
 */
#define _GNU_SOURCE
#include <sanitizer/common_interface_defs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api_program.h"

static int g_capture = -1, g_out = -1, g_err = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  /* Sanitizer reports keep the real stderr; during a program, fds 1 and 2
   * point at a scratch file that must stay empty. */
  g_out = dup(1);
  g_err = dup(2);
  g_capture = memfd_create("ag_fuzz_output", 0);
  if (g_out < 0 || g_err < 0 || g_capture < 0) abort();
  __sanitizer_set_report_fd((void *)(intptr_t)g_err);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *breach;
  struct stat st;
  fflush(stdout);
  fflush(stderr);
  dup2(g_capture, 1);
  dup2(g_capture, 2);
  breach = ag_fuzz_run_program(data, size);
  fflush(stdout);
  fflush(stderr);
  dup2(g_out, 1);
  dup2(g_err, 2);
  if (breach) {
    fprintf(stderr, "ag contract breach: %s\n", breach);
    abort();
  }
  if (fstat(g_capture, &st) == 0 && st.st_size > 0) {
    char buf[512];
    const ssize_t n = pread(g_capture, buf, sizeof buf - 1, 0);
    buf[n > 0 ? n : 0] = 0;
    fprintf(stderr, "the library wrote %lld bytes to stdout/stderr:\n%s\n", (long long)st.st_size, buf);
    abort();
  }
  return 0;
}
