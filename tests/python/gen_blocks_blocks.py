"""gen_blocks helpers: the block builders (image, sequence and vector blocks and the transitions
between them) and the BLOCKS table the generator draws from.  Used by gen_blocks.py."""
import math

import numpy as np

from gen_blocks_graph import (
    ALL_F, F16, F32, F64, INT64_MAX, MAX_ELEMS, NO_F64, Reject, act, act_names, bn, conv, conv_bn_act,
    divisors, layernorm, linear, numel, rmsnorm)


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
