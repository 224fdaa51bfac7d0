#!/bin/sh
# Run the Python binding's tests against an installed libag.
#   bindings/python/run_tests.sh LIBDIR INCLUDEDIR
# LIBDIR holds libag.so.0; INCLUDEDIR/ag holds the headers and ag-api.json.
# Uses Debian's /usr/bin/python3 (numpy, pytest, PyTorch 1.13 as the oracle);
# with another Python, pytest and numpy are installed with pip --user and the
# PyTorch comparisons are reported as skipped.
set -eu
if [ $# -ne 2 ]; then
  echo "usage: $0 LIBDIR INCLUDEDIR" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
libdir=$(cd "$1" && pwd)
incdir=$(cd "$2" && pwd)
export AG_LIBRARY="$libdir/libag.so.0"
export AG_INCLUDE_DIR="$incdir"
if [ ! -e "$AG_LIBRARY" ]; then
  echo "no libag.so.0 in $libdir" >&2
  exit 2
fi

py=/usr/bin/python3
if ! "$py" -c 'import pytest, numpy' 2>/dev/null; then
  py=$(command -v python3)
  "$py" -c 'import pytest, numpy' 2>/dev/null || "$py" -m pip install --user --quiet pytest numpy
fi

status=0
# The example first, so that pytest's summary line closes the output.
echo "example: fashion_mnist.py --steps 30"
if [ -d "${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}" ]; then
  PYTHONPATH="$here" "$py" "$here/../../examples/python/fashion_mnist.py" --steps 30 || status=1
else
  PYTHONPATH="$here" "$py" "$here/../../examples/python/fashion_mnist.py" --steps 30 --synthetic || status=1
fi
(cd "$here" && "$py" -m pytest tests -q -p no:cacheprovider) || status=$?
exit $status
