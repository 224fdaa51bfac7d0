package main

import (
	"fmt"
	"strings"
)

// cDecl is "type name" for a C parameter.
func cDecl(t CType, name string) string {
	c := strings.TrimSpace(t.C)
	if strings.HasSuffix(c, "*") {
		return c + name
	}
	return c + " " + name
}

// cNonConst is the C type without const qualifiers, as cgo writes the
// parameters of exported Go functions.
func cNonConst(t CType) string {
	if t.Pointers == 0 {
		return t.Base
	}
	return t.Base + " " + strings.Repeat("*", t.Pointers)
}

// goCType is the type cgo gives a C type: const is dropped, void * is unsafe.Pointer.
func goCType(t CType) string {
	if t.Base == "void" {
		if t.Pointers == 0 {
			return ""
		}
		return strings.Repeat("*", t.Pointers-1) + "unsafe.Pointer"
	}
	return strings.Repeat("*", t.Pointers) + "C." + t.Base
}

func zeroC(t CType) string {
	if t.Pointers > 0 {
		return "NULL"
	}
	return "0"
}

func needsShim(api *API, f Function) bool { return f.Returns.Status || weak(api, f) }

func cParams(ps []Param) []string {
	var out []string
	for _, p := range ps {
		out = append(out, cDecl(p.Type, p.Name))
	}
	return out
}

func paramNames(ps []Param) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return strings.Join(out, ", ")
}

func shimProto(f Function) string {
	params := append([]string{"agx_err *agx_e"}, cParams(f.Params)...)
	return fmt.Sprintf("%s agx_%s(%s)", strings.TrimSpace(f.Returns.Type.C), f.Name, strings.Join(params, ", "))
}

func genShimHeader(api *API) string {
	var b strings.Builder
	fmt.Fprintf(&b, "/* %s */\n#ifndef AGX_ZSHIM_H\n#define AGX_ZSHIM_H\n\n", header)
	b.WriteString("#include <stdint.h>\n#include <stddef.h>\n#include <stdlib.h>\n")
	for _, h := range headers(api) {
		fmt.Fprintf(&b, "#include <%s>\n", h)
	}
	b.WriteString(`
/* The message of a failed call, copied (malloc) on the OS thread that made
 * it, and that thread's id (callbacks stash Go errors by thread). */
typedef struct agx_err {
  char *msg;
  long tid;
} agx_err;

`)
	for _, f := range api.Functions {
		if needsShim(api, f) {
			fmt.Fprintf(&b, "%s;\n", shimProto(f))
		}
	}
	b.WriteString("\n/* 1 if the loaded library has the function (0 for a missing weak symbol). */\nint agx_has_symbol(const char *name);\n")
	b.WriteString("\n/* C adapters of the callback typedefs; each calls the exported Go function agxgo_<typedef>. */\n")
	for _, cb := range api.Callbacks {
		if agProvided[cb.Name] {
			continue
		}
		fmt.Fprintf(&b, "%s;\n", adapterProto(cb))
	}
	b.WriteString("\n#endif\n")
	return b.String()
}

func headers(api *API) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range api.Functions {
		if !seen[f.Header] {
			seen[f.Header] = true
			out = append(out, f.Header)
		}
	}
	return out
}

// Callback types that ag implements and a host calls (a host task system
// runs ag's ag_task_fn): no Go adapter, the Go binding does not wrap the
// host task system (a Go host would drive ag's function pointer from C).
var agProvided = map[string]bool{"ag_task_fn": true}

func adapterProto(cb Callback) string {
	return fmt.Sprintf("%s agx_cb_%s(%s)", strings.TrimSpace(cb.Returns.Type.C), cb.Name, strings.Join(cParams(cb.Params), ", "))
}

func genShimC(api *API) string {
	var b strings.Builder
	fmt.Fprintf(&b, "/* %s */\n", header)
	b.WriteString(`#define _GNU_SOURCE
#include "zshim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "_cgo_export.h"

`)
	b.WriteString("/* Functions of later symbol versions may be missing from the loaded library. */\n")
	for _, f := range api.Functions {
		if weak(api, f) {
			fmt.Fprintf(&b, "#pragma weak %s\n", f.Name)
		}
	}
	b.WriteString(`
static void agx_capture(agx_err *e) {
  const char *m = ag_last_error_message();
  e->msg = strdup(m ? m : "");
  e->tid = (long)syscall(SYS_gettid);
}

static void agx_missing(agx_err *e, const char *name) {
  size_t n = strlen(name) + 16;
  e->msg = (char *)malloc(n);
  if (e->msg) snprintf(e->msg, n, "libag lacks %s", name);
  e->tid = (long)syscall(SYS_gettid);
}

`)
	b.WriteString("int agx_has_symbol(const char *name) {\n")
	for _, f := range api.Functions {
		if weak(api, f) {
			fmt.Fprintf(&b, "  if (strcmp(name, \"%s\") == 0) return %s != NULL;\n", f.Name, f.Name)
		}
	}
	b.WriteString("  return 1;\n}\n\n")
	for _, f := range api.Functions {
		if !needsShim(api, f) {
			continue
		}
		rt := f.Returns.Type
		fmt.Fprintf(&b, "%s {\n", shimProto(f))
		if weak(api, f) {
			switch {
			case f.Returns.Status:
				fmt.Fprintf(&b, "  if (!%s) {\n    agx_missing(agx_e, \"%s\");\n    return AG_ERR_UNSUPPORTED;\n  }\n", f.Name, f.Name)
			case rt.C == "void":
				fmt.Fprintf(&b, "  if (!%s) {\n    agx_missing(agx_e, \"%s\");\n    return;\n  }\n", f.Name, f.Name)
			default:
				fmt.Fprintf(&b, "  if (!%s) {\n    agx_missing(agx_e, \"%s\");\n    return %s;\n  }\n", f.Name, f.Name, zeroC(rt))
			}
		}
		call := fmt.Sprintf("%s(%s)", f.Name, paramNames(f.Params))
		switch {
		case f.Returns.Status:
			fmt.Fprintf(&b, "  ag_status agx_s = %s;\n  if (agx_s != AG_OK) agx_capture(agx_e);\n  return agx_s;\n", call)
		case rt.C == "void":
			fmt.Fprintf(&b, "  %s;\n", call)
		default:
			fmt.Fprintf(&b, "  return %s;\n", call)
		}
		b.WriteString("}\n\n")
	}
	for _, cb := range api.Callbacks {
		if agProvided[cb.Name] {
			continue
		}
		var args []string
		for _, p := range cb.Params {
			if p.Type.Pointers > 0 {
				args = append(args, fmt.Sprintf("(%s)%s", cNonConst(p.Type), p.Name))
			} else {
				args = append(args, p.Name)
			}
		}
		ret := "return "
		if strings.TrimSpace(cb.Returns.Type.C) == "void" {
			ret = ""
		}
		fmt.Fprintf(&b, "%s {\n  %sagxgo_%s(%s);\n}\n\n", adapterProto(cb), ret, cb.Name, strings.Join(args, ", "))
	}
	return b.String()
}

// genLow writes one Go function c_<name> per C function: status functions
// return error, the others their value (and an error when the symbol may be
// missing).
func genLow(api *API, fns []Function) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\n\npackage ag\n\n/*\n#include \"zshim.h\"\n*/\nimport \"C\"\n\nimport \"unsafe\"\n\nvar _ unsafe.Pointer\n\n", header)
	for _, f := range fns {
		var params, args []string
		for i, p := range f.Params {
			n := fmt.Sprintf("a%d", i)
			params = append(params, n+" "+goCType(p.Type))
			args = append(args, n)
		}
		rt := goCType(f.Returns.Type)
		if strings.TrimSpace(f.Returns.Type.C) == "void" {
			rt = ""
		}
		fmt.Fprintf(&b, "// c_%s calls %s.\n", f.Name, f.Name)
		sig := fmt.Sprintf("func c_%s(%s)", f.Name, strings.Join(params, ", "))
		shimArgs := strings.Join(append([]string{"&e"}, args...), ", ")
		switch {
		case f.Returns.Status:
			fmt.Fprintf(&b, "%s error {\n\tvar e C.agx_err\n\tif st := C.agx_%s(%s); st != 0 {\n\t\treturn takeError(%q, st, &e)\n\t}\n\treturn nil\n}\n\n",
				sig, f.Name, shimArgs, f.Name)
		case weak(api, f) && rt == "":
			fmt.Fprintf(&b, "%s error {\n\tvar e C.agx_err\n\tC.agx_%s(%s)\n\tif e.msg != nil {\n\t\treturn takeError(%q, C.AG_ERR_UNSUPPORTED, &e)\n\t}\n\treturn nil\n}\n\n",
				sig, f.Name, shimArgs, f.Name)
		case weak(api, f):
			fmt.Fprintf(&b, "%s (%s, error) {\n\tvar e C.agx_err\n\tr := C.agx_%s(%s)\n\tif e.msg != nil {\n\t\treturn r, takeError(%q, C.AG_ERR_UNSUPPORTED, &e)\n\t}\n\treturn r, nil\n}\n\n",
				sig, rt, f.Name, shimArgs, f.Name)
		case rt == "":
			fmt.Fprintf(&b, "%s {\n\tC.%s(%s)\n}\n\n", sig, f.Name, strings.Join(args, ", "))
		default:
			fmt.Fprintf(&b, "%s %s {\n\treturn C.%s(%s)\n}\n\n", sig, rt, f.Name, strings.Join(args, ", "))
		}
	}
	return b.String()
}
