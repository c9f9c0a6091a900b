#!/usr/bin/python3
"""Regenerates a set of seed models exported by PyTorch's ONNX exporter (torch.onnx.export),
for campaigns seeded with models neither mutagraph nor its other generators wrote: random
compositions of torch.nn modules (convolutional, recurrent, attention and normalization blocks)
at random sizes and opsets, exported as a user exports a trained model. The models are not
committed.

Usage: /usr/bin/python3 tests/models/torch_seeds.py OUT_DIR [COUNT] [FIRST_SEED]

Needs Debian's python3-torch (`apt-get install python3-torch`; its CPU build works offline,
where PyPI's torch pulls gigabytes of CUDA wheels): run it with the system interpreter that
sees it. Each model is written as OUT_DIR/torch_<seed>.onnx with a line on stdout naming its
blocks, opset and input shapes; a seed whose export fails is reported and skipped.
"""
import os
import random
import sys

import torch
from torch import nn
import torch.nn.functional as F


def act(r):
    return r.choice([nn.ReLU(), nn.LeakyReLU(0.1), nn.SiLU(), nn.GELU(), nn.Hardswish(),
                     nn.Sigmoid(), nn.Tanh(), nn.ELU(), nn.Softplus(), nn.Hardtanh(-2, 2),
                     nn.ReLU6(), nn.Mish()])


class Residual(nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body

    def forward(self, x):
        return x + self.body(x)


class ConvBlock(nn.Module):
    """Conv, a norm, an activation; sometimes a residual, a pool or an upsample."""

    def __init__(self, r, c):
        super().__init__()
        k = r.choice([1, 3, 5])
        groups = r.choice([1, 1, c]) if c > 1 else 1
        norm = r.choice([nn.BatchNorm2d(c), nn.GroupNorm(1, c), nn.InstanceNorm2d(c, affine=True),
                         nn.Identity()])
        body = nn.Sequential(nn.Conv2d(c, c, k, padding=k // 2, groups=groups), norm, act(r))
        self.body = Residual(body) if r.random() < 0.5 else body
        self.tail = r.choice([nn.Identity(), nn.MaxPool2d(2, ceil_mode=r.random() < 0.3),
                              nn.AvgPool2d(3, 1, 1), nn.Upsample(scale_factor=2, mode="nearest"),
                              nn.Upsample(scale_factor=2, mode="bilinear",
                                          align_corners=r.random() < 0.5),
                              nn.ReflectionPad2d(1), nn.Dropout(0.2)])

    def forward(self, x):
        return self.tail(self.body(x))


class Cnn(nn.Module):
    def __init__(self, r):
        super().__init__()
        self.c = r.choice([3, 4, 8])
        w = r.choice([8, 16])
        self.stem = nn.Conv2d(self.c, w, 3, stride=r.choice([1, 2]), padding=1)
        self.blocks = nn.Sequential(*[ConvBlock(r, w) for _ in range(r.randint(1, 4))])
        self.se = r.random() < 0.4
        self.fc = nn.Linear(w, r.choice([4, 10]))
        self.head = r.choice(["softmax", "logsoftmax", "none", "shuffle"])
        self.size = r.choice([8, 16, 24])

    def forward(self, x):
        y = self.blocks(self.stem(x))
        if self.se:
            s = torch.sigmoid(F.adaptive_avg_pool2d(y, 1))
            y = y * s
        if self.head == "shuffle":
            y = F.pixel_shuffle(y, 2) if y.shape[1] % 4 == 0 else y
            return y.flatten(1).sum(-1, keepdim=True)
        z = self.fc(torch.flatten(F.adaptive_avg_pool2d(y, 1), 1))
        if self.head == "softmax":
            return torch.softmax(z, -1)
        if self.head == "logsoftmax":
            return torch.log_softmax(z, -1)
        return z

    def inputs(self, r):
        return (torch.randn(r.choice([1, 2]), self.c, self.size, self.size),)


class Seq(nn.Module):
    """A recurrent or attention encoder over (batch, time, features)."""

    def __init__(self, r):
        super().__init__()
        self.d = r.choice([8, 16, 32])
        self.t = r.choice([3, 5, 8])
        self.kind = r.choice(["lstm", "gru", "rnn", "attention", "encoder", "conv1d"])
        bi = r.random() < 0.4
        if self.kind == "lstm":
            self.core = nn.LSTM(self.d, self.d, num_layers=r.choice([1, 2]), batch_first=True,
                                bidirectional=bi)
        elif self.kind == "gru":
            self.core = nn.GRU(self.d, self.d, batch_first=True, bidirectional=bi)
        elif self.kind == "rnn":
            self.core = nn.RNN(self.d, self.d, batch_first=True,
                               nonlinearity=r.choice(["tanh", "relu"]))
        elif self.kind == "attention":
            self.core = nn.MultiheadAttention(self.d, r.choice([1, 2, 4]), batch_first=True)
        elif self.kind == "encoder":
            self.core = nn.TransformerEncoderLayer(self.d, r.choice([2, 4]), 2 * self.d,
                                                   dropout=0.0, activation=r.choice(["relu", "gelu"]),
                                                   batch_first=True,
                                                   norm_first=r.random() < 0.5)
        else:
            self.core = nn.Conv1d(self.d, self.d, 3, padding=1, dilation=1)
        width = self.d * (2 if bi and self.kind in ("lstm", "gru") else 1)
        self.norm = nn.LayerNorm(width) if r.random() < 0.6 else nn.Identity()
        self.out = nn.Linear(width, r.choice([2, 5]))
        self.pool = r.choice(["mean", "max", "last", "cumsum", "topk"])

    def forward(self, x):
        if self.kind in ("lstm", "gru", "rnn"):
            y, _ = self.core(x)
        elif self.kind == "attention":
            y, _ = self.core(x, x, x, need_weights=False)
        elif self.kind == "encoder":
            y = self.core(x)
        else:
            y = self.core(x.transpose(1, 2)).transpose(1, 2)
        y = self.out(self.norm(y))
        if self.pool == "mean":
            return y.mean(1)
        if self.pool == "max":
            return y.amax(1)
        if self.pool == "cumsum":
            return torch.cumsum(y, 1)
        if self.pool == "topk":
            return torch.topk(y, 2, dim=1).values
        return y[:, -1]

    def inputs(self, r):
        return (torch.randn(r.choice([1, 2, 3]), self.t, self.d),)


class Mlp(nn.Module):
    """Dense layers with gating, clamps and masks, as tabular and head models have."""

    def __init__(self, r):
        super().__init__()
        self.d = r.choice([4, 8, 16, 32])
        layers = []
        for _ in range(r.randint(1, 4)):
            layers += [nn.Linear(self.d, self.d), act(r)]
            if r.random() < 0.3:
                layers.append(nn.LayerNorm(self.d))
            if r.random() < 0.3:
                layers.append(nn.BatchNorm1d(self.d))
        self.body = nn.Sequential(*layers)
        self.gate = r.random() < 0.4
        self.clamp = r.random() < 0.3
        self.mask = r.random() < 0.3

    def forward(self, x):
        y = self.body(x)
        if self.gate:
            a, b = y.chunk(2, -1)
            y = torch.cat([a * torch.sigmoid(b), b], -1)
        if self.clamp:
            y = y.clamp(-1.5, 1.5)
        if self.mask:
            y = torch.where(x > 0, y, torch.zeros_like(y))
        return F.normalize(y, dim=-1) if self.d > 8 else y

    def inputs(self, r):
        return (torch.randn(r.choice([1, 2, 4]), self.d),)


def build(seed):
    r = random.Random(seed)
    torch.manual_seed(seed)
    m = r.choice([Cnn, Cnn, Seq, Seq, Mlp])(r).eval()
    return m, m.inputs(r), r.choice([11, 12, 13, 14, 15, 16, 17]), r.random() < 0.3


def main():
    out = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    first = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    os.makedirs(out, exist_ok=True)
    made = 0
    for seed in range(first, first + count):
        m, xs, opset, dynamic = build(seed)
        path = f"{out}/torch_{seed}.onnx"
        axes = {"x": {0: "batch"}} if dynamic else None
        # Traced with autograd on: under no_grad, torch's transformer layers take a fused fast
        # path that has no ONNX export.
        try:
            torch.onnx.export(m, xs, path, opset_version=opset, input_names=["x"],
                              output_names=["y"], dynamic_axes=axes,
                              do_constant_folding=seed % 2 == 0)
        except Exception as e:  # noqa: BLE001 (an exporter failure skips the seed)
            print(f"seed {seed}: export failed: {type(e).__name__}: {str(e)[:120]}")
            continue
        made += 1
        shapes = [tuple(x.shape) for x in xs]
        print(f"{path} {type(m).__name__} opset={opset} dynamic_batch={dynamic} inputs={shapes}")
    print(f"{made} of {count} models written to {out}")


if __name__ == "__main__":
    main()
