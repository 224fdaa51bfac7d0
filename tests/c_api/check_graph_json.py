#!/usr/bin/env python3
"""Test 'graph_json': parses the JSON export that graph_json_dump prints
(sum((x * w + c) * x) with tag scopes and tags that need escaping) and checks
it against the graph that program built."""
import json
import subprocess
import sys


def main():
    text = subprocess.run([sys.argv[1]], check=True, capture_output=True).stdout.decode("utf-8")
    g = json.loads(text)
    nodes = g["nodes"]
    assert g["root"] == 0, g["root"]
    assert [n["id"] for n in nodes] == list(range(len(nodes)))
    names = sorted(n["name"] for n in nodes)
    assert names == ["AccumulateGrad", "AccumulateGrad", "AddBackward", "MulBackward", "MulBackward",
                     "SumBackward"], names
    assert nodes[0]["name"] == "SumBackward"
    incoming = [0] * len(nodes)
    for n in nodes:
        acc = n["name"] == "AccumulateGrad"
        assert (n["sequence_nr"] is None) == acc, n
        assert (n["leaf"] is not None) == acc, n
        topo = 0
        for e in n["next_edges"]:
            if e is None:
                continue
            to = nodes[e["to"]]
            # topological order from the root: every edge points forward
            assert e["to"] > n["id"], (n, e)
            assert 0 <= e["input_nr"] < len(to["inputs"]), (n, e)
            if not acc and to["sequence_nr"] is not None:
                assert to["sequence_nr"] < n["sequence_nr"], (n, to)
            topo = max(topo, to["topological_nr"] + 1)
            incoming[e["to"]] += 1
        assert n["topological_nr"] == topo, n
        for i in n["inputs"]:
            assert i["dtype"] == "f64", n
    by_name = {}
    for n in nodes:
        by_name.setdefault(n["name"], []).append(n)
    leaves = {n["leaf"]["tag"]: n for n in by_name["AccumulateGrad"]}
    assert set(leaves) == {'input "x"\n\\', "w\u00e9"}, leaves
    x_acc, w_acc = leaves['input "x"\n\\'], leaves["w\u00e9"]
    assert x_acc["leaf"]["shape"] == [2, 3] and w_acc["leaf"]["shape"] == [3]
    assert incoming[x_acc["id"]] == 2 and incoming[w_acc["id"]] == 1  # x is used twice
    add = by_name["AddBackward"][0]
    assert add["tag"] == "layer", add
    # c needs no gradient: a null edge
    assert add["next_edges"][1] is None, add
    inner = nodes[add["next_edges"][0]["to"]]
    assert inner["name"] == "MulBackward" and inner["tag"] == "layer/mul", inner
    assert [e["to"] for e in inner["next_edges"]] == [x_acc["id"], w_acc["id"]]
    assert inner["saved_bytes"] == (6 + 3) * 8, inner  # x and w
    outer = [n for n in by_name["MulBackward"] if n is not inner][0]
    assert outer["tag"] is None and outer["saved_bytes"] == (6 + 6) * 8, outer  # b and x
    assert outer["inputs"] == [{"dtype": "f64", "shape": [2, 3]}]
    assert nodes[0]["tag"] is None and nodes[0]["inputs"] == [{"dtype": "f64", "shape": []}]
    print("ok: %d nodes" % len(nodes))


if __name__ == "__main__":
    main()
