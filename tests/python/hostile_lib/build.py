"""ONNX building helpers (no checks: the point is to build invalid models), the context the
generators share (`Ctx`) and one generated input (`Out`)."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper


TESTDATA = Path("/usr/share/libonnx-testdata/data")


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
