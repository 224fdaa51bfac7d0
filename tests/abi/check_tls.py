#!/usr/bin/env python3
"""Check that libag's thread-local storage stays within a small budget.

Usage: check_tls.py LIBAG_SO

libag is built with the initial-exec TLS model (its thread-locals are read
on every op), so a process that dlopens it (Python's ctypes, Go, Julia) must
find its whole TLS block in glibc's static TLS surplus, a few hundred bytes
to spare after the other libraries loaded so far. A block past about 1.6 KB
already fails to load in a plain Python ("cannot allocate memory in static
TLS block"); large per-thread buffers belong on the heap.
"""
import re
import subprocess
import sys

BUDGET = 1024  # bytes

def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = subprocess.run(["readelf", "-lW", sys.argv[1]], stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    m = re.search(r"^\s*TLS\s+\S+\s+\S+\s+\S+\s+\S+\s+(0x[0-9a-f]+)", out, re.M)
    size = int(m.group(1), 16) if m else 0
    print("libag TLS block: %d bytes (budget %d)" % (size, BUDGET))
    if size > BUDGET:
        print("error: the TLS block is over budget; move large thread-locals to the heap", file=sys.stderr)
        return 1
    return 0

if __name__ == "__main__":
    sys.exit(main())
