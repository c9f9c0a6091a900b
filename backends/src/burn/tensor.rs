//! Runtime values of the interpreter: a burn tensor of one fixed rank [`R`] whose shape is the
//! ONNX shape left-padded with ones (numpy broadcasting aligns shapes on the right, so padding
//! with leading ones keeps every broadcast valid), plus the ONNX shape and element type.
use crate::backend::{BackendError, Stage};
use crate::value::{Data, HostTensor};
use burn::tensor::backend::Backend as BurnBackend;
use burn::tensor::{Bool, Int, Tensor, TensorData};
use half::{bf16, f16};
use mutagraph_ir::dtype::DType;

/// The rank of every burn tensor the interpreter holds; ONNX tensors of higher rank are refused.
pub(crate) const R: usize = 6;

/// The broad class of an ONNX element type: which burn tensor kind holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    Float,
    Int,
    Bool,
}

/// The class of an ONNX element type, `None` when the interpreter cannot hold it.
///
/// Floats (f16, bf16, f32, f64) are computed in the backend's float type (f64 on NdArray for a
/// model holding f64 values, else f32) and each op's result is rounded to its declared type; integers up to 32 bits and i64 are computed in
/// the backend's int type (i64 on NdArray, i32 on wgpu/CUDA); u64, strings, complex and the
/// sub-byte / float8 types are refused.
pub(crate) fn class(d: DType) -> Option<Class> {
    match d {
        DType::F32 | DType::F64 | DType::F16 | DType::BF16 => Some(Class::Float),
        DType::I8 | DType::I16 | DType::I32 | DType::I64 | DType::U8 | DType::U16 | DType::U32 => {
            Some(Class::Int)
        }
        DType::Bool => Some(Class::Bool),
        _ => None,
    }
}

/// The element types the interpreter accepts.
pub(crate) const DTYPES: &[DType] = &[
    DType::F32,
    DType::F64,
    DType::F16,
    DType::BF16,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::Bool,
];

/// A burn tensor of one of the three kinds.
pub(crate) enum K<B: BurnBackend> {
    F(Tensor<B, R>),
    I(Tensor<B, R, Int>),
    B(Tensor<B, R, Bool>),
}

impl<B: BurnBackend> Clone for K<B> {
    fn clone(&self) -> Self {
        match self {
            K::F(t) => K::F(t.clone()),
            K::I(t) => K::I(t.clone()),
            K::B(t) => K::B(t.clone()),
        }
    }
}

/// Applies the same (kind-generic) expression to a tensor of any kind.
macro_rules! each {
    ($k:expr, |$t:ident| $body:expr) => {
        match $k {
            $crate::burn::tensor::K::F($t) => $crate::burn::tensor::K::F($body),
            $crate::burn::tensor::K::I($t) => $crate::burn::tensor::K::I($body),
            $crate::burn::tensor::K::B($t) => $crate::burn::tensor::K::B($body),
        }
    };
}
pub(crate) use each;

/// One runtime value: the tensor, its ONNX shape and its ONNX element type.
pub(crate) struct Val<B: BurnBackend> {
    pub k: K<B>,
    pub shape: Vec<usize>,
    pub dtype: DType,
}

impl<B: BurnBackend> Clone for Val<B> {
    fn clone(&self) -> Self {
        Val {
            k: self.k.clone(),
            shape: self.shape.clone(),
            dtype: self.dtype,
        }
    }
}

/// The ONNX shape padded on the left with ones to rank [`R`].
pub(crate) fn pad(shape: &[usize]) -> [usize; R] {
    let mut out = [1usize; R];
    let off = R - shape.len();
    out[off..].copy_from_slice(shape);
    out
}

/// `t` reshaped to the ONNX shape `shape` (padded to rank [`R`]): [`ReshapeExact`].
pub(crate) fn reshaped<const D: usize, B: BurnBackend, K: burn::tensor::BasicOps<B>>(
    t: Tensor<B, D, K>,
    shape: &[usize],
) -> Tensor<B, R, K> {
    t.reshape_exact(pad(shape))
}

/// A reshape to exactly the dims given. burn reads a 0 in a reshape target as "keep this
/// dimension" (its documented convention, ONNX Reshape's without `allowzero`), so an adapter
/// reshaping an empty tensor with `Tensor::reshape` asks for another shape than it means
/// (round 12 filed that as a burn Conv bug): an empty result is made afresh instead. Every
/// reshape of the adapter's own (rank padding, kernel layouts, flattening) goes through here.
pub(crate) trait ReshapeExact<B: BurnBackend, K: burn::tensor::BasicOps<B>> {
    fn reshape_exact<const D2: usize>(self, dims: [usize; D2]) -> Tensor<B, D2, K>;
}

impl<const D: usize, B: BurnBackend, K: burn::tensor::BasicOps<B>> ReshapeExact<B, K>
    for Tensor<B, D, K>
{
    fn reshape_exact<const D2: usize>(self, dims: [usize; D2]) -> Tensor<B, D2, K> {
        if dims.contains(&0) {
            Tensor::empty(dims, &self.device())
        } else {
            self.reshape(dims)
        }
    }
}

/// The burn axis of ONNX axis `axis` (already normalized) of a tensor of rank `rank`.
pub(crate) fn bax(rank: usize, axis: usize) -> usize {
    R - rank + axis
}

pub(crate) fn run_err(msg: impl Into<String>) -> BackendError {
    BackendError::failed(Stage::Run, msg)
}

pub(crate) fn run_unsup(msg: impl Into<String>) -> BackendError {
    BackendError::unsupported(Stage::Run, msg)
}

impl<B: BurnBackend> Val<B> {
    pub fn new(k: K<B>, shape: Vec<usize>, dtype: DType) -> Val<B> {
        Val { k, shape, dtype }
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn class(&self) -> Class {
        match self.k {
            K::F(_) => Class::Float,
            K::I(_) => Class::Int,
            K::B(_) => Class::Bool,
        }
    }

    /// The tensor as floats (ints and bools converted).
    pub fn f(&self) -> Tensor<B, R> {
        match &self.k {
            K::F(t) => t.clone(),
            K::I(t) => t.clone().float(),
            K::B(t) => t.clone().float(),
        }
    }

    /// The tensor as ints (floats truncated, bools 0/1).
    pub fn i(&self) -> Tensor<B, R, Int> {
        match &self.k {
            K::F(t) => t.clone().int(),
            K::I(t) => t.clone(),
            K::B(t) => t.clone().int(),
        }
    }

    /// The tensor as bools (non-zero is true).
    pub fn b(&self) -> Tensor<B, R, Bool> {
        match &self.k {
            K::F(t) => t.clone().not_equal_elem(0.0),
            K::I(t) => t.clone().not_equal_elem(0),
            K::B(t) => t.clone(),
        }
    }

    /// The same tensor with another ONNX shape of as many elements.
    pub fn reshape(self, shape: Vec<usize>) -> Val<B> {
        let k = each!(self.k, |t| reshaped(t, &shape));
        Val {
            k,
            shape,
            dtype: self.dtype,
        }
    }

    /// A float value of this value's dtype (or `dtype`).
    pub fn float(t: Tensor<B, R>, shape: Vec<usize>, dtype: DType) -> Val<B> {
        Val::new(K::F(t), shape, dtype)
    }

    /// Values read back as f64.
    pub fn host_f64(&self) -> Vec<f64> {
        if self.numel() == 0 {
            return Vec::new();
        }
        match &self.k {
            K::F(t) => t.to_data().iter::<f64>().collect(),
            K::I(t) => t.to_data().iter::<i64>().map(|x| x as f64).collect(),
            K::B(t) => t
                .clone()
                .int()
                .to_data()
                .iter::<i64>()
                .map(|x| x as f64)
                .collect(),
        }
    }

    /// Values read back as i64 (floats truncated).
    pub fn host_i64(&self) -> Vec<i64> {
        if self.numel() == 0 {
            return Vec::new();
        }
        match &self.k {
            K::F(t) => t.to_data().iter::<f64>().map(|x| x as i64).collect(),
            K::I(t) => t.to_data().iter::<i64>().collect(),
            K::B(t) => t.clone().int().to_data().iter::<i64>().collect(),
        }
    }
}

/// Uploads f32 values.
pub(crate) fn mk_f<B: BurnBackend>(
    v: Vec<f32>,
    shape: Vec<usize>,
    dtype: DType,
    dev: &B::Device,
) -> Val<B> {
    let t = Tensor::<B, R>::from_data(TensorData::new(v, pad(&shape)), dev);
    Val::new(K::F(t), shape, dtype)
}

/// Uploads i64 values.
pub(crate) fn mk_i<B: BurnBackend>(
    v: Vec<i64>,
    shape: Vec<usize>,
    dtype: DType,
    dev: &B::Device,
) -> Val<B> {
    let t = Tensor::<B, R, Int>::from_data(TensorData::new(v, pad(&shape)), dev);
    Val::new(K::I(t), shape, dtype)
}

/// Uploads booleans.
pub(crate) fn mk_b<B: BurnBackend>(v: Vec<bool>, shape: Vec<usize>, dev: &B::Device) -> Val<B> {
    let t = Tensor::<B, R, Bool>::from_data(TensorData::new(v, pad(&shape)), dev);
    Val::new(K::B(t), shape, DType::Bool)
}

/// Uploads f64 values as a tensor of `dtype`'s class.
pub(crate) fn mk_from_f64<B: BurnBackend>(
    v: &[f64],
    shape: Vec<usize>,
    dtype: DType,
    dev: &B::Device,
) -> Result<Val<B>, BackendError> {
    Ok(match class(dtype) {
        Some(Class::Float) => {
            let t = Tensor::<B, R>::from_data(TensorData::new(v.to_vec(), pad(&shape)), dev);
            Val::new(K::F(t), shape, dtype)
        }
        Some(Class::Int) => mk_i(v.iter().map(|&x| x as i64).collect(), shape, dtype, dev),
        Some(Class::Bool) => mk_b(v.iter().map(|&x| x != 0.0).collect(), shape, dev),
        None => return Err(run_unsup(format!("element type {dtype}"))),
    })
}

/// Uploads a host tensor.
pub(crate) fn upload<B: BurnBackend>(
    h: &HostTensor,
    dev: &B::Device,
) -> Result<Val<B>, BackendError> {
    if h.shape.len() > R {
        return Err(run_unsup(format!("rank {} above {R}", h.shape.len())));
    }
    let shape = h.shape.clone();
    Ok(match class(h.dtype) {
        Some(Class::Float) => match &h.data {
            Data::F32(v) => mk_f(v.clone(), shape, h.dtype, dev),
            // f64 values keep their precision on a backend computing in f64
            _ => {
                let v = h
                    .to_f64s()
                    .ok_or_else(|| run_err("undecodable float tensor"))?;
                mk_from_f64(&v, shape, h.dtype, dev)?
            }
        },
        Some(Class::Int) => {
            let v = h
                .to_i64s()
                .ok_or_else(|| run_err("undecodable int tensor"))?;
            mk_i(v, shape, h.dtype, dev)
        }
        Some(Class::Bool) => {
            let v: Vec<bool> = match &h.data {
                Data::Bool(v) => v.clone(),
                _ => return Err(run_err("bool tensor without bool data")),
            };
            mk_b(v, shape, dev)
        }
        None => return Err(run_unsup(format!("element type {}", h.dtype))),
    })
}

/// Downloads a value as a host tensor of its ONNX element type.
pub(crate) fn download<B: BurnBackend>(v: &Val<B>) -> Result<HostTensor, BackendError> {
    let shape = v.shape.clone();
    let n = v.numel();
    let data = match class(v.dtype) {
        Some(Class::Float) => {
            let x = if n == 0 { Vec::new() } else { v.host_f64() };
            match v.dtype {
                DType::F32 => Data::F32(x.iter().map(|&a| a as f32).collect()),
                DType::F64 => Data::F64(x),
                DType::F16 => Data::F16(x.iter().map(|&a| f16::from_f64(a)).collect()),
                _ => Data::BF16(x.iter().map(|&a| bf16::from_f64(a)).collect()),
            }
        }
        Some(Class::Int) => {
            let x = if n == 0 { Vec::new() } else { v.host_i64() };
            match v.dtype {
                DType::I8 => Data::I8(x.iter().map(|&a| a as i8).collect()),
                DType::I16 => Data::I16(x.iter().map(|&a| a as i16).collect()),
                DType::I32 => Data::I32(x.iter().map(|&a| a as i32).collect()),
                DType::U8 => Data::U8(x.iter().map(|&a| a as u8).collect()),
                DType::U16 => Data::U16(x.iter().map(|&a| a as u16).collect()),
                DType::U32 => Data::U32(x.iter().map(|&a| a as u32).collect()),
                _ => Data::I64(x),
            }
        }
        Some(Class::Bool) => {
            let x = if n == 0 { Vec::new() } else { v.host_i64() };
            Data::Bool(x.iter().map(|&a| a != 0).collect())
        }
        None => return Err(run_unsup(format!("element type {}", v.dtype))),
    };
    Ok(HostTensor {
        dtype: v.dtype,
        shape,
        data,
    })
}

/// Concatenates tensors of one kind along burn axis `d`.
pub(crate) fn cat<B: BurnBackend>(parts: Vec<K<B>>, d: usize) -> Result<K<B>, BackendError> {
    macro_rules! all {
        ($variant:ident) => {
            K::$variant(Tensor::cat(
                parts
                    .into_iter()
                    .map(|k| match k {
                        K::$variant(t) => Ok(t),
                        _ => Err(run_err("concatenation of tensors of different kinds")),
                    })
                    .collect::<Result<Vec<_>, _>>()?,
                d,
            ))
        };
    }
    Ok(match parts.first() {
        Some(K::F(_)) => all!(F),
        Some(K::I(_)) => all!(I),
        Some(K::B(_)) => all!(B),
        None => return Err(run_err("concatenation of nothing")),
    })
}

/// A runtime value of any ONNX kind the interpreter holds: a tensor, a sequence (of tensors,
/// or of sequences) or an optional. Sequences and optionals are host-side containers of burn
/// tensors, as a burn program would keep a `Vec<Tensor>` or an `Option<Tensor>`.
pub(crate) enum Item<B: BurnBackend> {
    T(Val<B>),
    Seq(Vec<Item<B>>),
    Opt(Option<Box<Item<B>>>),
}

impl<B: BurnBackend> Clone for Item<B> {
    fn clone(&self) -> Self {
        match self {
            Item::T(v) => Item::T(v.clone()),
            Item::Seq(s) => Item::Seq(s.clone()),
            Item::Opt(o) => Item::Opt(o.clone()),
        }
    }
}

impl<B: BurnBackend> Item<B> {
    /// What the value is, for messages.
    pub fn describe(&self) -> String {
        match self {
            Item::T(v) => format!("a {} tensor of shape {:?}", v.dtype, v.shape),
            Item::Seq(s) => format!("a sequence of {}", s.len()),
            Item::Opt(None) => "an empty optional".into(),
            Item::Opt(Some(_)) => "an optional".into(),
        }
    }

    /// The tensor, or an error naming what the value is instead.
    pub fn into_tensor(self, what: &str) -> Result<Val<B>, BackendError> {
        match self {
            Item::T(v) => Ok(v),
            other => Err(run_err(format!(
                "{what} is {} where a tensor is expected",
                other.describe()
            ))),
        }
    }
}

/// Uploads a host value of any kind.
pub(crate) fn upload_value<B: BurnBackend>(
    v: &crate::value::Value,
    dev: &B::Device,
) -> Result<Item<B>, BackendError> {
    use crate::value::Value;
    Ok(match v {
        Value::Tensor(h) => Item::T(upload(h, dev)?),
        Value::Sequence(s) => Item::Seq(
            s.iter()
                .map(|x| upload_value(x, dev))
                .collect::<Result<_, _>>()?,
        ),
        Value::Optional(o) => Item::Opt(match o {
            Some(x) => Some(Box::new(upload_value(x, dev)?)),
            None => None,
        }),
    })
}

/// Downloads a value of any kind.
pub(crate) fn download_value<B: BurnBackend>(
    v: &Item<B>,
) -> Result<crate::value::Value, BackendError> {
    use crate::value::Value;
    Ok(match v {
        Item::T(t) => Value::Tensor(download(t)?),
        Item::Seq(s) => Value::Sequence(s.iter().map(download_value).collect::<Result<_, _>>()?),
        Item::Opt(o) => Value::Optional(match o {
            Some(x) => Some(Box::new(download_value(x)?)),
            None => None,
        }),
    })
}
