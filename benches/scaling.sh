#!/usr/bin/env bash
# How the campaign scales with -j: one campaign per -j value on the same seeds and backends, then
# a table of executions/s and where the search's thread spent its time (from stats.json).
#
#   bash benches/scaling.sh [--bin PATH] [--seeds zoo] [--backends sleep] [--time 60s] 1 2 8
#
# `--backends sleep` runs only the `sleep` test backend (each run waits MUTAGRAPH_SLEEP_MS,
# default 20 ms, using no CPU): the campaign's own ceiling. Nothing else should run meanwhile.
set -euo pipefail
bin=target/release/mutagraph seeds=zoo backends="" time=60s
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --bin) bin=$2 ;; --seeds) seeds=$2 ;; --backends) backends=$2 ;; --time) time=$2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
[[ $# -gt 0 ]] || set -- 1 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for j in "$@"; do
  args=(campaign --seeds "$seeds" --out "$work/j$j" --time "$time" -j "$j" -q --no-minimize)
  [[ -n $backends ]] && args+=(--backends "$backends")
  # The CPU the campaign used, its workers included (user + system seconds).
  TIMEFORMAT='%U %S'
  { time "$bin" "${args[@]}" > /dev/null 2> "$work/j$j.err"; } 2> "$work/j$j.cpu"
done
python3 - "$work" "$@" <<'EOF'
import json, os, sys
work, js = sys.argv[1], sys.argv[2:]
cores = os.cpu_count()
# The phases that run on the search's thread (oracles and triage run on the triage stage's
# thread since the pipeline; before it, they ran on this one too and count here when there is
# no `record` timing).
MAIN = ["select", "mutate", "export", "inputs", "coverage", "io", "record"]
# cpu ms/exec: CPU seconds of the whole campaign (search, triage, every worker) per execution,
# admission included; the machine's cores divided by it bound the executions/s any -j reaches.
print(f"{'-j':>4} {'exec/s':>8} {'x -j1':>6} {'main %':>7} {'triage s':>9} {'drain s':>8} "
      f"{'cpu ms/exec':>12} {'bound/s':>8}")
base = None
for j in js:
    s = json.load(open(f"{work}/j{j}/stats.json"))
    t, el = s["timings"], s["elapsed_s"]
    phases = MAIN if "record" in t else MAIN[:-1] + ["oracles", "triage"]
    main = sum(t.get(p, 0.0) for p in phases)
    rate = s["execs_per_s"]
    base = base or rate
    cpu = sum(map(float, open(f"{work}/j{j}.cpu").read().split()[-2:]))
    per = 1e3 * cpu / max(s["executions"], 1)
    print(f"{j:>4} {rate:8.1f} {rate / base:6.2f} {100 * main / el:7.1f} "
          f"{t['triage']:9.1f} {t.get('drain', 0.0):8.1f} {per:12.1f} {cores * 1e3 / per:8.0f}")
EOF
