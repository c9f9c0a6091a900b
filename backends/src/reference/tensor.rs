//! The interpreter's tensors: a logical ONNX element type, a shape, and the elements widened to
//! one of four host kinds (f64, i64, bool, bytes). Index helpers shared by every op family.
use crate::backend::{BackendError, Stage};
use half::{bf16, f16};
use mutagraph_ir::dtype::DType;

/// Result of an op.
pub type R<X> = Result<X, BackendError>;

/// A run-time failure (bad shapes, out-of-range indices, ...).
pub fn err(msg: impl Into<String>) -> BackendError {
    BackendError::failed(Stage::Run, msg)
}

/// Something this interpreter does not implement (an attribute value, a dtype).
pub fn unsup(msg: impl Into<String>) -> BackendError {
    BackendError::unsupported(Stage::Run, msg)
}

/// Elements, widened.
#[derive(Clone, Debug, PartialEq)]
pub enum Buf {
    /// Every floating-point type.
    F(Vec<f64>),
    /// Every integer type (u64 kept as its bit pattern).
    I(Vec<i64>),
    /// Booleans.
    B(Vec<bool>),
    /// Byte strings.
    S(Vec<Vec<u8>>),
}

impl Buf {
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Buf::F(v) => v.len(),
            Buf::I(v) => v.len(),
            Buf::B(v) => v.len(),
            Buf::S(v) => v.len(),
        }
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements at the given flat positions (positions must be in range).
    pub fn take(&self, idx: &[usize]) -> Buf {
        match self {
            Buf::F(v) => Buf::F(idx.iter().map(|&i| v[i]).collect()),
            Buf::I(v) => Buf::I(idx.iter().map(|&i| v[i]).collect()),
            Buf::B(v) => Buf::B(idx.iter().map(|&i| v[i]).collect()),
            Buf::S(v) => Buf::S(idx.iter().map(|&i| v[i].clone()).collect()),
        }
    }

    /// An empty buffer of the same kind.
    pub fn empty_like(&self) -> Buf {
        match self {
            Buf::F(_) => Buf::F(vec![]),
            Buf::I(_) => Buf::I(vec![]),
            Buf::B(_) => Buf::B(vec![]),
            Buf::S(_) => Buf::S(vec![]),
        }
    }

    /// Appends `other[range]` (same kind required).
    pub fn extend_range(&mut self, other: &Buf, lo: usize, hi: usize) -> R<()> {
        match (self, other) {
            (Buf::F(a), Buf::F(b)) => a.extend_from_slice(&b[lo..hi]),
            (Buf::I(a), Buf::I(b)) => a.extend_from_slice(&b[lo..hi]),
            (Buf::B(a), Buf::B(b)) => a.extend_from_slice(&b[lo..hi]),
            (Buf::S(a), Buf::S(b)) => a.extend_from_slice(&b[lo..hi]),
            _ => return Err(err("mixed element kinds")),
        }
        Ok(())
    }

    /// Copies element `src[j]` into `self[i]` (same kind required).
    pub fn set_from(&mut self, i: usize, src: &Buf, j: usize) -> R<()> {
        match (self, src) {
            (Buf::F(a), Buf::F(b)) => a[i] = b[j],
            (Buf::I(a), Buf::I(b)) => a[i] = b[j],
            (Buf::B(a), Buf::B(b)) => a[i] = b[j],
            (Buf::S(a), Buf::S(b)) => a[i] = b[j].clone(),
            _ => return Err(err("mixed element kinds")),
        }
        Ok(())
    }

    /// `n` copies of element 0 of `self`'s kind default (zero / false / empty).
    pub fn zeros_like(&self, n: usize) -> Buf {
        match self {
            Buf::F(_) => Buf::F(vec![0.0; n]),
            Buf::I(_) => Buf::I(vec![0; n]),
            Buf::B(_) => Buf::B(vec![false; n]),
            Buf::S(_) => Buf::S(vec![vec![]; n]),
        }
    }
}

/// The host kind of a logical element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// f64 buffer.
    Float,
    /// i64 buffer.
    Int,
    /// bool buffer.
    Bool,
    /// bytes buffer.
    Str,
}

/// The kind of `dt`, or unsupported.
pub fn kind(dt: DType) -> R<Kind> {
    use DType::*;
    Ok(match dt {
        F32 | F64 | F16 | BF16 => Kind::Float,
        I8 | I16 | I32 | I64 | U8 | U16 | U32 | U64 => Kind::Int,
        Bool => Kind::Bool,
        String => Kind::Str,
        d => return Err(unsup(format!("element type {d}"))),
    })
}

/// Rounds a value to what the floating-point type `dt` can hold (identity for f64).
pub fn round_dt(dt: DType, x: f64) -> f64 {
    match dt {
        DType::F32 => x as f32 as f64,
        DType::F16 => f16::from_f64(x).to_f64(),
        DType::BF16 => bf16::from_f64(x).to_f64(),
        _ => x,
    }
}

/// Wraps an integer to the width and signedness of `dt` (two's complement).
pub fn wrap_dt(dt: DType, x: i64) -> i64 {
    match dt {
        DType::I8 => x as i8 as i64,
        DType::I16 => x as i16 as i64,
        DType::I32 => x as i32 as i64,
        DType::U8 => x as u8 as i64,
        DType::U16 => x as u16 as i64,
        DType::U32 => x as u32 as i64,
        _ => x,
    }
}

/// A float converted to the integer type `dt` (truncation toward zero, then wrap-around).
pub fn f2i(dt: DType, x: f64) -> i64 {
    if dt == DType::U64 {
        return (x as u64) as i64;
    }
    wrap_dt(dt, x as i64)
}

/// An integer of type `src` as f64 (u64 read from its bit pattern).
pub fn i2f(src: DType, x: i64) -> f64 {
    if src == DType::U64 {
        x as u64 as f64
    } else {
        x as f64
    }
}

/// A tensor of the interpreter.
#[derive(Clone, Debug, PartialEq)]
pub struct T {
    /// Logical ONNX element type.
    pub dt: DType,
    /// Dimensions.
    pub shape: Vec<usize>,
    /// Elements, row-major.
    pub buf: Buf,
}

impl T {
    /// A float tensor.
    pub fn f(dt: DType, shape: Vec<usize>, v: Vec<f64>) -> T {
        T {
            dt,
            shape,
            buf: Buf::F(v),
        }
    }
    /// An integer tensor.
    pub fn i(dt: DType, shape: Vec<usize>, v: Vec<i64>) -> T {
        T {
            dt,
            shape,
            buf: Buf::I(v),
        }
    }
    /// A boolean tensor.
    pub fn b(shape: Vec<usize>, v: Vec<bool>) -> T {
        T {
            dt: DType::Bool,
            shape,
            buf: Buf::B(v),
        }
    }
    /// A 1-D i64 tensor.
    pub fn vec_i64(v: Vec<i64>) -> T {
        T::i(DType::I64, vec![v.len()], v)
    }
    /// An i64 scalar.
    pub fn scalar_i64(x: i64) -> T {
        T::i(DType::I64, vec![], vec![x])
    }
    /// Same dtype, new shape and buffer.
    pub fn with(&self, shape: Vec<usize>, buf: Buf) -> T {
        T {
            dt: self.dt,
            shape,
            buf,
        }
    }
    /// Same dtype, elements at `idx`, new shape.
    pub fn take(&self, shape: Vec<usize>, idx: &[usize]) -> T {
        self.with(shape, self.buf.take(idx))
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    /// Rank.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }
    /// The float elements. Validation has checked the op's type constraints, so another kind
    /// here is an element type this interpreter's op does not implement: `unsupported`.
    pub fn fs(&self) -> R<&[f64]> {
        match &self.buf {
            Buf::F(v) => Ok(v),
            _ => Err(unsup(format!("expected a float tensor, got {}", self.dt))),
        }
    }
    /// The integer elements (`unsupported` otherwise, as for [`Self::fs`]).
    pub fn is(&self) -> R<&[i64]> {
        match &self.buf {
            Buf::I(v) => Ok(v),
            _ => Err(unsup(format!(
                "expected an integer tensor, got {}",
                self.dt
            ))),
        }
    }
    /// The boolean elements.
    pub fn bs(&self) -> R<&[bool]> {
        match &self.buf {
            Buf::B(v) => Ok(v),
            _ => Err(unsup(format!("expected a bool tensor, got {}", self.dt))),
        }
    }
    /// Elements as f64 whatever the kind (strings refused).
    pub fn floats(&self) -> R<Vec<f64>> {
        Ok(match &self.buf {
            Buf::F(v) => v.clone(),
            Buf::I(v) => v.iter().map(|&x| i2f(self.dt, x)).collect(),
            Buf::B(v) => v.iter().map(|&x| x as u8 as f64).collect(),
            Buf::S(_) => return Err(err("expected numbers, got strings")),
        })
    }
    /// Elements as i64 (integers and bools; floats truncated).
    pub fn ints(&self) -> R<Vec<i64>> {
        Ok(match &self.buf {
            Buf::F(v) => v.iter().map(|&x| x as i64).collect(),
            Buf::I(v) => v.clone(),
            Buf::B(v) => v.iter().map(|&x| x as i64).collect(),
            Buf::S(_) => return Err(err("expected numbers, got strings")),
        })
    }
    /// The single element of a one-element tensor, as f64.
    pub fn scalar_f(&self) -> R<f64> {
        let v = self.floats()?;
        if v.len() != 1 {
            return Err(err(format!(
                "expected one element, got shape {:?}",
                self.shape
            )));
        }
        Ok(v[0])
    }
    /// The single element of a one-element tensor, as i64.
    pub fn scalar_i(&self) -> R<i64> {
        let v = self.ints()?;
        if v.len() != 1 {
            return Err(err(format!(
                "expected one element, got shape {:?}",
                self.shape
            )));
        }
        Ok(v[0])
    }
    /// A tensor of `dt` holding `v` (converted, rounded / wrapped to `dt`).
    pub fn from_f64s(dt: DType, shape: Vec<usize>, v: Vec<f64>) -> R<T> {
        Ok(match kind(dt)? {
            Kind::Float => T::f(dt, shape, v.into_iter().map(|x| round_dt(dt, x)).collect()),
            Kind::Int => T::i(dt, shape, v.into_iter().map(|x| f2i(dt, x)).collect()),
            Kind::Bool => T::b(shape, v.into_iter().map(|x| x != 0.0).collect()),
            Kind::Str => return Err(unsup("numbers into strings")),
        })
    }
    /// A tensor of `dt` from integer values (wrapped / converted).
    pub fn from_i64s(dt: DType, shape: Vec<usize>, v: Vec<i64>) -> R<T> {
        Ok(match kind(dt)? {
            Kind::Float => T::f(
                dt,
                shape,
                v.into_iter().map(|x| round_dt(dt, x as f64)).collect(),
            ),
            Kind::Int => T::i(dt, shape, v.into_iter().map(|x| wrap_dt(dt, x)).collect()),
            Kind::Bool => T::b(shape, v.into_iter().map(|x| x != 0).collect()),
            Kind::Str => return Err(unsup("numbers into strings")),
        })
    }
    /// Reshaped copy (element count must match).
    pub fn reshaped(&self, shape: Vec<usize>) -> R<T> {
        if numel(&shape) != self.len() {
            return Err(err(format!(
                "cannot reshape {:?} into {:?}",
                self.shape, shape
            )));
        }
        Ok(self.with(shape, self.buf.clone()))
    }
}

/// Product of dims.
pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Row-major strides.
pub fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// The multi-index of flat position `i`.
pub fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut out = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        if shape[d] > 0 {
            out[d] = i % shape[d];
            i /= shape[d];
        }
    }
    out
}

/// Steps the multi-index `idx` to the next index of the product of ranges `0..len(d)`, the last
/// axis fastest; false once it wraps around past the last one (then `idx` is all zeros again).
pub fn next_index(idx: &mut [usize], len: impl Fn(usize) -> usize) -> bool {
    let mut d = idx.len();
    while d > 0 {
        d -= 1;
        idx[d] += 1;
        if idx[d] < len(d) {
            return true;
        }
        idx[d] = 0;
    }
    false
}

/// Flat source positions visited when walking `shape` in row-major order with per-dimension
/// source strides `st` from `base`.
pub fn strided_index(shape: &[usize], st: &[isize], base: isize) -> Vec<usize> {
    let n = numel(shape);
    let mut out = Vec::with_capacity(n);
    if n == 0 {
        return out;
    }
    let mut idx = vec![0usize; shape.len()];
    let mut cur = base;
    for _ in 0..n {
        out.push(cur as usize);
        let mut d = shape.len();
        while d > 0 {
            d -= 1;
            idx[d] += 1;
            cur += st[d];
            if idx[d] < shape[d] {
                break;
            }
            cur -= st[d] * shape[d] as isize;
            idx[d] = 0;
        }
    }
    out
}

/// Multidirectional (numpy) broadcast of shapes.
pub fn bcast_shapes(shapes: &[&[usize]]) -> R<Vec<usize>> {
    crate::value::broadcast_all(shapes)
        .ok_or_else(|| err(format!("shapes {shapes:?} do not broadcast")))
}

/// For each element of `out` (a broadcast of `ins`), the flat position in a tensor of shape `ins`.
pub fn bcast_index(ins: &[usize], out: &[usize]) -> Vec<usize> {
    let off = out.len() - ins.len();
    let st = strides(ins);
    let mut s = vec![0isize; out.len()];
    for i in 0..ins.len() {
        if ins[i] != 1 {
            s[off + i] = st[i] as isize;
        }
    }
    strided_index(out, &s, 0)
}

/// `t` broadcast to `out` (which must be a broadcast of its shape).
pub fn expand_to(t: &T, out: &[usize]) -> R<T> {
    if t.shape == out {
        return Ok(t.clone());
    }
    let chk = bcast_shapes(&[&t.shape, out])?;
    if chk != out {
        return Err(err(format!("cannot broadcast {:?} to {out:?}", t.shape)));
    }
    Ok(t.take(out.to_vec(), &bcast_index(&t.shape, out)))
}

/// Normalizes a possibly negative axis for a tensor of rank `rank` (`0 <= axis < rank`): ONNX's
/// rule ([`mutagraph_ir::ops::common::norm_axis`]), except that a scalar has no axis here (the
/// inference lets axis 0 of a rank-0 tensor through; no kernel of the interpreter has one).
pub fn norm_axis(axis: i64, rank: usize) -> R<usize> {
    match mutagraph_ir::ops::common::norm_axis(axis, rank) {
        Ok(a) if rank > 0 => Ok(a),
        _ => Err(err(format!("axis {axis} out of range for rank {rank}"))),
    }
}

/// `(outer, len, inner)` sizes around `axis`.
pub fn split_at_axis(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    let outer = numel(&shape[..axis]);
    let len = shape.get(axis).copied().unwrap_or(1);
    let inner = numel(shape.get(axis + 1..).unwrap_or(&[]));
    (outer, len, inner)
}

/// Checks that a size computed from user data is sane before allocating.
pub fn check_size(shape: &[usize]) -> R<usize> {
    let n = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| err(format!("shape {shape:?} overflows")))?;
    if n > (1 << 31) {
        return Err(err(format!("shape {shape:?} is too large")));
    }
    Ok(n)
}

/// Converts a list of i64 dims into usize dims (negative refused).
pub fn dims(v: &[i64]) -> R<Vec<usize>> {
    v.iter()
        .map(|&d| {
            if d < 0 {
                Err(err(format!("negative dimension in {v:?}")))
            } else {
                Ok(d as usize)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcast_shapes_and_index() {
        assert_eq!(bcast_shapes(&[&[2, 1, 3], &[4, 1]]).unwrap(), vec![2, 4, 3]);
        assert!(bcast_shapes(&[&[2, 3], &[4, 3]]).is_err());
        // [3] broadcast to [2, 3]: rows repeat.
        assert_eq!(bcast_index(&[3], &[2, 3]), vec![0, 1, 2, 0, 1, 2]);
        // [2, 1] broadcast to [2, 3]: columns repeat.
        assert_eq!(bcast_index(&[2, 1], &[2, 3]), vec![0, 0, 0, 1, 1, 1]);
    }

    #[test]
    fn axes() {
        assert_eq!(norm_axis(-1, 3).unwrap(), 2);
        assert!(norm_axis(3, 3).is_err());
        assert!(norm_axis(0, 0).is_err());
    }

    #[test]
    fn wrapping() {
        assert_eq!(wrap_dt(DType::U8, 256 + 7), 7);
        assert_eq!(wrap_dt(DType::I8, 128), -128);
        assert_eq!(f2i(DType::I32, -2.7), -2);
    }
}
