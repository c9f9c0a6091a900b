#!/usr/bin/env bash
# Regenerates a set of seed models from another generator, NNSmith (github: ise-uiuc/nnsmith),
# for campaigns seeded with models mutagraph did not write. The models are not committed.
#
# Usage: tests/models/nnsmith_seeds.sh OUT_DIR [COUNT] [MAX_NODES]
#
# Needs Debian's python3-torch (NNSmith's PyPI dependency on torch pulls gigabytes of CUDA
# wheels; Debian's CPU build works offline) and NNSmith in a virtual environment that sees it:
#   apt-get install python3-torch python3-venv
#   python3 -m venv --system-site-packages /opt/nnsmith-venv
#   /opt/nnsmith-venv/bin/pip install 'nnsmith[onnx]==0.1.0' 'numpy<2'
# NNSMITH_VENV overrides the environment's location. Seeds 1..COUNT are tried in order; a seed
# NNSmith itself fails on is skipped (NNSmith 0.1.0 raises on some), so OUT_DIR may hold fewer
# than COUNT models; the script says how many.
set -euo pipefail
out=${1:?usage: nnsmith_seeds.sh OUT_DIR [COUNT] [MAX_NODES]}
count=${2:-40}
nodes=${3:-10}
venv=${NNSMITH_VENV:-/opt/nnsmith-venv}
gen="$venv/bin/nnsmith.model_gen"
if [ ! -x "$gen" ]; then
  echo "nnsmith_seeds.sh: $gen not found; install NNSmith as this script's header says" >&2
  exit 2
fi
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
made=0
for seed in $(seq 1 "$count"); do
  dir="$work/m$seed"
  if (cd "$work" && timeout 120 "$gen" model.type=onnx mgen.max_nodes="$nodes" \
        mgen.seed="$seed" mgen.save="$dir" >/dev/null 2>&1) && [ -f "$dir/model.onnx" ]; then
    cp "$dir/model.onnx" "$out/nnsmith-$(printf %03d "$seed").onnx"
    made=$((made + 1))
  fi
done
echo "nnsmith_seeds.sh: $made of $count seeds gave a model in $out"
