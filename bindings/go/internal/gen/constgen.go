package main

import (
	"fmt"
	"strings"
)

// genConst writes the constants (statuses typed as Status, with sentinel
// errors; the others untyped), the table of constants for the check against
// ag_constant_value, and the struct layouts (description, cgo's view).
func genConst(api *API) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\n\npackage ag\n\n/*\n#include \"zshim.h\"\n*/\nimport \"C\"\n\nimport \"unsafe\"\n\n", header)
	var statuses, others []Constant
	for _, c := range api.Constants {
		if c.Name == "AG_OK" || strings.HasPrefix(c.Name, "AG_ERR_") {
			statuses = append(statuses, c)
		} else {
			others = append(others, c)
		}
	}
	b.WriteString("// Status codes (ag_status).\nconst (\n")
	for _, c := range statuses {
		fmt.Fprintf(&b, "\t%s Status = %s\n", statusGoName(c.Name), c.Value)
	}
	b.WriteString(")\n\n// Sentinel errors to match with errors.Is (status only).\nvar (\n")
	for _, c := range statuses {
		if c.Name == "AG_OK" {
			continue
		}
		fmt.Fprintf(&b, "\tErr%s = &Error{Status: %s, StatusName: %q}\n", camel(strings.ToLower(strings.TrimPrefix(c.Name, "AG_ERR_"))), statusGoName(c.Name), c.Name)
	}
	b.WriteString(")\n\nvar statusNames = map[Status]string{\n")
	for _, c := range statuses {
		fmt.Fprintf(&b, "\t%s: %q,\n", statusGoName(c.Name), c.Name)
	}
	b.WriteString("}\n\n// Constants of the C headers (AG_ prefix dropped).\nconst (\n")
	for _, c := range others {
		fmt.Fprintf(&b, "\t%s = %s\n", camel(strings.ToLower(strings.TrimPrefix(c.Name, "AG_"))), c.Value)
	}
	b.WriteString(")\n\n// constantTable: every constant with its value as ag_constant_value gives it (bit pattern).\nvar constantTable = []struct {\n\tName  string\n\tValue uint64\n}{\n")
	for _, c := range api.Constants {
		fmt.Fprintf(&b, "\t{%q, uint64(%s)},\n", c.Name, bitPattern(string(c.Value)))
	}
	b.WriteString("}\n\n// structLayouts: each struct as the description gives it and as cgo compiled it.\nvar structLayouts = []structLayout{\n")
	for _, s := range api.Structs {
		fmt.Fprintf(&b, "\t{Name: %q, Size: %d, CgoSize: unsafe.Sizeof(C.%s{}), Fields: []fieldLayout{\n", s.Name, s.Size, s.Name)
		for _, f := range s.Fields {
			fmt.Fprintf(&b, "\t\t{Name: %q, Offset: %d, CgoOffset: unsafe.Offsetof(C.%s{}.%s)},\n", f.Name, f.Offset, s.Name, cgoField(f.Name))
		}
		b.WriteString("\t}},\n")
	}
	b.WriteString("}\n")
	return b.String()
}

func statusGoName(c string) string {
	if c == "AG_OK" {
		return "StatusOK"
	}
	return "Status" + camel(strings.ToLower(strings.TrimPrefix(c, "AG_ERR_")))
}

// bitPattern writes a negative constant as the uint64 of its int64.
func bitPattern(v string) string {
	if strings.HasPrefix(v, "-") {
		return fmt.Sprintf("int64ToBits(%s)", v)
	}
	return v
}

// cgoField: cgo prefixes C fields named like Go keywords with "_".
func cgoField(name string) string {
	if goReserved[name] && name != "C" && name != "unsafe" && name != "runtime" && name != "len" && name != "cap" {
		return "_" + name
	}
	return name
}
