#!/usr/bin/env python3
"""Hostile-input generator and runner for the `mutagraph` binary (issue 20).

Writes N hostile model inputs (deterministic from --seed) into a work directory, runs every
input through every command that takes a model, each in its own process group with a wall-clock
timeout, an address-space limit (RLIMIT_AS) and its peak resident memory measured (wait4), and
classifies each run:

  ok                     exit 0
  rejected               exit 1, stderr names the input (full path or file name)
  rejected-without-path  exit 1, the message does not say which file          (defect)
  panic                  exit 101, or a panic located in this workspace's code (defect)
  signal                 killed by a signal it did not get from us (abort, segv) (defect)
  timeout                still running at the time limit                      (defect)
  over-memory            peak RSS above --rss-limit (2 GiB)                   (defect)
  leaked-process         processes of its group still alive after it exited   (defect)
  other-exit             any other exit code (2: usage error, ...)            (defect)
  backend-panic          exit 0/1 with a panic inside a dependency's code (a worker's backend
                         panicked and the tool reported it): a finding, not a defect

Commands run on every input: inspect, inspect --json, convert to .onnx and to .onnxtxt, reduce,
coverage, run --backends reference, minimize --max-checks 5 --backends reference; on a sample:
run with the default backends (10 %), campaign --time 5s --quiet (50 inputs), inspect with its
stdout a closed pipe (5 %).

Usage:
  python3 tests/python/hostile.py --count 500 --seed 1 --out /tmp/hostile.json
  python3 tests/python/hostile.py --count 300 --campaign-sample 10 --fail-on-defect   # quick CI check
  nohup python3 tests/python/hostile.py --count 10000 --keep --workdir /tmp/h10k --out /tmp/h10k.json &
  python3 tests/python/hostile.py --workdir /tmp/h10k --reuse --commands inspect,run-ref  # same inputs
  python3 tests/python/hostile.py --workdir /tmp/h10k --reuse --bin target/debug/mutagraph  # overflow checks
  python3 tests/python/hostile.py --from-results /tmp/h10k.results.jsonl   # re-summarize, reclassify
  python3 tests/python/hostile.py --list-kinds

Writes OUT (JSON: counts per command and class, defects per input kind, up to 5 examples per defect
class with their stderr, the distinct signatures of each class) and OUT-STEM.results.jsonl (every
run), and prints the table. The binary under test is best a copy (`cp target/release/mutagraph
/tmp/`): others rebuilding target/ in the middle of a run would mix two versions.

Only Python 3 with `onnx` and `numpy`.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import random
import re
import resource
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

REPO = Path(__file__).resolve().parents[2]
TESTDATA = Path("/usr/share/libonnx-testdata/data")

# ----------------------------------------------------------------------------------------------
# protobuf wire format


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(num: int, wt: int) -> bytes:
    return varint((num << 3) | wt)


def f_varint(num: int, v: int) -> bytes:
    return tag(num, 0) + varint(v)


def f_bytes(num: int, payload: bytes | str) -> bytes:
    if isinstance(payload, str):
        payload = payload.encode()
    return tag(num, 2) + varint(len(payload)) + payload


def read_varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = 0
    n = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise ValueError("bad varint")
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


class Field:
    __slots__ = ("num", "wt", "val", "sub", "raw")

    def __init__(self, num, wt, val, sub=None):
        self.num, self.wt, self.val, self.sub, self.raw = num, wt, val, sub, None


def parse_msg(buf: bytes, depth: int = 0) -> list[Field]:
    """Parses `buf` as a message; length-delimited fields that parse as messages get `sub`."""
    fields = []
    i = 0
    while i < len(buf):
        key, i = read_varint(buf, i)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise ValueError("field 0")
        if wt == 0:
            v, i = read_varint(buf, i)
            fields.append(Field(num, 0, v))
        elif wt == 1:
            if i + 8 > len(buf):
                raise ValueError("short")
            fields.append(Field(num, 1, buf[i : i + 8]))
            i += 8
        elif wt == 5:
            if i + 4 > len(buf):
                raise ValueError("short")
            fields.append(Field(num, 5, buf[i : i + 4]))
            i += 4
        elif wt == 2:
            n, i = read_varint(buf, i)
            if i + n > len(buf):
                raise ValueError("short")
            payload = buf[i : i + n]
            i += n
            sub = None
            if depth < 48 and n >= 2:
                try:
                    sub = parse_msg(payload, depth + 1)
                except (ValueError, RecursionError):
                    sub = None
            fields.append(Field(num, 2, payload, sub))
        else:
            raise ValueError("group")
    return fields


def encode_msg(fields: list[Field]) -> bytes:
    out = bytearray()
    for f in fields:
        out += encode_field(f)
    return bytes(out)


def encode_field(f: Field) -> bytes:
    if f.raw is not None:
        return f.raw
    if f.wt == 0:
        return tag(f.num, 0) + varint(f.val)
    if f.wt in (1, 5):
        return tag(f.num, f.wt) + f.val
    payload = encode_msg(f.sub) if f.sub is not None else f.val
    return tag(f.num, 2) + varint(len(payload)) + payload


def all_fields(fields: list[Field], out=None, depth=0):
    """Every field of the tree with its depth."""
    if out is None:
        out = []
    for f in fields:
        out.append((f, depth))
        if f.sub is not None:
            all_fields(f.sub, out, depth + 1)
    return out


EXTREME_U64 = [
    0, 1, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**53 + 1, 2**62, 2**63 - 1, 2**63, 2**64 - 1,
    (-1) & (2**64 - 1), (-5) & (2**64 - 1), (-(2**31)) & (2**64 - 1), 10**12, 999, 12345,
]
HUGE_LENGTHS = [2**62, 2**63 - 1, 2**64 - 1, 2**31 - 1, 2**31, 2**32, 2**32 + 1, 10**12]


# ----------------------------------------------------------------------------------------------
# ONNX building helpers (no checks: the point is to build invalid models)

HOSTILE_INTS = [
    0, -1, -2, -5, 1, 2, 3, 7, 1000, 2**31 - 1, 2**31, -(2**31), 2**32, 10**12, 2**62,
    2**63 - 1, -(2**63),
]
HOSTILE_DIMS = [10**12, 2**62, 2**63 - 1, -1, -5, 0, 2**31, 2**32 + 1, 10**6, 46341, 65536]


def model_of(nodes, inputs, outputs, inits=(), opset=17, ir=8, name="g", value_info=(), **kw):
    g = helper.make_graph(list(nodes), name, list(inputs), list(outputs), list(inits),
                          value_info=list(value_info))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], **kw)
    m.ir_version = ir
    return m


def vi(name, elem=TensorProto.FLOAT, shape=(1, 4)):
    return helper.make_tensor_value_info(name, elem, list(shape) if shape is not None else None)


def raw_vi(name, elem, dims) -> onnx.ValueInfoProto:
    """A tensor value info with dims taken verbatim (ints or strings), no helper checks."""
    v = onnx.ValueInfoProto()
    v.name = name
    tt = v.type.tensor_type
    tt.elem_type = elem
    tt.shape.SetInParent()
    for d in dims:
        dim = tt.shape.dim.add()
        if isinstance(d, str):
            dim.dim_param = d
        else:
            dim.dim_value = clamp_i64(d)
    return v


def clamp_i64(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >= 1 << 63 else v


def f32_init(name, shape, rng):
    a = np.asarray(rng.standard_normal(shape), dtype=np.float32) if shape else np.float32(0.5)
    return numpy_helper.from_array(np.asarray(a, dtype=np.float32), name)


def i64_init(name, values):
    return numpy_helper.from_array(np.asarray(values, dtype=np.int64), name)


def set_attr_raw(node, name, value):
    """Adds an attribute, choosing the type from the Python value; ints clamp to int64."""
    a = node.attribute.add()
    a.name = name
    if isinstance(value, float):
        a.type = AttributeProto.FLOAT
        a.f = value
    elif isinstance(value, int):
        a.type = AttributeProto.INT
        a.i = clamp_i64(value)
    elif isinstance(value, (bytes, str)):
        a.type = AttributeProto.STRING
        a.s = value.encode() if isinstance(value, str) else value
    elif isinstance(value, list) and all(isinstance(x, float) for x in value) and value:
        a.type = AttributeProto.FLOATS
        a.floats.extend(value)
    else:
        a.type = AttributeProto.INTS
        a.ints.extend(clamp_i64(x) for x in value)
    return a


# ----------------------------------------------------------------------------------------------
# The generator


class Ctx:
    """What generators share: base models (bytes), valid .onnxtxt texts, the binary."""

    def __init__(self, bin_path: str, workdir: Path, seed: int, nbase: int = 160):
        self.bin = bin_path
        self.workdir = workdir
        base_dir = workdir / "base"
        base_dir.mkdir(parents=True, exist_ok=True)
        self.bases: list[tuple[str, bytes]] = []
        zoo = base_dir / "zoo"
        if not zoo.is_dir() or not any(zoo.iterdir()):
            subprocess.run([bin_path, "zoo", "--out", str(zoo)], check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        for p in sorted(zoo.glob("*.onnx")):
            self.bases.append((f"zoo/{p.stem}", p.read_bytes()))
        suite = sorted(TESTDATA.glob("*/*/model.onnx")) if TESTDATA.is_dir() else []
        r = random.Random(f"bases:{seed}")
        for p in sorted(r.sample(suite, min(nbase, len(suite)))):
            try:
                if p.stat().st_size <= 4 << 20:
                    self.bases.append((f"suite/{p.parent.name}", p.read_bytes()))
            except OSError:
                pass
        if not self.bases:
            self.bases.append(("builtin/relu", model_of(
                [helper.make_node("Relu", ["x"], ["y"])], [vi("x")], [vi("y")]
            ).SerializeToString()))
        # valid texts: the binary converts a sample of the bases
        self.texts: list[tuple[str, str]] = []
        tdir = base_dir / "text"
        tdir.mkdir(exist_ok=True)
        for i, (name, data) in enumerate(self.bases[:: max(1, len(self.bases) // 48)]):
            src = tdir / f"b{i}.onnx"
            dst = tdir / f"b{i}.onnxtxt"
            if not dst.exists():
                src.write_bytes(data)
                try:
                    subprocess.run([bin_path, "convert", str(src), str(dst)], timeout=60,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                except subprocess.TimeoutExpired:
                    pass
            if dst.exists():
                self.texts.append((name, dst.read_text(errors="replace")))
        if not self.texts:
            self.texts.append(("builtin", '<ir_version: 8, opset_import: ["" : 17]>\n'
                               'g (float[1,4] x) => (float[1,4] y) {\n  y = Relu(x)\n}\n'))

    def base(self, rng: random.Random) -> tuple[str, bytes]:
        return rng.choice(self.bases)

    def base_model(self, rng: random.Random) -> tuple[str, onnx.ModelProto]:
        for _ in range(10):
            name, data = self.base(rng)
            try:
                m = onnx.ModelProto()
                m.ParseFromString(data)
                return name, m
            except Exception:
                continue
        return "builtin/relu", model_of([helper.make_node("Relu", ["x"], ["y"])],
                                         [vi("x")], [vi("y")])


class Out:
    """One generated input: `write` puts it at a path; `ext` is its file extension."""

    def __init__(self, kind: str, detail: str, data: bytes | None = None, ext: str = ".onnx",
                 special=None, side: dict | None = None):
        self.kind, self.detail, self.data, self.ext = kind, detail, data, ext
        self.special = special  # callable(path) creating a non-regular input
        self.side = side or {}  # extra files: relative name -> bytes


def ser(m: onnx.ModelProto) -> bytes:
    return m.SerializeToString()


# ---- byte level


def g_empty(ctx, rng):
    return Out("empty", "0 bytes", b"", ext=rng.choice([".onnx", ".onnxtxt"]))


def g_random_bytes(ctx, rng):
    n = rng.choice([1, 2, 7, 64, 1000, rng.randrange(1, 65536), 1 << 20])
    return Out("random-bytes", f"{n} bytes", rng.randbytes(n))


def g_random_proto(ctx, rng):
    """Random but well-formed wire-format fields, often with ModelProto's field numbers."""
    def msg(depth):
        out = bytearray()
        for _ in range(rng.randrange(1, 8)):
            num = rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 14, 20, 25, rng.randrange(1, 1 << 29)])
            wt = rng.choice([0, 0, 2, 2, 2, 1, 5])
            if wt == 0:
                out += f_varint(num, rng.choice(EXTREME_U64 + [rng.randrange(1 << 64)]))
            elif wt == 1:
                out += tag(num, 1) + rng.randbytes(8)
            elif wt == 5:
                out += tag(num, 5) + rng.randbytes(4)
            else:
                payload = msg(depth + 1) if depth < 6 and rng.random() < 0.6 else rng.randbytes(rng.randrange(0, 40))
                out += f_bytes(num, payload)
        return bytes(out)
    return Out("random-proto", "random fields", msg(0))


def g_truncated(ctx, rng):
    name, data = ctx.base(rng)
    cut = rng.choice([1, 2, len(data) // 2, len(data) - 1, rng.randrange(0, max(1, len(data)))])
    return Out("truncated", f"{name} cut at {cut}/{len(data)}", data[:cut])


def g_bitflip(ctx, rng):
    name, data = ctx.base(rng)
    b = bytearray(data)
    k = rng.choice([1, 1, 2, 4, 16, 64])
    for _ in range(k):
        if not b:
            break
        i = rng.randrange(len(b))
        if rng.random() < 0.7:
            b[i] ^= 1 << rng.randrange(8)
        else:
            b[i] = rng.choice([0, 0xFF, 0x7F, 0x80])
    return Out("bitflip", f"{name} {k} flips", bytes(b))


def g_splice(ctx, rng):
    name, data = ctx.base(rng)
    other_name, other = ctx.base(rng)
    b = bytearray(data)
    op = rng.choice(["delete", "dup", "insert", "splice", "repeat"])
    i = rng.randrange(len(b) + 1)
    j = min(len(b), i + rng.randrange(1, 4096))
    if op == "delete":
        del b[i:j]
    elif op == "dup":
        b[i:i] = b[i:j]
    elif op == "insert":
        b[i:i] = rng.randbytes(rng.randrange(1, 64))
    elif op == "splice":
        k = rng.randrange(len(other) + 1)
        b = b[:i] + other[k:]
    else:
        b = b * rng.choice([2, 3, 16])
    return Out("splice", f"{name} {op} at {i}", bytes(b))


def g_huge_sparse_file(ctx, rng):
    """A sparse file over (or at) the 1 GiB model size limit, starting with a valid model."""
    name, data = ctx.base(rng)
    size = rng.choice([(1 << 30) - 4096, (1 << 30) + 1, 3 << 30])

    def make(path):
        with open(path, "wb") as f:
            f.write(data)
            f.truncate(size)
    return Out("huge-sparse-file", f"{name} padded with zeros to {size} bytes", special=make)


# ---- protobuf level


def proto_tree(ctx, rng):
    for _ in range(10):
        name, data = ctx.base(rng)
        try:
            return name, parse_msg(data)
        except (ValueError, RecursionError):
            continue
    return "none", []


def pick_field(tree, rng, pred=lambda f: True):
    fs = [f for f, d in all_fields(tree) if pred(f)]
    if not fs:
        return None
    # deeper fields are more numerous; pick uniformly, sometimes only among shallow ones
    if rng.random() < 0.3:
        shallow = [f for f, d in all_fields(tree) if d <= 2 and pred(f)]
        if shallow:
            return rng.choice(shallow)
    return rng.choice(fs)


def g_proto_wiretype(ctx, rng):
    name, tree = proto_tree(ctx, rng)
    f = pick_field(tree, rng)
    if f is None:
        return g_random_proto(ctx, rng)
    new = rng.choice([w for w in (0, 1, 2, 3, 4, 5, 6, 7) if w != f.wt])
    body = encode_field(f)
    # keep the old payload bytes after the new key: misaligned parsing from here on
    _, k = read_varint(body, 0)
    f.raw = tag(f.num, new) + body[k:]
    return Out("proto-wiretype", f"{name} field {f.num} wire type {f.wt}->{new}", encode_msg(tree))


def g_proto_huge_len(ctx, rng):
    name, tree = proto_tree(ctx, rng)
    f = pick_field(tree, rng, lambda f: f.wt == 2)
    if f is None:
        return g_random_proto(ctx, rng)
    payload = encode_msg(f.sub) if f.sub is not None else f.val
    n = rng.choice(HUGE_LENGTHS + [len(payload) + 1, len(payload) + 1000])
    f.raw = tag(f.num, 2) + varint(n) + payload
    return Out("proto-huge-len", f"{name} field {f.num} length {len(payload)}->{n}", encode_msg(tree))


def g_proto_varint(ctx, rng):
    name, tree = proto_tree(ctx, rng)
    f = pick_field(tree, rng, lambda f: f.wt == 0)
    if f is None:
        return g_random_proto(ctx, rng)
    old = f.val
    f.val = rng.choice(EXTREME_U64)
    if rng.random() < 0.15:  # over-long (11-byte) varint: invalid encoding
        f.raw = tag(f.num, 0) + b"\xff" * 10 + b"\x01"
    return Out("proto-varint", f"{name} field {f.num} {old}->{f.val}", encode_msg(tree))


def g_proto_structure(ctx, rng):
    """Duplicate, delete, renumber or reorder fields (type confusion between messages)."""
    name, tree = proto_tree(ctx, rng)
    containers = [f.sub for f, d in all_fields(tree) if f.sub] + [tree]
    c = rng.choice(containers)
    if not c:
        return g_random_proto(ctx, rng)
    i = rng.randrange(len(c))
    op = rng.choice(["dup", "dup-many", "delete", "renumber", "shuffle", "move"])
    if op == "dup":
        c.insert(i, c[i])
    elif op == "dup-many":
        c.extend([c[i]] * rng.choice([2, 100, 5000]))
    elif op == "delete":
        del c[i]
    elif op == "renumber":
        c[i] = Field(rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 20, 25]),
                     c[i].wt, c[i].val, c[i].sub)
    elif op == "shuffle":
        rng.shuffle(c)
    else:  # move a subtree somewhere else (e.g. a TensorProto where a GraphProto goes)
        other = rng.choice(containers)
        moved = Field(c[i].num, c[i].wt, c[i].val)
        moved.raw = encode_field(c[i])  # a snapshot: no cycles in the tree
        other.append(moved)
    return Out("proto-structure", f"{name} {op}", encode_msg(tree))


def deep_nest_bytes(depth: int, kind: str) -> bytes:
    """Wire-level nesting `depth` deep, built inside out (no recursion)."""
    if kind == "graph-attr":
        # ModelProto.graph -> GraphProto.node -> NodeProto.attribute -> AttributeProto.g -> ...
        inner = b""
        for _ in range(depth):
            attr = f_bytes(1, "then_branch") + f_varint(20, 5) + f_bytes(6, inner)
            node = f_bytes(1, "c") + f_bytes(2, "y") + f_bytes(4, "If") + f_bytes(5, attr)
            inner = f_bytes(1, node) + f_bytes(2, "g")
        return f_varint(1, 8) + f_bytes(8, f_varint(2, 17)) + f_bytes(7, inner)
    if kind == "type-seq":
        # TypeProto.sequence_type(4).elem_type(1) -> TypeProto ... nested
        t = f_bytes(1, f_varint(1, 1))
        for _ in range(depth):
            t = f_bytes(4, f_bytes(1, t))
        v = f_bytes(1, "x") + f_bytes(2, t)
        g = f_bytes(11, v) + f_bytes(12, v) + f_bytes(2, "g")
        return f_varint(1, 8) + f_bytes(8, f_varint(2, 17)) + f_bytes(7, g)
    # same field number nested in itself (field 7 = graph)
    inner = b""
    for _ in range(depth):
        inner = f_bytes(7, inner)
    return inner


def g_proto_deep_nest(ctx, rng):
    depth = rng.choice([64, 101, 200, 1000, 10000, 100000])
    kind = rng.choice(["graph-attr", "type-seq", "same-field"])
    return Out("proto-deep-nest", f"{kind} depth {depth}", deep_nest_bytes(depth, kind))


# ---- ONNX level


def is_rep(fd) -> bool:
    r = getattr(fd, "is_repeated", None)
    if r is not None:
        return bool(r)
    return fd.label == fd.LABEL_REPEATED


def g_onnx_field(ctx, rng):
    """Set a random field of a random message of a real model to an extreme value."""
    name, m = ctx.base_model(rng)
    msgs = []

    def walk(msg):
        msgs.append(msg)
        for fd, val in msg.ListFields():
            if fd.type == fd.TYPE_MESSAGE:
                if is_rep(fd):
                    for x in val[:200]:
                        walk(x)
                else:
                    walk(val)
    walk(m)
    msg = rng.choice(msgs)
    fd = rng.choice(msg.DESCRIPTOR.fields)
    what = f"{msg.DESCRIPTOR.name}.{fd.name}"
    try:
        rep = is_rep(fd)
        if fd.type == fd.TYPE_MESSAGE:
            if rep:
                op = rng.choice(["clear", "add-empty", "dup"])
                cont = getattr(msg, fd.name)
                if op == "clear":
                    del cont[:]
                elif op == "add-empty" or not len(cont):
                    cont.add()
                else:
                    cont.add().CopyFrom(cont[rng.randrange(len(cont))])
            else:
                op = rng.choice(["clear", "empty"])
                msg.ClearField(fd.name)
                if op == "empty":
                    getattr(msg, fd.name).SetInParent()
            what += f" {op}"
        else:
            if fd.type in (fd.TYPE_INT64, fd.TYPE_SINT64, fd.TYPE_SFIXED64):
                vals = [clamp_i64(v) for v in HOSTILE_INTS + HOSTILE_DIMS]
            elif fd.type in (fd.TYPE_INT32, fd.TYPE_SINT32, fd.TYPE_SFIXED32, fd.TYPE_ENUM):
                vals = [0, -1, 1, 12345, 2**31 - 1, -(2**31), 17, 23, 999]
            elif fd.type in (fd.TYPE_UINT64, fd.TYPE_FIXED64):
                vals = [0, 2**64 - 1, 2**63, 10**12]
            elif fd.type in (fd.TYPE_UINT32, fd.TYPE_FIXED32):
                vals = [0, 2**32 - 1]
            elif fd.type in (fd.TYPE_FLOAT, fd.TYPE_DOUBLE):
                vals = [float("nan"), float("inf"), -float("inf"), -0.0, 3.4e38, 1e-45]
            elif fd.type == fd.TYPE_BOOL:
                vals = [True, False]
            else:
                vals = ["", "x" * 100000, "\x00", "é", "../../etc/passwd", "/dev/zero",
                        " ", "a b", "ai.onnx.ml", "com.microsoft", "\u202e", "%s%n"]
                if fd.type == fd.TYPE_BYTES:
                    vals = [v.encode() for v in vals] + [b"\xff\xfe", os.urandom(3)]
            v = rng.choice(vals)
            if rep:
                cont = getattr(msg, fd.name)
                op = rng.choice(["append", "clear", "set"])
                if op == "clear":
                    del cont[:]
                elif op == "set" and len(cont):
                    cont[rng.randrange(len(cont))] = v
                else:
                    cont.append(v)
                what += f" {op} {v!r:.40}"
            else:
                setattr(msg, fd.name, v)
                what += f" = {v!r:.40}"
        return Out("onnx-field", f"{name} {what}", ser(m))
    except Exception as e:  # closed enums etc.
        return Out("onnx-field", f"{name} {what} (failed: {type(e).__name__})", ser(m))


def g_huge_dims(ctx, rng):
    d = [rng.choice(HOSTILE_DIMS) for _ in range(rng.randrange(1, 5))]
    elem = rng.choice([TensorProto.FLOAT, TensorProto.INT64, TensorProto.DOUBLE, TensorProto.UINT8])
    op = rng.choice(["Relu", "Identity", "Neg", "Abs"]) if elem != TensorProto.UINT8 else "Identity"
    where = rng.choice(["input", "output", "both", "value_info", "rank-1000"])
    if where == "rank-1000":
        d = [1] * rng.choice([1000, 100000])
    x = raw_vi("x", elem, d if where != "output" else [1, 4])
    y = raw_vi("y", elem, d if where in ("output", "both", "rank-1000") else [1, 4])
    if where == "output":
        x = raw_vi("x", elem, [1, 4])
    nodes = [helper.make_node(op, ["x"], ["t"]), helper.make_node("Identity", ["t"], ["y"])]
    vis = [raw_vi("t", elem, d)] if where == "value_info" else []
    m = model_of(nodes, [x], [y], value_info=vis)
    return Out("huge-dims", f"{where} dims {d[:6]}", ser(m))


def g_real_huge_dims(ctx, rng):
    """Declared input dims of a real model set to hostile sizes: whatever inference, solving or
    checking walks per element or per window shows up as a hang."""
    name, m = ctx.base_model(rng)
    changed = []
    for v in m.graph.input:
        if not v.type.HasField("tensor_type") or not v.type.tensor_type.HasField("shape"):
            continue
        for j, d in enumerate(v.type.tensor_type.shape.dim):
            if rng.random() < 0.5:
                nd = rng.choice(HOSTILE_DIMS + [2**31, 2**34, 10**9])
                d.dim_value = clamp_i64(nd)
                changed.append(f"{v.name}[{j}]={nd}")
    if rng.random() < 0.3:  # the outputs too: they disagree with inference now
        for v in m.graph.output:
            for d in v.type.tensor_type.shape.dim:
                d.dim_value = clamp_i64(rng.choice(HOSTILE_DIMS))
    return Out("real-huge-dims", f"{name} {' '.join(changed)[:200]}", ser(m))


def g_bad_elem_type(ctx, rng):
    et = rng.choice([0, 12345, -1, 17, 18, 19, 20, 21, 22, 23, 24, 25, 8, 14, 15, 2**31 - 1])
    where = rng.choice(["input", "initializer", "cast-to", "constant"])
    if where == "input":
        m = model_of([helper.make_node("Identity", ["x"], ["y"])], [raw_vi("x", et, [1, 4])],
                     [raw_vi("y", et, [1, 4])])
    elif where == "initializer":
        t = TensorProto()
        t.name = "w"
        t.data_type = et
        t.dims.extend([2, 2])
        t.raw_data = bytes(16)
        m = model_of([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", shape=[2, 2])],
                     [vi("y", shape=[2, 2])], [t])
    elif where == "cast-to":
        n = helper.make_node("Cast", ["x"], ["y"])
        set_attr_raw(n, "to", et)
        m = model_of([n], [vi("x")], [raw_vi("y", et, [1, 4])])
    else:
        t = TensorProto()
        t.data_type = et
        t.dims.extend([4])
        t.raw_data = bytes(4)
        n = helper.make_node("Constant", [], ["y"], value=t)
        m = model_of([n], [], [raw_vi("y", et, [4])])
    return Out("bad-elem-type", f"{where} elem_type {et}", ser(m))


def g_unknown_op(ctx, rng):
    op = rng.choice(["FooBar", "", "relu", "Relu ", "If", "Loop", "Scan", "Custom_" + "x" * 300,
                     "Conv\x00", "Softmax"])
    dom = rng.choice(["", "", "ai.onnx", "com.microsoft", "unknown.domain", "ai.onnx.ml"])
    nodes = [helper.make_node(op, ["x"], ["y"], domain=dom)]
    m = model_of(nodes, [vi("x")], [vi("y")])
    if dom not in ("", "ai.onnx") and rng.random() < 0.5:
        m.opset_import.append(helper.make_opsetid(dom, rng.choice([1, 0, 9999])))
    return Out("unknown-op", f"op {op!r:.30} domain {dom!r}", ser(m))


def g_bad_version(ctx, rng):
    name, m = ctx.base_model(rng)
    what = rng.choice(["ir", "opset", "no-opset", "dup-opset", "ir-opset"])
    if what in ("ir", "ir-opset"):
        m.ir_version = clamp_i64(rng.choice([999, 0, -1, 1, 2, 2**62, 2**63 - 1, 11, 12]))
    if what in ("opset", "ir-opset"):
        v = rng.choice([0, 9999, -1, 1, 2**62, 5, 6, 22, 23, 24, 25, 30])
        if m.opset_import:
            m.opset_import[0].version = clamp_i64(v)
    if what == "no-opset":
        del m.opset_import[:]
    if what == "dup-opset":
        m.opset_import.append(helper.make_opsetid("", rng.choice([1, 9999, 13])))
    return Out("bad-version", f"{name} {what} ir={m.ir_version} "
               f"opsets={[(o.domain, o.version) for o in m.opset_import]}", ser(m))


def g_graph_cycle(ctx, rng):
    kind = rng.choice(["two", "self", "long", "through-output", "in-base"])
    if kind == "in-base":
        name, m = ctx.base_model(rng)
        g = m.graph
        if len(g.node) >= 2 and g.node[0].input and g.node[-1].output:
            g.node[0].input[0] = g.node[-1].output[0]
            return Out("graph-cycle", f"{name} first node reads the last node's output", ser(m))
        kind = "two"
    if kind == "self":
        nodes = [helper.make_node("Add", ["x", "a"], ["a"]), helper.make_node("Identity", ["a"], ["y"])]
    elif kind == "two":
        nodes = [helper.make_node("Add", ["x", "b"], ["a"]), helper.make_node("Relu", ["a"], ["b"]),
                 helper.make_node("Identity", ["b"], ["y"])]
    elif kind == "through-output":
        nodes = [helper.make_node("Add", ["x", "y"], ["y"])]
    else:
        n = 1000
        nodes = [helper.make_node("Add", ["x", f"v{n - 1}"], ["v0"])]
        nodes += [helper.make_node("Relu", [f"v{i - 1}"], [f"v{i}"]) for i in range(1, n)]
        nodes.append(helper.make_node("Identity", [f"v{n - 1}"], ["y"]))
    return Out("graph-cycle", kind, ser(model_of(nodes, [vi("x")], [vi("y")])))


def g_duplicate_names(ctx, rng):
    kind = rng.choice(["two-producers", "output-twice", "input-is-output", "init-shadows-input",
                       "dup-input", "dup-init", "node-output-twice", "dup-node-names"])
    inputs, outputs, inits = [vi("x")], [vi("y")], []
    if kind == "two-producers":
        nodes = [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["y"])]
    elif kind == "output-twice":
        nodes = [helper.make_node("Relu", ["x"], ["y"])]
        outputs = [vi("y"), vi("y")]
    elif kind == "input-is-output":
        nodes = [helper.make_node("Relu", ["x"], ["x"])]
        outputs = [vi("x")]
    elif kind == "init-shadows-input":
        nodes = [helper.make_node("Relu", ["x"], ["y"])]
        inits = [numpy_helper.from_array(np.ones((2, 3), np.float32), "x")]
    elif kind == "dup-input":
        nodes = [helper.make_node("Add", ["x", "x"], ["y"])]
        inputs = [vi("x"), vi("x", TensorProto.INT64, [7])]
    elif kind == "dup-init":
        nodes = [helper.make_node("Add", ["x", "w"], ["y"])]
        inits = [numpy_helper.from_array(np.ones((1, 4), np.float32), "w"),
                 numpy_helper.from_array(np.ones((3,), np.int64), "w")]
    elif kind == "node-output-twice":
        nodes = [helper.make_node("Split", ["x"], ["y", "y"], axis=1, num_outputs=2)]
        return Out("duplicate-names", kind, ser(model_of(nodes, inputs, outputs, opset=18)))
    else:
        nodes = [helper.make_node("Relu", ["x"], ["t"], name="n"),
                 helper.make_node("Relu", ["t"], ["y"], name="n")]
    return Out("duplicate-names", kind, ser(model_of(nodes, inputs, outputs, inits)))


def g_undefined_input(ctx, rng):
    kind = rng.choice(["node-input", "graph-output", "in-base", "subgraph-capture", "optional-empty"])
    if kind == "in-base":
        name, m = ctx.base_model(rng)
        if m.graph.node:
            n = rng.choice(m.graph.node)
            if n.input:
                n.input[rng.randrange(len(n.input))] = "nobody_defines_this"
            else:
                n.input.append("nobody_defines_this")
        return Out("undefined-input", f"{name} node input undefined", ser(m))
    if kind == "node-input":
        nodes = [helper.make_node("Add", ["x", "ghost"], ["y"])]
    elif kind == "graph-output":
        nodes = [helper.make_node("Relu", ["x"], ["t"])]
        return Out("undefined-input", kind, ser(model_of(nodes, [vi("x")], [vi("ghost")])))
    elif kind == "subgraph-capture":
        then_g = helper.make_graph([helper.make_node("Identity", ["ghost"], ["o"])], "then", [], [vi("o")])
        else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["o2"])], "else", [], [vi("o2")])
        nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
        return Out("undefined-input", kind, ser(model_of(
            nodes, [vi("x"), vi("c", TensorProto.BOOL, [])], [vi("y")])))
    else:
        nodes = [helper.make_node("Relu", [""], ["y"])]
    return Out("undefined-input", kind, ser(model_of(nodes, [vi("x")], [vi("y")])))


def g_empty_names(ctx, rng):
    kind = rng.choice(["output", "input", "graph-input", "all", "in-base"])
    if kind == "in-base":
        name, m = ctx.base_model(rng)
        for n in m.graph.node:
            if rng.random() < 0.3 and n.output:
                n.output[0] = ""
        return Out("empty-names", f"{name} some node outputs empty", ser(m))
    if kind == "output":
        m = model_of([helper.make_node("Relu", ["x"], [""]), helper.make_node("Neg", [""], ["y"])],
                     [vi("x")], [vi("y")])
    elif kind == "input":
        m = model_of([helper.make_node("Relu", [""], ["y"])], [vi("")], [vi("y")])
    elif kind == "graph-input":
        m = model_of([helper.make_node("Relu", ["x"], ["y"])], [vi(""), vi("x")], [vi("")])
    else:
        m = model_of([helper.make_node("Relu", [""], [""])], [vi("")], [vi("")], name="")
    return Out("empty-names", kind, ser(m))


def g_long_names(ctx, rng):
    n = rng.choice([10000, 1 << 20, 4 << 20])
    long = rng.choice(["x", "é", "\u202e", "a/b", "\n"]) * n
    where = rng.choice(["value", "node", "graph", "op", "domain", "doc", "attr"])
    x = long if where == "value" else "x"
    node = helper.make_node("Relu", [x], ["y"])
    if where == "node":
        node.name = long
    if where == "op":
        node.op_type = long
    if where == "domain":
        node.domain = long
    if where == "doc":
        node.doc_string = long
    if where == "attr":
        set_attr_raw(node, long, 1)
    m = model_of([node], [vi(x)], [vi("y")], name=long if where == "graph" else "g")
    return Out("long-names", f"{where} name of {len(long.encode())} bytes", ser(m))


def chain_model(n: int, op: str) -> onnx.ModelProto:
    nodes = []
    prev = "x"
    for i in range(n):
        cur = f"v{i}" if i < n - 1 else "y"
        nodes.append(onnx.NodeProto(op_type=op, input=[prev], output=[cur]))
        prev = cur
    return model_of(nodes, [vi("x")], [vi("y")])


def g_chain(ctx, rng):
    n = rng.choice([10000, 100000])
    op = rng.choice(["Relu", "Identity", "Neg"])
    return Out("chain", f"{n} {op} nodes", ser(chain_model(n, op)))


def g_chain_100k(ctx, rng):
    return Out("chain-100k", "100000 Relu nodes", ser(chain_model(100000, "Relu")))


def deep_if_bytes(depth: int) -> bytes:
    """If inside If `depth` deep (then-branch nests, else-branch is an Identity), built as
    wire bytes inside out: the onnx package's serializer recurses."""
    fvi = lambda nm: f_bytes(1, nm) + f_bytes(2, f_bytes(1, f_varint(1, 1) + f_bytes(2, f_bytes(1, f_varint(1, 4)))))
    leaf = f_bytes(1, f_bytes(1, "x") + f_bytes(2, "o") + f_bytes(4, "Identity")) + f_bytes(2, "leaf") + f_bytes(12, fvi("o"))
    else_g = f_bytes(1, f_bytes(1, "x") + f_bytes(2, "o") + f_bytes(4, "Identity")) + f_bytes(2, "else") + f_bytes(12, fvi("o"))
    inner = leaf
    for i in range(depth):
        node = (f_bytes(1, "c") + f_bytes(2, "o") + f_bytes(4, "If")
                + f_bytes(5, f_bytes(1, "then_branch") + f_varint(20, 5) + f_bytes(6, inner))
                + f_bytes(5, f_bytes(1, "else_branch") + f_varint(20, 5) + f_bytes(6, else_g)))
        inner = f_bytes(1, node) + f_bytes(2, f"g{i}") + f_bytes(12, fvi("o"))
    cond = f_bytes(1, "c") + f_bytes(2, f_bytes(1, f_varint(1, 9) + f_bytes(2, b"")))
    # the top graph: inputs c, x; output o
    top = inner + f_bytes(11, cond) + f_bytes(11, fvi("x"))
    return f_varint(1, 8) + f_bytes(8, f_varint(2, 17)) + f_bytes(7, top)


def g_deep_if(ctx, rng):
    depth = rng.choice([10, 100, 1000])
    return Out("deep-if", f"If nested {depth} deep", deep_if_bytes(depth))


def g_deep_if_10k(ctx, rng):
    return Out("deep-if-10k", "If nested 10000 deep", deep_if_bytes(10000))


def g_raw_data_mismatch(ctx, rng):
    dims = rng.choice([[2, 3], [4], [1, 4], [], [0], [3, 0, 2]])
    et = rng.choice([TensorProto.FLOAT, TensorProto.INT64, TensorProto.DOUBLE, TensorProto.FLOAT16,
                     TensorProto.BOOL, TensorProto.INT4, TensorProto.STRING])
    n = int(np.prod(dims)) if dims else 1
    t = TensorProto()
    t.name = "w"
    t.data_type = et
    t.dims.extend(dims)
    how = rng.choice(["short", "long", "empty", "odd", "typed-field-wrong-count", "both"])
    if how == "short":
        t.raw_data = bytes(max(0, n * 4 - 3))
    elif how == "long":
        t.raw_data = bytes(n * 8 + 1000)
    elif how == "empty":
        t.raw_data = b""
    elif how == "odd":
        t.raw_data = b"\x01" * 7
    elif how == "typed-field-wrong-count":
        t.float_data.extend([1.0] * (n + 3))
        t.int64_data.extend([1] * max(0, n - 1))
    else:
        t.raw_data = bytes(n * 4)
        t.float_data.extend([1.0] * n)
    use = rng.choice(["initializer", "constant"])
    if use == "constant":
        t.ClearField("name")
        m = model_of([helper.make_node("Constant", [], ["y"], value=t)], [], [raw_vi("y", et, dims)])
    else:
        m = model_of([helper.make_node("Identity", ["w"], ["y"])], [], [raw_vi("y", et, dims)], [t])
    return Out("raw-data-mismatch", f"{use} {TensorProto.DataType.Name(et) if et in TensorProto.DataType.values() else et} dims {dims} {how}", ser(m))


def g_dims_overflow(ctx, rng):
    dims = rng.choice([[2**40, 2**40, 2**40], [2**32, 2**32], [2**63 - 1, 2], [2**62, 4],
                       [-1, -1], [-(2**63), 1], [10**12, 10**12], [1] * 10 + [2**31] * 3,
                       [65536, 65536, 65536, 65536], [0, 2**63 - 1, 2**63 - 1]])
    t = TensorProto()
    t.name = "w"
    t.data_type = rng.choice([TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL, TensorProto.STRING])
    t.dims.extend(clamp_i64(d) for d in dims)
    data = rng.choice(["none", "raw-small", "float-data"])
    if data == "raw-small":
        t.raw_data = bytes(16)
    elif data == "float-data":
        t.float_data.extend([1.0, 2.0])
    use = rng.choice(["initializer", "constant", "sparse"])
    if use == "constant":
        t.ClearField("name")
        m = model_of([helper.make_node("Constant", [], ["y"], value=t)], [], [vi("y", t.data_type, None)])
    elif use == "sparse":
        vals = numpy_helper.from_array(np.ones(2, np.float32), "w")
        idx = numpy_helper.from_array(np.array([0, 2**62], np.int64), "")
        sp = helper.make_sparse_tensor(vals, idx, [clamp_i64(d) for d in dims])
        m = model_of([helper.make_node("Identity", ["w"], ["y"])], [], [vi("y", TensorProto.FLOAT, None)])
        m.graph.sparse_initializer.append(sp)
    else:
        m = model_of([helper.make_node("Identity", ["w"], ["y"])], [], [vi("y", t.data_type, None)], [t])
    return Out("dims-overflow", f"{use} dims {dims} data {data}", ser(m))


def g_external_data(ctx, rng):
    loc = rng.choice(["missing.bin", "/dev/zero", "/dev/urandom", "../../etc/passwd", "/etc/passwd",
                      "side/ok.bin", "side/ok.bin", "side", "", "/", "/proc/self/mem",
                      "side/../../../../../etc/shadow", "\x00", "side/ok.bin\x00.x", "C:\\x.bin",
                      "/dev/stdin", "/proc/self/fd/0"])
    offset = rng.choice([None, 0, 4, -1, 2**62, 2**63 - 1, 10**12, 3])
    length = rng.choice([None, 16, 0, -1, 2**62, 10**12, 2**31, 15, 1 << 33])
    dims = rng.choice([[2, 2], [4], [2**20, 1024], [10**12]])
    t = TensorProto()
    t.name = "w"
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL if rng.random() < 0.9 else TensorProto.DEFAULT
    for k, v in (("location", loc), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key = k
            e.value = str(v)
    if rng.random() < 0.1:
        e = t.external_data.add()
        e.key = rng.choice(["location", "checksum", "unknown_key", ""])
        e.value = rng.choice(["other.bin", "x" * 5000, ""])
    if rng.random() < 0.1:
        t.raw_data = bytes(16)
    m = model_of([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", shape=[2, 2])],
                 [vi("y", shape=[2, 2])], [t])
    side = {"side/ok.bin": bytes(64)}
    return Out("external-data", f"location {loc!r} offset {offset} length {length} dims {dims}",
               ser(m), side=side)


CONV_LIKE = {
    "Conv": ([1, 3, 8, 8], [("W", [4, 3, 3, 3])], ["kernel_shape", "strides", "pads", "dilations", "group", "auto_pad"]),
    "ConvTranspose": ([1, 3, 8, 8], [("W", [3, 4, 3, 3])], ["kernel_shape", "strides", "pads", "dilations", "group", "output_padding", "output_shape", "auto_pad"]),
    "MaxPool": ([1, 3, 8, 8], [], ["kernel_shape", "strides", "pads", "dilations", "ceil_mode", "storage_order", "auto_pad"]),
    "AveragePool": ([1, 3, 8, 8], [], ["kernel_shape", "strides", "pads", "ceil_mode", "count_include_pad", "auto_pad"]),
    "LpPool": ([1, 3, 8, 8], [], ["kernel_shape", "strides", "pads", "p"]),
}
AXIS_OPS = {
    "Softmax": "axis", "LogSoftmax": "axis", "Flatten": "axis", "Concat": "axis", "Gather": "axis",
    "ArgMax": "axis", "ArgMin": "axis", "Hardmax": "axis", "LpNormalization": "axis",
    "CumSum": None, "Split": "axis", "DepthToSpace": "blocksize", "SpaceToDepth": "blocksize",
    "LRN": "size", "Cast": "to", "Transpose": "perm", "ReduceSum": "axes", "ReduceMean": "axes",
    "Squeeze": "axes", "Unsqueeze": "axes", "GatherElements": "axis", "TopK": "axis",
    "OneHot": "axis", "Compress": "axis", "ReverseSequence": "batch_axis", "Trilu": "upper",
    "Gemm": "transA", "LayerNormalization": "axis", "InstanceNormalization": "epsilon",
    "Einsum": "equation", "MatMul": None,
}


def hostile_list(rng, maxlen=5):
    return [rng.choice(HOSTILE_INTS) for _ in range(rng.randrange(0, maxlen))]


def g_bad_attrs(ctx, rng):
    op = rng.choice(list(CONV_LIKE) * 3 + list(AXIS_OPS))
    opset = rng.choice([11, 13, 17, 18])
    inits = []
    if op in CONV_LIKE:
        xs, ws, names = CONV_LIKE[op]
        node = helper.make_node(op, ["x"] + [w for w, _ in ws], ["y"])
        inits = [f32_init(w, s, np.random.default_rng(rng.randrange(1 << 30))) for w, s in ws]
        chosen = rng.sample(names, rng.randrange(1, len(names) + 1))
        for a in chosen:
            if a == "auto_pad":
                set_attr_raw(node, a, rng.choice(["NOTSET", "SAME_UPPER", "VALID", "GARBAGE", ""]))
            elif a in ("group", "ceil_mode", "storage_order", "count_include_pad", "p"):
                set_attr_raw(node, a, rng.choice(HOSTILE_INTS))
            else:
                set_attr_raw(node, a, hostile_list(rng, 9))
        desc = ", ".join(f"{a.name}={helper.get_attribute_value(a)!r:.60}" for a in node.attribute)
        m = model_of([node], [vi("x", shape=xs)], [vi("y", shape=None)], inits, opset=opset)
        return Out("bad-attrs", f"{op} {desc}", ser(m))
    attr = AXIS_OPS[op]
    ins = ["x"]
    x_shape = [2, 3, 4, 4]
    if op in ("Concat",):
        ins = ["x", "x"]
    if op in ("Gather", "GatherElements"):
        inits.append(i64_init("i", [[rng.choice(HOSTILE_INTS)]] if op == "GatherElements" else [rng.choice(HOSTILE_INTS)]))
        ins = ["x", "i"]
    if op == "CumSum":
        inits.append(i64_init("ax", rng.choice(HOSTILE_INTS)))
        ins = ["x", "ax"]
    if op == "TopK":
        inits.append(i64_init("k", [rng.choice(HOSTILE_INTS)]))
        ins = ["x", "k"]
    if op == "OneHot":
        inits += [i64_init("d", [rng.choice(HOSTILE_INTS)]), i64_init("v", [0, 1])]
        ins = ["i", "d", "v"]
        inits.append(i64_init("i", [1, 2]))
    if op == "Compress":
        inits.append(numpy_helper.from_array(np.array([True, False]), "c"))
        ins = ["x", "c"]
    if op == "ReverseSequence":
        inits.append(i64_init("s", [rng.choice(HOSTILE_INTS)] * 4))
        ins = ["x", "s"]
    if op == "Trilu":
        inits.append(i64_init("k", rng.choice(HOSTILE_INTS)))
        ins = ["x", "k"]
    if op in ("Gemm", "MatMul"):
        x_shape = [4, 4]
        inits.append(f32_init("b", [4, 4], np.random.default_rng(1)))
        ins = ["x", "b"]
    if op == "LayerNormalization":
        inits.append(f32_init("s", [4], np.random.default_rng(1)))
        ins = ["x", "s"]
    if op == "InstanceNormalization":
        inits += [f32_init("s", [3], np.random.default_rng(1)), f32_init("bb", [3], np.random.default_rng(2))]
        ins = ["x", "s", "bb"]
    if op in ("Squeeze", "Unsqueeze", "ReduceSum", "ReduceMean") and opset >= 13 and rng.random() < 0.7:
        inits.append(i64_init("axes", hostile_list(rng, 4)))
        ins = ["x", "axes"]
        attr = None
    if op == "Split" and opset >= 13:
        inits.append(i64_init("sp", hostile_list(rng, 4)))
        ins = ["x", "sp"]
    outs = ["y", "y2"] if op in ("TopK",) else ["y"]
    node = helper.make_node(op, ins, outs)
    if attr in ("perm", "axes"):
        set_attr_raw(node, attr, hostile_list(rng, 6))
    elif attr == "equation":
        set_attr_raw(node, attr, rng.choice(["", "->", "a" * 100 + "->", "ij,jk", "...,...->...",
                                             "i,i,i->", "ab->ba" * 50, "\xff"]))
    elif attr == "epsilon":
        set_attr_raw(node, attr, rng.choice([float("nan"), -1.0, float("inf"), 0.0]))
    elif attr is not None:
        set_attr_raw(node, attr, rng.choice(HOSTILE_INTS))
    if rng.random() < 0.2:  # type confusion: the attribute has a value of another type
        a = node.attribute.add()
        a.name = rng.choice(["axis", "perm", "to", "kernel_shape", "then_branch"])
        a.type = rng.choice([AttributeProto.GRAPH, AttributeProto.FLOATS, AttributeProto.STRING,
                             AttributeProto.TENSOR, AttributeProto.UNDEFINED])
        a.i = 3
    if rng.random() < 0.1:  # duplicate attribute names
        node.attribute.extend(list(node.attribute))
    desc = ", ".join(f"{a.name}={a.i if a.type == AttributeProto.INT else list(a.ints)[:6] if a.type == AttributeProto.INTS else a.type}" for a in node.attribute)
    m = model_of([node], [vi("x", shape=x_shape)], [vi(o, shape=None) for o in outs], inits, opset=opset)
    return Out("bad-attrs", f"{op} opset {opset} {desc} inits {[i.name for i in inits]}", ser(m))


def g_alloc_bomb(ctx, rng):
    """Small models whose run would allocate absurd amounts of memory."""
    kind = rng.choice(["ConstantOfShape", "Expand", "Tile", "Range", "Resize", "Pad", "Reshape",
                       "MatMul-declared", "Upsample", "Conv-dilated", "OneHot", "Loop-trip"])
    big = rng.choice([10**5, 10**6, 10**9, 2**31, 2**40])
    x = [vi("x", shape=[1, 4])]
    y = [vi("y", shape=None)]
    if kind == "ConstantOfShape":
        nodes = [helper.make_node("ConstantOfShape", ["s"], ["y"])]
        return Out("alloc-bomb", f"{kind} {big}", ser(model_of(nodes, [], y, [i64_init("s", [big, big])])))
    if kind == "Expand":
        nodes = [helper.make_node("Expand", ["x", "s"], ["y"])]
        return Out("alloc-bomb", f"{kind} {big}", ser(model_of(nodes, x, y, [i64_init("s", [big, 4])])))
    if kind == "Tile":
        nodes = [helper.make_node("Tile", ["x", "r"], ["y"])]
        return Out("alloc-bomb", f"{kind} {big}", ser(model_of(nodes, x, y, [i64_init("r", [big, big])])))
    if kind == "Range":
        nodes = [helper.make_node("Range", ["a", "b", "d"], ["y"])]
        return Out("alloc-bomb", f"{kind} {big}", ser(model_of(nodes, [], y, [
            numpy_helper.from_array(np.array(0, np.int64), "a"),
            numpy_helper.from_array(np.array(min(big * big, 2**63 - 1), np.int64), "b"),
            numpy_helper.from_array(np.array(1, np.int64), "d")])))
    if kind == "Resize":
        nodes = [helper.make_node("Resize", ["x", "", "sc"], ["y"])]
        return Out("alloc-bomb", f"{kind} {big}", ser(model_of(nodes, x, y, [
            numpy_helper.from_array(np.array([1, float(big)], np.float32), "sc")])))
    if kind == "Upsample":
        nodes = [helper.make_node("Upsample", ["x", "sc"], ["y"])]
        return Out("alloc-bomb", f"{kind} {big}", ser(model_of(nodes, x, y, [
            numpy_helper.from_array(np.array([float(big), float(big)], np.float32), "sc")], opset=9)))
    if kind == "Pad":
        nodes = [helper.make_node("Pad", ["x", "p"], ["y"])]
        return Out("alloc-bomb", f"{kind} {big}", ser(model_of(nodes, x, y, [i64_init("p", [big, big, 0, big])])))
    if kind == "Reshape":
        nodes = [helper.make_node("Reshape", ["x", "s"], ["y"])]
        return Out("alloc-bomb", f"{kind} {big}", ser(model_of(nodes, x, y, [i64_init("s", [big, -1, 0])])))
    if kind == "MatMul-declared":
        d = min(big, 10**6)
        nodes = [helper.make_node("MatMul", ["a", "b"], ["y"])]
        return Out("alloc-bomb", f"{kind} {d}", ser(model_of(
            nodes, [vi("a", shape=[d, d]), vi("b", shape=[d, d])], y)))
    if kind == "Conv-dilated":
        nodes = [helper.make_node("Conv", ["x4", "w"], ["y"], dilations=[big, big], pads=[big] * 4)]
        return Out("alloc-bomb", f"{kind} {big}", ser(model_of(
            nodes, [vi("x4", shape=[1, 1, 4, 4])], y, [f32_init("w", [1, 1, 2, 2], np.random.default_rng(0))])))
    if kind == "OneHot":
        nodes = [helper.make_node("OneHot", ["i", "d", "v"], ["y"])]
        return Out("alloc-bomb", f"{kind} {big}", ser(model_of(nodes, [], y, [
            i64_init("i", [1, 2, 3]), i64_init("d", [big]), numpy_helper.from_array(np.array([0, 1], np.float32), "v")])))
    # Loop with a huge trip count that concatenates a scan output
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Identity", ["xo"], ["scan"])],
        "body", [vi("i", TensorProto.INT64, []), vi("c_in", TensorProto.BOOL, []), vi("xo", shape=[1, 4])],
        [vi("c_out", TensorProto.BOOL, []), vi("xo2", shape=[1, 4]), vi("scan", shape=[1, 4])])
    body.node.append(helper.make_node("Identity", ["xo"], ["xo2"]))
    nodes = [helper.make_node("Loop", ["M", "cond", "x"], ["xf", "y"], body=body)]
    return Out("alloc-bomb", f"Loop trip {big}", ser(model_of(nodes, x, [vi("xf", shape=[1, 4]), vi("y", shape=None)], [
        i64_init("M", big), numpy_helper.from_array(np.array(True), "cond")])))


def g_functions(ctx, rng):
    """Model-local functions: self-recursive, mutually recursive, shadowing ops, bad bodies."""
    kind = rng.choice(["self", "mutual", "shadow-op", "missing-body", "arity", "dup"])
    dom = "local"
    if kind == "self":
        fns = [helper.make_function(dom, "F", ["a"], ["b"], [helper.make_node("F", ["a"], ["b"], domain=dom)],
                                    [helper.make_opsetid("", 17), helper.make_opsetid(dom, 1)])]
    elif kind == "mutual":
        fns = [helper.make_function(dom, "F", ["a"], ["b"], [helper.make_node("G", ["a"], ["b"], domain=dom)],
                                    [helper.make_opsetid("", 17), helper.make_opsetid(dom, 1)]),
               helper.make_function(dom, "G", ["a"], ["b"], [helper.make_node("F", ["a"], ["b"], domain=dom)],
                                    [helper.make_opsetid("", 17), helper.make_opsetid(dom, 1)])]
    elif kind == "shadow-op":
        dom = ""
        fns = [helper.make_function("", "Relu", ["a"], ["b"], [helper.make_node("Neg", ["a"], ["b"])],
                                    [helper.make_opsetid("", 17)])]
    elif kind == "missing-body":
        fns = [helper.make_function(dom, "F", ["a"], ["b"], [], [helper.make_opsetid("", 17)])]
    elif kind == "arity":
        fns = [helper.make_function(dom, "F", ["a", "a2", "a3"], ["b", "b2"],
                                    [helper.make_node("Relu", ["a"], ["b"])], [helper.make_opsetid("", 17)])]
    else:
        f = helper.make_function(dom, "F", ["a"], ["b"], [helper.make_node("Relu", ["a"], ["b"])],
                                 [helper.make_opsetid("", 17)])
        fns = [f, f]
    op = "Relu" if kind == "shadow-op" else "F"
    node = helper.make_node(op, ["x"], ["y"], domain=dom)
    m = model_of([node], [vi("x")], [vi("y")])
    if dom:
        m.opset_import.append(helper.make_opsetid(dom, 1))
    m.functions.extend(fns)
    return Out("functions", kind, ser(m))


def g_weird_types(ctx, rng):
    kind = rng.choice(["sequence", "map", "optional", "sparse", "string", "no-type", "no-shape",
                       "sparse-bad-indices", "training-info", "nested-seq"])
    if kind == "sequence":
        t = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
        inp = helper.make_value_info("x", t)
        m = model_of([helper.make_node("SequenceLength", ["x"], ["y"])], [inp], [vi("y", TensorProto.INT64, [])])
    elif kind == "nested-seq":
        d = rng.choice([5, 50, 500])
        return Out("weird-types", f"{kind} depth {d}", deep_nest_bytes(d, "type-seq"))
    elif kind == "map":
        t = helper.make_map_type_proto(TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
        m = model_of([helper.make_node("Identity", ["x"], ["y"])], [helper.make_value_info("x", t)],
                     [helper.make_value_info("y", t)])
    elif kind == "optional":
        t = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
        m = model_of([helper.make_node("OptionalGetElement", ["x"], ["y"])], [helper.make_value_info("x", t)],
                     [vi("y", shape=[2])], opset=18)
    elif kind in ("sparse", "sparse-bad-indices"):
        vals = numpy_helper.from_array(np.ones(3, np.float32), "w")
        idx = [0, 1, 2] if kind == "sparse" else rng.choice([[5, 5, 5], [-1, 0, 1], [2**62, 0, 1], [0, 1]])
        sp = helper.make_sparse_tensor(vals, numpy_helper.from_array(np.array(idx, np.int64), ""), [4])
        m = model_of([helper.make_node("Identity", ["w"], ["y"])], [], [vi("y", shape=[4])])
        m.graph.sparse_initializer.append(sp)
    elif kind == "string":
        t = helper.make_tensor("w", TensorProto.STRING, [2], [b"a" * 100000, b"\xff\x00"])
        m = model_of([helper.make_node("Identity", ["w"], ["y"])], [], [vi("y", TensorProto.STRING, [2])], [t])
    elif kind == "no-type":
        v = onnx.ValueInfoProto(name="x")
        m = model_of([helper.make_node("Relu", ["x"], ["y"])], [v], [onnx.ValueInfoProto(name="y")])
    elif kind == "no-shape":
        m = model_of([helper.make_node("Relu", ["x"], ["y"])], [vi("x", shape=None)], [vi("y", shape=None)])
    else:
        name, m = ctx.base_model(rng)
        ti = m.training_info.add()
        ti.algorithm.CopyFrom(m.graph)
        ti.update_binding.add(key="ghost", value="nothing")
        return Out("weird-types", f"{name} {kind}", ser(m))
    return Out("weird-types", kind, ser(m))


def g_subgraph_mess(ctx, rng):
    kind = rng.choice(["if-no-branches", "if-int-branch", "loop-bad-arity", "scan-no-body",
                       "branch-wrong-outputs", "graphs-attr", "branch-shadows-outer"])
    c = vi("c", TensorProto.BOOL, [])
    x = vi("x")
    if kind == "if-no-branches":
        nodes = [helper.make_node("If", ["c"], ["y"])]
    elif kind == "if-int-branch":
        nodes = [helper.make_node("If", ["c"], ["y"], then_branch=3, else_branch=[1, 2])]
    elif kind == "loop-bad-arity":
        body = helper.make_graph([helper.make_node("Relu", ["x"], ["o"])], "b", [], [vi("o")])
        nodes = [helper.make_node("Loop", ["", "c", "x"], ["y"], body=body)]
    elif kind == "scan-no-body":
        nodes = [helper.make_node("Scan", ["x"], ["y"], num_scan_inputs=1)]
    elif kind == "branch-wrong-outputs":
        g1 = helper.make_graph([helper.make_node("Relu", ["x"], ["o"])], "t", [], [vi("o")])
        g2 = helper.make_graph([helper.make_node("Split", ["x"], ["o1", "o2"], axis=1, num_outputs=2)],
                               "e", [], [vi("o1"), vi("o2", TensorProto.INT64, [99])])
        nodes = [helper.make_node("If", ["c"], ["y"], then_branch=g1, else_branch=g2)]
    elif kind == "graphs-attr":
        g1 = helper.make_graph([helper.make_node("Relu", ["x"], ["o"])], "t", [], [vi("o")])
        n = helper.make_node("If", ["c"], ["y"])
        a = n.attribute.add()
        a.name = "then_branch"
        a.type = AttributeProto.GRAPHS
        a.graphs.extend([g1, g1])
        nodes = [n]
    else:
        g1 = helper.make_graph([helper.make_node("Relu", ["x"], ["x"])], "t", [vi("x")], [vi("x")])
        nodes = [helper.make_node("If", ["c"], ["y"], then_branch=g1, else_branch=g1)]
    return Out("subgraph-mess", kind, ser(model_of(nodes, [c, x], [vi("y")], opset=18)))


def g_valid(ctx, rng):
    name, data = ctx.base(rng)
    return Out("valid", name, data)


def g_ext_swap(ctx, rng):
    """Protobuf named .onnxtxt, text named .onnx."""
    if rng.random() < 0.5:
        name, data = ctx.base(rng)
        return Out("ext-swap", f"{name} protobuf as .onnxtxt", data, ext=".onnxtxt")
    name, text = rng.choice(ctx.texts)
    return Out("ext-swap", f"{name} text as .onnx", text.encode(), ext=".onnx")


# ---- text syntax

TEXT_TOKENS = ["<", ">", "(", ")", "[", "]", "{", "}", ",", "=", ":", ";", "=>", "float", "int64",
               "99999999999999999999999", "-1", "-5", "1e999", "nan", "inf", "0x", '"', "'", "\\",
               "\x00", "é", "\u202e", "seq(", "map(", "optional(", "sparse_tensor(", "opset_import:",
               "ir_version: 999", "domain:", "...", "@", "#", "//", "/*", "\n", "\t", "float[1000000000000]",
               "float[9223372036854775807,9223372036854775807]", "[-1]", "bfloat16", "string", "x" * 100000,
               "<ir_version: 8>", "{", "Relu", "If", "then_branch = g () => () {}", "kernel_shape = [0]",
               "strides = [0, 0]", "group = 0", "axis = -9223372036854775808", "axes = []", "a = ", "=",
               "float[]", "{1,2,3}", "{}", "\"\\u0000\"", "\"\\x\"", "t = float[2] {1.0}", "<>"]


def g_txt_valid(ctx, rng):
    name, text = rng.choice(ctx.texts)
    return Out("txt-valid", name, text.encode(), ext=".onnxtxt")


def g_txt_mutated(ctx, rng):
    name, text = rng.choice(ctx.texts)
    s = text
    ops = []
    for _ in range(rng.choice([1, 1, 2, 3, 8])):
        op = rng.choice(["delete", "dup", "insert", "number", "truncate", "swap-lines", "bytes"])
        ops.append(op)
        i = rng.randrange(len(s) + 1)
        j = min(len(s), i + rng.randrange(1, 200))
        if op == "delete":
            s = s[:i] + s[j:]
        elif op == "dup":
            s = s[:i] + s[i:j] * rng.choice([2, 3, 1000]) + s[j:]
        elif op == "insert":
            s = s[:i] + rng.choice(TEXT_TOKENS) + s[i:]
        elif op == "number":
            nums = list(re.finditer(r"-?\d+(\.\d+)?(e-?\d+)?", s))
            if nums:
                mt = rng.choice(nums)
                s = s[: mt.start()] + rng.choice(["0", "-1", "-5", "1e999", "99999999999999999999999",
                                                  "9223372036854775807", "-9223372036854775808",
                                                  "18446744073709551616", "nan", "1e12", "4294967296"]) + s[mt.end():]
        elif op == "truncate":
            s = s[:i]
        elif op == "swap-lines":
            lines = s.split("\n")
            if len(lines) > 2:
                a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
                lines[a], lines[b] = lines[b], lines[a]
            s = "\n".join(lines)
    data = s.encode("utf-8", "surrogatepass")
    if "bytes" in ops:
        b = bytearray(data)
        for _ in range(rng.randrange(1, 8)):
            if b:
                b[rng.randrange(len(b))] = rng.choice([0, 0xFF, 0xC3, 0x80, 0xFE])
        data = bytes(b)
    return Out("txt-mutated", f"{name} {'+'.join(ops)}", data, ext=".onnxtxt")


def g_txt_garbage(ctx, rng):
    kind = rng.choice(["tokens", "random", "hostile-valid"])
    if kind == "tokens":
        data = " ".join(rng.choice(TEXT_TOKENS) for _ in range(rng.randrange(1, 400))).encode()
    elif kind == "random":
        data = rng.randbytes(rng.randrange(1, 5000))
    else:
        # syntactically plausible texts with hostile contents
        dims = ",".join(str(rng.choice(HOSTILE_DIMS)) for _ in range(rng.randrange(1, 4)))
        attr = rng.choice(["kernel_shape = [0, 0]", "strides = [0, 0]", "group = 0",
                           "pads = [-9223372036854775808, 1, 1, 1]", "dilations = [4611686018427387904, 1]",
                           "kernel_shape = [9223372036854775807, 9223372036854775807]"])
        op = rng.choice(["Conv", "MaxPool", "AveragePool", "Relu", "Foo"])
        ir = rng.choice([8, 999, 0, -1])
        ops = rng.choice([17, 0, 9999, -1])
        txt = (f'<ir_version: {ir}, opset_import: ["" : {ops}]>\n'
               f"g (float[{dims}] x, float[1,1,2,2] w) => (float[{dims}] y) {{\n"
               f"  y = {op} <{attr}> (x, w)\n}}\n")
        data = txt.encode()
    return Out("txt-garbage", kind, data, ext=".onnxtxt")


def g_txt_deep(ctx, rng):
    depth = rng.choice([1000, 100000, 1000000])
    kind = rng.choice(["parens", "brackets", "angles", "braces", "seq-type", "graph-attr"])
    if kind == "parens":
        s = "g (" * 1 + "(" * depth
    elif kind == "brackets":
        s = '<ir_version: 8, opset_import: ["" : 17]>\ng (float' + "[" * depth + "] x) => () {}\n"
    elif kind == "angles":
        s = "<" * depth
    elif kind == "braces":
        s = '<ir_version: 8, opset_import: ["" : 17]>\ng () => (float[1] y) {\n y = Constant <value = float[1] ' + "{" * depth + "\n}\n"
    elif kind == "seq-type":
        d = min(depth, 100000)
        s = '<ir_version: 8, opset_import: ["" : 17]>\ng (' + "seq(" * d + "float[1]" + ")" * d + " x) => (" + "seq(" * d + "float[1]" + ")" * d + " y) {\n y = Identity(x)\n}\n"
    else:
        d = min(depth, 20000)
        s = '<ir_version: 8, opset_import: ["" : 17]>\ng (bool c, float[1] x) => (float[1] y) {\n'
        s += "y = If (c) <then_branch = g () => (float[1] y) {\n" * d
        s += "y = Identity(x)\n" + "}, else_branch = g () => (float[1] y) { y = Identity(x) }>\n" * d + "}\n"
    return Out("txt-deep", f"{kind} depth {depth}", s.encode(), ext=".onnxtxt")


# ---- filesystem oddities (few)


def special_symlink(target):
    return lambda path: os.symlink(target, path)


def g_symlink_dev_zero(ctx, rng):
    return Out("symlink-dev-zero", "-> /dev/zero", ext=rng.choice([".onnx", ".onnxtxt"]),
               special=special_symlink("/dev/zero"))


def g_symlink_dev_urandom(ctx, rng):
    return Out("symlink-dev-urandom", "-> /dev/urandom", ext=rng.choice([".onnx", ".onnxtxt"]),
               special=special_symlink("/dev/urandom"))


def g_symlink_other(ctx, rng):
    t = rng.choice(["/dev/null", "/dev/full", "SELF", "/nonexistent/target", "/proc/self/status", "/"])
    def make(path):
        os.symlink(path if t == "SELF" else t, path)
    return Out("symlink-other", f"-> {t}", special=make)


def g_fifo(ctx, rng):
    return Out("fifo", "named pipe, no writer", special=lambda p: os.mkfifo(p))


def g_directory(ctx, rng):
    kind = rng.choice(["empty", "with-model", "with-junk"])
    name, data = ctx.base(rng)

    def make(path):
        os.mkdir(path)
        if kind == "with-model":
            Path(path, "model.onnx").write_bytes(data)
        elif kind == "with-junk":
            Path(path, "junk.onnx").write_bytes(b"\xff" * 100)
    return Out("directory", kind, special=make)


def g_nonexistent(ctx, rng):
    return Out("nonexistent", "no such file", special=lambda p: None)


def g_no_read_perm(ctx, rng):
    name, data = ctx.base(rng)

    def make(path):
        Path(path).write_bytes(data)
        os.chmod(path, 0)
    note = " (root: readable anyway)" if os.geteuid() == 0 else ""
    return Out("no-read-perm", f"{name} mode 000{note}", special=make)


def g_weird_filename(ctx, rng):
    name, data = ctx.base(rng)
    # the suffix is appended by the writer; `special` receives the final name
    odd = rng.choice([b" spaced name", b"\xc3\xa9t\xc3\xa9", b"bad\xff\xfeutf8", b"new\nline", b"-dash",
                      b"tab\tname", b"\xe2\x80\xaertl", b"a" * 200, b"%s%n", b"quote\"'`$(x)"])

    def make(path):
        p = os.fsencode(path)
        d, b = os.path.split(p)
        target = os.path.join(d, odd + b"_" + b)
        with open(target, "wb") as f:
            f.write(data)
        return os.fsdecode(target)
    return Out("weird-filename", f"{name} named {odd!r}", special=make)


# kind -> (generator, weight) for the random mix
MIX = {
    "random-bytes": (g_random_bytes, 4), "random-proto": (g_random_proto, 4),
    "truncated": (g_truncated, 8), "bitflip": (g_bitflip, 10), "splice": (g_splice, 3),
    "proto-wiretype": (g_proto_wiretype, 5), "proto-huge-len": (g_proto_huge_len, 5),
    "proto-varint": (g_proto_varint, 5), "proto-structure": (g_proto_structure, 4),
    "onnx-field": (g_onnx_field, 10), "huge-dims": (g_huge_dims, 5), "real-huge-dims": (g_real_huge_dims, 4), "bad-elem-type": (g_bad_elem_type, 4),
    "unknown-op": (g_unknown_op, 3), "bad-version": (g_bad_version, 4), "graph-cycle": (g_graph_cycle, 3),
    "duplicate-names": (g_duplicate_names, 3), "undefined-input": (g_undefined_input, 3),
    "empty-names": (g_empty_names, 3), "long-names": (g_long_names, 1),
    "raw-data-mismatch": (g_raw_data_mismatch, 4), "dims-overflow": (g_dims_overflow, 3),
    "external-data": (g_external_data, 5), "bad-attrs": (g_bad_attrs, 8), "alloc-bomb": (g_alloc_bomb, 4),
    "functions": (g_functions, 2), "weird-types": (g_weird_types, 2), "subgraph-mess": (g_subgraph_mess, 3),
    "deep-if": (g_deep_if, 0.5), "valid": (g_valid, 2), "ext-swap": (g_ext_swap, 1),
    "txt-valid": (g_txt_valid, 3), "txt-mutated": (g_txt_mutated, 6), "txt-garbage": (g_txt_garbage, 2),
    "weird-filename": (g_weird_filename, 0.5),
}
# kind -> (generator, how many in 10 000 inputs; at least one whenever count >= 100)
FEW = {
    "empty": (g_empty, 6), "chain": (g_chain, 6), "chain-100k": (g_chain_100k, 3),
    "deep-if-10k": (g_deep_if_10k, 3), "proto-deep-nest": (g_proto_deep_nest, 12),
    "txt-deep": (g_txt_deep, 10), "huge-sparse-file": (g_huge_sparse_file, 3),
    "symlink-dev-zero": (g_symlink_dev_zero, 4), "symlink-dev-urandom": (g_symlink_dev_urandom, 4),
    "symlink-other": (g_symlink_other, 6), "fifo": (g_fifo, 2), "directory": (g_directory, 3),
    "nonexistent": (g_nonexistent, 3), "no-read-perm": (g_no_read_perm, 3),
}
ALL_KINDS = list(FEW) + list(MIX)
KIND_DOC = {
    "empty": "an empty file (.onnx or .onnxtxt)",
    "random-bytes": "1 byte to 1 MiB of random bytes",
    "random-proto": "well-formed wire-format fields with random numbers, types and payloads",
    "truncated": "a real model (zoo, ONNX backend test suite) cut at a random offset",
    "bitflip": "a real model with 1-64 flipped bits or overwritten bytes",
    "splice": "a real model with a span deleted, duplicated, inserted, spliced with another, or repeated",
    "huge-sparse-file": "a real model padded with zeros to 1 GiB - 4 KiB, 1 GiB + 1 or 3 GiB (sparse)",
    "proto-wiretype": "a field of a real model re-tagged with another (or an invalid) wire type",
    "proto-huge-len": "a length prefix of a real model set to 2^62, 2^64-1, 2^31, 10^12, len+1, ...",
    "proto-varint": "a varint of a real model set to an extreme value, or over-long (11 bytes)",
    "proto-structure": "fields duplicated (up to 5000 times), deleted, renumbered, shuffled, moved",
    "proto-deep-nest": "messages nested 64 to 100 000 deep: If-in-If, sequence types, one field in itself",
    "onnx-field": "any field of any message of a real model set to an extreme value, cleared or repeated",
    "huge-dims": "declared dims 10^12, 2^62, 2^63-1, -1, -5, 0, ... on inputs, outputs, value_info; rank 1000/100 000",
    "real-huge-dims": "a real model's declared input dims set to 10^12, 2^31, 2^34, 2^62, -5, 0, ...",
    "bad-elem-type": "element types 0, 12345, -1, float8/int4 ones on inputs, initializers, Cast, Constant",
    "unknown-op": "op types unknown or odd ('FooBar', '', 'relu', 'Conv\\0', 300 chars) in several domains",
    "bad-version": "ir_version 999/0/-1/2^62, opsets 0/9999/-1/2^62, no opset_import, duplicate ones",
    "graph-cycle": "cycles: a node reading itself, two nodes, 1000 nodes, through the output, in a real model",
    "duplicate-names": "two producers of a value, duplicate outputs/inputs/initializers/node names",
    "undefined-input": "node inputs, graph outputs and subgraph captures nothing defines",
    "empty-names": "empty value, input, output and graph names",
    "long-names": "names of 10 KB to 12 MB (value, node, graph, op, domain, doc string, attribute)",
    "chain": "chains of 10 000 or 100 000 unary nodes",
    "chain-100k": "a chain of 100 000 Relu nodes",
    "deep-if": "If nested in If 10, 100 or 1000 deep (valid ONNX otherwise)",
    "deep-if-10k": "If nested in If 10 000 deep",
    "raw-data-mismatch": "tensors whose raw_data / typed data length disagrees with their dims",
    "dims-overflow": "initializers, Constants and sparse tensors whose dims product overflows u64 or is negative",
    "external-data": "external data at missing files, /dev/zero, /dev/urandom, ../../etc/passwd, absolute, NUL, "
                     "directories, with huge or negative offset/length",
    "bad-attrs": "Conv/Pool/... and 30 other ops with hostile ints for axes, perm, pads, kernel_shape, strides 0, "
                 "group 0, blocksize, to, ...; attribute type confusion; duplicate attributes",
    "alloc-bomb": "small models whose run allocates absurdly: ConstantOfShape, Expand, Tile, Range, Resize, Pad, "
                  "Loop trip counts, 10^6 x 10^6 MatMul inputs",
    "functions": "model-local functions: self- and mutually recursive, shadowing ops, no body, bad arity",
    "weird-types": "sequence, map, optional, nested sequence types; sparse initializers; string tensors; training_info",
    "subgraph-mess": "If without branches or with INT/GRAPHS branches, bad Loop/Scan bodies, shadowing",
    "valid": "an unmodified real model (control)",
    "ext-swap": "a protobuf named .onnxtxt, a text named .onnx",
    "txt-valid": "a real model in ONNX text syntax (written by `mutagraph convert`)",
    "txt-mutated": "a text model with spans deleted/duplicated, tokens inserted, numbers made hostile, bytes broken",
    "txt-garbage": "random tokens, random bytes, plausible texts with hostile dims and attributes",
    "txt-deep": "text nesting 1000 to 10^6 deep: brackets, parens, braces, seq( types, nested If graphs",
    "symlink-dev-zero": "a symlink to /dev/zero (unbounded read)",
    "symlink-dev-urandom": "a symlink to /dev/urandom (unbounded read)",
    "symlink-other": "a symlink to /dev/null, /dev/full, itself, a missing target, /proc/self/status, /",
    "fifo": "a named pipe nobody writes to",
    "directory": "a directory (empty, holding a model, holding junk)",
    "nonexistent": "a path that does not exist",
    "no-read-perm": "a model with mode 000 (meaningless when run as root)",
    "weird-filename": "a real model named with spaces, newline, tab, non-UTF-8 bytes, RTL mark, '-dash', quotes",
}


def plan(count: int, seed: int, kinds: set[str] | None) -> list[str]:
    """The kind of each input index, deterministic from (count, seed)."""
    rng = random.Random(f"plan:{seed}")
    out = []
    for k, (_, per10k) in FEW.items():
        if kinds and k not in kinds:
            continue
        n = round(per10k * count / 10000)
        if count >= 100 or kinds:
            n = max(1, n)
        out += [k] * n
    mix = [(k, w) for k, (_, w) in MIX.items() if not kinds or k in kinds]
    if mix:
        names, weights = zip(*mix)
        out += rng.choices(names, weights, k=max(0, count - len(out)))
    out = out[:count] if len(out) > count else out
    rng.shuffle(out)
    return out


def generate(ctx: Ctx, inputs_dir: Path, count: int, seed: int, kinds: set[str] | None) -> list[dict]:
    inputs_dir.mkdir(parents=True, exist_ok=True)
    manifest = []
    t0 = time.time()
    for i, kind in enumerate(plan(count, seed, kinds)):
        rng = random.Random(f"{seed}:{i}:{kind}")
        gen = FEW[kind][0] if kind in FEW else MIX[kind][0]
        try:
            o = gen(ctx, rng)
        except Exception as e:  # a generator bug must not stop the run
            print(f"warning: generator {kind} failed on input {i}: {type(e).__name__}: {e}", file=sys.stderr)
            o = Out(kind, f"generator failed ({type(e).__name__}): random bytes instead", rng.randbytes(100))
        path = str(inputs_dir / f"h{i:05d}_{o.kind}{o.ext}")
        for rel, data in o.side.items():
            sp = inputs_dir / rel
            sp.parent.mkdir(parents=True, exist_ok=True)
            if not sp.exists():
                sp.write_bytes(data)
        if o.special is not None:
            p2 = o.special(path)
            if isinstance(p2, str):
                path = p2
        else:
            with open(path, "wb") as f:
                f.write(o.data)
        manifest.append({"index": i, "path": path, "kind": o.kind, "detail": o.detail})
        if (i + 1) % 1000 == 0:
            print(f"generated {i + 1}/{count} inputs ({time.time() - t0:.0f} s)", file=sys.stderr)
    return manifest


# ----------------------------------------------------------------------------------------------
# The runner

COMMANDS = {
    "inspect": lambda b, m, s: [b, "inspect", m],
    "inspect-json": lambda b, m, s: [b, "inspect", m, "--json"],
    "convert-onnx": lambda b, m, s: [b, "convert", m, f"{s}/out.onnx"],
    "convert-txt": lambda b, m, s: [b, "convert", m, f"{s}/out.onnxtxt"],
    "reduce": lambda b, m, s: [b, "reduce", m, f"{s}/reduced.onnx"],
    "coverage": lambda b, m, s: [b, "coverage", m],
    "run-ref": lambda b, m, s: [b, "run", m, "--backends", "reference"],
    "run-default": lambda b, m, s: [b, "run", m],
    "minimize": lambda b, m, s: [b, "minimize", m, "--max-checks", "5", "--backends", "reference",
                                 "--out", f"{s}/min.onnx"],
    "campaign": lambda b, m, s: [b, "campaign", "--seeds", m, "--out", f"{s}/campaign", "--time", "5s",
                                 "--quiet"],
    # stdout is a pipe whose reading end is closed (`mutagraph inspect M | head -0`)
    "inspect-closed-stdout": lambda b, m, s: [b, "inspect", m],
}
CLOSED_STDOUT = {"inspect-closed-stdout"}
# commands that run backends in workers, each run bounded by the engine's own 10 s per-run
# limit: the default backends one after another, minimize's checks; they get --run-timeout
RUNS_BACKENDS = {"run-ref", "run-default", "minimize"}
DEFECTS = ["panic", "signal", "timeout", "over-memory", "leaked-process", "rejected-without-path",
           "other-exit"]
CLASSES = ["ok", "rejected"] + DEFECTS + ["backend-panic"]
WORKSPACE_DIRS = ("ir/", "engine/", "backends/", "mutators/", "oracles/", "prompts/", "tests/", "benches/")


def session_alive(sid: int) -> list[int]:
    """Non-zombie processes of a session (the engine puts its workers in process groups of
    their own, not in sessions of their own)."""
    alive = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as f:
                st = f.read()
        except OSError:
            continue
        rest = st[st.rfind(b")") + 2 :].split()
        if len(rest) > 3 and int(rest[3]) == sid and rest[0] != b"Z":
            alive.append(int(d))
    return alive


def kill_session(sid: int):
    for _ in range(3):
        pids = session_alive(sid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)


def excerpt(b: bytes, head=1500, tail=1500) -> str:
    s = b.decode("utf-8", "replace")
    if len(s) <= head + tail + 20:
        return s
    return s[:head] + f"\n[... {len(s) - head - tail} chars ...]\n" + s[-tail:]


def names_path(stderr: str, path: str) -> bool:
    b = os.fsencode(path)
    forms = {path, b.decode("utf-8", "replace"), os.path.basename(b).decode("utf-8", "replace")}
    return any(f and f in stderr for f in forms)


def panic_location(stderr: str) -> str | None:
    m = re.search(r"panicked at ([^\n]+?):(\d+):(\d+)", stderr)
    return m.group(1) if m else None


WS_FRAME = re.compile(r"at (?:\S*?/)?((?:ir|engine|backends|mutators|oracles|prompts|tests|benches)/src/[^:\s]+:\d+)")
DEP_FRAME = re.compile(r"at (\S*/\.cargo/registry/\S+)")


def panic_in_workspace(stderr: str, loc: str) -> bool:
    """The panic is this workspace's: located in its code, or in std (an overflow, an
    `unwrap`) called from its code before any dependency's frame."""
    if loc.startswith(WORKSPACE_DIRS) or re.search(r"/(ir|engine|backends|mutators|oracles|prompts)/src/", loc):
        return True
    if loc.startswith("/rustc/"):
        i = stderr.find("stack backtrace:")
        if i >= 0:
            ws, dep = WS_FRAME.search(stderr, i), DEP_FRAME.search(stderr, i)
            return ws is not None and (dep is None or ws.start() < dep.start())
    return False


def classify(rc, timed_out, maxrss_kb, leaked, stderr: str, path: str, rss_limit_kb: int) -> str:
    if timed_out:
        return "timeout"
    loc = panic_location(stderr)
    if rc == 101:
        return "panic"
    if loc is not None and panic_in_workspace(stderr, loc):
        return "panic"
    if rc is not None and rc < 0:
        return "signal"
    if maxrss_kb > rss_limit_kb:
        return "over-memory"
    if leaked:
        return "leaked-process"
    if rc == 0:
        return "backend-panic" if loc else "ok"
    if rc == 1:
        if not names_path(stderr, path):
            return "rejected-without-path"
        return "backend-panic" if loc else "rejected"
    return "other-exit"


def signature(cls: str, cmd: str, stderr: str, rc) -> str:
    if cls in ("panic", "backend-panic"):
        m = re.search(r"panicked at ([^\n]+?):(\d+):\d+:\n([^\n]*)", stderr)
        if m:
            where = f"{m.group(1)}:{m.group(2)}"
            if where.startswith("/rustc/") or "/.cargo/registry/" in where:
                ws = WS_FRAME.search(stderr, m.end())
                short = re.sub(r"^.*/registry/src/[^/]+/", "", re.sub(r"^/rustc/[0-9a-f]+/", "", where))
                # the workspace's frame that called into std or a dependency
                where = f"{short} from {ws.group(1)}" if ws else short
            return f"panic at {where}: {norm(m.group(3))}"
    if cls == "signal":
        try:
            name = signal.Signals(-rc).name
        except (ValueError, TypeError):
            name = str(rc)
        first = next((l for l in stderr.splitlines() if l.strip()), "")
        return f"{name}: {norm(first)}"
    if cls == "timeout":
        i = stderr.find("[hostile.py: stack at the timeout]")
        if i >= 0:  # the innermost frame of the workspace's code
            frames = re.finditer(r"#\d+\s+(?:0x[0-9a-f]+ in )?(.+?) (?:\(\) )?at (?:\S*?/)?"
                                 r"((?:ir|engine|backends|mutators|oracles|prompts)/src/[^:\s]+):(\d+)", stderr[i:])
            named = [m for m in frames if not m.group(1).startswith("{closure")]
            if named:
                m = named[0]
                fn = re.sub(r"<.*", "", m.group(1)).strip()
                return f"timeout at {m.group(2)}:{m.group(3)} ({fn})"
        return f"timeout in {cmd}"
    first = next((l for l in stderr.splitlines() if l.startswith("error")), None)
    if first is None:
        first = next((l for l in stderr.splitlines() if l.strip()), "(no stderr)")
    return norm(first)


def norm(s: str) -> str:
    s = re.sub(r"(?<![\w.])/[^\s:'\"()]+", "PATH", s)
    s = re.sub(r"\d+", "N", s)
    return s[:200]


# Runs the command as its child and reports the child's wait status and peak RSS: measured
# from a small process, since a child forked from this one would start with (and report) this
# interpreter's peak RSS. The limits apply to the command only.
LAUNCHER = r"""
import os, resource, sys
out, lim, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
pid = os.fork()
if pid == 0:
    try:
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (2 << 30, 2 << 30))
        os.execv(argv[0], argv)
    finally:
        os._exit(127)
_, st, ru = os.wait4(pid, 0)
with open(out, "w") as f:
    f.write(f"{st} {ru.ru_maxrss}")
"""


def stack_of_child(launcher: int) -> str:
    """The backtrace of the launcher's child (the command) by gdb, if there is one: where a
    timeout was spent."""
    gdb = shutil.which("gdb")
    if not gdb:
        return ""
    try:
        pid = Path(f"/proc/{launcher}/task/{launcher}/children").read_text().split()[0]
        r = subprocess.run([gdb, "-p", pid, "-batch", "-ex", "bt 40"], capture_output=True,
                           timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return ""
    frames = [l for l in r.stdout.decode("utf-8", "replace").splitlines() if l.startswith("#")]
    # the innermost frames, then only the workspace's
    keep = [f for i, f in enumerate(frames) if i < 4 or WS_FRAME.search(f)]
    return "\n".join(f[:300] for f in keep)


ACTIVE: set[int] = set()  # sessions of the runs in flight
STOP = threading.Event()


def run_one(job, opts) -> dict:
    idx, entry, cmd = job
    if STOP.is_set():
        raise concurrent.futures.CancelledError()
    scratch = tempfile.mkdtemp(prefix=f"j{idx}_{cmd}_", dir=opts.scratch_root)
    argv = COMMANDS[cmd](opts.bin, entry["path"], scratch)
    limit = (opts.campaign_timeout if cmd == "campaign"
             else opts.run_timeout if cmd in RUNS_BACKENDS else opts.timeout)
    res = f"{scratch}/rusage"
    env = dict(os.environ, RUST_BACKTRACE="1", TMPDIR=scratch)
    t0 = time.monotonic()
    with open(f"{scratch}/stdout", "wb") as so, open(f"{scratch}/stderr", "wb") as se:
        out_fd = so.fileno()
        if cmd in CLOSED_STDOUT:
            rd, out_fd = os.pipe()
            os.close(rd)
        try:
            p = subprocess.Popen([sys.executable, "-I", "-S", "-c", LAUNCHER, res,
                                  str(opts.as_limit_mb << 20), *argv],
                                 stdin=subprocess.DEVNULL, stdout=out_fd, stderr=se, env=env,
                                 start_new_session=True, cwd=scratch)
        finally:
            if cmd in CLOSED_STDOUT:
                os.close(out_fd)
    sid = p.pid
    ACTIVE.add(sid)
    timed_out = threading.Event()

    stack = []

    def kill():
        timed_out.set()
        if opts.stack_on_timeout:
            stack.append(stack_of_child(sid))
        kill_session(sid)
    timer = threading.Timer(limit, kill)
    timer.start()
    _, lstatus, _ = os.wait4(p.pid, 0)
    timer.cancel()
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(lstatus)
    try:
        st, rss = Path(res).read_text().split()
        rc, maxrss_kb = os.waitstatus_to_exitcode(int(st)), int(rss)
    except (OSError, ValueError):  # the launcher was killed (timeout)
        rc, maxrss_kb = None, 0
    # processes of its session still running after it exited
    leaked = []
    if not timed_out.is_set():
        deadline = time.monotonic() + 1.0
        while True:
            leaked = session_alive(sid)
            if not leaked or time.monotonic() > deadline:
                break
            time.sleep(0.05)
    leaked_cmd = []
    if leaked:
        for pid in leaked:
            try:
                leaked_cmd.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200])
            except OSError:
                pass
    kill_session(sid)
    ACTIVE.discard(sid)
    stderr_b = Path(f"{scratch}/stderr").read_bytes()
    stdout_len = os.path.getsize(f"{scratch}/stdout")
    shutil.rmtree(scratch, ignore_errors=True)
    stderr = stderr_b.decode("utf-8", "replace")
    if stack and stack[0]:
        stderr_b += b"\n[hostile.py: stack at the timeout]\n" + stack[0].encode()
        stderr = stderr_b.decode("utf-8", "replace")
    cls = classify(rc, timed_out.is_set(), maxrss_kb, bool(leaked), stderr,
                   entry["path"], opts.rss_limit_mb << 10)
    return {
        "index": idx, "kind": entry["kind"], "detail": entry["detail"], "path": entry["path"],
        "command": cmd, "argv": argv, "rc": rc, "class": cls, "wall_s": round(wall, 3),
        "maxrss_mb": round(maxrss_kb / 1024, 1), "stdout_bytes": stdout_len,
        "stderr": excerpt(stderr_b), "leaked": leaked_cmd,
        "signature": signature(cls, cmd, stderr, rc),
    }


def sample_arg(s: str):
    """`50`: that many inputs; `0.1`, `1.0` or `10%`: that fraction of them."""
    try:
        if s.endswith("%"):
            return float(s[:-1]) / 100
        return float(s) if "." in s else int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a count or a fraction: {s!r}")


def sample_indices(manifest, n: int | float, seed: int, salt: str) -> set[int]:
    """n inputs (a float: that fraction of them), spread over the kinds round-robin."""
    if isinstance(n, float):
        n = int(round(n * len(manifest)))
    rng = random.Random(f"{salt}:{seed}")
    by_kind = collections.defaultdict(list)
    for e in manifest:
        by_kind[e["kind"]].append(e["index"])
    for v in by_kind.values():
        rng.shuffle(v)
    chosen = []
    kinds = sorted(by_kind)
    while len(chosen) < n and any(by_kind.values()):
        for k in kinds:
            if by_kind[k] and len(chosen) < n:
                chosen.append(by_kind[k].pop())
    return set(chosen)


class Summary:
    def __init__(self, opts, manifest):
        self.opts = opts
        self.counts = {c: collections.Counter() for c in opts.commands}
        self.by_kind = collections.defaultdict(collections.Counter)
        self.examples = collections.defaultdict(list)
        self.sigs = collections.defaultdict(dict)
        self.big = []
        self.wall = collections.Counter()
        self.n = 0
        self.ninputs = len(manifest)

    def add(self, r):
        self.n += 1
        cls = r["class"]
        self.counts[r["command"]][cls] += 1
        self.wall[r["command"]] += r["wall_s"]
        self.by_kind[r["kind"]][cls] += 1
        if r["maxrss_mb"] > 1024:
            self.big.append({k: r[k] for k in ("path", "kind", "command", "maxrss_mb", "class")})
        if cls in DEFECTS or cls == "backend-panic":
            ex = {k: r[k] for k in ("path", "kind", "detail", "command", "argv", "rc", "wall_s",
                                    "maxrss_mb", "stderr", "leaked")}
            exs = self.examples[cls]
            ex["signature"] = r["signature"]
            # distinct (command, kind, signature); distinct signatures first
            key = (r["command"], r["kind"], r["signature"])
            if all((e["command"], e["kind"], e["signature"]) != key for e in exs):
                sigs = collections.Counter(e["signature"] for e in exs)
                if len(exs) < 5:
                    exs.append(ex)
                elif r["signature"] not in sigs:
                    dup = next(i for i in range(len(exs) - 1, -1, -1) if sigs[exs[i]["signature"]] > 1)
                    exs[dup] = ex
            s = self.sigs[cls].setdefault(r["signature"], {"count": 0, "commands": collections.Counter(),
                                                          "kinds": collections.Counter(), "example": ex})
            s["count"] += 1
            s["commands"][r["command"]] += 1
            s["kinds"][r["kind"]] += 1

    def defect_count(self):
        return sum(c[d] for c in self.counts.values() for d in DEFECTS)

    def to_json(self, wall_total, done):
        return {
            "bin": self.opts.bin, "seed": self.opts.seed, "count": self.ninputs,
            "commands": self.opts.commands, "jobs": self.opts.jobs, "runs_done": self.n,
            "complete": done, "wall_s": round(wall_total, 1),
            "wall_s_per_1000_inputs": round(wall_total * 1000 / max(1, self.ninputs), 1) if done else None,
            "cpu_wall_s_per_command": {k: round(v, 1) for k, v in self.wall.items()},
            "counts": {c: dict(v) for c, v in self.counts.items()},
            "defects_total": self.defect_count(),
            "defects_by_kind": {k: {c: n for c, n in v.items() if c in DEFECTS}
                                for k, v in sorted(self.by_kind.items()) if any(c in DEFECTS for c in v)},
            "examples": dict(self.examples),
            "signatures": {cls: sorted(({"signature": s, "count": v["count"],
                                         "commands": dict(v["commands"]), "kinds": dict(v["kinds"]),
                                         "example_path": v["example"]["path"],
                                         "example_detail": v["example"]["detail"],
                                         "example_stderr": v["example"]["stderr"][:1200]}
                                        for s, v in d.items()), key=lambda x: -x["count"])[:40]
                           for cls, d in self.sigs.items()},
            "rss_over_1GiB": self.big[:100],
        }

    def table(self) -> str:
        cols = [c for c in CLASSES if any(self.counts[k][c] for k in self.counts)] or ["ok"]
        w = max(12, *(len(c) for c in self.counts))
        lines = [f"{'command':<{w}} " + " ".join(f"{c:>{max(6, len(c))}}" for c in cols) + f" {'total':>7}"]
        tot = collections.Counter()
        for cmd, cnt in self.counts.items():
            tot.update(cnt)
            lines.append(f"{cmd:<{w}} " + " ".join(f"{cnt[c]:>{max(6, len(c))}}" for c in cols)
                         + f" {sum(cnt.values()):>7}")
        lines.append(f"{'all':<{w}} " + " ".join(f"{tot[c]:>{max(6, len(c))}}" for c in cols)
                     + f" {sum(tot.values()):>7}")
        for cls in DEFECTS + ["backend-panic"]:
            d = self.sigs.get(cls)
            if not d:
                continue
            lines.append(f"\n{cls}:")
            for s, v in sorted(d.items(), key=lambda x: -x[1]["count"])[:12]:
                cmds = ",".join(f"{k}:{n}" for k, n in v["commands"].most_common(4))
                kinds = ",".join(f"{k}:{n}" for k, n in v["kinds"].most_common(4))
                lines.append(f"  {v['count']:>5}  {s[:150]}\n         commands {cmds}; kinds {kinds}\n"
                             f"         e.g. {v['example']['path']} ({v['example']['detail'][:100]})")
        return "\n".join(lines)


def resummarize(opts) -> int:
    rows = [json.loads(l) for l in open(opts.from_results) if l.strip()]
    cmds = list(dict.fromkeys(r["command"] for r in rows))
    opts.commands = cmds
    manifest = {r["index"] for r in rows}
    summary = Summary(opts, manifest)
    for r in rows:
        timed_out = r["class"] == "timeout"
        r["class"] = classify(r["rc"], timed_out, int(r["maxrss_mb"] * 1024), bool(r["leaked"]),
                              r["stderr"], r["path"], opts.rss_limit_mb << 10)
        r["signature"] = signature(r["class"], r["command"], r["stderr"], r["rc"])
        summary.add(r)
    js = summary.to_json(0, True)
    js["from_results"] = opts.from_results
    Path(opts.out).write_text(json.dumps(js, indent=1))
    print(summary.table())
    print(f"\n{summary.n} runs over {len(manifest)} inputs; summary: {opts.out}")
    return 1 if opts.fail_on_defect and summary.defect_count() else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--count", type=int, default=10000, help="inputs to generate (default 10000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--bin", default=str(REPO / "target/release/mutagraph"))
    ap.add_argument("--commands", default=",".join(COMMANDS),
                    help=f"comma-separated subset of {','.join(COMMANDS)}")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", action="store_true", help="keep the work directory (the inputs and their manifest.json)")
    ap.add_argument("--workdir", help="work directory (default: a new temporary one)")
    ap.add_argument("--reuse", action="store_true", help="reuse the inputs already in --workdir")
    ap.add_argument("--generate-only", action="store_true")
    ap.add_argument("--kinds", help="only these input kinds (comma-separated; see --list-kinds)")
    ap.add_argument("--list-kinds", action="store_true")
    ap.add_argument("--out", default="hostile-summary.json",
                    help="JSON summary (default hostile-summary.json); every run goes to OUT-STEM.results.jsonl")
    ap.add_argument("--timeout", type=float, default=20,
                    help="seconds per run of inspect, convert, reduce, coverage (default 20)")
    ap.add_argument("--run-timeout", type=float, default=60,
                    help="seconds per run of run and minimize, which run backends (default 60)")
    ap.add_argument("--campaign-timeout", type=float, default=120,
                    help="seconds per campaign run, --time 5s plus admission and minimization (default 120)")
    ap.add_argument("--campaign-sample", type=sample_arg, default=50,
                    help="inputs that get a campaign (a count, or a fraction: 0.1, 10%%; default 50)")
    ap.add_argument("--default-run-sample", type=sample_arg, default=0.1,
                    help="inputs that get `run` with the default backends (default 0.1 = 10%%)")
    ap.add_argument("--closed-stdout-sample", type=sample_arg, default=0.05,
                    help="inputs that get `inspect` with a closed stdout pipe (default 0.05)")
    ap.add_argument("--no-stack-on-timeout", dest="stack_on_timeout", action="store_false",
                    help="do not take the command's backtrace with gdb when it times out")
    ap.add_argument("--as-limit-mb", type=int, default=4096, help="RLIMIT_AS of each run (default 4096)")
    ap.add_argument("--rss-limit-mb", type=int, default=2048, help="over-memory above this (default 2048)")
    ap.add_argument("--from-results", metavar="RESULTS_JSONL",
                    help="only summarize (reclassifying) the runs of an earlier results.jsonl")
    ap.add_argument("--fail-on-defect", action="store_true", help="exit 1 when any defect class occurs")
    ap.add_argument("--quiet", action="store_true")
    opts = ap.parse_args()
    if opts.list_kinds:
        for k in FEW:
            print(f"{k:20} {FEW[k][1]:>3} in 10 000  {KIND_DOC.get(k, '')}")
        total = sum(w for _, w in MIX.values())
        for k in MIX:
            print(f"{k:20} {MIX[k][1] / total:>7.1%} of the rest  {KIND_DOC.get(k, '')}")
        return 0
    opts.commands = [c.strip() for c in opts.commands.split(",") if c.strip()]
    if opts.from_results:
        return resummarize(opts)
    bad = [c for c in opts.commands if c not in COMMANDS]
    if bad:
        ap.error(f"unknown commands {bad}; known: {list(COMMANDS)}")
    opts.bin = os.path.abspath(opts.bin)
    if not os.access(opts.bin, os.X_OK):
        ap.error(f"no binary at {opts.bin} (cargo build --release -p mutagraph-engine)")
    kinds = set(opts.kinds.split(",")) if opts.kinds else None
    if kinds and kinds - set(ALL_KINDS):
        ap.error(f"unknown kinds {sorted(kinds - set(ALL_KINDS))}")

    tmp = opts.workdir is None
    workdir = Path(opts.workdir or tempfile.mkdtemp(prefix="hostile-")).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    inputs_dir = workdir / "inputs"
    man_path = workdir / "manifest.json"
    t0 = time.time()
    if opts.reuse and man_path.exists():
        manifest = json.loads(man_path.read_text())
    else:
        if inputs_dir.exists():
            for p in inputs_dir.iterdir():  # chmod back what no-read-perm took away
                try:
                    if not p.is_symlink():
                        os.chmod(p, 0o755 if p.is_dir() else 0o644)
                except OSError:
                    pass
            shutil.rmtree(inputs_dir)
        ctx = Ctx(opts.bin, workdir, opts.seed)
        manifest = generate(ctx, inputs_dir, opts.count, opts.seed, kinds)
        man_path.write_text(json.dumps(manifest, indent=0))
    gen_s = time.time() - t0
    if not opts.quiet:
        print(f"{len(manifest)} inputs in {inputs_dir} ({gen_s:.0f} s to generate)", file=sys.stderr)
    if opts.generate_only:
        return 0

    opts.scratch_root = str(workdir / "scratch")
    os.makedirs(opts.scratch_root, exist_ok=True)
    camp = sample_indices(manifest, opts.campaign_sample, opts.seed, "campaign")
    dflt = sample_indices(manifest, opts.default_run_sample, opts.seed, "default-run")
    closed = sample_indices(manifest, opts.closed_stdout_sample, opts.seed, "closed-stdout")
    jobs = []
    for e in manifest:
        for c in opts.commands:
            if c == "campaign" and e["index"] not in camp:
                continue
            if c == "run-default" and e["index"] not in dflt:
                continue
            if c in CLOSED_STDOUT and e["index"] not in closed:
                continue
            jobs.append((e["index"], e, c))
    summary = Summary(opts, manifest)
    out_path = Path(opts.out)
    results_path = out_path.with_name(out_path.stem + ".results.jsonl")  # every run, one a line
    t_run = time.time()
    last_write = time.time()
    def on_term(*_):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_term)
    ex = concurrent.futures.ThreadPoolExecutor(opts.jobs)
    rf = open(results_path, "w")
    try:
        futs = [ex.submit(run_one, j, opts) for j in jobs]
        for n, f in enumerate(concurrent.futures.as_completed(futs), 1):
            r = f.result()
            summary.add(r)
            rf.write(json.dumps(r) + "\n")
            first = summary.sigs.get(r["class"], {}).get(r["signature"], {}).get("count") == 1
            if r["class"] in DEFECTS and first and not opts.quiet:  # the first of each signature
                print(f"[{r['class']}] {r['command']} {r['path']} ({r['kind']}: {r['detail'][:80]}): "
                      f"{r['signature'][:160]}", file=sys.stderr)
            if not opts.quiet and (n % 500 == 0 or n == len(jobs)):
                el = time.time() - t_run
                print(f"progress {n}/{len(jobs)} runs, {el:.0f} s, eta {el / n * (len(jobs) - n):.0f} s, "
                      f"defects {summary.defect_count()}", file=sys.stderr)
            if time.time() - last_write > 60:
                out_path.write_text(json.dumps(summary.to_json(time.time() - t_run, False), indent=1))
                rf.flush()
                last_write = time.time()
    except KeyboardInterrupt:
        print("interrupted; writing the partial summary", file=sys.stderr)
        STOP.set()
        ex.shutdown(wait=False, cancel_futures=True)
        for sid in list(ACTIVE):
            kill_session(sid)
    finally:
        rf.close()
        ex.shutdown(wait=False, cancel_futures=True)
    wall = time.time() - t_run
    js = summary.to_json(wall, summary.n == len(jobs))
    js["generate_s"] = round(gen_s, 1)
    js["workdir"] = str(workdir) if (opts.keep or not tmp) else None
    out_path.write_text(json.dumps(js, indent=1))
    print(summary.table())
    print(f"\n{summary.n} runs over {len(manifest)} inputs in {wall:.0f} s "
          f"({wall * 1000 / max(1, len(manifest)):.0f} s per 1000 inputs, {opts.jobs} jobs); "
          f"summary: {out_path}")
    if not (opts.keep or not tmp):
        for p in inputs_dir.iterdir() if inputs_dir.exists() else []:
            try:
                if not p.is_symlink() and p.exists():
                    os.chmod(p, 0o755 if p.is_dir() else 0o644)
            except OSError:
                pass
        shutil.rmtree(workdir, ignore_errors=True)
    if opts.fail_on_defect and summary.defect_count():
        print(f"{summary.defect_count()} defect runs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
