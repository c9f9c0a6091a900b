"""Generators at the byte level and at the protobuf wire-format level."""

from __future__ import annotations

from .build import Out
from .wire import (EXTREME_U64, HUGE_LENGTHS, Field, all_fields, encode_field, encode_msg, f_bytes,
                   f_varint, parse_msg, read_varint, tag, varint)


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
