package ag

/*
#include "agx.h"
*/
import "C"

import "unsafe"

type fieldLayout struct {
	Name      string
	Offset    int     // from ag-api.json
	CgoOffset uintptr // as cgo compiled the header
}

type structLayout struct {
	Name    string
	Size    int
	CgoSize uintptr
	Fields  []fieldLayout
}

func int64ToBits(v int64) uint64 { return uint64(v) }

// StructSize is sizeof the public struct name in the loaded library (0: unknown).
func StructSize(name string) (int, error) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	n, err := c_ag_struct_size(cs)
	return int(n), err
}

// StructFieldOffset is offsetof(name, field) in the loaded library (-1: unknown).
func StructFieldOffset(name, field string) (int64, error) {
	cs, cf := C.CString(name), C.CString(field)
	defer C.free(unsafe.Pointer(cs))
	defer C.free(unsafe.Pointer(cf))
	n, err := c_ag_struct_field_offset(cs, cf)
	return int64(n), err
}

// ConstantValue is the value of a C constant in the loaded library (bit pattern for uint64).
func ConstantValue(name string) (int64, error) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var v C.int64_t
	err := c_ag_constant_value(cs, &v)
	return int64(v), err
}
