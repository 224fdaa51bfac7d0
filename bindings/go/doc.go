// Package ag is the Go binding of ag, an embeddable reverse-mode autograd
// engine with a stable C ABI.
//
// The low-level layer (zlow_*.go, one c_<name> function per C function),
// the op wrappers (zops_*.go) and the constants (zconst.go) are generated
// from ag-api.json by internal/gen; the rest is written by hand.
//
// Building: cgo links with -lag. Point cgo at an installed ag with
//
//	CGO_CFLAGS=-I<prefix>/include CGO_LDFLAGS=-L<libdir>
//
// (run_tests.sh sets them), and LD_LIBRARY_PATH at <libdir> at run time.
//
// Errors: every failure is an *Error carrying ag's status, its name and the
// message of ag_last_error_message, read by a C shim inside the failing call
// (a goroutine may move to another OS thread between two cgo calls). Match
// with errors.Is(err, ag.ErrShape). Nothing in this package panics on an ag
// failure.
//
// Memory: Release frees a Tensor or Context at once (idempotent, safe from
// any goroutine); a cleanup (runtime.AddCleanup) releases whatever was not
// released explicitly once the Go object is unreachable.
//
// Threads: ag keeps grad mode and tag scopes per OS thread. NoGrad,
// EnableGrad and WithTagScope lock the calling goroutine to its OS thread
// for their duration; other goroutines are unaffected.
package ag

//go:generate go run ./internal/gen -api ../ag-api.json -out .
