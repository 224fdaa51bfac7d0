#!/usr/bin/env python3
"""Runs make_fixtures.py with the given Python (torch installed there) into a
temporary file and replays it with the test binary: ag against the torch of
this machine, not only against the committed fixtures.

Usage: run_live.py PYTHON MAKE_FIXTURES TEST_BINARY
"""
import os
import subprocess
import sys
import tempfile


def main():
    python, script, binary = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "optim_live.bin")
        subprocess.run([python, script, out], check=True)
        return subprocess.run([binary, out]).returncode


if __name__ == "__main__":
    sys.exit(main())
