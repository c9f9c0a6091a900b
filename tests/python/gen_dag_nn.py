"""gen_dag helpers: the op builders for reductions, ArgMax/TopK, Conv/pools, normalizations,
Softmax, MatMul/Gemm/Einsum, Resize, Clip and Dropout, and the op registry (REG, WEIGHT,
available_ops, accepts) over all builders here and in gen_dag_ops.py."""
import math
from fractions import Fraction

import numpy as np

from gen_dag_ops import (
    A, B, F, FLOAT_DTS, INT_DTS, MAX_RANK, N, ORT_NO_KERNEL, UNARY, Reject, b_binary, b_cast, b_compare,
    b_concat, b_cumsum, b_d2s, b_expand, b_flatten, b_gather, b_gather_elements, b_isx, b_logic, b_pad,
    b_reshape, b_revseq, b_scatter_elements, b_slice, b_split, b_squeeze, b_tile, b_transpose, b_trilu,
    b_unary, b_unsqueeze, b_where, bcast, numel)


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
