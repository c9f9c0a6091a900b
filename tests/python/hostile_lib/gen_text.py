"""Generators of ONNX text syntax: valid, mutated, garbage and deeply nested texts."""

from __future__ import annotations

import re

from .build import HOSTILE_DIMS, Out


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
