package main

import (
	"fmt"
	"sort"
	"strings"
)

// Op wrappers. Mapping of C parameters (any other shape is an error, so a
// new kind of op is noticed when the generator runs):
//   ag_tensor **out (no length)          -> a *Tensor result
//   ag_tensor **outs, length = capacity  -> a []*Tensor result; the capacity
//                                           grows on AG_ERR_BUFFER_TOO_SMALL,
//                                           the count is the int32_t * out if
//                                           any, else the non-NULL prefix
//   ag_tensor **outs, length = n of an input array -> []*Tensor of that length
//   const ag_tensor * / ag_tensor *      -> *Tensor (nil = NULL if nullable)
//   const ag_tensor *const *, length n   -> []*Tensor
//   ag_context *                         -> the receiver *Context
//   const int64_t *, length n or [k]     -> []int64 (nil = NULL if nullable)
//   int32_t count named by a length      -> omitted, taken from the slice
//   ag_dtype                             -> DType; other scalars as in Go
// The receiver is the context if there is one, else the first non-nullable
// tensor, else the wrapper is a package-level function.

type opParam struct {
	p      Param
	goName string
	goType string
	count  bool // an int32 count taken from a slice
}

type opWrapper struct {
	f        Function
	goName   string
	recv     int // index into params, -1 for none
	params   []opParam
	counts   map[string][]int // count param -> params using it as length
	capacity string           // name of the capacity param, if any
	nOut     int              // index of the int32_t * count out param, or -1
}

func opGoName(f Function) string {
	if f.Op != "" {
		return camel(f.Op)
	}
	return camel(strings.TrimSuffix(strings.TrimPrefix(f.Name, "ag_op_"), "_")) + "InPlace"
}

func scalarGoType(t CType) (string, bool) {
	if t.Pointers != 0 {
		return "", false
	}
	switch t.Base {
	case "double":
		return "float64", true
	case "float":
		return "float32", true
	case "int64_t":
		return "int64", true
	case "int32_t":
		return "int32", true
	case "uint64_t":
		return "uint64", true
	case "uint32_t":
		return "uint32", true
	case "ag_dtype":
		return "DType", true
	}
	return "", false
}

func isTensor(t CType) bool { return t.Kind == "handle" && t.Base == "ag_tensor" }

func newOpWrapper(f Function) (*opWrapper, error) {
	w := &opWrapper{f: f, goName: opGoName(f), recv: -1, counts: map[string][]int{}, nOut: -1}
	for i, p := range f.Params {
		if l := p.LengthParam(); l != "" {
			w.counts[l] = append(w.counts[l], i)
		}
	}
	for i, p := range f.Params {
		op := opParam{p: p, goName: lowerCamel(p.Name)}
		t := p.Type
		bad := fmt.Errorf("gen: %s: parameter %s (%s, %s) has no Go mapping", f.Name, p.Name, t.C, p.Direction)
		switch p.Direction {
		case "out":
			switch {
			case isTensor(t) && t.Pointers == 2:
				if l := p.LengthParam(); l != "" && !w.lengthFromInput(l) {
					w.capacity = l
				}
			case t.Base == "int32_t" && t.Pointers == 1 && p.LengthParam() == "":
				w.nOut = i
			default:
				return nil, bad
			}
		case "in":
			_, isCount := w.counts[p.Name]
			switch {
			case isCount && t.Pointers == 0 && t.Base == "int32_t":
				op.count = true
			case isTensor(t) && t.Pointers == 1:
				op.goType = "*Tensor"
			case isTensor(t) && t.Pointers == 2 && p.LengthParam() != "":
				op.goType = "[]*Tensor"
			case t.Kind == "handle" && t.Base == "ag_context" && t.Pointers == 1:
				op.goType = "*Context"
			case t.Base == "int64_t" && t.Pointers == 1 && p.Length != nil:
				op.goType = "[]int64"
			case t.Base == "char" && t.Pointers == 1 && p.String && !p.Nullable:
				op.goType = "string" // a NUL-terminated copy for the call (einsum's equation)
			default:
				g, ok := scalarGoType(t)
				if !ok {
					return nil, bad
				}
				op.goType = g
			}
		default:
			return nil, bad
		}
		w.params = append(w.params, op)
	}
	if w.nOut >= 0 && w.capacity == "" {
		return nil, fmt.Errorf("gen: %s: an int32_t * out without a capacity array", f.Name)
	}
	for i, op := range w.params {
		if op.goType == "*Context" {
			w.recv = i
			break
		}
	}
	if w.recv < 0 {
		for i, op := range w.params {
			if op.goType == "*Tensor" && !op.p.Nullable {
				w.recv = i
				break
			}
		}
	}
	return w, nil
}

// lengthFromInput: some input array carries the count named l.
func (w *opWrapper) lengthFromInput(l string) bool {
	for _, i := range w.counts[l] {
		if w.f.Params[i].Direction == "in" {
			return true
		}
	}
	return false
}

func (w *opWrapper) goParams() string {
	var out []string
	for i, op := range w.params {
		if i == w.recv || op.count || op.goType == "" {
			continue
		}
		out = append(out, op.goName+" "+op.goType)
	}
	return strings.Join(out, ", ")
}

func (w *opWrapper) results() (types []string, zeros []string) {
	for _, p := range w.f.Params {
		if p.Direction != "out" || !isTensor(p.Type) {
			continue
		}
		if p.LengthParam() != "" {
			types, zeros = append(types, "[]*Tensor"), append(zeros, "nil")
		} else {
			types, zeros = append(types, "*Tensor"), append(zeros, "nil")
		}
	}
	return append(types, "error"), zeros
}

func genOps(fns []Function) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\n\npackage ag\n\n/*\n#include \"zshim.h\"\n*/\nimport \"C\"\n\nimport (\n\t\"runtime\"\n\t\"unsafe\"\n)\n\nvar _ unsafe.Pointer\nvar _ = runtime.KeepAlive\n\n", header)
	for _, f := range fns {
		w, err := newOpWrapper(f)
		if err != nil {
			return "", err
		}
		w.write(&b)
	}
	return b.String(), nil
}

func (w *opWrapper) write(b *strings.Builder) {
	f := w.f
	types, zeros := w.results()
	ret := "(" + strings.Join(types, ", ") + ")"
	fail := "return " + strings.Join(append(append([]string{}, zeros...), "_err"), ", ")
	fmt.Fprintf(b, "// %s calls %s: %s\n", w.goName, f.Name, firstSentence(f.Doc))
	if w.recv >= 0 {
		r := w.params[w.recv]
		fmt.Fprintf(b, "func (%s %s) %s(%s) %s {\n", r.goName, r.goType, w.goName, w.goParams(), ret)
	} else {
		fmt.Fprintf(b, "func %s(%s) %s {\n", w.goName, w.goParams(), ret)
	}
	b.WriteString("\tvar _err error\n")
	var keep []string
	// counts taken from input slices
	for _, name := range sortedKeys(w.counts) {
		if !w.lengthFromInput(name) {
			continue
		}
		var names, lens []string
		for _, i := range w.counts[name] {
			op := w.params[i]
			if op.p.Direction != "in" {
				continue
			}
			names = append(names, op.p.Name)
			if op.p.Nullable {
				lens = append(lens, "optLen("+op.goName+")")
			} else {
				lens = append(lens, "len("+op.goName+")")
			}
		}
		fmt.Fprintf(b, "\t_n_%s, _err := sliceCount(%q, %q, %s)\n\tif _err != nil {\n\t\t%s\n\t}\n",
			name, f.Name, strings.Join(names, ", "), strings.Join(lens, ", "), fail)
	}
	var hints []string
	for i, op := range w.params {
		p := op.p
		if p.Direction != "in" || op.count {
			continue
		}
		v := fmt.Sprintf("_a%d", i)
		check := fmt.Sprintf("\tif _err != nil {\n\t\t%s\n\t}\n", fail)
		switch op.goType {
		case "*Tensor":
			keep = append(keep, op.goName)
			fmt.Fprintf(b, "\t%s, _err := tensorArg(%q, %q, %s, %v)\n%s", v, f.Name, p.Name, op.goName, p.Nullable, check)
		case "*Context":
			keep = append(keep, op.goName)
			fmt.Fprintf(b, "\t%s, _err := contextArg(%q, %s)\n%s", v, f.Name, op.goName, check)
		case "[]*Tensor":
			keep = append(keep, op.goName)
			hints = append(hints, "len("+op.goName+")")
			fmt.Fprintf(b, "\t%s, _err := tensorsArg(%q, %q, %s, %v)\n%s", v, f.Name, p.Name, op.goName, p.Nullable, check)
		case "[]int64":
			keep = append(keep, op.goName)
			hints = append(hints, "len("+op.goName+")")
			fmt.Fprintf(b, "\t%s, _err := int64sArg(%q, %q, %s, %d, %v)\n%s", v, f.Name, p.Name, op.goName, p.FixedLength(), p.Nullable, check)
		case "string":
			fmt.Fprintf(b, "\t%s := C.CString(%s)\n\tdefer C.free(unsafe.Pointer(%s))\n", v, op.goName, v)
		}
	}
	var args, rets, capOuts []string
	for i, op := range w.params {
		p := op.p
		v := fmt.Sprintf("_a%d", i)
		switch {
		case p.Direction == "out" && isTensor(p.Type) && p.LengthParam() == "":
			fmt.Fprintf(b, "\tvar %s *C.ag_tensor\n", v)
			args = append(args, "&"+v)
			rets = append(rets, "wrapTensor("+v+")")
		case p.Direction == "out" && isTensor(p.Type):
			l := p.LengthParam()
			args = append(args, fmt.Sprintf("(**C.ag_tensor)(unsafe.Pointer(unsafe.SliceData(%s)))", v))
			switch {
			case l == w.capacity && w.nOut >= 0:
				fmt.Fprintf(b, "\tvar %s []*C.ag_tensor\n", v)
				capOuts = append(capOuts, v)
				rets = append(rets, fmt.Sprintf("wrapTensors(%s[:_a%d])", v, w.nOut))
			case l == w.capacity:
				fmt.Fprintf(b, "\tvar %s []*C.ag_tensor\n", v)
				capOuts = append(capOuts, v)
				rets = append(rets, fmt.Sprintf("wrapTensors(nonNilPrefix(%s))", v))
			default:
				fmt.Fprintf(b, "\t%s := make([]*C.ag_tensor, _n_%s)\n", v, l)
				rets = append(rets, "wrapTensors("+v+")")
			}
		case p.Direction == "out":
			fmt.Fprintf(b, "\tvar %s C.int32_t\n", v)
			args = append(args, "&"+v)
		case op.count && p.Name == w.capacity:
			args = append(args, "C.int32_t(_cap)")
		case op.count:
			args = append(args, "C.int32_t(_n_"+p.Name+")")
		case op.goType == "*Tensor" || op.goType == "*Context" || op.goType == "[]int64" || op.goType == "string":
			args = append(args, v)
		case op.goType == "[]*Tensor":
			args = append(args, fmt.Sprintf("(**C.ag_tensor)(unsafe.Pointer(unsafe.SliceData(%s)))", v))
		default:
			args = append(args, fmt.Sprintf("(%s)(%s)", goCType(p.Type), op.goName))
		}
	}
	call := fmt.Sprintf("c_%s(%s)", f.Name, strings.Join(args, ", "))
	if w.capacity != "" {
		// ag writes nothing when the array is too small: grow it and call again.
		fmt.Fprintf(b, "\tfor _cap := capacityHint(%s); ; _cap *= 4 {\n", strings.Join(hints, ", "))
		for _, v := range capOuts {
			fmt.Fprintf(b, "\t\t%s = make([]*C.ag_tensor, _cap)\n", v)
		}
		fmt.Fprintf(b, "\t\t_err = %s\n\t\tif !isBufferTooSmall(_err) || _cap >= maxCapacity {\n\t\t\tbreak\n\t\t}\n\t}\n", call)
	} else {
		fmt.Fprintf(b, "\t_err = %s\n", call)
	}
	for _, k := range keep {
		fmt.Fprintf(b, "\truntime.KeepAlive(%s)\n", k)
	}
	fmt.Fprintf(b, "\tif _err != nil {\n\t\t%s\n\t}\n", fail)
	fmt.Fprintf(b, "\treturn %s\n}\n\n", strings.Join(append(rets, "nil"), ", "))
}

func sortedKeys(m map[string][]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
