"""Generators of file-system oddities: symbolic links to endless devices, pipes, directories,
missing and unreadable files, odd file names."""

from __future__ import annotations

import os
from pathlib import Path

from .build import Out


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
