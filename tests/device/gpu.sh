#!/bin/bash
# Issue 28 on a lent GPU (the `device` tool): run from the repository root on the GPU machine, with
# .devpack/ carried (first, here: bash tests/device/pack_site.sh). Everything goes to $OUT.
# Usage: bash tests/device/gpu.sh COMMIT grid|book|all   (one 600 s call each)
#   grid: CUDA tests of the fused token step, the token grid timed cold, the CUDA-graph experiment
#         (tests/device/cudagraph.py), the grid again warm (about 5 minutes)
#   book: the full book timed (nlcl.bench.book, --jobs 11), then the token bench with what
#         time is left (the chapters took 240 s on an H200 at stop 46)
#   all:  the book, then with what time is left the grid warm (the book's compiler cache), the grid
#         again with NLCL_CUDA_GRAPH=1 (compared run by run with the plain one; each grid.json has
#         its per-stack seconds, so cudagraph.py's timing is not repeated), the CUDA tests and the
#         bench, each skipped when too little time is left
# Each step has a time guard inside the 600 s a call may take. Stop 46 ran book mode on an H200:
# every chapter ran, the site build failed on a package then not carried (tests/test_device_pack.py).
set -u
T0=$SECONDS
O=${OUT:-/tmp/out}
mkdir -p "$O"
MODE=${2:-}
case "$MODE" in grid | book | all) ;; *) echo "gpu.sh: MODE must be grid, book or all (got '$MODE')" >&2; exit 2 ;; esac
left() { echo $((575 - (SECONDS - T0))); }
log() { echo "[gpu.sh $((SECONDS - T0)) s] $*" | tee -a "$O/steps.txt"; }
mkdir -p /tmp/site && tar -xJf .devpack/site.tar.xz -C /tmp/site \
  && sed -i '1s|^#!.*python.*$|#!/usr/bin/env python3|' /tmp/site/bin/*
export PATH=/tmp/site/bin:$PATH PYTHONPATH=/tmp/site:$PWD NLCL_OFFLINE=1 MPLBACKEND=Agg PYTHONUNBUFFERED=1
export NLCL_TEXT_CACHE=$PWD/.devpack/text NLCL_COMMIT=$1
log "setup done"
{ python3 -c "import sys, os, torch; print(sys.version); print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0), 'cpus', os.cpu_count())"
  nvidia-smi; lscpu | grep -E 'Model name|^CPU\(s\)|Thread|L3'; free -g; } > "$O/env.txt" 2>&1
log "env: $(head -2 "$O/env.txt" | tail -1)"
finish() {  # the device tool returns at most 8 files: beyond that, all but steps.txt go in one tar
  log "end"
  if [ "$(find "$O" -type f | wc -l)" -gt 8 ]; then
    tar -czf /tmp/gpu-out.tgz -C "$O" --exclude=./steps.txt . \
      && find "$O" -mindepth 1 -maxdepth 1 ! -name steps.txt -exec rm -rf {} + && mv /tmp/gpu-out.tgz "$O/out.tgz"
  fi
  exit 0
}
cuda_tests() {  # $1: time limit (s)
  TORCHINDUCTOR_CACHE_DIR=/tmp/ind-tests timeout "$1" python3 -m pytest -q -p no:cacheprovider \
    tests/tian/tokens/test_fused_cuda.py tests/tian/tokens/test_fused.py -k cuda > "$O/cuda-tests.txt" 2>&1
  log "cuda tests rc=$? $(tail -1 "$O/cuda-tests.txt")"
}
grid() {  # $1: cold|warm, $2: compiler cache
  mkdir -p "$O/$1"
  OUT=$O/$1 TORCHINDUCTOR_CACHE_DIR=$2 timeout $(( $(left) - 10 )) python3 tests/device/grid.py > "$O/$1/grid.txt" 2>&1
  log "grid $1 rc=$? $(tail -1 "$O/$1/grid.txt" | cut -c1-200)"
}
cudagraph() {  # $1: compiler cache
  TORCHINDUCTOR_CACHE_DIR=$1 timeout 90 python3 tests/device/cudagraph.py 2000 > "$O/cudagraph.txt" 2>&1
  log "cudagraph rc=$? $(tail -2 "$O/cudagraph.txt" | cut -c1-300)"
}
if [ "$MODE" = grid ]; then
  cuda_tests 150
  grid cold /tmp/ind-grid
  [ "$(left)" -gt 150 ] && cudagraph /tmp/ind-grid  # warm compiler cache
  grid warm /tmp/ind-grid
  finish
fi
# book mode: the whole book at paper scale, nothing else running, empty compiler cache
rm -rf _build
TORCHINDUCTOR_CACHE_DIR=/tmp/ind-book timeout $(($(left) - 25)) python3 -m nlcl.bench.book \
  --profile full --jobs 11 --target 600 --allow-dirty > "$O/book.log" 2>&1
log "book rc=$?"
python3 - > "$O/live.txt" 2>&1 <<'PY'
import glob, json
for p in sorted(glob.glob("_build/**/*.ipynb", recursive=True)):
    try:
        nb = json.load(open(p))
    except Exception as e:
        print(p, e); continue
    for c in nb["cells"]:
        for o in c.get("outputs", []):
            t = "".join(o.get("text", [])) if isinstance(o.get("text"), list) else o.get("text", "")
            for line in t.splitlines():
                if "run-steps/s" in line or "Error" in line or "Traceback" in line:
                    print(p, "|", line[:300])
PY
tar -czf "$O/build.tgz" _build/timings.json _build/claims results/book-full-bench-gpu.json \
  $(find _build/runs -name '*.log' -o -name 'run.json' 2>/dev/null) 2>/dev/null
log "packed; $(left) s left"
if [ "$MODE" = all ]; then  # the token steps, with the book's (warm) compiler cache
  [ "$(left)" -gt 140 ] && grid warm /tmp/ind-book
  [ "$(left)" -gt 100 ] && NLCL_CUDA_GRAPH=1 grid graph /tmp/ind-book && python3 - "$O" >> "$O/steps.txt" 2>&1 <<'PY'
import sys, pandas as pd
o = sys.argv[1]
a, b = (pd.read_csv(f"{o}/{k}/grid-table.csv.gz") for k in ("warm", "graph"))
d = (a.chi_plus - b.chi_plus).abs()
print(f"graph vs plain grid: {int((d == 0).sum())} of {len(d)} runs' chi+ bitwise equal, max |d chi+| {d.max():.3g}")
PY
  [ "$(left)" -gt 100 ] && cuda_tests $(( $(left) - 60 ))
fi
# with what is left: the token bench (fused, CUDA)
if [ "$(left)" -gt 60 ]; then
  TORCHINDUCTOR_CACHE_DIR=/tmp/ind-book timeout $(($(left) - 5)) python3 -m nlcl.harness.run.cli bench --quick --steps 30 \
    --device cuda --engine fused > "$O/bench.txt" 2>&1
  log "bench rc=$?"; cp runs/bench/bench.json "$O/bench.json" 2>/dev/null
fi
finish
