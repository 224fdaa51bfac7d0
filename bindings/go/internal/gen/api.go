package main

import "encoding/json"

// The subset of ag-api.json the generator reads.

type API struct {
	Name      string     `json:"name"`
	Version   string     `json:"version"`
	ABI       ABIInfo    `json:"abi"`
	Aliases   []Alias    `json:"aliases"`
	Handles   []Handle   `json:"handles"`
	Callbacks []Callback `json:"callbacks"`
	Constants []Constant `json:"constants"`
	Structs   []Struct   `json:"structs"`
	Ops       []Op       `json:"ops"`
	Functions []Function `json:"functions"`
}

type ABIInfo struct {
	SymbolVersions []string `json:"symbol_versions"`
}

type Alias struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

type Handle struct {
	Name string `json:"name"`
}

type CType struct {
	C          string `json:"c"`
	Base       string `json:"base"`
	Pointers   int    `json:"pointers"`
	Const      []bool `json:"const"`
	Kind       string `json:"kind"`
	Underlying string `json:"underlying"`
}

type Param struct {
	Name           string `json:"name"`
	Type           CType  `json:"type"`
	Direction      string `json:"direction"`
	Ownership      string `json:"ownership"`
	Length         any    `json:"length"` // parameter name or fixed count
	Bytes          string `json:"bytes"`
	Nullable       bool   `json:"nullable"`
	ResultNullable bool   `json:"result_nullable"`
	String         bool   `json:"string"`
}

// LengthParam is the name of the count parameter, "" for none or a fixed count.
func (p Param) LengthParam() string {
	s, _ := p.Length.(string)
	return s
}

// FixedLength is the fixed element count (conv windows), 0 if none.
func (p Param) FixedLength() int {
	n, ok := p.Length.(json.Number)
	if !ok {
		return 0
	}
	i, _ := n.Int64()
	return int(i)
}

type Returns struct {
	Type      CType  `json:"type"`
	Status    bool   `json:"status"`
	Ownership string `json:"ownership"`
}

type Function struct {
	Name    string  `json:"name"`
	Header  string  `json:"header"`
	Since   string  `json:"since"`
	Doc     string  `json:"doc"`
	Returns Returns `json:"returns"`
	Params  []Param `json:"params"`
	Op      string  `json:"op"`
}

type Callback struct {
	Name    string  `json:"name"`
	Returns Returns `json:"returns"`
	Params  []Param `json:"params"`
}

type Constant struct {
	Name  string      `json:"name"`
	Value json.Number `json:"value"`
}

type Field struct {
	Name   string `json:"name"`
	Offset int    `json:"offset"`
	Size   int    `json:"size"`
}

type Struct struct {
	Name   string  `json:"name"`
	Size   int     `json:"size"`
	Align  int     `json:"align"`
	Fields []Field `json:"fields"`
}

type Op struct {
	Name     string `json:"name"`
	Family   string `json:"family"`
	Function string `json:"function"`
}
