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
import math
import os
import sys
import traceback
from fractions import Fraction

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ort_child import OrtChild

ONNX_DT = {
    'float16': TensorProto.FLOAT16, 'float32': TensorProto.FLOAT,
    'float64': TensorProto.DOUBLE, 'int32': TensorProto.INT32,
    'int64': TensorProto.INT64, 'bool': TensorProto.BOOL,
}
DT_FROM_ONNX = {v: k for k, v in ONNX_DT.items()}
FLOAT_DTS = ('float16', 'float32', 'float64')
INT_DTS = ('int32', 'int64')
ALL_DTS = FLOAT_DTS + INT_DTS + ('bool',)

MAX_ELEMS = 4096
MAX_DIM = 256          # intermediate dims (inputs/initializers use 1..8)
MAX_RANK = 4
MIN_NODES, MAX_NODES = 6, 25
MAX_INPUTS = 4
MAX_BUILD = 40         # nodes built before dead-code pruning
INT64_MAX = 2 ** 63 - 1


class Reject(Exception):
    """Raised by a builder when the drawn configuration is not legal."""


def numel(s):
    return int(np.prod(s)) if len(s) else 1


def bcast(*shapes):
    r = max(len(s) for s in shapes)
    out = []
    for i in range(r):
        dims = [s[len(s) - r + i] for s in shapes if len(s) - r + i >= 0]
        m = max(dims)
        if any(d != 1 and d != m for d in dims):
            return None
        out.append(m)
    return tuple(out)


def shape_ok(s):
    return (s is not None and 1 <= len(s) <= MAX_RANK and all(1 <= d <= MAX_DIM for d in s)
            and numel(s) <= MAX_ELEMS)


def prime_factors(n):
    f, p = [], 2
    while p * p <= n:
        while n % p == 0:
            f.append(p)
            n //= p
        p += 1
    if n > 1:
        f.append(n)
    return f


class Tensor:
    __slots__ = ('name', 'shape', 'dtype', 'pos', 'idx')

    def __init__(self, name, shape, dtype, pos=False, idx=0):
        self.name, self.shape, self.dtype, self.pos, self.idx = name, tuple(int(d) for d in shape), dtype, pos, idx


class G:
    """Graph under construction."""

    def __init__(self, rng, opset, fdt):
        self.rng, self.opset, self.fdt = rng, opset, fdt
        self.nodes = []        # onnx NodeProto
        self.node_out = []     # list of lists of Tensor (parallel to nodes)
        self.inits = []        # TensorProto
        self.inputs = []       # Tensor
        self.pool = []         # Tensor (graph inputs + node outputs)
        self.uses = {}
        self.cnt = 0
        self.force = None

    # ---------------- random helpers ----------------
    def r(self):
        return float(self.rng.random())

    def ri(self, lo, hi):
        return int(self.rng.integers(lo, hi + 1))

    def choice(self, seq):
        seq = list(seq)
        return seq[int(self.rng.integers(len(seq)))]

    def rf(self, lo, hi, nd=3):
        return round(float(self.rng.uniform(lo, hi)), nd)

    def name(self, p):
        self.cnt += 1
        return '%s%d' % (p, self.cnt)

    # ---------------- transactions ----------------
    def snap(self):
        return (len(self.nodes), len(self.inits), len(self.inputs), len(self.pool), dict(self.uses))

    def rollback(self, s):
        n, i, inp, p, u = s
        del self.nodes[n:]
        del self.node_out[n:]
        del self.inits[i:]
        del self.inputs[inp:]
        del self.pool[p:]
        self.uses = u

    # ---------------- tensors ----------------
    def rand_shape(self, rank=None, lo=1, hi=8):
        if rank is None:
            rank = self.choice([1, 2, 2, 3, 3, 4, 4, 4])
        return tuple(self.ri(lo, hi) for _ in range(rank))

    def nchw(self, rank=None):
        rank = rank or self.choice([3, 4, 4])
        return (self.ri(1, 2), self.ri(1, 8)) + tuple(self.ri(2, 8) for _ in range(rank - 2))

    def rand_arr(self, shape, dtype, kind='normal'):
        if dtype in FLOAT_DTS:
            if kind == 'nonzero':
                a = self.rng.uniform(0.5, 2.0, size=shape) * self.rng.choice([-1.0, 1.0], size=shape)
            elif kind == 'pos':
                a = np.abs(self.rng.standard_normal(shape)) + 0.5
            else:
                a = self.rng.standard_normal(shape)
            return np.asarray(a).astype(dtype)
        if dtype in INT_DTS:
            if kind == 'nonzero':
                # never -1: INT_MIN / -1 and INT_MIN % -1 trap (SIGFPE) in ORT
                a = self.rng.choice([-5, -4, -3, -2, 1, 2, 3, 4, 5], size=shape)
            else:
                a = self.rng.integers(-5, 6, size=shape)
            return np.asarray(a).astype(dtype)
        return np.asarray(self.rng.random(shape) < 0.5)

    def add_input(self, shape):
        assert all(1 <= d <= 8 for d in shape) and 1 <= len(shape) <= MAX_RANK
        t = Tensor(self.name('in'), shape, self.fdt, False, len(self.pool))
        self.inputs.append(t)
        self.pool.append(t)
        self.uses[t.name] = 0
        return t

    def init(self, arr, prefix='c'):
        name = self.name(prefix)
        arr = np.asarray(arr)
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def init_t(self, arr, pool=False, pos=False):
        arr = np.asarray(arr)
        t = Tensor(self.init(arr, 'w'), arr.shape, str(arr.dtype), pos, len(self.pool))
        if pool:
            self.pool.append(t)
            self.uses[t.name] = 0
        return t

    def i64(self, vals, scalar=False):
        return self.init(np.array(vals, dtype=np.int64).reshape(() if scalar else (-1,)))

    def weighted(self, cands):
        un = [t for t in cands if self.uses.get(t.name, 0) == 0]
        if un and self.r() < 0.85:
            cands = un
        w = np.array([1.0 + t.idx for t in cands])
        return cands[int(self.rng.choice(len(cands), p=w / w.sum()))]

    def pick(self, dtypes, pred=None, exclude=()):
        if self.force is not None:
            t, self.force = self.force, None
            if t.dtype in dtypes and (pred is None or pred(t.shape)) and t.name not in exclude:
                return t
        c = [t for t in self.pool if t.dtype in dtypes and t.name not in exclude
             and (pred is None or pred(t.shape))]
        return self.weighted(c) if c else None

    def new_data(self, pred=None, shape_fn=None):
        for _ in range(40):
            s = tuple(shape_fn()) if shape_fn else self.rand_shape()
            if shape_ok(s) and max(s) <= 8 and (pred is None or pred(s)):
                break
        else:
            raise Reject('no shape')
        if len(self.inputs) < MAX_INPUTS and (not self.inputs or self.r() < 0.85):
            return self.add_input(s)
        return self.init_t(self.rand_arr(s, self.fdt), pool=True)

    def data(self, dtypes=None, pred=None, shape_fn=None, p_new=0.08):
        dtypes = dtypes or (self.fdt,)
        t = None
        if self.force is not None or self.r() >= p_new:
            t = self.pick(dtypes, pred)
        if t is None:
            if self.fdt not in dtypes:
                raise Reject('no data of dtype')
            t = self.new_data(pred, shape_fn)
        return t

    def other_shape(self, s):
        m = self.r()
        if m < 0.3:
            return tuple(s)
        if m < 0.55:
            k = self.ri(1, len(s))
            return tuple(s[len(s) - k:])
        if m < 0.8:
            return tuple(d if self.r() < 0.6 else 1 for d in s)
        res = [d if d != 1 else self.ri(1, 4) for d in s]
        if len(res) < MAX_RANK and self.r() < 0.4:
            res = [self.ri(1, 3)] + res
        return tuple(res)

    def second(self, a_shape, dtype, kind='normal', allow_pool=True, exclude=(), p_pool=0.45):
        """Second operand broadcast-compatible with a_shape."""
        if allow_pool and self.r() < p_pool:
            c = [t for t in self.pool if t.dtype == dtype and t.name not in exclude
                 and shape_ok(bcast(a_shape, t.shape))]
            if c:
                return self.weighted(c)
        s = self.other_shape(a_shape)
        if (kind == 'normal' and dtype == self.fdt and len(self.inputs) < MAX_INPUTS
                and max(s) <= 8 and self.r() < 0.12):
            return self.add_input(s)
        return self.init_t(self.rand_arr(s, dtype, kind))

    def add(self, op, ins, outs, **attrs):
        """outs: list of (shape, dtype[, pos]).  Returns output Tensors."""
        for o in outs:
            if not shape_ok(o[0]):
                raise Reject('bad out shape %s %s' % (op, o[0]))
        names = [self.name('t') for _ in outs]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        node = helper.make_node(op, list(ins), names, name='%s_%d' % (op, self.cnt), **attrs)
        for i in ins:
            if i:
                self.uses[i] = self.uses.get(i, 0) + 1
        res = []
        for n, o in zip(names, outs):
            t = Tensor(n, o[0], o[1], o[2] if len(o) > 2 else False, len(self.pool))
            self.pool.append(t)
            self.uses[n] = 0
            res.append(t)
        self.nodes.append(node)
        self.node_out.append(res)
        return res

    def axis(self, r, allow_end=False):
        a = self.ri(0, r if allow_end else r - 1)
        return a, (a - r if self.r() < 0.3 and a < r else a)


# =====================================================================
# Builders.  Each gets (g, op) and either appends nodes or raises Reject.
# =====================================================================
F, N, A, B = 'F', 'N', 'A', 'B'


def dts_of(g, cat):
    return {F: (g.fdt,), N: (g.fdt,) + INT_DTS, A: ALL_DTS, B: ('bool',)}[cat]


UNARY = {
    # op: (since, pos_out, needs_pos_in, int_ok)
    'Abs': (13, True, False, True), 'Neg': (13, False, False, True),
    'Exp': (13, True, False, False), 'Log': (13, False, True, False),
    'Sqrt': (13, True, True, False), 'Reciprocal': (13, False, False, False),
    'Sigmoid': (13, True, False, False), 'Tanh': (13, False, False, False),
    'Softplus': (1, True, False, False), 'Softsign': (1, False, False, False),
    'Erf': (13, False, False, False), 'Floor': (13, False, False, False),
    'Ceil': (13, False, False, False), 'Round': (11, False, False, False),
    'Sin': (7, False, False, False), 'Cos': (7, False, False, False),
    'Atan': (7, False, False, False), 'Elu': (6, False, False, False),
    'Selu': (6, False, False, False), 'LeakyRelu': (6, False, False, False),
    'HardSigmoid': (6, True, False, False), 'HardSwish': (14, False, False, False),
    'ThresholdedRelu': (10, False, False, False), 'Celu': (12, False, False, False),
    'Relu': (14, True, False, False), 'Mish': (18, False, False, False),
    'Gelu': (20, False, False, False),
}


def unary_attrs(g, op):
    if g.r() < 0.25:
        return {}
    if op == 'Elu':
        return {'alpha': g.rf(0.1, 2.0)}
    if op == 'Selu':
        return {'alpha': g.rf(1.0, 2.0), 'gamma': g.rf(0.8, 1.2)}
    if op == 'LeakyRelu':
        return {'alpha': g.rf(0.01, 0.5)}
    if op == 'HardSigmoid':
        return {'alpha': g.rf(0.1, 0.5), 'beta': g.rf(0.3, 0.7)}
    if op == 'ThresholdedRelu':
        return {'alpha': g.rf(0.0, 1.5)}
    if op == 'Celu':
        return {'alpha': g.rf(0.3, 2.0)}
    if op == 'Gelu':
        return {'approximate': g.choice(['none', 'tanh'])}
    return {}


def make_pos(g, x):
    pre = g.choice([o for o in ['Abs', 'Abs', 'Exp', 'Softplus', 'Sigmoid'] if (o, x.dtype) not in ORT_NO_KERNEL])
    return g.add(pre, [x.name], [(x.shape, x.dtype, True)])[0]


def b_unary(g, op):
    since, pos, needpos, intok = UNARY[op]
    x = g.data((g.fdt,) + (INT_DTS if intok else ()))
    if needpos and not x.pos and g.r() < 0.85:
        x = make_pos(g, x)
    g.add(op, [x.name], [(x.shape, x.dtype, pos)], **unary_attrs(g, op))


def b_binary(g, op):
    intok = op in ('Add', 'Sub', 'Mul', 'Div', 'Max', 'Min', 'Mod')
    a = g.data((g.fdt,) + (INT_DTS if intok else ()))
    dt = a.dtype
    isf = dt in FLOAT_DTS
    attrs = {}
    if op == 'Pow':
        if not a.pos and g.r() < 0.75:
            a = make_pos(g, a)
        s = g.other_shape(a.shape)
        ex = g.rng.choice([0.5, 1.0, 2.0, 3.0, -1.0, 1.5], size=s) if g.r() < 0.6 else \
            g.rng.uniform(-1.5, 2.5, size=s)
        b = g.init_t(np.asarray(ex).astype(dt))
        ins = [a, b]
    elif op in ('Div', 'Mod'):
        if op == 'Mod':
            attrs['fmod'] = 1 if isf else g.choice([0, 1])
            if not isf and g.r() < 0.3:
                attrs['fmod'] = None if attrs['fmod'] == 0 else 1
        b = g.second(a.shape, dt, kind='nonzero', allow_pool=(op == 'Div' and isf))
        ins = [a, b]
    elif op == 'PRelu':
        s = a.shape
        m = g.r()
        if m < 0.4 and len(s) >= 2:
            ss = (s[1],) + (1,) * (len(s) - 2)
        elif m < 0.7:
            k = g.ri(1, len(s))
            ss = tuple(d if g.r() < 0.7 else 1 for d in s[len(s) - k:])
        else:
            ss = (1,)
        b = g.init_t((g.rng.uniform(0.01, 0.5, size=ss)).astype(dt))
        g.add(op, [a.name, b.name], [(a.shape, dt)])
        return
    else:
        n_in = g.choice([1, 2, 2, 2, 3]) if op in ('Max', 'Min') else 2
        ins = [a]
        for _ in range(n_in - 1):
            ins.append(g.second(bcast(*[t.shape for t in ins]), dt, exclude=[a.name]))
        if op in ('Add', 'Sub', 'Mul', 'Max', 'Min') and len(ins) == 2 and g.r() < 0.3:
            ins = ins[::-1]
    out = bcast(*[t.shape for t in ins])
    pos = op in ('Max',) and any(t.pos for t in ins) or (op in ('Add', 'Mul', 'Min') and all(t.pos for t in ins))
    g.add(op, [t.name for t in ins], [(out, dt, pos)], **attrs)


def b_compare(g, op):
    dts = (g.fdt,) + INT_DTS + (('bool',) if op == 'Equal' else ())
    a = g.data(dts)
    b = g.second(a.shape, a.dtype, exclude=[a.name])
    ins = [a, b] if g.r() < 0.7 else [b, a]
    g.add(op, [t.name for t in ins], [(bcast(a.shape, b.shape), 'bool')])


def b_logic(g, op):
    a = g.pick(('bool',))
    if a is None:
        raise Reject('no bool')
    if op == 'Not':
        g.add(op, [a.name], [(a.shape, 'bool')])
        return
    b = g.second(a.shape, 'bool', exclude=[a.name], p_pool=0.6)
    g.add(op, [a.name, b.name], [(bcast(a.shape, b.shape), 'bool')])


def b_where(g, op):
    c = g.pick(('bool',))
    dts = (g.fdt,) + INT_DTS
    if c is not None:
        x = g.data(dts, pred=lambda s: shape_ok(bcast(s, c.shape)), shape_fn=lambda: c.shape)
    else:
        x = g.data(dts)
        c = g.init_t(g.rand_arr(g.other_shape(x.shape), 'bool'))
    y = g.second(bcast(c.shape, x.shape), x.dtype, exclude=[x.name])
    ins = [x, y] if g.r() < 0.6 else [y, x]
    g.add(op, [c.name] + [t.name for t in ins], [(bcast(c.shape, x.shape, y.shape), x.dtype)])


def b_isx(g, op):
    if op == 'IsInf' and g.fdt == 'float16' and g.opset < 20:
        raise Reject('IsInf f16')
    x = g.data()
    attrs = {}
    if op == 'IsInf' and g.r() < 0.6:
        attrs = {'detect_negative': g.choice([0, 1]), 'detect_positive': g.choice([0, 1])}
    g.add(op, [x.name], [(x.shape, 'bool')], **attrs)


def b_cast(g, op):
    x = g.data(ALL_DTS)
    if op == 'Cast':
        to = g.choice([d for d in ALL_DTS if d != x.dtype])
        g.add(op, [x.name], [(x.shape, to, x.pos)], to=ONNX_DT[to])
        return
    tgt = g.pick(tuple(d for d in ALL_DTS if d != x.dtype), exclude=[x.name]) if g.r() < 0.5 else None
    if tgt is None:
        to = g.choice([d for d in ALL_DTS if d != x.dtype])
        tgt = g.init_t(g.rand_arr((1,), to))
    g.add(op, [x.name, tgt.name], [(x.shape, tgt.dtype, x.pos)])


# ---------------------------- shape ops ------------------------------
def b_reshape(g, op):
    x = g.data(ALL_DTS)
    n = numel(x.shape)
    rank = g.ri(1, 4)
    pf = prime_factors(n)
    dims = [1] * rank
    for p in pf:
        dims[g.ri(0, rank - 1)] *= p
    g.rng.shuffle(dims)
    dims = [int(d) for d in dims]
    if not shape_ok(tuple(dims)):
        raise Reject('reshape dims')
    enc = list(dims)
    use_zero = g.r() < 0.3
    if use_zero:
        cand = [i for i in range(min(rank, len(x.shape))) if x.shape[i] == dims[i]]
        if cand:
            enc[g.choice(cand)] = 0
    if g.r() < 0.35:
        cand = [i for i in range(rank) if enc[i] != 0]
        if cand:
            enc[g.choice(cand)] = -1
    attrs = {}
    if g.opset >= 14 and g.r() < 0.4:
        attrs['allowzero'] = 0 if 0 in enc else g.choice([0, 1])
    g.add(op, [x.name, g.i64(enc)], [(tuple(dims), x.dtype, x.pos)], **attrs)


def b_transpose(g, op):
    x = g.data(ALL_DTS, pred=lambda s: len(s) >= 2)
    r = len(x.shape)
    if g.r() < 0.15:
        perm = list(range(r))[::-1]
        attrs = {}
    else:
        perm = [int(p) for p in g.rng.permutation(r)]
        attrs = {'perm': perm}
    g.add(op, [x.name], [(tuple(x.shape[p] for p in perm), x.dtype, x.pos)], **attrs)


def b_squeeze(g, op):
    x = g.data(ALL_DTS, pred=lambda s: len(s) >= 2 and 1 in s and any(d != 1 for d in s),
               shape_fn=lambda: tuple(1 if g.r() < 0.4 else g.ri(2, 8) for _ in range(g.ri(2, 4))))
    r = len(x.shape)
    ones = [i for i, d in enumerate(x.shape) if d == 1]
    if g.r() < 0.2:
        out = tuple(d for d in x.shape if d != 1)
        g.add(op, [x.name], [(out, x.dtype, x.pos)])
        return
    k = g.ri(1, len(ones))
    ax = sorted(int(a) for a in g.rng.choice(ones, size=k, replace=False))
    out = tuple(d for i, d in enumerate(x.shape) if i not in ax)
    enc = [a - r if g.r() < 0.3 else a for a in ax]
    g.rng.shuffle(enc)
    g.add(op, [x.name, g.i64(enc)], [(out, x.dtype, x.pos)])


def b_unsqueeze(g, op):
    x = g.data(ALL_DTS, pred=lambda s: len(s) <= 3)
    r = len(x.shape)
    k = g.ri(1, MAX_RANK - r)
    R = r + k
    ax = sorted(int(a) for a in g.rng.choice(R, size=k, replace=False))
    out, it = [], iter(x.shape)
    for i in range(R):
        out.append(1 if i in ax else next(it))
    enc = [a - R if g.r() < 0.3 else a for a in ax]
    g.rng.shuffle(enc)
    g.add(op, [x.name, g.i64(enc)], [(tuple(out), x.dtype, x.pos)])


def b_flatten(g, op):
    x = g.data(ALL_DTS)
    r = len(x.shape)
    a, enc = g.axis(r, allow_end=True)
    out = (numel(x.shape[:a]), numel(x.shape[a:]))
    g.add(op, [x.name], [(out, x.dtype, x.pos)], axis=enc if (enc != 1 or g.r() < 0.5) else None)


def b_expand(g, op):
    x = g.data(ALL_DTS, pred=lambda s: 1 in s or len(s) < 4)
    tgt = []
    for d in x.shape:
        if d == 1:
            tgt.append(g.ri(1, 5))
        else:
            tgt.append(1 if g.r() < 0.15 else d)
    while len(tgt) < MAX_RANK and g.r() < 0.4:
        tgt.insert(0, g.ri(1, 3))
    out = bcast(x.shape, tuple(tgt))
    g.add(op, [x.name, g.i64(tgt)], [(out, x.dtype, x.pos)])


def b_concat(g, op):
    x = g.data(ALL_DTS)
    r = len(x.shape)
    a, enc = g.axis(r)
    parts = [x]
    for _ in range(g.choice([1, 1, 2])):
        def pred(s):
            return len(s) == r and all(s[i] == x.shape[i] for i in range(r) if i != a)
        c = [t for t in g.pool if t.dtype == x.dtype and pred(t.shape) and t.name not in [p.name for p in parts]]
        if c and g.r() < 0.6:
            parts.append(g.weighted(c))
        else:
            s = list(x.shape)
            s[a] = g.ri(1, 4)
            if x.dtype == g.fdt and len(g.inputs) < MAX_INPUTS and max(s) <= 8 and g.r() < 0.2:
                parts.append(g.add_input(tuple(s)))
            else:
                parts.append(g.init_t(g.rand_arr(tuple(s), x.dtype)))
    if g.r() < 0.3:
        g.rng.shuffle(parts)
    out = list(x.shape)
    out[a] = sum(p.shape[a] for p in parts)
    g.add(op, [p.name for p in parts], [(tuple(out), x.dtype)], axis=enc)


def b_split(g, op):
    x = g.data(ALL_DTS, pred=lambda s: max(s) >= 2)
    r = len(x.shape)
    a = g.choice([i for i in range(r) if x.shape[i] >= 2])
    d = x.shape[a]
    enc = a - r if g.r() < 0.3 else a
    n = g.ri(2, min(3, d))
    attrs = {'axis': enc} if (enc != 0 or g.r() < 0.5) else {}
    ins = [x.name]
    m = g.r()
    if m < 0.5:
        cuts = sorted(int(c) for c in g.rng.choice(np.arange(1, d), size=n - 1, replace=False))
        sizes = [b - a_ for a_, b in zip([0] + cuts, cuts + [d])]
        ins.append(g.i64(sizes))
    elif g.opset >= 18:
        chunk = -(-d // n)
        sizes = [chunk] * (n - 1) + [d - chunk * (n - 1)]
        if sizes[-1] <= 0:
            raise Reject('split num_outputs')
        attrs['num_outputs'] = n
    else:
        if d % n:
            raise Reject('uneven split')
        sizes = [d // n] * n
    outs = []
    for s_ in sizes:
        sh = list(x.shape)
        sh[a] = s_
        outs.append((tuple(sh), x.dtype, x.pos))
    g.add(op, ins, outs, **attrs)


def b_slice(g, op):
    x = g.data(ALL_DTS)
    r = len(x.shape)
    k = g.ri(1, r)
    axes = [int(a) for a in g.rng.choice(r, size=k, replace=False)]
    starts, ends, steps, out = [], [], [], list(x.shape)
    for a in axes:
        d = x.shape[a]
        for _ in range(20):
            st = g.choice([1, 1, 1, 2, -1, -1, -2]) if g.r() < 0.7 else 1
            if st > 0:
                s = g.ri(0, d - 1)
                e = g.ri(s + 1, d)
                if e == d and g.r() < 0.3:
                    e = INT64_MAX
                elif g.r() < 0.3:
                    e = e - d if e < d else e
            else:
                s = g.ri(0, d - 1)
                e = g.ri(-1, s - 1)
                if e == -1:
                    e = -INT64_MAX if g.r() < 0.5 else -d - 1
                elif g.r() < 0.3:
                    e = e - d
            if g.r() < 0.3 and s < d:
                s = s - d
            ln = len(range(*slice(s, e, st).indices(d)))
            if ln >= 1:
                break
        else:
            raise Reject('slice')
        starts.append(s)
        ends.append(e)
        steps.append(st)
        out[a] = ln
    ins = [x.name, g.i64(starts), g.i64(ends)]
    default_axes = axes == list(range(k))
    if not default_axes or g.r() < 0.5 or any(s != 1 for s in steps):
        ins.append(g.i64([a - r if g.r() < 0.3 else a for a in axes]))
        if any(s != 1 for s in steps) or g.r() < 0.5:
            ins.append(g.i64(steps))
    g.add(op, ins, [(tuple(out), x.dtype, x.pos)])


def b_pad(g, op):
    x = g.data((g.fdt,) + INT_DTS)
    r = len(x.shape)
    modes = ['constant', 'reflect', 'edge'] + (['wrap'] if g.opset >= 19 else [])
    mode = g.choice(modes)
    use_axes = g.opset >= 18 and g.r() < 0.35
    axes = sorted(int(a) for a in g.rng.choice(r, size=g.ri(1, r), replace=False)) if use_axes else list(range(r))
    pb, pe = [], []
    out = list(x.shape)
    for a in axes:
        d = x.shape[a]
        if mode == 'reflect':
            hi = min(2, d - 1)
        elif mode == 'wrap':
            hi = min(2, d)
        else:
            hi = 2
        b_ = g.ri(0, hi) if g.r() < 0.8 else 0
        e_ = g.ri(0, hi)
        if mode == 'constant' and d > 2 and g.r() < 0.15:
            e_ = -1
        pb.append(b_)
        pe.append(e_)
        out[a] = d + b_ + e_
    ins = [x.name, g.i64(pb + pe)]
    if mode == 'constant' and g.r() < 0.5:
        ins.append(g.init(np.array(g.rand_arr((), x.dtype))))
    elif use_axes:
        ins.append('')
    if use_axes:
        ins.append(g.i64([a - r if g.r() < 0.3 else a for a in axes]))
    attrs = {'mode': mode} if (mode != 'constant' or g.r() < 0.5) else {}
    g.add(op, ins, [(tuple(out), x.dtype)], **attrs)


def b_tile(g, op):
    x = g.data(ALL_DTS)
    rep = [g.choice([1, 1, 2, 3]) for _ in x.shape]
    out = tuple(d * k for d, k in zip(x.shape, rep))
    g.add(op, [x.name, g.i64(rep)], [(out, x.dtype, x.pos)])


def b_gather(g, op):
    x = g.data(ALL_DTS)
    r = len(x.shape)
    a, enc = g.axis(r)
    d = x.shape[a]
    qs = [q for q in range(0, 3) if 1 <= r - 1 + q <= MAX_RANK]
    q = g.choice(qs)
    ish = tuple(g.ri(1, 4) for _ in range(q))
    idt = g.choice(['int64', 'int64', 'int32'])
    ind = g.rng.integers(-d, d, size=ish).astype(idt)
    out = x.shape[:a] + ish + x.shape[a + 1:]
    attrs = {'axis': enc} if (enc != 0 or g.r() < 0.5) else {}
    g.add(op, [x.name, g.init(np.asarray(ind))], [(out, x.dtype, x.pos)], **attrs)


def b_gather_elements(g, op):
    x = g.data(ALL_DTS)
    r = len(x.shape)
    a, enc = g.axis(r)
    ish = tuple(g.ri(1, d) for d in x.shape)
    d = x.shape[a]
    ind = g.rng.integers(-d, d, size=ish).astype(g.choice(['int64', 'int32']))
    g.add(op, [x.name, g.init(ind)], [(ish, x.dtype, x.pos)], axis=enc)


def b_scatter_elements(g, op):
    x = g.data((g.fdt,) + INT_DTS)
    r = len(x.shape)
    a, enc = g.axis(r)
    d = x.shape[a]
    ish = [g.ri(1, dd) for dd in x.shape]
    k = ish[a]
    # unique indices along the axis for every other position (deterministic result)
    other = [ish[i] for i in range(r) if i != a]
    cols = []
    for _ in range(numel(other) if other else 1):
        cols.append(g.rng.permutation(d)[:k])
    arr = np.stack(cols, 0).reshape(tuple(other) + (k,))
    arr = np.moveaxis(arr, -1, a)
    if g.r() < 0.3:
        arr = np.where(g.rng.random(arr.shape) < 0.5, arr - d, arr)
    ind = arr.astype(g.choice(['int64', 'int32']))
    ish = tuple(ish)
    c = [t for t in g.pool if t.dtype == x.dtype and t.shape == ish and t.name != x.name]
    upd = g.weighted(c) if (c and g.r() < 0.6) else g.init_t(g.rand_arr(ish, x.dtype))
    reds = ['none'] + (['add', 'mul'] if g.opset >= 16 else []) + (['max', 'min'] if g.opset >= 18 else [])
    if x.dtype == 'float16':
        reds = ['none']   # ORT CPU: no float16 ScatterElements with a reduction
    red = g.choice(reds)
    attrs = {'axis': enc}
    if red != 'none' or (g.opset >= 16 and g.r() < 0.3):
        attrs['reduction'] = red
    g.add(op, [x.name, g.init(ind), upd.name], [(x.shape, x.dtype)], **attrs)


def b_d2s(g, op):
    b = g.choice([2, 2, 3])
    if op == 'DepthToSpace':
        x = g.data(ALL_DTS, pred=lambda s: len(s) == 4 and s[1] % (b * b) == 0,
                   shape_fn=lambda: (g.ri(1, 2), b * b * g.ri(1, 2), g.ri(1, 6), g.ri(1, 6)))
        n, c, h, w = x.shape
        out = (n, c // (b * b), h * b, w * b)
        attrs = {'blocksize': b}
        if g.r() < 0.7:
            attrs['mode'] = g.choice(['DCR', 'CRD'])
    else:
        x = g.data(ALL_DTS, pred=lambda s: len(s) == 4 and s[2] % b == 0 and s[3] % b == 0,
                   shape_fn=lambda: (g.ri(1, 2), g.ri(1, 4), b * g.ri(1, 3), b * g.ri(1, 3)))
        n, c, h, w = x.shape
        out = (n, c * b * b, h // b, w // b)
        attrs = {'blocksize': b}
    g.add(op, [x.name], [(out, x.dtype, x.pos)], **attrs)


def b_trilu(g, op):
    x = g.data(ALL_DTS, pred=lambda s: len(s) >= 2)
    ins = [x.name]
    if g.r() < 0.6:
        ins.append(g.i64(g.ri(-2, 2), scalar=True))
    attrs = {'upper': g.choice([0, 1])} if g.r() < 0.8 else {}
    g.add(op, ins, [(x.shape, x.dtype)], **attrs)


def b_cumsum(g, op):
    x = g.data((g.fdt,) + INT_DTS)
    if x.dtype == 'float16' and g.opset < 14:
        raise Reject('cumsum f16')
    r = len(x.shape)
    a, enc = g.axis(r)
    ax = g.init(np.array(enc, dtype=g.choice([np.int64, np.int32])))
    attrs = {}
    if g.r() < 0.5:
        attrs['exclusive'] = g.choice([0, 1])
    if g.r() < 0.5:
        attrs['reverse'] = g.choice([0, 1])
    g.add(op, [x.name, ax], [(x.shape, x.dtype)], **attrs)


def b_revseq(g, op):
    x = g.data(ALL_DTS, pred=lambda s: len(s) >= 2)
    ba, ta = (1, 0) if g.r() < 0.5 else (0, 1)
    lens = g.rng.integers(1, x.shape[ta] + 1, size=(x.shape[ba],)).astype(np.int64)
    attrs = {}
    if (ba, ta) != (1, 0) or g.r() < 0.5:
        attrs = {'batch_axis': ba, 'time_axis': ta}
    g.add(op, [x.name, g.init(lens)], [(x.shape, x.dtype, x.pos)], **attrs)


# ---------------------------- reductions ------------------------------
REDUCE_POS = {'ReduceL1', 'ReduceL2', 'ReduceSumSquare'}


def b_reduce(g, op):
    intok = op in ('ReduceSum', 'ReduceMax', 'ReduceMin', 'ReduceProd')
    x = g.data((g.fdt,) + (INT_DTS if intok else ()))
    r = len(x.shape)
    axes_as_input = op == 'ReduceSum' or g.opset >= 18
    keep = g.choice([0, 1])
    attrs = {}
    if g.r() < 0.8 or not axes_as_input and g.r() < 0.5:
        k = g.ri(1, r)
        axes = sorted(int(a) for a in g.rng.choice(r, size=k, replace=False))
        enc = [a - r if g.r() < 0.3 else a for a in axes]
        g.rng.shuffle(enc)
        noop = None
    else:
        axes, enc = [], None
        noop = g.choice([0, 1]) if axes_as_input else None
        if noop == 0 and g.r() < 0.5:
            noop = None
        if not noop:
            axes = list(range(r))
    out = tuple(1 if i in axes else d for i, d in enumerate(x.shape)) if keep else \
        tuple(d for i, d in enumerate(x.shape) if i not in axes)
    if keep != 1 or g.r() < 0.5:
        attrs['keepdims'] = keep
    if noop is not None:
        attrs['noop_with_empty_axes'] = noop
    ins = [x.name]
    if enc is not None:
        if axes_as_input:
            ins.append(g.i64(enc))
        else:
            attrs['axes'] = [int(e) for e in enc]
    pos = op in REDUCE_POS or (x.pos and op != 'ReduceLogSumExp')
    g.add(op, ins, [(out, x.dtype, pos)], **attrs)


def b_argx(g, op):
    x = g.data((g.fdt,) + INT_DTS)
    r = len(x.shape)
    a, enc = g.axis(r)
    keep = g.choice([0, 1])
    out = tuple(1 if i == a else d for i, d in enumerate(x.shape)) if keep else \
        tuple(d for i, d in enumerate(x.shape) if i != a)
    attrs = {'axis': enc, 'keepdims': keep}
    if g.r() < 0.6:
        attrs['select_last_index'] = g.choice([0, 1])
    g.add(op, [x.name], [(out, 'int64')], **attrs)


def b_topk(g, op):
    x = g.data((g.fdt,) + INT_DTS)
    r = len(x.shape)
    a, enc = g.axis(r)
    k = g.ri(1, x.shape[a])
    out = tuple(k if i == a else d for i, d in enumerate(x.shape))
    attrs = {'axis': enc} if (enc != -1 or g.r() < 0.5) else {}
    if g.r() < 0.6:
        attrs['largest'] = g.choice([0, 1])
    if g.r() < 0.3:
        attrs['sorted'] = 1
    g.add(op, [x.name, g.i64([k])], [(out, x.dtype, x.pos), (out, 'int64')], **attrs)


# ---------------------------- nn ------------------------------
def spatial_out(g, L, k, s, d, auto_pad, allow_ceil=False, pad_hi=None):
    """Returns (out, pb, pe, ceil)."""
    ke = (k - 1) * d + 1
    if auto_pad in ('SAME_UPPER', 'SAME_LOWER'):
        return -(-L // s), 0, 0, 0
    if auto_pad == 'VALID':
        if L < ke:
            raise Reject('valid')
        return (L - ke) // s + 1, 0, 0, 0
    hi = ke - 1 if pad_hi is None else pad_hi
    pb = g.ri(0, hi) if g.r() < 0.5 else 0
    pe = g.ri(0, hi) if g.r() < 0.5 else 0
    num = L + pb + pe - ke
    if num < 0:
        raise Reject('pad')
    ceil = allow_ceil and g.r() < 0.35
    if ceil:
        o = -(-num // s) + 1
        if (o - 1) * s >= L + pb:
            raise Reject('ceil edge')
    else:
        o = num // s + 1
    return o, pb, pe, int(ceil)


def conv_like_input(g):
    return g.data((g.fdt,), pred=lambda s: len(s) in (3, 4) and all(d >= 1 for d in s), shape_fn=g.nchw)


def window_attrs(g, ks, st, dl, grp):
    """A convolution's window attributes: each written when it differs from its default, and
    now and then when it does not."""
    attrs = {}
    if g.r() < 0.6:
        attrs['kernel_shape'] = ks
    if any(s != 1 for s in st) or g.r() < 0.3:
        attrs['strides'] = st
    if any(d != 1 for d in dl) or g.r() < 0.3:
        attrs['dilations'] = dl
    if grp != 1 or g.r() < 0.3:
        attrs['group'] = grp
    return attrs


def b_conv(g, op):
    x = conv_like_input(g)
    n, c = x.shape[:2]
    sp = x.shape[2:]
    divs = [d for d in range(1, c + 1) if c % d == 0]
    grp = g.choice(divs) if g.r() < 0.4 else 1
    m = grp * g.ri(1, max(1, 8 // grp))
    ks = [g.ri(1, 3) for _ in sp]
    st = [g.choice([1, 1, 2]) for _ in sp]
    dl = [g.choice([1, 1, 1, 2]) for _ in sp]
    ap = g.choice(['NOTSET'] * 6 + ['SAME_UPPER', 'SAME_LOWER', 'VALID'])
    if ap.startswith('SAME'):
        dl = [1] * len(sp)   # ORT CPU rejects SAME_* together with dilations > 1
    outs, pads_b, pads_e = [], [], []
    for i, L in enumerate(sp):
        o, pb, pe, _ = spatial_out(g, L, ks[i], st[i], dl[i], ap)
        outs.append(o)
        pads_b.append(pb)
        pads_e.append(pe)
    fan = (c // grp) * numel(ks)
    w = g.init_t((g.rng.standard_normal((m, c // grp) + tuple(ks)) / math.sqrt(fan)).astype(g.fdt))
    ins = [x.name, w.name]
    if g.r() < 0.6:
        ins.append(g.init_t(g.rand_arr((m,), g.fdt)).name)
    attrs = window_attrs(g, ks, st, dl, grp)
    if ap == 'NOTSET':
        if any(pads_b + pads_e) or g.r() < 0.3:
            attrs['pads'] = pads_b + pads_e
        if g.r() < 0.1:
            attrs['auto_pad'] = 'NOTSET'
    else:
        attrs['auto_pad'] = ap
    g.add(op, ins, [((n, m) + tuple(outs), g.fdt)], **attrs)


def b_convtranspose(g, op):
    x = conv_like_input(g)
    n, c = x.shape[:2]
    sp = x.shape[2:]
    divs = [d for d in range(1, c + 1) if c % d == 0]
    grp = g.choice(divs) if g.r() < 0.35 else 1
    mg = g.ri(1, max(1, 6 // grp))
    ks = [g.ri(1, 3) for _ in sp]
    st = [g.choice([1, 1, 2]) for _ in sp]
    dl = [g.choice([1, 1, 1, 2]) for _ in sp]
    ap = g.choice(['NOTSET'] * 6 + ['SAME_UPPER', 'SAME_LOWER'])
    outs, pb_, pe_, op_ = [], [], [], []
    for i, L in enumerate(sp):
        ke = (ks[i] - 1) * dl[i] + 1
        opad = g.ri(0, st[i] - 1) if (ap == 'NOTSET' and g.r() < 0.4) else 0
        full = st[i] * (L - 1) + opad + ke
        if ap == 'NOTSET':
            pb = g.ri(0, ke - 1) if g.r() < 0.5 else 0
            pe = g.ri(0, ke - 1) if g.r() < 0.5 else 0
            o = full - pb - pe
        else:
            o = L * st[i]
            if full - o < 0:
                raise Reject('convT same')
            pb = pe = 0
        if o < 1:
            raise Reject('convT out')
        outs.append(o)
        pb_.append(pb)
        pe_.append(pe)
        op_.append(opad)
    fan = (c // grp) * numel(ks)
    w = g.init_t((g.rng.standard_normal((c, mg) + tuple(ks)) / math.sqrt(fan)).astype(g.fdt))
    ins = [x.name, w.name]
    if g.r() < 0.5:
        ins.append(g.init_t(g.rand_arr((mg * grp,), g.fdt)).name)
    attrs = window_attrs(g, ks, st, dl, grp)
    if ap == 'NOTSET':
        if any(pb_ + pe_) or g.r() < 0.3:
            attrs['pads'] = pb_ + pe_
        if any(op_):
            attrs['output_padding'] = op_
    else:
        attrs['auto_pad'] = ap
    g.add(op, ins, [((n, mg * grp) + tuple(outs), g.fdt)], **attrs)


def b_pool(g, op):
    x = conv_like_input(g)
    n, c = x.shape[:2]
    sp = x.shape[2:]
    dil_ok = op == 'MaxPool' or (op == 'AveragePool' and g.opset >= 19) or (op == 'LpPool' and g.opset >= 18)
    ceil_ok = op != 'LpPool' or g.opset >= 18
    ks = [g.ri(1, 3) for _ in sp]
    st = [g.choice([1, 1, 2, 2]) for _ in sp]
    dl = [g.choice([1, 1, 1, 2]) if dil_ok else 1 for _ in sp]
    ap = g.choice(['NOTSET'] * 7 + ['SAME_UPPER', 'SAME_LOWER', 'VALID'])
    if ap.startswith('SAME'):
        dl = [1] * len(sp)   # ORT CPU pools compute a wrong output shape for SAME_* with dilations > 1
    outs, pb_, pe_ = [], [], []
    ceil_mode = 0
    allow_ceil = ceil_ok and ap == 'NOTSET' and g.r() < 0.5
    for i, L in enumerate(sp):
        o, pb, pe, cm = spatial_out(g, L, ks[i], st[i], dl[i], ap, allow_ceil=allow_ceil, pad_hi=ks[i] - 1)
        if ap.startswith('SAME') and (o - 1) * st[i] + (ks[i] - 1) * dl[i] + 1 < L:
            raise Reject('pool SAME with negative total pad')  # ORT rejects instead of clamping to 0
        outs.append(o)
        pb_.append(pb)
        pe_.append(pe)
        ceil_mode |= cm
    if allow_ceil and not ceil_mode:
        pass
    attrs = {'kernel_shape': ks}
    if any(s != 1 for s in st) or g.r() < 0.3:
        attrs['strides'] = st
    if dil_ok and (any(d != 1 for d in dl) or g.r() < 0.2):
        attrs['dilations'] = dl
    if ap == 'NOTSET':
        if any(pb_ + pe_) or g.r() < 0.3:
            attrs['pads'] = pb_ + pe_
    else:
        attrs['auto_pad'] = ap
    if ceil_mode:
        # recompute with ceil for all dims so output shape is consistent
        outs = []
        for i, L in enumerate(sp):
            ke = (ks[i] - 1) * dl[i] + 1
            num = L + pb_[i] + pe_[i] - ke
            o = -(-num // st[i]) + 1
            if (o - 1) * st[i] >= L + pb_[i]:
                raise Reject('ceil edge')
            outs.append(o)
        attrs['ceil_mode'] = 1
    elif ceil_ok and g.r() < 0.15:
        attrs['ceil_mode'] = 0
    if op == 'AveragePool' and g.r() < 0.6:
        attrs['count_include_pad'] = g.choice([0, 1])
    if op == 'LpPool' and g.r() < 0.7:
        attrs['p'] = g.choice([1, 2, 3])
    oshape = (n, c) + tuple(outs)
    outspec = [(oshape, g.fdt, x.pos and op == 'MaxPool')]
    if op == 'MaxPool' and g.r() < 0.25:
        outspec.append((oshape, 'int64'))
        if g.r() < 0.5:
            attrs['storage_order'] = g.choice([0, 1])
    g.add(op, [x.name], outspec, **attrs)


def b_global_pool(g, op):
    x = g.data((g.fdt,), pred=lambda s: len(s) >= 3, shape_fn=g.nchw)
    g.add(op, [x.name], [(x.shape[:2] + (1,) * (len(x.shape) - 2), g.fdt, x.pos)])


def b_bn(g, op):
    x = g.data((g.fdt,), pred=lambda s: len(s) >= 2, shape_fn=g.nchw)
    c = x.shape[1]
    ins = [x.name] + [g.init_t(g.rand_arr((c,), g.fdt, k)).name for k in ('normal', 'normal', 'normal', 'pos')]
    attrs = {}
    if g.r() < 0.6:
        attrs['epsilon'] = g.choice([1e-5, 1e-3, 0.01])
    if g.r() < 0.4:
        attrs['momentum'] = g.rf(0.8, 0.99)
    if g.opset >= 14 and g.r() < 0.3:
        attrs['training_mode'] = 0
    g.add(op, ins, [(x.shape, g.fdt)], **attrs)


def b_instnorm(g, op):
    x = g.data((g.fdt,), pred=lambda s: len(s) >= 3, shape_fn=g.nchw)
    c = x.shape[1]
    ins = [x.name, g.init_t(g.rand_arr((c,), g.fdt)).name, g.init_t(g.rand_arr((c,), g.fdt)).name]
    attrs = {'epsilon': g.choice([1e-5, 1e-3])} if g.r() < 0.5 else {}
    g.add(op, ins, [(x.shape, g.fdt)], **attrs)


def b_layernorm(g, op):
    x = g.data((g.fdt,))
    r = len(x.shape)
    a, enc = g.axis(r)
    ns = x.shape[a:]
    ins = [x.name, g.init_t(g.rand_arr(ns, g.fdt)).name]
    if g.r() < 0.6:
        ins.append(g.init_t(g.rand_arr(ns, g.fdt)).name)
    attrs = {}
    if enc != -1 or g.r() < 0.5:
        attrs['axis'] = enc
    if g.r() < 0.4:
        attrs['epsilon'] = g.choice([1e-5, 1e-3])
    g.add(op, ins, [(x.shape, g.fdt)], **attrs)


def b_groupnorm(g, op):
    x = g.data((g.fdt,), pred=lambda s: len(s) >= 3, shape_fn=g.nchw)
    c = x.shape[1]
    ng = g.choice([d for d in range(1, c + 1) if c % d == 0])
    ins = [x.name, g.init_t(g.rand_arr((c,), g.fdt)).name, g.init_t(g.rand_arr((c,), g.fdt)).name]
    attrs = {'num_groups': ng}
    if g.r() < 0.4:
        attrs['epsilon'] = g.choice([1e-5, 1e-3])
    g.add(op, ins, [(x.shape, g.fdt)], **attrs)


def b_lrn(g, op):
    x = g.data((g.fdt,), pred=lambda s: len(s) == 4, shape_fn=lambda: g.nchw(4))
    attrs = {'size': g.choice([1, 3, 5])}
    if g.r() < 0.6:
        attrs['alpha'] = g.choice([1e-4, 1e-3, 0.01])
    if g.r() < 0.6:
        attrs['beta'] = g.rf(0.5, 0.9)
    if g.r() < 0.6:
        attrs['bias'] = g.rf(1.0, 2.0)
    g.add(op, [x.name], [(x.shape, g.fdt)], **attrs)


def b_softmax(g, op):
    x = g.data()
    r = len(x.shape)
    a, enc = g.axis(r)
    attrs = {'axis': enc} if (enc != -1 or g.r() < 0.4) else {}
    g.add(op, [x.name], [(x.shape, g.fdt, op != 'LogSoftmax')], **attrs)


def b_matmul(g, op):
    a = g.data((g.fdt,) + INT_DTS)
    dt = a.dtype
    s = a.shape
    k = s[-1]
    nn = g.ri(1, 8)
    batch_a = s[:-2]
    m = g.r()
    if len(s) == 1:
        bs = (k, nn) if m < 0.7 else (g.ri(1, 3), k, nn)
    elif m < 0.15:
        bs = (k,)
    elif m < 0.6:
        bs = (k, nn)
    else:
        bb = tuple(d if g.r() < 0.7 else 1 for d in batch_a)
        if len(bb) + 2 < MAX_RANK and g.r() < 0.3:
            bb = (g.ri(1, 3),) + bb
        bs = bb + (k, nn)
    c = [t for t in g.pool if t.dtype == dt and t.name != a.name and len(t.shape) >= 2 and t.shape[-2] == k
         and len(s) >= 2 and bcast(batch_a, t.shape[:-2]) is not None]
    if c and g.r() < 0.3:
        b = g.weighted(c)
        bs = b.shape
    else:
        if dt in FLOAT_DTS:
            b = g.init_t((g.rng.standard_normal(bs) / math.sqrt(k)).astype(dt))
        else:
            b = g.init_t(g.rand_arr(bs, dt))
    ba = bcast(s[:-2] if len(s) >= 2 else (), bs[:-2] if len(bs) >= 2 else ())
    out = tuple(ba) + ((s[-2],) if len(s) >= 2 else ()) + ((bs[-1],) if len(bs) >= 2 else ())
    g.add(op, [a.name, b.name], [(out, dt)])


def b_gemm(g, op):
    x = g.data((g.fdt,), pred=lambda s: len(s) == 2, shape_fn=lambda: g.rand_shape(2))
    ta = g.choice([0, 0, 1])
    M, K = (x.shape[1], x.shape[0]) if ta else x.shape
    N_ = g.ri(1, 8)
    tb = g.choice([0, 1])
    w = g.init_t((g.rng.standard_normal((N_, K) if tb else (K, N_)) / math.sqrt(K)).astype(g.fdt))
    ins = [x.name, w.name]
    if g.r() < 0.7:
        cs = g.choice([(N_,), (1, N_), (M, N_), (M, 1), (1,)])
        ins.append(g.init_t(g.rand_arr(cs, g.fdt)).name)
    attrs = {}
    if ta or g.r() < 0.2:
        attrs['transA'] = ta
    if tb or g.r() < 0.2:
        attrs['transB'] = tb
    if g.r() < 0.4:
        attrs['alpha'] = g.rf(0.25, 2.0, 2)
    if len(ins) == 3 and g.r() < 0.4:
        attrs['beta'] = g.rf(0.25, 2.0, 2)
    g.add(op, ins, [((M, N_), g.fdt)], **attrs)


EINSUM_EQS = ['ij,jk->ik', 'bij,bjk->bik', 'ij->ji', 'bij->bji', 'ij->i', 'ijk->ik', 'ij,ij->ij',
              'ij,kj->ik', 'bhij,bhkj->bhik', 'i,j->ij', 'ii->i', '...ij,jk->...ik', 'ij,jk',
              'bij,bj->bi', 'ijk,k->ij', 'bij,bkj->bik']


def b_einsum(g, op):
    eq = g.choice(EINSUM_EQS)
    lhs, rhs = eq.split('->') if '->' in eq else (eq, None)
    terms = lhs.split(',')
    t0 = terms[0]
    ell = t0.startswith('...')
    core = t0.replace('...', '')

    def pred(s):
        if ell:
            if len(s) < len(core) + 1:
                return False
            s = s[len(s) - len(core):]
        elif len(s) != len(core):
            return False
        seen = {}
        for l, d in zip(core, s):
            if seen.setdefault(l, d) != d:
                return False
        return True

    def sfn():
        dims = {l: g.ri(1, 6) for l in core}
        pre = tuple(g.ri(1, 3) for _ in range(g.ri(1, 2))) if ell else ()
        return pre + tuple(dims[l] for l in core)

    x = g.data((g.fdt,), pred=pred, shape_fn=sfn)
    ed = x.shape[:len(x.shape) - len(core)] if ell else ()
    dims = dict(zip(core, x.shape[len(ed):]))
    ops_ = [x]
    for term in terms[1:]:
        for l in term:
            if l not in dims:
                dims[l] = g.ri(1, 6)
        sh = tuple(dims[l] for l in term)
        c = [t for t in g.pool if t.dtype == g.fdt and t.shape == sh and t.name != x.name]
        ops_.append(g.weighted(c) if (c and g.r() < 0.5) else g.init_t(g.rand_arr(sh, g.fdt)))
    if rhs is None:
        allc = ''.join(terms)
        rhs = ''.join(sorted(l for l in set(allc) if allc.count(l) == 1))
    out = (ed if rhs.startswith('...') else ()) + tuple(dims[l] for l in rhs.replace('...', ''))
    g.add(op, [t.name for t in ops_], [(out, g.fdt)], equation=eq)


def b_resize(g, op):
    x = g.data((g.fdt,), pred=lambda s: len(s) == 4 and s[2] >= 2 and s[3] >= 2, shape_fn=lambda: g.nchw(4))
    n, c, H, W = x.shape
    mode = g.choice(['nearest', 'linear', 'cubic'])
    ctms = ['half_pixel', 'asymmetric', 'pytorch_half_pixel', 'align_corners', 'tf_crop_and_resize']
    if g.opset >= 19:
        ctms.append('half_pixel_symmetric')
    ctm = g.choice(ctms)
    attrs = {}
    if mode != 'nearest' or g.r() < 0.5:
        attrs['mode'] = mode
    if ctm != 'half_pixel' or g.r() < 0.5:
        attrs['coordinate_transformation_mode'] = ctm
    if mode == 'nearest' and g.r() < 0.8:
        attrs['nearest_mode'] = g.choice(['round_prefer_floor', 'round_prefer_ceil', 'floor', 'ceil'])
    if mode == 'cubic':
        if g.r() < 0.6:
            attrs['cubic_coeff_a'] = g.rf(-0.75, -0.5, 2)
        if g.r() < 0.5:
            attrs['exclude_outside'] = g.choice([0, 1])
    if g.opset >= 18 and mode != 'nearest' and g.r() < 0.3:
        attrs['antialias'] = 1
    use_axes = g.opset >= 18 and g.r() < 0.35
    if use_axes:
        attrs['axes'] = g.choice([[2, 3], [-2, -1]])
    sp_dims = [H, W]
    use_sizes = g.r() < 0.4
    if use_sizes:
        sz = [g.ri(1, 2 * L + 2) for L in sp_dims]
        out_sp = sz
        # ORT ignores keep_aspect_ratio_policy (returns the input size) when axes are negative
        if use_axes and attrs['axes'] == [2, 3] and g.r() < 0.6:
            pol = g.choice(['not_larger', 'not_smaller'])
            fr = [Fraction(s_, L) for s_, L in zip(sz, sp_dims)]
            sc = min(fr) if pol == 'not_larger' else max(fr)
            o2 = [sc * L for L in sp_dims]
            if all(v.denominator == 1 and v >= 1 for v in o2):
                attrs['keep_aspect_ratio_policy'] = pol
                out_sp = [int(v) for v in o2]
            elif g.r() < 0.5:
                attrs['keep_aspect_ratio_policy'] = 'stretch'
        vec = sz if use_axes else [n, c] + sz
    else:
        sc = [g.choice([0.5, 0.75, 1.25, 1.5, 2.0, 2.5, 3.0]) for _ in sp_dims]
        out_sp = [int(math.floor(L * s_)) for L, s_ in zip(sp_dims, sc)]
        if min(out_sp) < 1:
            raise Reject('resize scale')
        vec = sc if use_axes else [1.0, 1.0] + sc
    if ctm == 'tf_crop_and_resize':
        st_ = [round(g.r() * 0.3, 2) for _ in sp_dims]
        en_ = [round(0.7 + g.r() * 0.3, 2) for _ in sp_dims]
        roi_v = (st_ + en_) if use_axes else ([0.0, 0.0] + st_ + [1.0, 1.0] + en_)
        roi = g.init(np.array(roi_v, dtype=np.float32))
        if g.r() < 0.5:
            attrs['extrapolation_value'] = g.rf(-1.0, 1.0, 2)
    else:
        roi = g.init(np.array([], dtype=np.float32)) if g.r() < 0.15 else ''
    if use_sizes:
        ins = [x.name, roi, '', g.i64(vec)]
    else:
        ins = [x.name, roi, g.init(np.array(vec, dtype=np.float32))]
    g.add(op, ins, [((n, c) + tuple(out_sp), g.fdt)], **attrs)


def b_clip(g, op):
    x = g.data((g.fdt,) + INT_DTS)
    isf = x.dtype in FLOAT_DTS
    lo = g.rf(-2.0, 0.0) if isf else g.ri(-3, 0)
    hi = g.rf(0.1, 2.0) if isf else g.ri(1, 4)
    m = g.r()
    ins = [x.name]
    if m < 0.4:
        ins += [g.init(np.array(lo, dtype=x.dtype)), g.init(np.array(hi, dtype=x.dtype))]
    elif m < 0.6:
        ins += ['', g.init(np.array(hi, dtype=x.dtype))]
    elif m < 0.85:
        ins += [g.init(np.array(lo, dtype=x.dtype))]
    g.add(op, ins, [(x.shape, x.dtype)])


def b_dropout(g, op):
    x = g.data()
    ins = [x.name]
    m = g.r()
    if m < 0.3:
        ins.append(g.init(np.array(g.rf(0.1, 0.7), dtype=g.fdt)))
    elif m < 0.6:
        ins += ['' if g.r() < 0.5 else g.init(np.array(g.rf(0.1, 0.7), dtype=g.fdt)),
                g.init(np.array(False))]
    outs = [(x.shape, x.dtype, x.pos)]
    if g.r() < 0.3:
        outs.append((x.shape, 'bool'))
    attrs = {'seed': g.ri(0, 1000)} if g.r() < 0.2 else {}
    g.add(op, ins, outs, **attrs)


# op -> (builder, since_opset, input category, allowed model dtypes or None)
REG = {}
for _op, (_since, _p, _np, _intok) in UNARY.items():
    REG[_op] = (b_unary, _since, N if _intok else F, ('float32',) if _op == 'Celu' else None)
for _op in ('Add', 'Sub', 'Mul', 'Div', 'Max', 'Min', 'Mod'):
    REG[_op] = (b_binary, 13, N, None)
REG['Pow'] = (b_binary, 15, F, None)
REG['PRelu'] = (b_binary, 16, F, None)
for _op in ('Greater', 'Less', 'Equal', 'GreaterOrEqual', 'LessOrEqual'):
    REG[_op] = (b_compare, 13, N if _op != 'Equal' else A, None)
for _op in ('And', 'Or', 'Xor', 'Not'):
    REG[_op] = (b_logic, 7, B, None)
REG['Where'] = (b_where, 16, B, None)
REG['IsNaN'] = (b_isx, 13, F, None)
REG['IsInf'] = (b_isx, 10, F, None)
REG['Cast'] = (b_cast, 13, A, None)
REG['CastLike'] = (b_cast, 15, A, None)
REG['Reshape'] = (b_reshape, 14, A, None)
REG['Transpose'] = (b_transpose, 13, A, None)
REG['Squeeze'] = (b_squeeze, 13, A, None)
REG['Unsqueeze'] = (b_unsqueeze, 13, A, None)
REG['Flatten'] = (b_flatten, 13, A, None)
REG['Expand'] = (b_expand, 13, A, None)
REG['Concat'] = (b_concat, 13, A, None)
REG['Split'] = (b_split, 13, A, None)
REG['Slice'] = (b_slice, 13, A, None)
REG['Pad'] = (b_pad, 13, N, None)
REG['Tile'] = (b_tile, 13, A, None)
REG['Gather'] = (b_gather, 13, A, None)
REG['GatherElements'] = (b_gather_elements, 13, A, None)
REG['ScatterElements'] = (b_scatter_elements, 13, N, None)
REG['DepthToSpace'] = (b_d2s, 13, A, None)
REG['SpaceToDepth'] = (b_d2s, 13, A, None)
REG['Trilu'] = (b_trilu, 14, A, None)
REG['CumSum'] = (b_cumsum, 11, N, None)
REG['ReverseSequence'] = (b_revseq, 10, A, None)
for _op in ('ReduceSum', 'ReduceMean', 'ReduceMax', 'ReduceMin', 'ReduceProd', 'ReduceL1', 'ReduceL2',
            'ReduceLogSumExp', 'ReduceSumSquare'):
    REG[_op] = (b_reduce, 13, N if _op in ('ReduceSum', 'ReduceMax', 'ReduceMin', 'ReduceProd') else F, None)
REG['ArgMax'] = (b_argx, 13, N, None)
REG['ArgMin'] = (b_argx, 13, N, None)
REG['TopK'] = (b_topk, 11, N, None)
REG['Conv'] = (b_conv, 11, F, None)
REG['ConvTranspose'] = (b_convtranspose, 11, F, None)
REG['MaxPool'] = (b_pool, 12, F, None)
REG['AveragePool'] = (b_pool, 11, F, None)
REG['LpPool'] = (b_pool, 11, F, None)
REG['GlobalAveragePool'] = (b_global_pool, 1, F, None)
REG['GlobalMaxPool'] = (b_global_pool, 1, F, None)
REG['BatchNormalization'] = (b_bn, 9, F, None)
REG['InstanceNormalization'] = (b_instnorm, 6, F, None)
REG['LayerNormalization'] = (b_layernorm, 17, F, None)
REG['GroupNormalization'] = (b_groupnorm, 21, F, None)
REG['LRN'] = (b_lrn, 13, F, None)
REG['Softmax'] = (b_softmax, 13, F, None)
REG['LogSoftmax'] = (b_softmax, 13, F, None)
REG['Hardmax'] = (b_softmax, 13, F, None)
REG['MatMul'] = (b_matmul, 13, N, None)
REG['Gemm'] = (b_gemm, 13, F, None)
REG['Einsum'] = (b_einsum, 12, F, None)
REG['Resize'] = (b_resize, 13, F, None)
REG['Clip'] = (b_clip, 13, N, None)
REG['Dropout'] = (b_dropout, 13, F, None)

# (op, dtype) pairs that onnxruntime's CPU EP has no kernel for (found empirically);
# such ops are simply not drawn for that model dtype / input dtype.
ORT_NO_KERNEL = set(
    [(o, 'float64') for o in ('Atan', 'AveragePool', 'Conv', 'ConvTranspose', 'Elu', 'Erf', 'Gelu',
                              'GlobalAveragePool', 'GlobalMaxPool', 'HardSigmoid', 'HardSwish', 'Hardmax',
                              'InstanceNormalization', 'LRN', 'LeakyRelu', 'LpPool', 'Mish', 'PRelu',
                              'Resize', 'Selu', 'Softplus', 'Softsign', 'ThresholdedRelu')] +
    [(o, d) for o in ('DepthToSpace', 'SpaceToDepth') for d in ('bool', 'int32', 'int64')])

# relative draw weights (default 1.0) to even out the final op histogram
WEIGHT = {'Conv': 2.5, 'ConvTranspose': 1.8, 'MaxPool': 1.5, 'AveragePool': 2.0, 'LpPool': 1.5,
          'BatchNormalization': 1.5, 'LayerNormalization': 2.0, 'GroupNormalization': 6.0,
          'Gemm': 1.5, 'MatMul': 1.5, 'Einsum': 1.6, 'Resize': 2.0, 'LRN': 1.2, 'Softmax': 1.2,
          'Pow': 1.8, 'Mish': 1.5, 'Gelu': 3.0, 'Celu': 1.5, 'ReduceMean': 1.5, 'ReduceL1': 1.3,
          'ReduceMax': 1.5, 'ReduceSumSquare': 1.3, 'PRelu': 1.3, 'DepthToSpace': 1.8, 'SpaceToDepth': 1.8,
          'Expand': 1.0, 'Unsqueeze': 1.0, 'Abs': 0.6}
for _op, (_fn, _s, _cat, _d) in REG.items():
    if _cat in (A, B) and _op not in WEIGHT:
        WEIGHT[_op] = 0.6


def available_ops(opset, fdt):
    out = []
    for op, (fn, since, cat, dts) in REG.items():
        if since > opset:
            continue
        if dts is not None and fdt not in dts:
            continue
        if (op, fdt) in ORT_NO_KERNEL and cat == F:
            continue
        out.append(op)
    return out


def accepts(op, cat, dtype, fdt):
    if (op, dtype) in ORT_NO_KERNEL:
        return False
    if cat == A:
        return True
    if cat == B:
        return dtype == 'bool'
    if cat == N:
        return dtype == fdt or dtype in INT_DTS
    return dtype == fdt


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
