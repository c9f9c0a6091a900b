#!/usr/bin/env python3
"""gen_blocks -- block-level random ONNX model generator: held-out seed models, written the way
exporters (torch.onnx, Keras/tf2onnx, HF transformers) write them, for measuring mutagraph's
findings on models it was not tuned on.  Models are written to --out, never to the repository;
take a --seed no earlier measurement used.

Where tests/python/gen_dag.py draws single ops into a DAG, this generator chains 3-8 *blocks*,
each a multi-node pattern as an exporter emits it, with random hyperparameters:

  image  Conv+BatchNormalization+activation (stride/pad/dilation/group/depthwise, auto_pad),
         ResNet basic and bottleneck blocks, MobileNet inverted residuals, squeeze-excitation,
         pools, channel shuffle, Inception-like Concat of branches, CSP Split/Concat, YOLO
         Focus slices, Pad+Conv, Resize/DepthToSpace/SpaceToDepth, InstanceNormalization and
         GroupNorm as torch.onnx decomposes it
  seq    MatMul+Add and Einsum linears, FFN with Gelu (erf/tanh forms, op), LayerNormalization
         (op and decomposed), RMSNorm, multi-head attention (static or Shape-computed
         reshapes, MatMul or Einsum scores, Div/Mul scaling, additive/Where causal masks),
         skip LayerNorm, LSTM/GRU/RNN (layout 0, optional states and sequence_lens), Conv1d,
         GLU, CLS token via Expand, positions via Range+Gather, CumSum, TopK/ArgMax taps
  vec    Gemm (transB 0/1) and MatMul+Add heads, BatchNormalization1d, Softmax/LogSoftmax
  any    Cast chains (f16/f64 islands), Where with a comparison mask

Transitions between kinds are blocks too (patch embedding, pooling heads, Gemm+Reshape
generators, RepeatVector).  Dtypes are mostly float32, some float16 and float64 models or
islands (Cast in/out); token-id models take an int64 input.  Opsets 13-21 are drawn per
model and every op/attribute is used in the form valid at that opset.

Each model is checked with onnx.checker (full_check), strict onnx shape inference (as a
consumer calls it, and with type checks and data propagation, every inferred shape compared
with the one computed here) and an onnxruntime
CPU run (ORT_DISABLE_ALL) on random inputs of the declared static shapes with finite outputs
and the declared output shapes.  A model failing a check is discarded and redrawn from the
sub-seed default_rng([seed, k, attempt]); discards are counted in OUT/gen_blocks.log.

    python3 tests/python/gen_blocks.py --out DIR --seed S --count N

writes blocks_<S>_<k>.onnx, k = 0..N-1, to DIR: the same bytes for the same seed.
Only onnx.helper + numpy are used for generation.
"""
import argparse
import collections
import os
import sys

import numpy as np
import onnx
from onnx import helper

from gen_blocks_blocks import BLOCKS
from gen_blocks_graph import (
    ALL_F, DT_OF, F16, F32, F64, MAX_BLOCKS, MAX_NODES, MIN_BLOCKS, MIN_NODES, ONNX_DT, G, Reject)
from ort_child import OrtChild


# =====================================================================
# Model assembly
# =====================================================================
def ir_for(opset):
    return 8 if opset <= 18 else (9 if opset <= 20 else 10)


def make_start(g):
    """Graph input(s) and, for token models, the embedding."""
    u = g.r()
    dt = g.ch([F32, F16, F64], [0.78, 0.12, 0.10])
    n = g.ch([1, 1, 2])
    if u < 0.45:
        c = g.ch([1, 3, 3, 4, 8])
        h = g.ch([8, 12, 16, 16, 24, 32])
        w = h if g.r() < 0.7 else g.ch([8, 12, 16, 20])
        return g.add_input('input', dt, (n, c, h, w))
    if u < 0.85:
        t = g.ch([4, 6, 8, 9, 12, 16])
        if g.r() < 0.3:   # token ids -> embedding Gather (HF); the index range is the vocab
            vocab = g.ch([30, 64, 100])
            d = g.ch([16, 24, 32, 48, 64])
            ids = g.add_input('input_ids', 'int64', (n, t), ('ids', vocab))
            emb = g.init((g.rng.standard_normal((vocab, d)) * 0.5).astype(dt), 'word_embeddings')
            return g.op1('Gather', [emb, ids], dt, (n, t, d))
        return g.add_input('input', dt, (n, t, g.ch([8, 16, 24, 32, 48, 64])))
    return g.add_input('input', dt, (g.ch([1, 2, 4]), g.ch([8, 16, 32, 64, 100])))


def generate(seed, k, attempt):
    rng = np.random.default_rng([seed, k, attempt])
    opset = int(rng.integers(13, 22))
    g = G(rng, opset)
    x = make_start(g)
    want = g.ri(MIN_BLOCKS, MAX_BLOCKS)
    tries = 0
    island_dt = None   # dtype a float16/float64 island returns to
    while tries < 200 and (len(g.blocks) < want or len(g.nodes) < MIN_NODES):
        tries += 1
        if len(g.blocks) >= MAX_BLOCKS + 2:
            break
        cands = [b for b, (fn, ranks, dts, mo, w) in BLOCKS.items() if x.rank in ranks and opset >= mo]
        # keep most of a model in one domain: transitions are drawn less often
        w = np.array([BLOCKS[b][4] * (0.5 if b in ('img_head', 'img_to_seq', 'seq_head', 'seq_to_img',
                                                   'vec_to_img', 'vec_to_seq') else 1.0) for b in cands])
        name = g.ch(cands, w)
        fn, ranks, dts, mo, _ = BLOCKS[name]
        s = g.snap()
        g.scope = 'blk%d_%s' % (len(g.blocks), name)
        try:
            y = x
            if y.dtype not in dts:
                y = g.cast(y, F32)
            elif y.dtype == F32 and island_dt is None and g.r() < 0.1:
                other = g.ch([d for d in dts if d != F32] or [F32])
                if other != F32:   # an autocast island: Cast in now, Cast out after the block
                    y = g.cast(y, other)
                    island_dt = F32
            y2 = fn(g, y)
            if island_dt is not None and y2.dtype != island_dt and y2.dtype in ALL_F:
                y2 = g.cast(y2, island_dt)
            island_dt = None
            if len(g.nodes) > MAX_NODES:
                raise Reject('too many nodes')
            if y2.dtype not in ALL_F:
                raise Reject('main path left float')
        except Reject:
            g.rollback(s)
            island_dt = None
            continue
        g.blocks.append(name)
        x = y2
    if len(g.nodes) < MIN_NODES or len(g.blocks) < MIN_BLOCKS:
        raise Reject('too small (%d nodes, %d blocks)' % (len(g.nodes), len(g.blocks)))
    if g.inputs[0].dtype != x.dtype and g.inputs[0].dtype in ALL_F and g.r() < 0.5:
        x = g.cast(x, g.inputs[0].dtype)
    outs = [x] + [o for o in g.outputs if o.name != x.name]
    names = {o.name for o in outs}
    nodes = prune(g.nodes, names)
    used = {i for nd in nodes for i in nd.input} | names
    inputs = [t for t in g.inputs if t.name in used]
    inits = [t for t in g.inits if t.name in used]
    vi = lambda t: helper.make_tensor_value_info(t.name, ONNX_DT[t.dtype], list(t.shape))  # noqa: E731
    graph = helper.make_graph(nodes, 'blocks_%d_%d' % (seed, k), [vi(t) for t in inputs],
                              [vi(t) for t in outs], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset)],
                              ir_version=ir_for(opset), producer_name='gen_blocks', producer_version='1')
    model.doc_string = 'gen_blocks seed=%d k=%d attempt=%d blocks=%s' % (seed, k, attempt, ','.join(g.blocks))
    produced = {o for nd in nodes for o in nd.output}
    mine = {n: v for n, v in g.info.items() if n in produced}
    meta = dict(opset=opset, nodes=len(nodes), ops=[nd.op_type for nd in nodes], blocks=list(g.blocks),
                inputs=[(t.name, t.dtype, t.shape, g.feeds[t.name]) for t in inputs],
                outputs=[(t.name, t.dtype, t.shape) for t in outs], mine=mine,
                dtype=g.inputs[0].dtype if g.inputs[0].dtype != 'int64' else 'ids')
    if meta['nodes'] < MIN_NODES or meta['nodes'] > MAX_NODES:
        raise Reject('node count %d after pruning' % meta['nodes'])
    return model, meta


def prune(nodes, outputs):
    need = set(outputs)
    keep = []
    for nd in reversed(nodes):
        if any(o in need for o in nd.output if o):
            keep.append(nd)
            need.update(i for i in nd.input if i)
    return keep[::-1]


# =====================================================================
# Checks
# =====================================================================
def onnx_checks(model, meta):
    onnx.checker.check_model(model, full_check=True)
    # as a consumer calls it; onnx 1.22 then leaves GroupNormalization-21 outputs untyped
    # (an error in strict mode), so that op is only ever written decomposed
    onnx.shape_inference.infer_shapes(model, strict_mode=True)
    inf = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    got = {}
    for v in list(inf.graph.value_info) + list(inf.graph.output):
        tt = v.type.tensor_type
        dims = None
        if tt.HasField('shape'):
            dims = tuple(d.dim_value if d.HasField('dim_value') else None for d in tt.shape.dim)
        got[v.name] = (DT_OF.get(tt.elem_type), dims)
    for name, (dt, shape) in meta['mine'].items():
        if name not in got:
            continue
        gdt, gs = got[name]
        if gdt != dt:
            raise ValueError('dtype mismatch on %s: mine %s onnx %s' % (name, dt, gdt))
        if gs is not None and (len(gs) != len(shape) or any(a is not None and a != b for a, b in zip(gs, shape))):
            raise ValueError('shape mismatch on %s: mine %s onnx %s' % (name, shape, gs))
    size = model.ByteSize()
    if size > 2_000_000:
        raise ValueError('model is %d bytes' % size)


def make_feeds(inputs, seed):
    rng = np.random.default_rng(seed)
    feeds = {}
    for name, dt, shape, feed in inputs:
        if feed[0] == 'ids':
            feeds[name] = rng.integers(0, feed[1], size=shape).astype(np.int64)
        else:
            feeds[name] = rng.standard_normal(shape).astype(dt)
    return feeds


def _ort_worker(model_bytes, inputs, outputs, seed):
    import onnxruntime as ort
    ort.set_default_logger_severity(3)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model_bytes, so, providers=['CPUExecutionProvider'])
    res = sess.run(None, make_feeds(inputs, seed))
    for (n, dt, s), r in zip(outputs, res):
        r = np.asarray(r)
        if tuple(r.shape) != tuple(s) or str(r.dtype) != dt:
            raise ValueError('ORT output %s is %s %s, expected %s %s' % (n, r.dtype, r.shape, dt, s))
        if r.dtype.kind == 'f' and not np.all(np.isfinite(r)):
            raise ValueError('non-finite output %s' % n)
    return True


def one_line(e):
    return (type(e).__name__ + ': ' + str(e).replace('\n', ' '))[:300]


def produce(seed, k, runner, max_attempts):
    discards = []
    for attempt in range(max_attempts):
        try:
            model, meta = generate(seed, k, attempt)
        except Reject as e:
            discards.append((attempt, None, 'generation: %s' % e))
            continue
        try:
            onnx_checks(model, meta)
        except Exception as e:  # noqa: BLE001
            discards.append((attempt, meta, 'onnx: ' + one_line(e)))
            continue
        try:
            runner.run(model, meta, seed * 1000 + k)
        except Exception as e:  # noqa: BLE001
            discards.append((attempt, meta, 'onnxruntime: ' + one_line(e)))
            continue
        meta['attempt'] = attempt
        return model, meta, discards
    return None, None, discards


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--out', required=True, help='output directory (not in the repository)')
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--count', type=int, default=40)
    ap.add_argument('--log', default=None, help='default: OUT/gen_blocks.log')
    ap.add_argument('--max-attempts', type=int, default=60)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    log = args.log or os.path.join(args.out, 'gen_blocks.log')
    runner = OrtChild(_ort_worker)
    hist, bhist, reasons = collections.Counter(), collections.Counter(), collections.Counter()
    n_ok = n_disc = 0
    lines = []
    try:
        for k in range(args.count):
            model, meta, disc = produce(args.seed, k, runner, args.max_attempts)
            for att, m, why in disc:
                n_disc += 1
                reasons[why.split(':')[0]] += 1
                extra = '' if m is None else ' opset=%d nodes=%d blocks=%s' % (
                    m['opset'], m['nodes'], ','.join(m['blocks']))
                lines.append('DISCARD seed=%d k=%d attempt=%d%s reason=%s' % (args.seed, k, att, extra, why))
            if model is None:
                lines.append('FAILED seed=%d k=%d (no valid model in %d attempts)' % (args.seed, k, args.max_attempts))
                print(lines[-1], file=sys.stderr, flush=True)
                continue
            path = os.path.join(args.out, 'blocks_%d_%d.onnx' % (args.seed, k))
            onnx.save(model, path)
            n_ok += 1
            hist.update(meta['ops'])
            bhist.update(meta['blocks'])
            lines.append('%s opset=%d dtype=%s nodes=%d attempt=%d blocks=%s' % (
                path, meta['opset'], meta['dtype'], meta['nodes'], meta['attempt'], ','.join(meta['blocks'])))
            print(lines[-1], flush=True)
    finally:
        runner.close()
    fmt = lambda c: ' '.join('%s:%d' % kv for kv in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))  # noqa
    lines.append('SUMMARY produced=%d discarded=%d reasons=%s' % (n_ok, n_disc, dict(reasons)))
    lines.append('OPS %d types: %s' % (len(hist), fmt(hist)))
    lines.append('BLOCKS %s' % fmt(bhist))
    with open(log, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    for ln in lines[-3:]:
        print(ln)
    return 0 if n_ok == args.count else 1


if __name__ == '__main__':
    sys.exit(main())
