#!/usr/bin/env python3
"""gen_dag -- op-level random ONNX DAG generator (NNSmith style): seeds that mutagraph was not
tuned on, for measuring its findings (round 7 of issue 32 used seeds 7000-7039; take new seeds
for each round). Models are written to --out, never to the repository.

A pool of tensors with statically known shapes/dtypes is kept.  At every step
an operator is drawn, its type/shape requirements are satisfied from the pool
(or from fresh graph inputs / initializers), its output shape is computed here
and the node is appended.  At the end 1-3 unconsumed tensors become graph
outputs, dead nodes are pruned, and the model is checked with
onnx.checker (full_check), strict onnx shape inference (compared against our
own shapes) and an onnxruntime CPU run on random inputs.  Models failing a
check are discarded and regenerated from a sub-seed default_rng([seed, k]).

Only onnx.helper + numpy are used for generation.
"""
import argparse
import collections
import os
import sys
import traceback

import numpy as np
import onnx
from onnx import helper

from gen_dag_nn import REG, WEIGHT, accepts, available_ops
from gen_dag_ops import DT_FROM_ONNX, MAX_BUILD, MAX_NODES, MIN_NODES, ONNX_DT, ORT_NO_KERNEL, G, Reject
from ort_child import OrtChild


# =====================================================================
# Model assembly
# =====================================================================
def ir_for(opset):
    return 8 if opset <= 18 else (9 if opset <= 20 else 10)


def live_set(g, outputs):
    need = set(t.name for t in outputs)
    live = []
    for i in range(len(g.nodes) - 1, -1, -1):
        nd = g.nodes[i]
        if any(o in need for o in nd.output):
            live.append(i)
            need.update(x for x in nd.input if x)
    return sorted(live), need


def choose_outputs(g):
    cons = [t for t in g.pool if g.uses.get(t.name, 0) == 0 and t.name not in {i.name for i in g.inputs}
            and not any(t.name == init.name for init in g.inits)]
    if not cons:
        return []
    # prefer candidates that reach a graph input, then the deepest ones
    inames = {i.name for i in g.inputs}
    depth = {}
    for t in cons:
        lv, need = live_set(g, [t])
        depth[t.name] = (bool(need & inames), len(lv))
    cons.sort(key=lambda t: (not depth[t.name][0], -depth[t.name][1], -t.idx))
    first = [t for t in cons if depth[t.name][1] <= MAX_NODES]
    if not first:
        return []
    outs = [first[0]]
    rest = [t for t in cons if t is not first[0]]
    k = g.choice([1, 1, 2, 2, 3])
    while len(outs) < k and rest:
        t = rest.pop(int(g.rng.integers(len(rest))))
        if len(live_set(g, outs + [t])[0]) <= MAX_NODES:
            outs.append(t)
    return outs


def vi(t):
    return helper.make_tensor_value_info(t.name, ONNX_DT[t.dtype], list(t.shape))


def generate(seed, attempt, only_ops=None):
    rng = np.random.default_rng(seed if attempt == 0 else [seed, attempt])
    opset = int(rng.integers(13, 22))
    u = rng.random()
    fdt = 'float32' if u < 0.7 else ('float16' if u < 0.9 else 'float64')
    g = G(rng, opset, fdt)
    g.add_input(g.nchw() if g.r() < 0.55 else g.rand_shape())
    if g.r() < 0.4:
        g.add_input(g.rand_shape())
    ops = only_ops or available_ops(opset, fdt)
    target = g.ri(MIN_NODES, MAX_NODES)   # wanted number of live nodes
    build = target                        # nodes to build before pruning
    tries = 0
    outs, live = [], []
    while tries < 4000:
        while len(g.nodes) < build and tries < 4000:
            tries += 1
            special = [t for t in g.pool if g.uses.get(t.name, 0) == 0 and t.dtype != fdt]
            cand_ops = ops
            force = None
            if special and g.r() < 0.3:
                force = g.weighted(special)
                cand_ops = [o for o in ops if accepts(o, REG[o][2], force.dtype, fdt)]
                if not cand_ops:
                    force = None
                    cand_ops = ops
            w = np.array([WEIGHT.get(o, 1.0) for o in cand_ops])
            op = cand_ops[int(g.rng.choice(len(cand_ops), p=w / w.sum()))]
            s = g.snap()
            g.force = force
            try:
                REG[op][0](g, op)
                ok = len(g.nodes) <= MAX_BUILD
                if force is not None and g.uses.get(force.name, 0) == 0:
                    ok = False
                # no produced tensor may carry a dtype the ORT CPU EP cannot feed to this op
                if ok:
                    for nd_i in range(s[0], len(g.nodes)):
                        nd = g.nodes[nd_i]
                        for iname in nd.input:
                            tt = next((t for t in g.pool if t.name == iname), None)
                            if tt is not None and (nd.op_type, tt.dtype) in ORT_NO_KERNEL:
                                ok = False
            except Reject:
                ok = False
            g.force = None
            if not ok:
                g.rollback(s)
        outs = choose_outputs(g)
        live, _ = live_set(g, outs)
        if len(live) >= target or len(g.nodes) >= MAX_BUILD:
            break
        build = min(MAX_BUILD, len(g.nodes) + max(1, target - len(live)))
    if len(live) < MIN_NODES or not outs:
        raise Reject('too few live nodes (%d)' % len(live))
    _, needed = live_set(g, outs)
    nodes = [g.nodes[i] for i in live]
    inputs = [t for t in g.inputs if t.name in needed]
    if not inputs:
        raise Reject('no graph input reached')
    inits = [t for t in g.inits if t.name in needed]
    graph = helper.make_graph(nodes, 'g4_%d' % seed, [vi(t) for t in inputs], [vi(t) for t in outs],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset)],
                              ir_version=ir_for(opset), producer_name='gen3-opdag',
                              producer_version='1')
    model.doc_string = 'gen3 op-level random DAG, seed=%d attempt=%d' % (seed, attempt)
    mine = {}
    for i in live:
        for t in g.node_out[i]:
            mine[t.name] = (t.dtype, t.shape)
    meta = dict(opset=opset, fdt=fdt, nodes=len(nodes), ops=[n.op_type for n in nodes],
                inputs=[(t.name, t.dtype, t.shape) for t in inputs],
                outputs=[(t.name, t.dtype, t.shape) for t in outs], mine=mine)
    return model, meta


# =====================================================================
# Checks
# =====================================================================
def onnx_checks(model, meta):
    onnx.checker.check_model(model, full_check=True)
    inf = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    got = {}
    for v in list(inf.graph.value_info) + list(inf.graph.output):
        tt = v.type.tensor_type
        if not tt.HasField('shape'):
            got[v.name] = (DT_FROM_ONNX.get(tt.elem_type), None)
            continue
        dims = tuple(d.dim_value if d.HasField('dim_value') else None for d in tt.shape.dim)
        got[v.name] = (DT_FROM_ONNX.get(tt.elem_type), dims)
    for name, (dt, shape) in meta['mine'].items():
        if name not in got:
            continue  # onnx could not infer it; nothing to compare
        gdt, gs = got[name]
        if gdt != dt:
            raise ValueError('dtype mismatch on %s: mine %s onnx %s' % (name, dt, gdt))
        if gs is None:
            continue
        if len(gs) != len(shape) or any(a is not None and a != b for a, b in zip(gs, shape)):
            raise ValueError('shape mismatch on %s: mine %s onnx %s' % (name, shape, gs))


def _ort_worker(model_bytes, inputs, outputs, seed):
    import onnxruntime as ort
    ort.set_default_logger_severity(3)
    sess = ort.InferenceSession(model_bytes, providers=['CPUExecutionProvider'])
    rng = np.random.default_rng(seed)
    feeds = {n: rng.standard_normal(s).astype(dt) for n, dt, s in inputs}
    res = sess.run(None, feeds)
    nonfinite = False
    for (n, dt, s), r in zip(outputs, res):
        r = np.asarray(r)
        if tuple(r.shape) != tuple(s) or str(r.dtype) != dt:
            raise ValueError('ORT output %s is %s %s, expected %s %s' % (n, r.dtype, r.shape, dt, s))
        if r.dtype.kind == 'f' and not np.all(np.isfinite(r)):
            nonfinite = True
    return nonfinite


def one_line(e):
    s = str(e).replace('\n', ' ')
    return (type(e).__name__ + ': ' + s)[:400]


def produce(seed, checker, max_attempts=100, log=None, only_ops=None):
    discards = []
    for attempt in range(max_attempts):
        try:
            model, meta = generate(seed, attempt, only_ops)
        except Reject as e:
            discards.append((attempt, None, 'generation: %s' % e))
            continue
        try:
            onnx_checks(model, meta)
        except Exception as e:  # noqa
            discards.append((attempt, meta, 'onnx check: ' + one_line(e)))
            continue
        try:
            nonfinite = checker.run(model, meta, seed)
        except Exception as e:  # noqa
            discards.append((attempt, meta, 'onnxruntime: ' + one_line(e)))
            continue
        meta['attempt'] = attempt
        meta['nonfinite'] = nonfinite
        return model, meta, discards
    return None, None, discards


def parse_seeds(s):
    out = []
    for part in s.split(','):
        if '-' in part:
            a, b = part.split('-')
            out.extend(range(int(a), int(b) + 1))
        elif part:
            out.append(int(part))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--seeds', required=True, help='e.g. 7000-7039 or 1,2,5-9')
    ap.add_argument('--out', required=True, help='output directory')
    ap.add_argument('--prefix', default=None, help='file name prefix (default: basename of --out)')
    ap.add_argument('--log', default=None, help='default: OUT/gen.log')
    ap.add_argument('--max-attempts', type=int, default=100)
    ap.add_argument('--ops', default=None, help='comma list: restrict drawn ops (debugging)')
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    args.log = args.log or os.path.join(args.out, 'gen.log')
    prefix = args.prefix or os.path.basename(os.path.normpath(args.out))
    only = args.ops.split(',') if args.ops else None
    checker = OrtChild(_ort_worker)
    hist = collections.Counter()
    n_ok = n_disc = 0
    reasons = collections.Counter()
    lines = []
    try:
        for seed in parse_seeds(args.seeds):
            model, meta, disc = produce(seed, checker, args.max_attempts, only_ops=only)
            for att, m, why in disc:
                n_disc += 1
                head = why.split(':')[0] if not why.startswith('onnxruntime') else 'onnxruntime'
                reasons[head] += 1
                extra = '' if m is None else ' opset=%d dtype=%s nodes=%d ops=%s' % (
                    m['opset'], m['fdt'], m['nodes'], ','.join(sorted(set(m['ops']))))
                lines.append('DISCARD seed=%d attempt=%d%s reason=%s' % (seed, att, extra, why))
            if model is None:
                lines.append('FAILED seed=%d (no valid model in %d attempts)' % (seed, args.max_attempts))
                continue
            path = os.path.join(args.out, '%s_%d.onnx' % (prefix, seed))
            onnx.save(model, path)
            n_ok += 1
            hist.update(meta['ops'])
            lines.append('%s opset=%d dtype=%s nodes=%d attempt=%d nonfinite_out=%s ops=%s' % (
                path, meta['opset'], meta['fdt'], meta['nodes'], meta['attempt'],
                'yes' if meta['nonfinite'] else 'no', ','.join(meta['ops'])))
            print(lines[-1], flush=True)
    finally:
        checker.close()
    lines.append('SUMMARY produced=%d discarded=%d reasons=%s' % (n_ok, n_disc, dict(reasons)))
    lines.append('HISTOGRAM ' + ' '.join('%s:%d' % kv for kv in sorted(hist.items(), key=lambda kv: (-kv[1], kv[0]))))
    with open(args.log, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print(lines[-2])
    print(lines[-1])


if __name__ == '__main__':
    main()
