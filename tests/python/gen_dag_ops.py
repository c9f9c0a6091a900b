"""gen_dag helpers: dtype tables and limits, the graph under construction (G, Tensor) and the
op builders for elementwise, logic, cast and shape/data-movement ops (Abs .. ReverseSequence).
Used by gen_dag.py (the script) and gen_dag_nn.py."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

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

# (op, dtype) pairs that onnxruntime's CPU EP has no kernel for (found empirically);
# such ops are simply not drawn for that model dtype / input dtype.
ORT_NO_KERNEL = set(
    [(o, 'float64') for o in ('Atan', 'AveragePool', 'Conv', 'ConvTranspose', 'Elu', 'Erf', 'Gelu',
                              'GlobalAveragePool', 'GlobalMaxPool', 'HardSigmoid', 'HardSwish', 'Hardmax',
                              'InstanceNormalization', 'LRN', 'LeakyRelu', 'LpPool', 'Mish', 'PRelu',
                              'Resize', 'Selu', 'Softplus', 'Softsign', 'ThresholdedRelu')] +
    [(o, d) for o in ('DepthToSpace', 'SpaceToDepth') for d in ('bool', 'int32', 'int64')])


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
