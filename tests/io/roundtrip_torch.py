#!/usr/bin/python3
"""safetensors files between PyTorch and ag, both ways.

Writes tensors made by torch (f32, f64, i64, bool; contiguous and not; a
header left unpadded so that ag must copy misaligned data) in the
safetensors format with a few lines of struct and json (the safetensors
package is not needed), lets ag load and re-save them (st_roundtrip), and
reads ag's file back the same way: every tensor must come back bit for bit,
and ag's doubled copies must equal 2 * x.

Usage: roundtrip_torch.py ST_ROUNDTRIP_BINARY
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import torch

DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64", torch.bool: "BOOL"}
BACK = {v: k for k, v in DTYPES.items()}


def write(path, tensors, metadata, pad):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        data = t.contiguous().numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    if pad:
        text += b" " * ((8 - len(text) % 8) % 8)
    elif len(text) % 8 == 0:
        text += b" "  # misaligned on purpose
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    meta = header.pop("__metadata__", {})
    data = blob[8 + n:]
    out = {}
    for name, e in header.items():
        b, end = e["data_offsets"]
        dt = BACK[e["dtype"]]
        raw = bytearray(data[b:end])
        out[name] = torch.frombuffer(raw, dtype=dt).reshape(e["shape"]) if raw else torch.empty(e["shape"], dtype=dt)
    return out, meta


def main():
    binary = sys.argv[1]
    g = torch.Generator().manual_seed(0)
    tensors = {
        "fc.weight": torch.randn(5, 7, generator=g),
        "fc.bias": torch.randn(5, dtype=torch.float64, generator=g),
        "transposed": torch.randn(3, 4, generator=g).t(),
        "steps": torch.tensor([1, -2, 2 ** 62], dtype=torch.int64),
        "mask": torch.tensor([True, False, True]),
        "scalar": torch.tensor(3.5),
        "empty": torch.zeros(0, 3),
    }
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for pad in (True, False):
            src, dst = os.path.join(tmp, "torch.safetensors"), os.path.join(tmp, "ag.safetensors")
            write(src, tensors, {"source": "torch %s" % torch.__version__}, pad)
            subprocess.run([binary, src, dst], check=True)
            back, meta = read(dst)
            if meta != {"writer": "ag", "source": "torch %s" % torch.__version__}:
                print("metadata differs: %r" % meta)
                failures += 1
            for name, t in tensors.items():
                ok = name in back and back[name].dtype == t.dtype and torch.equal(back[name], t)
                if t.is_floating_point():
                    ok = ok and torch.equal(back[name + ".times2"], t * 2)
                print("%s %s (padded header: %s)" % ("ok" if ok else "FAIL", name, pad))
                failures += not ok
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
