"""Protobuf wire format: encoding fields, parsing a message into a tree of fields, re-encoding."""

from __future__ import annotations




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
