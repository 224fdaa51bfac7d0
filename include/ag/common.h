/*
 * ag/common.h - export macros, version, status codes, dtypes and errors.
 *
 * Every other ag header includes this one. It compiles alone as C89 and later,
 * and as C++98 and later.
 */
#ifndef AG_COMMON_H
#define AG_COMMON_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32) && defined(AG_BUILDING)
#define AG_API __declspec(dllexport)
#elif defined(_WIN32)
#define AG_API __declspec(dllimport)
#elif defined(__GNUC__)
#define AG_API __attribute__((visibility("default")))
#else
#define AG_API
#endif

/* Functions never throw; under C++ the declarations say so, so an escaping
 * exception would terminate instead of unwinding through C frames. */
#if defined(__cplusplus) && __cplusplus >= 201103L
#define AG_NOEXCEPT noexcept
#elif defined(__cplusplus)
#define AG_NOEXCEPT throw()
#else
#define AG_NOEXCEPT
#endif

#ifdef __cplusplus
#define AG_BEGIN_DECLS extern "C" {
#define AG_END_DECLS }
#else
#define AG_BEGIN_DECLS
#define AG_END_DECLS
#endif

/* Version of the headers. Compare with ag_version_number() at run time. */
#define AG_VERSION_MAJOR 0
#define AG_VERSION_MINOR 2
#define AG_VERSION_PATCH 0
#define AG_VERSION_NUMBER (AG_VERSION_MAJOR * 10000 + AG_VERSION_MINOR * 100 + AG_VERSION_PATCH)

AG_BEGIN_DECLS

/* Status of every fallible call. Values are pinned and append-only. */
typedef int32_t ag_status;
#define AG_OK 0
#define AG_ERR_INVALID_ARGUMENT (-1) /* NULL or released handle, bad value */
#define AG_ERR_SHAPE (-2)            /* shapes that do not fit together */
#define AG_ERR_DTYPE (-3)            /* dtypes that do not fit (no implicit promotion) */
#define AG_ERR_OUT_OF_MEMORY (-4)
#define AG_ERR_CONTEXT (-5)          /* tensors of two different contexts */
#define AG_ERR_GRAPH (-6)            /* backward misuse, released graph */
#define AG_ERR_VERSION (-7)          /* a tensor saved for backward was modified */
#define AG_ERR_CALLBACK (-8)         /* a user callback failed */
#define AG_ERR_BUFFER_TOO_SMALL (-9)
#define AG_ERR_UNSUPPORTED (-10)
#define AG_ERR_INTERNAL (-11)

/* Element types. 0 is never a valid dtype. Values are pinned and append-only. */
typedef int32_t ag_dtype;
#define AG_F32 1
#define AG_F64 2
#define AG_I64 3
#define AG_BOOL 4 /* one byte per element, 0 or 1 */

/* Maximum number of dimensions of a tensor. */
#define AG_MAX_DIMS 16

/**
 * Version of the loaded library as AG_VERSION_NUMBER computes it
 * (major * 10000 + minor * 100 + patch). Bindings compare it with the
 * headers they were generated from. Thread-safe.
 */
AG_API int32_t ag_version_number(void) AG_NOEXCEPT;

/** Version of the loaded library as "major.minor.patch". Static string; never NULL. */
AG_API const char *ag_version_string(void) AG_NOEXCEPT;

/**
 * Message of the last failed ag call on this thread, naming the function and
 * the facts, e.g. "[ag_op_mul] cannot broadcast shapes (2,3) and (4)".
 * Never NULL; "" before any failure. Successful calls do not clear it.
 * Borrowed: valid until the next ag call on the same thread.
 */
AG_API const char *ag_last_error_message(void) AG_NOEXCEPT;

/**
 * Name of a status code ("AG_OK", "AG_ERR_SHAPE", ...); "AG_ERR_UNKNOWN" for a
 * value that is not a status. Static string; never NULL. Thread-safe.
 */
AG_API const char *ag_status_name(ag_status status) AG_NOEXCEPT;

/** Bytes per element of `dtype`; 0 for a value that is not a dtype. Thread-safe. */
AG_API size_t ag_dtype_size(ag_dtype dtype) AG_NOEXCEPT;

/** Name of `dtype` ("f32", "f64", "i64", "bool"); "invalid" otherwise. Static string. */
AG_API const char *ag_dtype_name(ag_dtype dtype) AG_NOEXCEPT;

AG_END_DECLS

#endif /* AG_COMMON_H */
