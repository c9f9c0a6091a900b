"""gen_blocks helpers: dtype tables and limits, the model under construction (G, T: tensors with
static shapes, op emitters, initializers) and the small patterns blocks share (activations, conv,
BatchNormalization, linear, LayerNorm, RMSNorm).  Used by gen_blocks.py and gen_blocks_blocks.py."""
import math

import numpy as np
from onnx import TensorProto, helper, numpy_helper

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
