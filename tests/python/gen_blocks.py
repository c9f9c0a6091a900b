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
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ort_child import OrtChild

ONNX_DT = {'float16': TensorProto.FLOAT16, 'float32': TensorProto.FLOAT,
           'float64': TensorProto.DOUBLE, 'int32': TensorProto.INT32,
           'int64': TensorProto.INT64, 'bool': TensorProto.BOOL}
DT_OF = {v: k for k, v in ONNX_DT.items()}
F16, F32, F64 = 'float16', 'float32', 'float64'
ALL_F = (F16, F32, F64)
NO_F64 = (F16, F32)            # ORT's CPU provider has no double Conv/pools/RNN/Erf ...
INT64_MAX = 2 ** 63 - 1

MAX_ELEMS = 1 << 16            # per intermediate tensor
MAX_PARAMS = 400_000           # weights per model (the file stays under 2 MB)
MIN_NODES, MAX_NODES = 10, 80
MIN_BLOCKS, MAX_BLOCKS = 3, 8


class Reject(Exception):
    """A block cannot be built on the current tensor with the drawn configuration."""


class T:
    """A tensor whose dtype and static shape are known."""
    __slots__ = ('name', 'dtype', 'shape')

    def __init__(self, name, dtype, shape):
        self.name, self.dtype, self.shape = name, dtype, tuple(int(d) for d in shape)

    @property
    def rank(self):
        return len(self.shape)


def numel(shape):
    return int(np.prod(shape)) if len(shape) else 1


def divisors(n, lo=1, hi=None):
    return [d for d in range(lo, (hi or n) + 1) if n % d == 0]


# =====================================================================
# Graph under construction
# =====================================================================
class G:
    def __init__(self, rng, opset):
        self.rng, self.opset = rng, opset
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.info = {}          # tensor name -> (dtype, shape), as computed here
        self.feeds = {}         # input name -> ('normal',) or ('ids', vocab)
        self.cnt = 0
        self.params = 0
        self.blocks = []        # names of the blocks used, in order
        self.mask_in = None     # attention_mask graph input [N, T], made on first use
        self.scope = 'b0'

    # ---------------- randomness ----------------
    def r(self):
        return float(self.rng.random())

    def ri(self, lo, hi):
        return int(self.rng.integers(lo, hi + 1))

    def ch(self, seq, p=None):
        seq = list(seq)
        if p is not None:
            p = np.asarray(p, dtype=float)
            return seq[int(self.rng.choice(len(seq), p=p / p.sum()))]
        return seq[int(self.rng.integers(len(seq)))]

    def name(self, p):
        self.cnt += 1
        return '%s/%s_%d' % (self.scope, p, self.cnt)

    # ---------------- transactions ----------------
    def snap(self):
        return (len(self.nodes), len(self.inits), len(self.inputs), len(self.outputs), self.params,
                self.mask_in, len(self.blocks))

    def rollback(self, s):
        n, i, inp, o, p, m, b = s
        del self.nodes[n:], self.inits[i:], self.inputs[inp:], self.outputs[o:], self.blocks[b:]
        self.params, self.mask_in = p, m

    # ---------------- tensors ----------------
    def check(self, shape):
        if any(d < 1 for d in shape) or numel(shape) > MAX_ELEMS:
            raise Reject('shape %s' % (shape,))
        return tuple(shape)

    def add_input(self, base, dtype, shape, feed=('normal',)):
        t = T(base, dtype, shape)
        self.inputs.append(t)
        self.info[t.name] = (dtype, t.shape)
        self.feeds[t.name] = feed
        return t

    def init(self, arr, p='w', count=True):
        arr = np.asarray(arr)
        name = self.name(p)
        self.inits.append(numpy_helper.from_array(arr, name))
        if count:
            self.params += arr.size
            if self.params > MAX_PARAMS:
                raise Reject('too many weights')
        t = T(name, str(arr.dtype), arr.shape)
        self.info[name] = (t.dtype, t.shape)
        return t

    def const(self, arr, p='c'):
        """A small constant: an initializer, or a Constant node as torch.onnx often writes."""
        arr = np.asarray(arr)
        if self.r() < 0.3:
            t = T(self.name(p), str(arr.dtype), arr.shape)
            self.nodes.append(helper.make_node('Constant', [], [t.name], name=self.name('Constant'),
                                               value=numpy_helper.from_array(arr, t.name)))
            self.info[t.name] = (t.dtype, t.shape)
            return t
        return self.init(arr, p, count=False)

    def i64(self, vals, scalar=False):
        return self.const(np.array(vals, dtype=np.int64).reshape(() if scalar else (-1,)), 'i')

    def sc(self, val, dtype):
        return self.const(np.array(val, dtype=dtype), 's')

    def weight(self, shape, dtype, fan_in, gain=2.0, p='w'):
        std = math.sqrt(gain / max(1, fan_in))
        return self.init((self.rng.standard_normal(shape) * std).astype(dtype), p)

    def bias(self, n, dtype, p='b'):
        return self.init((self.rng.standard_normal(n) * 0.05).astype(dtype), p)

    def op(self, op_type, ins, outs, **attrs):
        """Appends a node; outs is a list of (dtype, shape) or None for an omitted output."""
        names = []
        res = []
        for o in outs:
            if o is None:
                names.append('')
                continue
            t = T(self.name(op_type.lower()), o[0], self.check(o[1]) if o[0] != 'int64' or o[1] else o[1])
            self.info[t.name] = (t.dtype, t.shape)
            names.append(t.name)
            res.append(t)
        ins = ['' if x is None else (x if isinstance(x, str) else x.name) for x in ins]
        while ins and ins[-1] == '':
            ins.pop()
        while names and names[-1] == '':
            names.pop()
        self.nodes.append(helper.make_node(op_type, ins, names, name=self.name(op_type), **attrs))
        return res

    def op1(self, op_type, ins, dtype, shape, **attrs):
        return self.op(op_type, ins, [(dtype, shape)], **attrs)[0]

    # ---------------- exporter idioms ----------------
    def unary(self, op_type, x, **attrs):
        return self.op1(op_type, [x], x.dtype, x.shape, **attrs)

    def binary(self, op_type, a, b, dtype=None):
        shape = np.broadcast_shapes(a.shape, b.shape)
        return self.op1(op_type, [a, b], dtype or a.dtype, shape)

    def cast(self, x, dtype):
        return self.op1('Cast', [x], dtype, x.shape, to=ONNX_DT[dtype])

    def axes_op(self, op_type, x, axes, keepdims=1):
        """Reduce* with axes as attribute before opset 18 (ReduceSum: 13) and as input after."""
        r = x.rank
        norm = sorted(a % r for a in axes)
        shape = [1 if i in norm else d for i, d in enumerate(x.shape)] if keepdims else \
            [d for i, d in enumerate(x.shape) if i not in norm]
        attrs = {} if keepdims == 1 and self.r() < 0.5 else {'keepdims': keepdims}
        if op_type == 'ReduceSum' or self.opset >= 18:
            return self.op1(op_type, [x, self.i64(axes)], x.dtype, shape, **attrs)
        return self.op1(op_type, [x], x.dtype, shape, axes=list(axes), **attrs)

    def unsqueeze(self, x, axes):
        shape = list(x.shape)
        for a in sorted(a % (x.rank + len(axes)) for a in axes):
            shape.insert(a, 1)
        return self.op1('Unsqueeze', [x, self.i64(axes)], x.dtype, shape)

    def squeeze(self, x, axes):
        norm = [a % x.rank for a in axes]
        return self.op1('Squeeze', [x, self.i64(axes)], x.dtype,
                        [d for i, d in enumerate(x.shape) if i not in norm])

    def transpose(self, x, perm):
        return self.op1('Transpose', [x], x.dtype, [x.shape[p] for p in perm], perm=list(perm))

    def dim_of(self, x, i):
        """The 1-element int64 tensor holding x.shape[i], as exporters compute it."""
        if self.opset >= 15 and self.r() < 0.35:
            return self.op1('Shape', [x], 'int64', [1], start=i, end=i + 1)
        s = self.op1('Shape', [x], 'int64', [x.rank])
        d = self.op1('Gather', [s, self.i64(i, scalar=True)], 'int64', [], axis=0)
        return self.unsqueeze(d, [0])

    def shape_tensor(self, x, target, special=True):
        """int64 shape for Reshape/Expand: constant, with 0/-1 (Reshape only), or Shape-computed."""
        u = self.r()
        if u < 0.4 or (not special and u < 0.65):
            return self.i64(target)
        if u < 0.65:
            vals = list(target)
            for i in range(min(len(vals), x.rank)):
                if vals[i] == x.shape[i] and self.r() < 0.6:
                    vals[i] = 0
            if -1 not in vals and 0 not in vals[-1:]:
                j = self.ri(0, len(vals) - 1)
                if vals[j] != 0:
                    vals[j] = -1
            return self.i64(vals)
        parts, consts = [], []
        for i, d in enumerate(target):
            if i < x.rank and x.shape[i] == d and self.r() < 0.7:
                if consts:
                    parts.append(self.i64(consts))
                    consts = []
                parts.append(self.dim_of(x, i))
            else:
                consts.append(d)
        if consts:
            parts.append(self.i64(consts))
        if len(parts) == 1:
            return parts[0]
        return self.op1('Concat', parts, 'int64', [len(target)], axis=0)

    def reshape(self, x, target):
        if numel(target) != numel(x.shape):
            raise Reject('reshape %s -> %s' % (x.shape, target))
        return self.op1('Reshape', [x, self.shape_tensor(x, target)], x.dtype, target)

    def split(self, x, axis, sizes):
        ax = axis % x.rank
        outs = [(x.dtype, [s if i == ax else d for i, d in enumerate(x.shape)]) for s in sizes]
        equal = len(set(sizes)) == 1
        if equal and self.opset >= 18 and self.r() < 0.5:
            return self.op('Split', [x], outs, axis=axis, num_outputs=len(sizes))
        if equal and self.opset < 18 and self.r() < 0.4:
            return self.op('Split', [x], outs, axis=axis)
        return self.op('Split', [x, self.i64(sizes)], outs, axis=axis)

    def slice(self, x, starts, ends, axes, steps=None):
        shape = list(x.shape)
        for s, e, a, st in zip(starts, ends, axes, steps or [1] * len(axes)):
            shape[a % x.rank] = len(range(*slice(s, None if e >= INT64_MAX else e, st).indices(x.shape[a % x.rank])))
        ins = [x, self.i64(starts), self.i64(ends)]
        if steps is not None or self.r() < 0.5:
            ins.append(self.i64(axes))
            if steps is not None:
                ins.append(self.i64(steps))
        elif list(axes) != list(range(len(axes))):
            ins.append(self.i64(axes))
        return self.op1('Slice', ins, x.dtype, shape)


# =====================================================================
# Small patterns shared by blocks
# =====================================================================
def act_names(g, dtype):
    names = ['relu', 'relu6', 'silu', 'hswish_dec', 'sigmoid', 'tanh', 'gelu_tanh', 'none']
    if dtype != F64:
        names += ['leaky', 'gelu_erf', 'hsig_mul', 'elu', 'mish_dec', 'prelu']
        if g.opset >= 14:
            names.append('hswish')
        if g.opset >= 18:
            names.append('mish')
        if g.opset >= 20:
            names.append('gelu')
    return names


def act(g, x, kind=None, channel_axis=1):
    kind = kind or g.ch(act_names(g, x.dtype))
    dt = x.dtype
    if kind == 'none':
        return x
    if kind == 'relu':
        return g.unary('Relu', x)
    if kind == 'relu6':
        return g.op1('Clip', [x, g.sc(0, dt), g.sc(6, dt)], dt, x.shape)
    if kind == 'silu':
        return g.binary('Mul', x, g.unary('Sigmoid', x))
    if kind == 'sigmoid':
        return g.unary('Sigmoid', x)
    if kind == 'tanh':
        return g.unary('Tanh', x)
    if kind == 'leaky':
        return g.unary('LeakyRelu', x, alpha=g.ch([0.01, 0.1, 0.2]))
    if kind == 'elu':
        return g.unary('Elu', x, alpha=1.0)
    if kind == 'hswish':
        return g.unary('HardSwish', x)
    if kind == 'hsig_mul':
        return g.binary('Mul', x, g.unary('HardSigmoid', x, alpha=1.0 / 6, beta=0.5))
    if kind == 'hswish_dec':   # torch.onnx before opset 14: x * clip(x + 3, 0, 6) / 6
        y = g.binary('Add', x, g.sc(3, dt))
        y = g.op1('Clip', [y, g.sc(0, dt), g.sc(6, dt)], dt, x.shape)
        return g.binary('Div', g.binary('Mul', x, y), g.sc(6, dt))
    if kind == 'mish':
        return g.unary('Mish', x)
    if kind == 'mish_dec':
        return g.binary('Mul', x, g.unary('Tanh', g.unary('Softplus', x)))
    if kind == 'gelu':
        return g.unary('Gelu', x, approximate=g.ch(['none', 'tanh']))
    if kind == 'gelu_erf':     # x * 0.5 * (1 + erf(x / sqrt(2)))
        y = g.unary('Erf', g.binary('Div', x, g.sc(math.sqrt(2.0), dt)))
        y = g.binary('Mul', x, g.binary('Add', y, g.sc(1.0, dt)))
        return g.binary('Mul', y, g.sc(0.5, dt))
    if kind == 'gelu_tanh':    # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        p = g.binary('Pow', x, g.sc(3.0, dt))
        y = g.binary('Add', x, g.binary('Mul', p, g.sc(0.044715, dt)))
        y = g.unary('Tanh', g.binary('Mul', y, g.sc(math.sqrt(2 / math.pi), dt)))
        y = g.binary('Add', y, g.sc(1.0, dt))
        return g.binary('Mul', g.binary('Mul', x, g.sc(0.5, dt)), y)
    if kind == 'prelu':
        c = x.shape[channel_axis % x.rank]
        if channel_axis % x.rank == x.rank - 1:
            shape = (c,)
        else:
            shape = (c,) + (1,) * (x.rank - 1 - channel_axis % x.rank)
        slope = g.init(np.full(shape, 0.25, dtype=dt) + (g.rng.standard_normal(shape) * 0.02).astype(dt), 'slope')
        return g.op1('PRelu', [x, slope], dt, x.shape)
    raise AssertionError(kind)


def conv_out(L, k, s, d, pads, auto_pad):
    ke = d * (k - 1) + 1
    if auto_pad in ('SAME_UPPER', 'SAME_LOWER'):
        return -(-L // s)
    if auto_pad == 'VALID':
        return (L - ke) // s + 1
    return (L + pads[0] + pads[1] - ke) // s + 1


def conv(g, x, cout, k, stride=1, dil=1, group=1, bias=True, pad_style=None):
    """Conv over x's spatial dims (1-D or 2-D), weights He-scaled."""
    cin = x.shape[1]
    sp = x.shape[2:]
    nsp = len(sp)
    if cin % group or cout % group:
        raise Reject('group')
    pad_style = pad_style or g.ch(['sym', 'sym', 'sym', 'asym', 'none', 'same_upper', 'same_lower', 'valid'])
    if dil > 1 and pad_style.startswith('same'):   # ORT: no dilation with SAME_* auto_pad
        pad_style = 'sym'
    ks = [k] * nsp
    attrs = {}
    if g.r() < 0.7 or k != 1:
        attrs['kernel_shape'] = ks
    if stride != 1 or g.r() < 0.5:
        attrs['strides'] = [stride] * nsp
    if dil != 1 or g.r() < 0.3:
        attrs['dilations'] = [dil] * nsp
    if group != 1 or g.r() < 0.3:
        attrs['group'] = group
    auto = None
    pads = [0] * (2 * nsp)
    if pad_style == 'sym':
        p = dil * (k - 1) // 2
        pads = [p] * (2 * nsp)
        attrs['pads'] = pads
    elif pad_style == 'asym':
        pads = [g.ri(0, k - 1) for _ in range(2 * nsp)]
        attrs['pads'] = pads
    elif pad_style.startswith('same') or pad_style == 'valid':
        auto = pad_style.upper()
        attrs['auto_pad'] = auto
    out = [conv_out(L, k, stride, dil, (pads[i], pads[i + nsp]), auto) for i, L in enumerate(sp)]
    w = g.weight((cout, cin // group) + tuple(ks), x.dtype, (cin // group) * k ** nsp)
    ins = [x, w] + ([g.bias(cout, x.dtype)] if bias else [])
    return g.op1('Conv', ins, x.dtype, (x.shape[0], cout) + tuple(out), **attrs)


def bn(g, x):
    c = x.shape[1]
    dt = x.dtype
    s = g.init(g.rng.uniform(0.5, 1.5, c).astype(dt), 'bn_scale')
    b = g.init((g.rng.standard_normal(c) * 0.1).astype(dt), 'bn_bias')
    m = g.init((g.rng.standard_normal(c) * 0.1).astype(dt), 'bn_mean')
    v = g.init(g.rng.uniform(0.5, 1.5, c).astype(dt), 'bn_var')
    attrs = {'epsilon': g.ch([1e-5, 1e-3])}
    if g.r() < 0.5:
        attrs['momentum'] = g.ch([0.9, 0.99, 0.1])
    return g.op1('BatchNormalization', [x, s, b, m, v], dt, x.shape, **attrs)


def conv_bn_act(g, x, cout, k, stride=1, dil=1, group=1, kind=None, pad_style=None, use_bn=None):
    use_bn = g.r() < 0.75 if use_bn is None else use_bn
    y = conv(g, x, cout, k, stride, dil, group, bias=not use_bn or g.r() < 0.2, pad_style=pad_style)
    if use_bn:
        y = bn(g, y)
    return act(g, y, kind)


def linear(g, x, dout, style=None, bias=True):
    """x[..., D] @ W + b the ways exporters write a dense layer."""
    d = x.shape[-1]
    dt = x.dtype
    out = x.shape[:-1] + (dout,)
    style = style or g.ch(['matmul', 'matmul', 'matmul', 'gemm', 'einsum'] if x.rank == 2 else
                          ['matmul', 'matmul', 'matmul', 'einsum'])
    if style == 'gemm':
        transb = g.ch([0, 1])
        w = g.weight((dout, d) if transb else (d, dout), dt, d, 1.0)
        attrs = {'transB': 1} if transb else {}
        if g.r() < 0.2:
            attrs['alpha'] = 1.0
            attrs['beta'] = 1.0
        ins = [x, w] + ([g.bias(dout, dt)] if bias else [])
        return g.op1('Gemm', ins, dt, out, **attrs)
    if style == 'einsum':
        w = g.weight((dout, d), dt, d, 1.0)
        lead = 'bcf'[:x.rank - 1]
        y = g.op1('Einsum', [x, w], dt, out, equation='%si,oi->%so' % (lead, lead))
    else:
        y = g.op1('MatMul', [x, g.weight((d, dout), dt, d, 1.0)], dt, out)
    if bias:
        y = g.binary('Add', g.bias(dout, dt), y) if g.r() < 0.3 else g.binary('Add', y, g.bias(dout, dt))
    return y


def layernorm(g, x, style=None):
    d = x.shape[-1]
    dt = x.dtype
    style = style or g.ch(['op', 'dec'] if g.opset >= 17 else ['dec'])
    eps = g.ch([1e-5, 1e-6, 1e-12])
    gamma = g.init((1 + g.rng.standard_normal(d) * 0.05).astype(dt), 'ln_w')
    beta = g.init((g.rng.standard_normal(d) * 0.05).astype(dt), 'ln_b')
    if style == 'op':
        return g.op1('LayerNormalization', [x, gamma, beta], dt, x.shape, axis=-1, epsilon=eps)
    # torch.onnx before opset 17: ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add
    mu = g.axes_op('ReduceMean', x, [-1])
    xc = g.binary('Sub', x, mu)
    var = g.axes_op('ReduceMean', g.binary('Pow', xc, g.sc(2.0, dt)), [-1])
    den = g.unary('Sqrt', g.binary('Add', var, g.sc(max(eps, 1e-5) if dt == F16 else eps, dt)))
    y = g.binary('Div', xc, den)
    return g.binary('Add', g.binary('Mul', y, gamma), beta)


def rmsnorm(g, x):
    dt = x.dtype
    xf = g.cast(x, F32) if dt == F16 and g.r() < 0.6 else x
    var = g.axes_op('ReduceMean', g.binary('Pow', xf, g.sc(2.0, xf.dtype)), [-1])
    inv = g.unary('Reciprocal', g.unary('Sqrt', g.binary('Add', var, g.sc(1e-6, xf.dtype))))
    y = g.binary('Mul', xf, inv)
    if y.dtype != dt:
        y = g.cast(y, dt)
    w = g.init((1 + g.rng.standard_normal(x.shape[-1]) * 0.05).astype(dt), 'rms_w')
    return g.binary('Mul', w, y)


# =====================================================================
# Blocks.  Each takes the current tensor and returns the next one.
# =====================================================================
def b_conv_bn_act(g, x):
    c = x.shape[1]
    k = g.ch([1, 3, 3, 3, 5, 7])
    stride = g.ch([1, 1, 2])
    dil = g.ch([1, 1, 1, 2]) if k > 1 else 1
    u = g.r()
    if u < 0.2:
        group, cout = c, c * g.ch([1, 1, 2])                  # depthwise (multiplier 1 or 2)
    elif u < 0.3:
        group = g.ch(divisors(c, 2) or [1])
        cout = group * g.ri(1, max(1, 32 // group))
    else:
        group, cout = 1, g.ch([8, 16, 24, 32, 48, 64])
    return conv_bn_act(g, x, cout, k, stride, dil, group)


def b_resnet_basic(g, x):
    n, c, h, w = x.shape
    stride = g.ch([1, 1, 2])
    cout = c if stride == 1 and g.r() < 0.6 else min(64, c * g.ch([1, 2]))
    kind = g.ch(['relu', 'relu', 'silu', 'leaky'] if x.dtype != F64 else ['relu', 'silu'])
    y = conv_bn_act(g, x, cout, 3, stride, kind=kind, pad_style='sym', use_bn=True)
    y = conv_bn_act(g, y, cout, 3, 1, kind='none', pad_style='sym', use_bn=True)
    sc = x if (stride == 1 and cout == c) else conv_bn_act(g, x, cout, 1, stride, kind='none',
                                                            pad_style='none', use_bn=True)
    if sc.shape != y.shape:
        raise Reject('shortcut')
    return act(g, g.binary('Add', y, sc) if g.r() < 0.7 else g.binary('Add', sc, y), kind)


def b_bottleneck(g, x):
    c = x.shape[1]
    mid = g.ch([4, 8, 16])
    cout = g.ch([c, mid * 4]) if c <= 64 else c
    stride = g.ch([1, 1, 2])
    y = conv_bn_act(g, x, mid, 1, kind='relu', pad_style='none', use_bn=True)
    y = conv_bn_act(g, y, mid, 3, stride, group=g.ch([1, 1, mid // 4 or 1]), kind='relu',
                    pad_style='sym', use_bn=True)
    y = conv_bn_act(g, y, cout, 1, kind='none', pad_style='none', use_bn=True)
    sc = x if (stride == 1 and cout == c) else conv_bn_act(g, x, cout, 1, stride, kind='none',
                                                            pad_style='none', use_bn=True)
    if sc.shape != y.shape:
        raise Reject('shortcut')
    return g.unary('Relu', g.binary('Add', y, sc))


def b_inverted_residual(g, x):
    """MobileNetV2/V3: 1x1 expand, depthwise kxk, optional SE, 1x1 project, Add."""
    c = x.shape[1]
    t = g.ch([2, 4, 6])
    e = min(96, c * t)
    k = g.ch([3, 5])
    stride = g.ch([1, 1, 2])
    kind = g.ch([k for k in ['relu6', 'hswish', 'hswish_dec', 'silu'] if k in act_names(g, x.dtype)])
    y = conv_bn_act(g, x, e, 1, kind=kind, pad_style='none', use_bn=True)
    y = conv_bn_act(g, y, e, k, stride, group=e, kind=kind, pad_style=g.ch(['sym', 'same_upper']), use_bn=True)
    if g.r() < 0.4:
        y = b_squeeze_excite(g, y)
    cout = c if stride == 1 and g.r() < 0.7 else g.ch([16, 24, 32])
    y = conv_bn_act(g, y, cout, 1, kind='none', pad_style='none', use_bn=True)
    if stride == 1 and cout == c:
        y = g.binary('Add', x, y)
    return y


def b_squeeze_excite(g, x):
    n, c = x.shape[:2]
    r = max(1, c // g.ch([4, 8, 16]))
    dt = x.dtype
    gate = g.ch(['Sigmoid', 'Sigmoid', 'HardSigmoid'] if dt != F64 else ['Sigmoid'])
    if g.r() < 0.6:
        s = g.op1('GlobalAveragePool', [x], dt, (n, c) + (1,) * (x.rank - 2)) if g.r() < 0.7 or x.rank != 4 \
            else g.axes_op('ReduceMean', x, [2, 3], 1)
        s = g.unary('Relu', conv(g, s, r, 1, pad_style='none'))
        s = conv(g, s, c, 1, pad_style='none')
    else:  # Keras/timm-style: pool, dense, dense, reshape
        s = g.axes_op('ReduceMean', x, list(range(2, x.rank)), 0) if g.r() < 0.5 else \
            g.op1('Flatten', [g.op1('GlobalAveragePool', [x], dt, (n, c) + (1,) * (x.rank - 2))], dt, (n, c))
        s = g.unary('Relu', linear(g, s, r, style=g.ch(['gemm', 'matmul'])))
        s = linear(g, s, c, style=g.ch(['gemm', 'matmul']))
        s = g.reshape(s, (n, c) + (1,) * (x.rank - 2)) if g.r() < 0.5 else g.unsqueeze(s, list(range(2, x.rank)))
    s = g.unary(gate, s) if gate == 'Sigmoid' else g.unary(gate, s, alpha=0.2, beta=0.5)
    return g.binary('Mul', x, s)


def b_pool(g, x):
    dt = x.dtype
    kind = g.ch(['MaxPool', 'AveragePool'] if dt != F64 else ['MaxPool'])
    k = g.ch([2, 3, 3, 5])
    s = g.ch([1, 2, 2]) if k > 1 else 1
    attrs = {'kernel_shape': [k, k]}
    if s != 1 or g.r() < 0.5:
        attrs['strides'] = [s, s]
    pads = [0, 0, 0, 0]
    u = g.r()
    auto = None
    if u < 0.4:
        p = k // 2
        pads = [p] * 4
        attrs['pads'] = pads
    elif u < 0.55:
        auto = g.ch(['SAME_UPPER', 'SAME_LOWER'])
        attrs['auto_pad'] = auto
    dil = 1
    if kind == 'MaxPool' and auto is None and g.r() < 0.15:
        dil = 2
        attrs['dilations'] = [2, 2]
    ceil = auto is None and pads == [0, 0, 0, 0] and g.r() < 0.25
    out = []
    for L in x.shape[2:]:
        ke = dil * (k - 1) + 1
        if auto:
            o = -(-L // s)
        elif ceil:
            o = -(-(L - ke) // s) + 1
            if (o - 1) * s >= L:
                raise Reject('ceil window')
        else:
            o = (L + pads[0] + pads[2] - ke) // s + 1
        out.append(o)
    if ceil:
        attrs['ceil_mode'] = 1
    if kind == 'AveragePool' and pads != [0, 0, 0, 0]:
        attrs['count_include_pad'] = g.ch([0, 1])
    return g.op1(kind, [x], dt, x.shape[:2] + tuple(out), **attrs)


def b_channel_shuffle(g, x):
    n, c, h, w = x.shape
    grp = g.ch(divisors(c, 2, c // 2) or [0])
    if not grp:
        raise Reject('channels')
    y = conv_bn_act(g, x, c, 1, group=grp, pad_style='none') if x.dtype != F64 and g.r() < 0.5 else x
    y = g.reshape(y, (n, grp, c // grp, h, w))
    y = g.transpose(y, (0, 2, 1, 3, 4))
    return g.reshape(y, (n, c, h, w))


def b_inception(g, x):
    n, c, h, w = x.shape
    branches = []
    for k in g.rng.permutation([1, 3, 5, 0])[:g.ri(2, 4)]:
        k = int(k)
        if k == 0:
            p = g.op1('MaxPool', [x], x.dtype, x.shape, kernel_shape=[3, 3], strides=[1, 1], pads=[1] * 4)
            branches.append(conv_bn_act(g, p, g.ch([8, 16]), 1, pad_style='none'))
        else:
            y = x if k == 1 else conv_bn_act(g, x, g.ch([8, 16]), 1, pad_style='none')
            branches.append(conv_bn_act(g, y, g.ch([8, 16, 24]), k, pad_style=g.ch(['sym', 'same_upper'])))
    cout = sum(b.shape[1] for b in branches)
    return g.op1('Concat', branches, x.dtype, (n, cout, h, w), axis=1)


def b_csp_split(g, x):
    """CSP/C2f/GhostNet: Split channels, transform part, Concat back (+1x1 fuse)."""
    n, c, h, w = x.shape
    if c < 2:
        raise Reject('channels')
    if c % 2 == 0 and g.r() < 0.7:
        sizes = [c // 2, c // 2]
    else:
        a = g.ri(1, c - 1)
        sizes = [a, c - a]
    parts = g.split(x, 1, sizes)
    b = parts[1]
    for _ in range(g.ri(1, 2)):
        b = conv_bn_act(g, b, b.shape[1], 3, pad_style='sym')
    cat = [parts[0], b] if g.r() < 0.5 else [b, parts[0], parts[1]]
    y = g.op1('Concat', cat, x.dtype, (n, sum(t.shape[1] for t in cat), h, w), axis=1)
    return conv_bn_act(g, y, g.ch([c, 2 * c if c <= 32 else c]), 1, pad_style='none')


def b_focus(g, x):
    """YOLOv5 Focus: four ::2 slices, Concat on channels, Conv."""
    n, c, h, w = x.shape
    if h < 2 or w < 2:
        raise Reject('small')
    cat = []
    for (a, b) in g.rng.permutation([(0, 0), (1, 0), (0, 1), (1, 1)]):
        cat.append(g.slice(x, [int(a), int(b)], [INT64_MAX, INT64_MAX], [2, 3], [2, 2]))
    shp = (n, 4 * c, cat[0].shape[2], cat[0].shape[3])
    if any(t.shape[2:] != shp[2:] for t in cat):
        raise Reject('odd focus')
    y = g.op1('Concat', cat, x.dtype, shp, axis=1)
    return conv_bn_act(g, y, g.ch([16, 32]), 3, pad_style='sym')


def b_pad_conv(g, x):
    n, c, h, w = x.shape
    mode = g.ch(['constant', 'reflect', 'edge'] + (['wrap'] if g.opset >= 19 else []))
    p = g.ri(1, 2)
    if mode in ('reflect', 'wrap') and (h <= p or w <= p):
        raise Reject('pad too wide')
    pads = [0, 0, p, p, 0, 0, p, p]
    ins = [x, g.i64(pads)]
    if mode == 'constant' and g.r() < 0.5:
        ins.append(g.sc(0.0, x.dtype))
    if g.opset >= 18 and g.r() < 0.3:   # the opset-18 axes input
        ins = [x, g.i64([p, p, p, p]), ins[2] if len(ins) > 2 else '', g.i64([2, 3])]
    attrs = {} if mode == 'constant' and g.r() < 0.5 else {'mode': mode}
    y = g.op1('Pad', ins, x.dtype, (n, c, h + 2 * p, w + 2 * p), **attrs)
    return conv_bn_act(g, y, g.ch([8, 16, 32]), 2 * p + 1, pad_style='none')


def b_upsample(g, x):
    n, c, h, w = x.shape
    dt = x.dtype
    u = g.r()
    if u < 0.55 and dt != F64:
        f = g.ch([2, 2, 3]) if h * w * c * n * 9 <= MAX_ELEMS else 2
        mode = g.ch(['nearest', 'nearest', 'linear'] + (['cubic'] if dt != F16 else []))
        attrs = {'mode': mode} if mode != 'nearest' or g.r() < 0.5 else {}
        ctm = g.ch(['asymmetric', 'half_pixel', 'pytorch_half_pixel', 'align_corners'] +
                   (['half_pixel_symmetric'] if g.opset >= 19 else []))
        if mode == 'nearest':
            ctm = g.ch(['asymmetric', 'half_pixel'])
            attrs['nearest_mode'] = g.ch(['floor', 'round_prefer_floor', 'round_prefer_ceil'])
        if ctm != 'half_pixel' or g.r() < 0.5:
            attrs['coordinate_transformation_mode'] = ctm
        out = (n, c, h * f, w * f)
        if g.r() < 0.5:
            ins = [x, '' if g.r() < 0.7 else g.init(np.zeros(0, np.float32), 'roi', False),
                   g.const(np.array([1, 1, f, f], np.float32), 'scales')]
        else:
            ins = [x, '', '', g.i64(list(out))]
        if g.opset >= 18 and ins[-1] != '' and len(ins) == 3 and g.r() < 0.3:
            ins[-1] = g.const(np.array([f, f], np.float32), 'scales')
            attrs['axes'] = [2, 3]
        if g.opset >= 18 and mode != 'nearest' and g.r() < 0.2:
            attrs['antialias'] = 0
        y = g.op1('Resize', ins, dt, out, **attrs)
        return conv_bn_act(g, y, g.ch([8, 16]), 3, pad_style='sym') if g.r() < 0.5 else y
    if u < 0.8:   # sub-pixel conv: Conv to c*b^2, DepthToSpace
        b = 2
        y = conv(g, x, c * b * b if c * b * b <= 64 else 16 * b * b, 3, pad_style='sym')
        mode = g.ch(['DCR', 'CRD'])
        attrs = {'blocksize': b} if mode == 'DCR' and g.r() < 0.5 else {'blocksize': b, 'mode': mode}
        return g.op1('DepthToSpace', [y], dt, (n, y.shape[1] // 4, h * 2, w * 2), **attrs)
    if h % 2 or w % 2:
        raise Reject('odd')
    return g.op1('SpaceToDepth', [x], dt, (n, c * 4, h // 2, w // 2), blocksize=2)


def b_instance_group_norm(g, x):
    n, c = x.shape[:2]
    dt = x.dtype
    if dt == F64:
        raise Reject('f64')
    grp = g.ch(divisors(c, 1, max(1, c // 2)) or [1])
    scale = g.init((1 + g.rng.standard_normal(c) * 0.05).astype(dt), 'gn_w')
    bias = g.init((g.rng.standard_normal(c) * 0.05).astype(dt), 'gn_b')
    u = g.r()
    if u < 0.35:
        y = g.op1('InstanceNormalization', [x, scale, bias], dt, x.shape, epsilon=1e-5)
    else:   # torch.onnx GroupNorm before 18: Reshape, InstanceNorm(ones, zeros), Reshape, Mul, Add
        r = g.reshape(x, (n, grp, numel(x.shape[1:]) // grp))
        y = g.op1('InstanceNormalization', [r, g.init(np.ones(grp, dt), 'one', False),
                                            g.init(np.zeros(grp, dt), 'zero', False)], dt, r.shape, epsilon=1e-5)
        y = g.reshape(y, x.shape)
        y = g.binary('Add', g.binary('Mul', y, g.unsqueeze(scale, [1, 2])), g.unsqueeze(bias, [1, 2]))
    return act(g, y, g.ch(['relu', 'silu', 'none']))


def b_img_to_seq(g, x):
    """ViT patch embedding: Conv k=s=p, flatten(2), transpose(1, 2) (+ CLS/pos)."""
    n, c, h, w = x.shape
    p = g.ch([q for q in (1, 2, 4) if h % q == 0 and w % q == 0])
    d = g.ch([16, 24, 32, 48, 64])
    y = conv(g, x, d, p, p, pad_style='none') if p > 1 or g.r() < 0.6 else x
    d = y.shape[1]
    t = y.shape[2] * y.shape[3]
    if t > 256:
        raise Reject('too many tokens')
    if g.r() < 0.3:   # Keras: channels-last first, then one Reshape
        return g.reshape(g.transpose(y, (0, 2, 3, 1)), (n, t, d))
    return g.transpose(g.reshape(y, (n, d, t)), (0, 2, 1))


def b_img_head(g, x):
    """Classifier head: GlobalAveragePool/ReduceMean/Flatten, then Gemm or MatMul+Add."""
    n, c, h, w = x.shape
    dt = x.dtype
    u = g.r()
    if u < 0.45 and dt != F64:
        y = g.op1('Flatten', [g.op1('GlobalAveragePool', [x], dt, (n, c, 1, 1))], dt, (n, c),
                  **({'axis': 1} if g.r() < 0.5 else {}))
    elif u < 0.7:
        y = g.axes_op('ReduceMean', x, [2, 3] if g.r() < 0.5 else [-2, -1], 0)
    elif u < 0.85 and dt != F64:
        y = g.op1('GlobalMaxPool', [x], dt, (n, c, 1, 1))
        y = g.reshape(y, (n, c))
    else:
        if c * h * w > 2048:
            raise Reject('big flatten')
        y = g.op1('Flatten', [x], dt, (n, c * h * w), axis=1)
    return linear(g, y, g.ch([10, 16, 32, 64]), style=g.ch(['gemm', 'gemm', 'matmul']))


# ---------------- sequence blocks ----------------
def b_ffn(g, x):
    """Transformer MLP: linear, Gelu/Relu/Silu, linear, residual, LayerNorm (pre or post)."""
    d = x.shape[-1]
    pre = g.r() < 0.5
    h = layernorm(g, x) if pre else x
    hid = min(128, d * g.ch([2, 4]))
    kinds = [k for k in ['gelu_erf', 'gelu_erf', 'gelu_tanh', 'gelu', 'relu', 'silu'] if k in act_names(g, x.dtype)]
    y = act(g, linear(g, h, hid), g.ch(kinds), channel_axis=-1)
    y = linear(g, y, d)
    y = g.binary('Add', x, y) if g.r() < 0.6 else g.binary('Add', y, x)
    return y if pre else layernorm(g, y)


def b_swiglu(g, x):
    """LLaMA MLP: RMSNorm, (silu(x W1) * x W3) W2, residual."""
    d = x.shape[-1]
    h = rmsnorm(g, x)
    hid = min(96, d * 2)
    a = linear(g, h, hid, bias=False, style='matmul')
    b = linear(g, h, hid, bias=False, style='matmul')
    y = g.binary('Mul', act(g, a, 'silu'), b)
    return g.binary('Add', x, linear(g, y, d, bias=False, style='matmul'))


def causal_mask(g, t, dt):
    neg = -1e4 if dt == F16 else g.ch([-1e4, -1e9, float(np.finfo(np.float32).min)])
    if dt == F64:
        neg = -1e9
    if g.opset >= 14 and g.r() < 0.4:   # Trilu on ones, then Where
        ones = g.init(np.ones((t, t), np.float32 if dt != F16 else np.float16), 'ones', False)
        tri = g.op1('Trilu', [ones], ones.dtype, (t, t), upper=0)
        cond = g.op1('Equal', [tri, g.sc(0.0, ones.dtype)], 'bool', (t, t))
        return ('where', cond, neg)
    m = np.triu(np.full((t, t), neg, dtype=dt), 1).reshape(1, 1, t, t)
    return ('add', g.init(m, 'causal_mask', False), None)


def ext_mask(g, n, t, dt):
    """HF-style attention_mask input [N, T] turned into an additive bias [N, 1, 1, T]."""
    if g.mask_in is None or g.mask_in.shape != (n, t):
        if g.mask_in is not None:
            raise Reject('mask shape')
        g.mask_in = g.add_input('attention_mask', F32, (n, t))
    m = g.mask_in if dt == F32 else g.cast(g.mask_in, dt)
    m = g.unsqueeze(m, [1, 2])
    m = g.binary('Sub', g.sc(1.0, dt), m)
    return g.binary('Mul', m, g.sc(-1e4 if dt == F16 else -10000.0, dt))


def b_attention(g, x):
    n, t, d = x.shape
    dt = x.dtype
    h = g.ch(divisors(d, 1, 8))
    dh = d // h
    pre = g.r() < 0.5
    inp = layernorm(g, x) if pre else x
    if g.r() < 0.35:
        q, k, v = g.split(linear(g, inp, 3 * d), -1, [d, d, d])
    else:
        q, k, v = (linear(g, inp, d) for _ in range(3))
    heads = lambda y: g.transpose(g.reshape(y, (n, t, h, dh)), (0, 2, 1, 3))   # noqa: E731
    qh, vh = heads(q), heads(v)
    scale_style = g.ch(['div', 'mul', 'qk'])
    if scale_style == 'qk':   # HF: scale q and k by dh^-0.25 each
        s4 = g.sc(dh ** -0.25, dt)
        qh = g.binary('Mul', qh, s4)
    if g.r() < 0.3:
        kh = heads(k)
        if scale_style == 'qk':
            kh = g.binary('Mul', kh, g.sc(dh ** -0.25, dt))
        sc = g.op1('Einsum', [qh, kh], dt, (n, h, t, t), equation='bhid,bhjd->bhij')
    else:
        if g.r() < 0.5:
            kh = g.transpose(g.reshape(k, (n, t, h, dh)), (0, 2, 3, 1))
        else:
            kh = g.transpose(heads(k), (0, 1, 3, 2))
        if scale_style == 'qk':
            kh = g.binary('Mul', kh, g.sc(dh ** -0.25, dt))
        sc = g.op1('MatMul', [qh, kh], dt, (n, h, t, t))
    if scale_style == 'div':
        sc = g.binary('Div', sc, g.sc(math.sqrt(dh), dt))
    elif scale_style == 'mul':
        sc = g.binary('Mul', sc, g.sc(1 / math.sqrt(dh), dt))
    u = g.r()
    if u < 0.3:
        kind, m, neg = causal_mask(g, t, dt)
        if kind == 'add':
            sc = g.binary('Add', sc, m)
        else:
            sc = g.op1('Where', [m, g.sc(neg, dt), sc], dt, sc.shape)
    elif u < 0.45:
        sc = g.binary('Add', sc, ext_mask(g, n, t, dt))
    p = g.op1('Softmax', [sc], dt, sc.shape, **({'axis': -1} if g.r() < 0.5 else {}))
    if g.r() < 0.2:
        ctx = g.op1('Einsum', [p, vh], dt, (n, h, t, dh), equation='bhij,bhjd->bhid')
    else:
        ctx = g.op1('MatMul', [p, vh], dt, (n, h, t, dh))
    ctx = g.reshape(g.transpose(ctx, (0, 2, 1, 3)), (n, t, d))
    y = linear(g, ctx, d)
    y = g.binary('Add', x, y)
    return y if pre else layernorm(g, y)


def b_skip_layernorm(g, x):
    """BERT SkipLayerNorm: dense, Add(input), (Add bias), LayerNormalization."""
    y = linear(g, x, x.shape[-1], bias=g.r() < 0.5)
    if g.r() < 0.4:
        y = g.binary('Add', y, g.bias(x.shape[-1], x.dtype))
    y = g.binary('Add', y, x)
    return layernorm(g, y, 'op' if g.opset >= 17 and g.r() < 0.8 else None)


def b_recurrent(g, x):
    n, t, d = x.shape
    dt = x.dtype
    if dt == F64:
        raise Reject('f64 rnn')
    kind = g.ch(['LSTM', 'LSTM', 'GRU', 'GRU', 'RNN'])
    gates = {'LSTM': 4, 'GRU': 3, 'RNN': 1}[kind]
    hs = g.ch([8, 16, 24, 32])
    direction = g.ch(['forward', 'forward', 'bidirectional', 'reverse'])
    nd = 2 if direction == 'bidirectional' else 1
    xt = g.transpose(x, (1, 0, 2))
    sd = 1.0 / math.sqrt(hs)
    W = g.init(g.rng.uniform(-sd, sd, (nd, gates * hs, d)).astype(dt), 'W')
    R = g.init(g.rng.uniform(-sd, sd, (nd, gates * hs, hs)).astype(dt), 'R')
    ins = [xt, W, R]
    attrs = {'hidden_size': hs}
    if direction != 'forward' or g.r() < 0.4:
        attrs['direction'] = direction
    if kind == 'GRU' and g.r() < 0.7:
        attrs['linear_before_reset'] = 1    # what torch.onnx writes
    if kind == 'RNN' and g.r() < 0.3:
        attrs['activations'] = ['Relu'] * nd
    opt = []
    opt.append(g.init(g.rng.uniform(-sd, sd, (nd, 2 * gates * hs)).astype(dt), 'B') if g.r() < 0.8 else '')
    opt.append(g.init(g.rng.integers(max(1, t // 2), t + 1, n).astype(np.int32), 'seq_lens', False)
               if g.r() < 0.3 else '')
    opt.append(g.init((g.rng.standard_normal((nd, n, hs)) * 0.1).astype(dt), 'h0') if g.r() < 0.4 else '')
    if kind == 'LSTM':
        opt.append(g.init((g.rng.standard_normal((nd, n, hs)) * 0.1).astype(dt), 'c0') if g.r() < 0.3 else '')
        opt.append(g.init(g.rng.uniform(-sd, sd, (nd, 3 * hs)).astype(dt), 'P') if g.r() < 0.1 else '')
    ins += opt
    want_y = g.r() < 0.8
    outs = [(dt, (t, nd, n, hs)) if want_y else None, (dt, (nd, n, hs))]
    if kind == 'LSTM' and g.r() < 0.2:
        outs.append((dt, (nd, n, hs)))
    res = g.op(kind, ins, outs, **attrs)
    y_h = res[1] if want_y else res[0]
    if not want_y:   # only the last state: [nd, N, H] -> [N, nd*H]
        y = g.transpose(y_h, (1, 0, 2))
        return g.reshape(y, (n, nd * hs))
    y = res[0]
    if len(g.outputs) < 2 and g.r() < 0.3:
        g.outputs.append(y_h)
    if nd == 1:
        y = g.squeeze(y, [1])
    else:
        y = g.reshape(g.transpose(y, (0, 2, 1, 3)), (t, n, 2 * hs))
    return g.transpose(y, (1, 0, 2))


def b_conv1d(g, x):
    """wav2vec/ConvBERT: Transpose to [N, D, T], (causal Pad), Conv1d, act, Transpose back."""
    n, t, d = x.shape
    if x.dtype == F64:
        raise Reject('f64 conv')
    k = g.ch([3, 5])
    y = g.transpose(x, (0, 2, 1))
    dw = g.r() < 0.4
    if g.r() < 0.3:   # causal: left pad k-1
        y = g.op1('Pad', [y, g.i64([0, 0, k - 1, 0, 0, 0])], y.dtype, (n, d, t + k - 1))
        y = conv(g, y, d, k, group=d if dw else 1, pad_style='none')
    else:
        y = conv(g, y, d, k, group=d if dw else 1, pad_style=g.ch(['sym', 'same_upper']))
    y = act(g, y, g.ch(['relu', 'silu', 'gelu_erf'] if x.dtype != F64 else ['relu']))
    y = g.transpose(y, (0, 2, 1))
    return g.binary('Add', x, y) if y.shape == x.shape else y


def b_glu(g, x):
    d = x.shape[-1]
    y = linear(g, x, 2 * d)
    a, b = g.split(y, -1, [d, d])
    return g.binary('Mul', a, g.unary('Sigmoid', b))


def b_cls_token(g, x):
    """ViT: cls [1,1,D] Expand to [N,1,D] via Shape, Concat on tokens, add positions."""
    n, t, d = x.shape
    cls = g.init((g.rng.standard_normal((1, 1, d)) * 0.02).astype(x.dtype), 'cls')
    if g.r() < 0.5:
        shp = g.op1('Concat', [g.dim_of(x, 0), g.i64([1, d])], 'int64', [3], axis=0)
    else:
        shp = g.i64([n, 1, d])
    c = g.op1('Expand', [cls, shp], x.dtype, (n, 1, d))
    y = g.op1('Concat', [c, x], x.dtype, (n, t + 1, d), axis=1)
    pos = g.init((g.rng.standard_normal((1, t + 1, d)) * 0.02).astype(x.dtype), 'pos')
    return g.binary('Add', y, pos)


def b_positions(g, x):
    """HF: position_ids = Range(0, seq_len) from Shape, Gather from a table, Add."""
    n, t, d = x.shape
    s = g.op1('Shape', [x], 'int64', [3])
    tl = g.op1('Gather', [s, g.i64(1, scalar=True)], 'int64', [], axis=0)
    ids = g.op1('Range', [g.i64(0, scalar=True), tl, g.i64(1, scalar=True)], 'int64', [t])
    table = g.init((g.rng.standard_normal((t + g.ri(0, 8), d)) * 0.02).astype(x.dtype), 'pos_table')
    pe = g.op1('Gather', [table, ids], x.dtype, (t, d), axis=0)
    if g.r() < 0.5:
        pe = g.unsqueeze(pe, [0])
    return g.binary('Add', x, pe)


def b_cumsum(g, x):
    """Cumulative mean over tokens: CumSum / Range(1..T)."""
    n, t, d = x.shape
    attrs = {}
    if g.r() < 0.3:
        attrs['exclusive'] = 1
    if g.r() < 0.3:
        attrs['reverse'] = 1
    ax = g.i64(1, scalar=True) if g.r() < 0.5 else g.const(np.array(-2, np.int32), 'axis')
    y = g.op1('CumSum', [x, ax], x.dtype, x.shape, **attrs)
    cnt = g.init(np.arange(1, t + 1, dtype=x.dtype).reshape(t, 1), 'count', False)
    return g.binary('Div', y, cnt)


def b_where_mask(g, x):
    """masked_fill / leaky-by-Where: a comparison mask selects between x and another value."""
    dt = x.dtype
    cmp = g.ch(['Greater', 'Less', 'GreaterOrEqual', 'LessOrEqual', 'Equal'])
    thr = g.sc(round(float(g.rng.uniform(-0.5, 0.5)), 2) if cmp != 'Equal' else 0.0, dt)
    cond = g.op1(cmp, [x, thr], 'bool', x.shape)
    if g.r() < 0.3:
        cond = g.unary('Not', cond)
    other = g.binary('Mul', x, g.sc(0.1, dt)) if g.r() < 0.5 else g.sc(0.0, dt)
    return g.op1('Where', [cond, x, other] if g.r() < 0.5 else [cond, other, x], dt, x.shape)


def b_cast_chain(g, x):
    """Autocast leftovers: Cast to f16/f64/f32 and back, or float -> int64 -> float rounding."""
    dt = x.dtype
    u = g.r()
    if u < 0.5:
        other = g.ch([d for d in (F16, F32, F64) if d != dt])
        y = g.cast(x, other)
        if g.r() < 0.5:
            y = g.binary('Mul', y, g.sc(1.0, other))
        return g.cast(y, dt)
    if u < 0.75:
        y = g.cast(g.binary('Mul', x, g.sc(8.0, dt)), 'int64')
        return g.binary('Div', g.cast(y, dt), g.sc(8.0, dt))
    pos = g.op1('Greater', [x, g.sc(0.0, dt)], 'bool', x.shape)
    return g.binary('Mul', x, g.cast(pos, dt))


def b_topk_tap(g, x):
    """TopK along the last axis: values continue, indices (or ArgMax) become an output."""
    d = x.shape[-1]
    if g.r() < 0.5 or d < 4:
        am = g.op1('ArgMax', [x], 'int64', x.shape[:-1] + (1,), axis=-1) if g.r() < 0.5 else \
            g.op1('ArgMax', [x], 'int64', x.shape[:-1], axis=x.rank - 1, keepdims=0)
        if len(g.outputs) < 3:
            g.outputs.append(am)
        return g.unary('Softmax', x, axis=-1) if g.r() < 0.5 else act(g, x, 'relu')
    k = g.ri(2, d // 2)
    attrs = {} if g.r() < 0.5 else {'axis': -1}
    if g.opset >= 11 and g.r() < 0.4:
        attrs['largest'] = g.ch([0, 1])
        attrs['sorted'] = 1
    vals, idx = g.op('TopK', [x, g.i64([k])], [(x.dtype, x.shape[:-1] + (k,)), ('int64', x.shape[:-1] + (k,))], **attrs)
    if len(g.outputs) < 3 and g.r() < 0.7:
        g.outputs.append(idx)
    else:
        f = g.cast(idx, x.dtype)
        vals = g.binary('Add', vals, g.binary('Mul', f, g.sc(0.01, x.dtype)))
    return vals


def b_seq_branch_concat(g, x):
    """Parallel dense branches concatenated on features, projected back."""
    n, t, d = x.shape
    br = [act(g, linear(g, x, g.ch([8, 16])), g.ch(['relu', 'tanh', 'sigmoid']), -1) for _ in range(g.ri(2, 3))]
    y = g.op1('Concat', br, x.dtype, x.shape[:-1] + (sum(b.shape[-1] for b in br),), axis=-1)
    return linear(g, y, d)


def b_seq_slice(g, x):
    """Token striding / cropping with Slice (steps, negative starts, INT64_MAX ends)."""
    n, t, d = x.shape
    if t < 4:
        raise Reject('short')
    u = g.r()
    if u < 0.4:
        return g.slice(x, [g.ri(0, 1)], [INT64_MAX], [1], [2])
    if u < 0.7:
        return g.slice(x, [-(t - g.ri(1, t // 2))], [INT64_MAX], [1])
    return g.slice(x, [t - 1], [-INT64_MAX - 1 if g.r() < 0.5 else -(t + 1)], [1], [-g.ri(1, 2)])


def b_seq_head(g, x):
    """Sequence to vector: mean pooling, CLS Gather, last token Slice; pooler dense+Tanh."""
    n, t, d = x.shape
    u = g.r()
    if u < 0.35:
        y = g.axes_op('ReduceMean', x, [1], 0)
    elif u < 0.65:
        y = g.op1('Gather', [x, g.i64(0, scalar=True)], x.dtype, (n, d), axis=1)
    elif u < 0.8:
        y = g.squeeze(g.slice(x, [-1], [INT64_MAX], [1]), [1])
    else:
        y = g.axes_op('ReduceMax', x, [1], 0)
    y = linear(g, y, g.ch([16, 32, d]), style=g.ch(['gemm', 'matmul']))
    return g.unary('Tanh', y) if g.r() < 0.6 else y


def b_seq_to_img(g, x):
    """SegFormer/Swin: tokens back to a feature map, [N,T,D] -> [N,D,h,w]."""
    n, t, d = x.shape
    if x.dtype == F64:
        raise Reject('f64')
    hs = [h for h in divisors(t, 2) if t // h >= 2]
    if not hs:
        raise Reject('prime T')
    h = g.ch(hs)
    y = g.reshape(g.transpose(x, (0, 2, 1)), (n, d, h, t // h))
    return conv_bn_act(g, y, g.ch([8, 16, 32]), 3, pad_style='sym')


# ---------------- vector blocks ----------------
def b_dense(g, x):
    y = linear(g, x, g.ch([8, 16, 32, 64]), style=g.ch(['gemm', 'gemm', 'matmul']))
    if g.r() < 0.3 and x.dtype != F64 or g.r() < 0.15:
        y = bn(g, y)
    return act(g, y, channel_axis=-1)


def b_dense_residual(g, x):
    d = x.shape[-1]
    y = act(g, linear(g, x, d), g.ch(['relu', 'tanh', 'gelu_tanh']))
    y = g.binary('Add', x, linear(g, y, d))
    return layernorm(g, y) if g.r() < 0.5 else y


def b_softmax_head(g, x):
    y = linear(g, x, g.ch([4, 10, 16]), style=g.ch(['gemm', 'matmul']))
    op = g.ch(['Softmax', 'Softmax', 'LogSoftmax'])
    return g.unary(op, y, **({'axis': -1} if g.r() < 0.3 else {}))


def b_vec_to_img(g, x):
    """DCGAN generator: dense, Reshape to [N,C,h,w], ConvTranspose-free upsample."""
    n, d = x.shape
    if x.dtype == F64:
        raise Reject('f64')
    c, h = g.ch([4, 8, 16]), g.ch([2, 4])
    y = linear(g, x, c * h * h, style=g.ch(['gemm', 'matmul']))
    y = g.reshape(y, (n, c, h, h))
    return act(g, y, 'relu')


def b_vec_to_seq(g, x):
    """Keras RepeatVector: Unsqueeze then Tile or Expand to T tokens."""
    n, d = x.shape
    t = g.ch([4, 6, 8])
    y = g.unsqueeze(x, [1])
    if g.r() < 0.5:
        return g.op1('Tile', [y, g.i64([1, t, 1])], x.dtype, (n, t, d))
    return g.op1('Expand', [y, g.shape_tensor(y, (n, t, d), special=False)], x.dtype, (n, t, d))


# name: (fn, ranks, dtypes, min_opset, weight)
BLOCKS = {
    'conv_bn_act': (b_conv_bn_act, (4,), NO_F64, 13, 3.0),
    'resnet_basic': (b_resnet_basic, (4,), NO_F64, 13, 1.5),
    'bottleneck': (b_bottleneck, (4,), NO_F64, 13, 1.0),
    'inverted_residual': (b_inverted_residual, (4,), NO_F64, 13, 1.5),
    'squeeze_excite': (b_squeeze_excite, (4,), NO_F64, 13, 1.0),
    'pool': (b_pool, (4,), ALL_F, 13, 1.2),
    'channel_shuffle': (b_channel_shuffle, (4,), ALL_F, 13, 0.7),
    'inception': (b_inception, (4,), NO_F64, 13, 0.8),
    'csp_split': (b_csp_split, (4,), NO_F64, 13, 0.8),
    'focus': (b_focus, (4,), NO_F64, 13, 0.5),
    'pad_conv': (b_pad_conv, (4,), NO_F64, 13, 0.7),
    'upsample': (b_upsample, (4,), NO_F64, 13, 1.0),
    'norm2d': (b_instance_group_norm, (4,), NO_F64, 13, 0.6),
    'img_to_seq': (b_img_to_seq, (4,), NO_F64, 13, 0.5),
    'img_head': (b_img_head, (4,), ALL_F, 13, 0.7),
    'ffn': (b_ffn, (3,), ALL_F, 13, 1.5),
    'swiglu': (b_swiglu, (3,), ALL_F, 13, 0.6),
    'attention': (b_attention, (3,), ALL_F, 13, 2.5),
    'skip_layernorm': (b_skip_layernorm, (3,), ALL_F, 13, 0.8),
    'recurrent': (b_recurrent, (3,), NO_F64, 13, 1.2),
    'conv1d': (b_conv1d, (3,), NO_F64, 13, 0.7),
    'glu': (b_glu, (3,), ALL_F, 13, 0.5),
    'cls_token': (b_cls_token, (3,), ALL_F, 13, 0.4),
    'positions': (b_positions, (3,), ALL_F, 13, 0.5),
    'cumsum': (b_cumsum, (3,), ALL_F, 13, 0.4),
    'seq_branch_concat': (b_seq_branch_concat, (3,), ALL_F, 13, 0.5),
    'seq_slice': (b_seq_slice, (3,), ALL_F, 13, 0.4),
    'seq_head': (b_seq_head, (3,), ALL_F, 13, 0.5),
    'seq_to_img': (b_seq_to_img, (3,), NO_F64, 13, 0.3),
    'dense': (b_dense, (2,), ALL_F, 13, 1.5),
    'dense_residual': (b_dense_residual, (2,), ALL_F, 13, 0.8),
    'softmax_head': (b_softmax_head, (2,), ALL_F, 13, 0.5),
    'vec_to_img': (b_vec_to_img, (2,), NO_F64, 13, 0.4),
    'vec_to_seq': (b_vec_to_seq, (2,), ALL_F, 13, 0.5),
    'where_mask': (b_where_mask, (2, 3, 4), ALL_F, 13, 0.3),
    'cast_chain': (b_cast_chain, (2, 3, 4), ALL_F, 13, 0.3),
    'topk_tap': (b_topk_tap, (2, 3), (F32, F64, F16), 13, 0.4),
}


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
