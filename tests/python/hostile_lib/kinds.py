"""The input kinds (generator, weight, description), the plan of a run's kinds and the
generation of its inputs."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

from .build import Ctx, Out
from .gen_bytes import (g_bitflip, g_empty, g_huge_sparse_file, g_proto_deep_nest, g_proto_huge_len,
                        g_proto_structure, g_proto_varint, g_proto_wiretype, g_random_bytes,
                        g_random_proto, g_splice, g_truncated)
from .gen_files import (g_directory, g_fifo, g_no_read_perm, g_nonexistent, g_symlink_dev_urandom,
                        g_symlink_dev_zero, g_symlink_other, g_weird_filename)
from .gen_onnx import (g_bad_elem_type, g_bad_version, g_chain, g_chain_100k, g_deep_if, g_deep_if_10k,
                       g_dims_overflow, g_duplicate_names, g_empty_names, g_external_data,
                       g_graph_cycle, g_huge_dims, g_long_names, g_onnx_field, g_raw_data_mismatch,
                       g_real_huge_dims, g_undefined_input, g_unknown_op)
from .gen_ops import (g_alloc_bomb, g_bad_attrs, g_ext_swap, g_functions, g_subgraph_mess, g_valid,
                      g_weird_types)
from .gen_text import g_txt_deep, g_txt_garbage, g_txt_mutated, g_txt_valid


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
