package ag

/*
#cgo LDFLAGS: -lag
#include "agx.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// Status is an ag_status value.
type Status int32

// String is the C name of the status ("AG_ERR_SHAPE"), as ag_status_name gives it.
func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return C.GoString(c_ag_status_name(C.ag_status(s)))
}

// Error is a failure reported by ag (or found by the binding before the call).
type Error struct {
	Status     Status
	StatusName string
	Message    string // "[function] facts", as ag_last_error_message gave it
	// Cause is the error a Go callback returned (or its recovered panic) when
	// the failure is AG_ERR_CALLBACK.
	Cause error
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.StatusName
	}
	return e.StatusName + ": " + e.Message
}

// Is matches sentinels (ErrShape, ...): same status, and the same message
// when the target has one.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	return t.Status == e.Status && (t.Message == "" || t.Message == e.Message)
}

// Unwrap gives the callback's own error, so errors.Is/As reach it.
func (e *Error) Unwrap() error { return e.Cause }

func newError(st Status, msg string) *Error {
	return &Error{Status: st, StatusName: st.String(), Message: msg}
}

func argError(fn string, format string, args ...any) error {
	return newError(StatusInvalidArgument, "["+fn+"] "+fmt.Sprintf(format, args...))
}

// takeError turns a shim's captured message into an *Error (and frees it).
func takeError(fn string, st C.ag_status, e *C.agx_err) error {
	msg := ""
	if e.msg != nil {
		msg = C.GoString(e.msg)
		C.free(unsafe.Pointer(e.msg))
		e.msg = nil
	}
	if msg == "" {
		msg = "[" + fn + "] failed"
	}
	err := newError(Status(st), msg)
	if err.Status == StatusCallback {
		err.Cause = takeCallbackError(int64(e.tid), msg)
	}
	return err
}

// Errors of Go callbacks wait here, by OS thread, for the call that ran the
// callback (on that thread) to fail with AG_ERR_CALLBACK.
type stashed struct {
	err error
	msg string
}

var callbackErrors sync.Map // int64 tid -> stashed

func stashCallbackError(tid int64, err error, msg string) {
	callbackErrors.Store(tid, stashed{err, msg})
}

func takeCallbackError(tid int64, msg string) error {
	v, ok := callbackErrors.LoadAndDelete(tid)
	if !ok {
		return nil
	}
	s := v.(stashed)
	if !strings.Contains(msg, s.msg) {
		return nil
	}
	return s.err
}
