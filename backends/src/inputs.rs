//! Inputs for a model: generated from a seed for its declared input types, or read from files
//! (`.pb` TensorProto files, or a directory of `input_N.pb` as in the ONNX test suite).
use crate::value::{HostTensor, NamedValues, Value, ValueError};
use mutagraph_ir::dtype::DType;
use mutagraph_ir::model::Model;
use mutagraph_ir::rng::SplitMix64;
use mutagraph_ir::solve::{Fixed, Plan, SolveError, is_batch_name, solve};
use mutagraph_ir::types::{Dim, ValueType};
use std::collections::BTreeMap;
use std::path::Path;

/// A small deterministic generator ([`SplitMix64`] started from the seed): inputs depend only
/// on the seed.
#[derive(Clone, Debug)]
pub struct Rng(SplitMix64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix64::from_state(seed ^ 0x9e37_79b9_7f4a_7c15))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        self.0.unit()
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
}

/// Errors of input preparation.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// An input cannot be generated.
    #[error("input '{name}': {problem}")]
    Input {
        /// The graph input.
        name: String,
        /// What is wrong.
        problem: String,
    },
    /// A file could not be read.
    #[error("{path}: {problem}")]
    File {
        /// The file.
        path: String,
        /// What is wrong.
        problem: String,
    },
}

/// The most elements one generated input may have (16 Mi: 64 MiB of f32). Generated inputs
/// are for testing: a declared size beyond this (a dim of 10^6 in a hostile or mistaken model)
/// is refused before anything is allocated, in the process that generates it.
pub const MAX_GENERATED_ELEMENTS: usize = 1 << 24;

/// Options of generation.
#[derive(Clone, Debug)]
pub struct GenOptions {
    /// Size given to dims that are symbolic or unknown.
    pub free_dim: usize,
    /// Size given instead to a symbolic dim named as a batch (`batch`, `batch_size`, `N`),
    /// when set: a larger `free_dim` for the spatial and sequence dims need not multiply the
    /// work by the batch.
    pub batch_dim: Option<usize>,
    /// Range of floating-point values.
    pub float_range: (f64, f64),
    /// Range of integer values (half-open).
    pub int_range: (i64, i64),
    /// Shapes by input name (from [`solve`](mutagraph_ir::solve::solve) or the user): used
    /// where the input's declared rank is the same, its known dims overriding.
    pub shapes: BTreeMap<String, Vec<usize>>,
    /// Inputs filled with one value, by name.
    pub values: BTreeMap<String, f64>,
    /// Ranges of integer inputs, by name (half-open).
    pub ranges: BTreeMap<String, (i64, i64)>,
    /// Whole tensors of inputs, by name (the real values a window of a model reads, captured
    /// from a run of the whole model): used where the input's element type and shape match.
    pub tensors: std::sync::Arc<BTreeMap<String, HostTensor>>,
}

impl GenOptions {
    /// Options for `model`'s inputs: `free_dim` for every dynamic dim (batches too) when
    /// given, else the shapes [`solve`] finds; what `fixed` fixes and the selector values
    /// `solve` finds in both cases. `Err` when what `fixed` names does not fit the model.
    pub fn for_model(
        model: &Model,
        free_dim: Option<usize>,
        fixed: &Fixed,
    ) -> Result<GenOptions, SolveError> {
        let plan = solve(model, fixed)?;
        Ok(match free_dim {
            Some(n) => GenOptions {
                free_dim: n,
                shapes: fixed.shapes.clone(),
                values: plan.values,
                ranges: plan.ranges,
                ..GenOptions::default()
            },
            None => GenOptions::from_plan(&plan),
        })
    }

    /// Options generating the inputs `plan` chose.
    pub fn from_plan(plan: &Plan) -> GenOptions {
        GenOptions {
            shapes: plan.shapes.clone(),
            values: plan.values.clone(),
            ranges: plan.ranges.clone(),
            ..GenOptions::default()
        }
    }
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            free_dim: 1,
            batch_dim: None,
            float_range: (-1.0, 1.0),
            int_range: (0, 4),
            shapes: BTreeMap::new(),
            values: BTreeMap::new(),
            ranges: BTreeMap::new(),
            tensors: Default::default(),
        }
    }
}

/// Generates one value per real graph input of `model` from `seed`.
pub fn generate(model: &Model, seed: u64, opts: &GenOptions) -> Result<NamedValues, InputError> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    for vi in model.graph.real_inputs() {
        let name = vi.name.clone().unwrap_or_default();
        let ty = vi
            .r#type
            .as_ref()
            .map(ValueType::from_proto)
            .unwrap_or(ValueType::Unknown);
        let err = |problem: String| InputError::Input {
            name: name.clone(),
            problem,
        };
        let ValueType::Tensor(tt) = ty else {
            return Err(err(format!(
                "only tensor inputs can be generated (this one is {ty:?}); pass --inputs"
            )));
        };
        // A planned shape of another rank (a mutant changed the input) is not used.
        let planned = opts
            .shapes
            .get(&name)
            .filter(|p| tt.shape.as_ref().is_none_or(|d| d.len() == p.len()));
        let shape: Vec<usize> = match (&tt.shape, planned) {
            (Some(dims), planned) => dims
                .iter()
                .enumerate()
                .map(|(axis, d)| match (d, planned) {
                    (Dim::Known(v), _) if *v >= 0 => Ok(*v as usize),
                    (Dim::Known(v), _) => Err(err(format!("negative dimension {v}"))),
                    (_, Some(p)) => Ok(p[axis]),
                    (Dim::Param(p), None) if is_batch_name(p) => {
                        Ok(opts.batch_dim.unwrap_or(opts.free_dim))
                    }
                    _ => Ok(opts.free_dim),
                })
                .collect::<Result<_, _>>()?,
            (None, Some(p)) => p.clone(),
            (None, None) => vec![opts.free_dim],
        };
        let n = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .filter(|&n| n <= MAX_GENERATED_ELEMENTS)
            .ok_or_else(|| {
                err(format!(
                    "shape {shape:?} is too large to generate (over {MAX_GENERATED_ELEMENTS} elements; give smaller sizes with --input-shape, or the values with --inputs)"
                ))
            })?;
        if let Some(t) = opts.tensors.get(&name)
            && t.dtype == tt.dtype
            && t.shape == shape
        {
            out.push((name, Value::Tensor(t.clone())));
            continue;
        }
        let mut t = match (opts.values.get(&name), opts.ranges.get(&name)) {
            (Some(v), _) => HostTensor::from_f64s(tt.dtype, shape.clone(), &vec![*v; n])
                .map_err(|e| err(e.to_string()))?,
            (None, Some(&r)) => {
                let o = GenOptions {
                    int_range: r,
                    ..GenOptions::default()
                };
                generate_tensor(&mut rng, tt.dtype, shape, &o).map_err(|e| err(e.to_string()))?
            }
            (None, None) => {
                generate_tensor(&mut rng, tt.dtype, shape, opts).map_err(|e| err(e.to_string()))?
            }
        };
        if tt.dtype.is_float() && !opts.values.contains_key(&name) {
            let domain = domain_of(model, &name);
            if domain != Domain::Any
                && let Some(v) = t.to_f64s()
            {
                let v: Vec<f64> = v.into_iter().map(|x| domain.fit(x)).collect();
                t = HostTensor::from_f64s(tt.dtype, t.shape.clone(), &v)
                    .map_err(|e| err(e.to_string()))?;
            }
        }
        out.push((name, Value::Tensor(t)));
    }
    Ok(out)
}

/// The values a graph input may take so that the ops reading it stay in their domain (no log
/// of negatives, no division by values near 0, no Floor / Round / Cast / comparison right at an
/// edge where f32 rounding would flip the result).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    /// No constraint.
    Any,
    /// Positive, away from 0: `|x|` mapped into [0.1, 1].
    Positive,
    /// Away from 0, either sign.
    NonZero,
    /// At least 1.1 (Acosh).
    AboveOne,
    /// At least 1e-3 away from every multiple of 0.5.
    OffEdges,
}

impl Domain {
    /// Maps a value generated in [-1, 1) into the domain.
    pub fn fit(self, x: f64) -> f64 {
        match self {
            Domain::Any => x,
            Domain::Positive => 0.1 + 0.9 * x.abs().min(1.0),
            Domain::NonZero => {
                let m = 0.1 + 0.9 * x.abs().min(1.0);
                if x < 0.0 { -m } else { m }
            }
            Domain::AboveOne => 1.1 + x.abs(),
            Domain::OffEdges => {
                let h = (x * 2.0).round() / 2.0;
                let d = x - h;
                if d.abs() < 1e-3 {
                    h + if d < 0.0 { -1e-3 } else { 1e-3 }
                } else {
                    x
                }
            }
        }
    }
}

/// The domain of a graph input, from the ops that read it directly (the strictest wins).
pub fn domain_of(model: &Model, input: &str) -> Domain {
    let mut d = Domain::Any;
    for n in model.graph.nodes() {
        for (slot, i) in n.inputs.iter().enumerate() {
            if i != input {
                continue;
            }
            let want = match (n.op_type.as_str(), slot) {
                ("Log" | "Sqrt" | "Reciprocal" | "Pow", 0) => Domain::Positive,
                ("Div" | "Mod", 1) => Domain::NonZero,
                ("Acosh", 0) => Domain::AboveOne,
                (
                    "Floor" | "Ceil" | "Round" | "Cast" | "Sign" | "Greater" | "Less" | "Equal"
                    | "GreaterOrEqual" | "LessOrEqual" | "QuantizeLinear" | "ArgMax" | "ArgMin"
                    | "TopK" | "Hardmax",
                    _,
                ) => Domain::OffEdges,
                _ => Domain::Any,
            };
            let rank = |x: Domain| match x {
                Domain::Any => 0,
                Domain::OffEdges => 1,
                Domain::NonZero => 2,
                Domain::Positive => 3,
                Domain::AboveOne => 4,
            };
            if rank(want) > rank(d) {
                d = want;
            }
        }
    }
    d
}

/// Generates a tensor of `dtype` and `shape`.
pub fn generate_tensor(
    rng: &mut Rng,
    dtype: DType,
    shape: Vec<usize>,
    opts: &GenOptions,
) -> Result<HostTensor, ValueError> {
    let n: usize = shape.iter().product();
    if dtype == DType::String {
        let data = (0..n)
            .map(|_| format!("s{}", rng.next_u64() % 100).into_bytes())
            .collect();
        return Ok(HostTensor {
            dtype,
            shape,
            data: crate::value::Data::String(data),
        });
    }
    let vals: Vec<f64> = if dtype.is_float() {
        (0..n)
            .map(|_| rng.range(opts.float_range.0, opts.float_range.1))
            .collect()
    } else if dtype == DType::Bool {
        (0..n).map(|_| (rng.next_u64() & 1) as f64).collect()
    } else {
        let (lo, hi) = opts.int_range;
        let lo = if dtype.is_unsigned_int() {
            lo.max(0)
        } else {
            lo
        };
        let span = (hi - lo).max(1) as u64;
        (0..n)
            .map(|_| (lo + (rng.next_u64() % span) as i64) as f64)
            .collect()
    };
    HostTensor::from_f64s(dtype, shape, &vals)
}

/// Reads inputs from `path`: a directory holding `input_0.pb`, `input_1.pb`, ... (the ONNX test
/// suite layout), or one `.pb` file for a single-input model. Values are matched to the real
/// graph inputs by position.
pub fn read(model: &Model, path: &Path) -> Result<NamedValues, InputError> {
    let decl: Vec<(String, ValueType)> = model
        .graph
        .real_inputs()
        .iter()
        .map(|vi| {
            (
                vi.name.clone().unwrap_or_default(),
                vi.r#type
                    .as_ref()
                    .map(ValueType::from_proto)
                    .unwrap_or(ValueType::Unknown),
            )
        })
        .collect();
    let ferr = |p: &Path, problem: String| InputError::File {
        path: p.display().to_string(),
        problem,
    };
    let files: Vec<std::path::PathBuf> = if path.is_dir() {
        (0..)
            .map(|i| path.join(format!("input_{i}.pb")))
            .take_while(|p| p.is_file())
            .collect()
    } else if path.is_file() {
        vec![path.to_path_buf()]
    } else {
        return Err(ferr(path, "no such file or directory".into()));
    };
    if files.len() != decl.len() {
        return Err(ferr(
            path,
            format!(
                "the model has {} inputs, {} input files were found",
                decl.len(),
                files.len()
            ),
        ));
    }
    let mut out = Vec::new();
    for (f, (name, ty)) in files.iter().zip(decl) {
        let bytes = std::fs::read(f).map_err(|e| ferr(f, e.to_string()))?;
        let v = Value::decode(&bytes, &ty).map_err(|e| ferr(f, e.to_string()))?;
        out.push((name, v));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_named_dims_take_their_own_size() {
        let m = mutagraph_ir::text::parse_model(
            "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (float[batch_size,3,H,W] x, float[N,?] y) => (float[batch_size,3,H,W] z) { z = Relu (x) }",
        )
        .unwrap();
        let opts = GenOptions {
            free_dim: 8,
            batch_dim: Some(1),
            ..GenOptions::default()
        };
        let v = generate(&m, 1, &opts).unwrap();
        let shape = |i: usize| v[i].1.tensor().unwrap().shape.clone();
        assert_eq!(shape(0), vec![1, 3, 8, 8]);
        assert_eq!(shape(1), vec![1, 8]);
        // Without a batch size every dynamic dim takes free_dim.
        let v = generate(
            &m,
            1,
            &GenOptions {
                batch_dim: None,
                ..opts
            },
        )
        .unwrap();
        assert_eq!(v[0].1.tensor().unwrap().shape, vec![8, 3, 8, 8]);
    }

    #[test]
    fn a_declared_size_too_large_to_generate_is_an_error_before_any_allocation() {
        // 3 × 10^6 × 32 elements is over the limit; 2^62 × 8 overflows usize (a wrapping
        // product would have read it as 0 elements).
        for dims in ["1,3,1000000,32", "4611686018427387904,8"] {
            let m = mutagraph_ir::text::parse_model(&format!(
                "<ir_version: 8, opset_import: [\"\" : 17]>\n\
                 g (float[{dims}] x) => (float[{dims}] y) {{ y = Relu (x) }}"
            ))
            .unwrap();
            let e = generate(&m, 1, &GenOptions::default()).unwrap_err();
            assert!(
                e.to_string().contains("too large to generate"),
                "{dims}: {e}"
            );
        }
    }

    #[test]
    fn generation_is_deterministic_and_in_range() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let o = GenOptions::default();
        let x = generate_tensor(&mut a, DType::F32, vec![4, 5], &o).unwrap();
        let y = generate_tensor(&mut b, DType::F32, vec![4, 5], &o).unwrap();
        assert_eq!(x, y);
        let v = x.to_f64s().unwrap();
        assert!(v.iter().all(|&x| (-1.0..1.0).contains(&x)));
        assert!(v.iter().any(|&x| x != v[0]));
        let i = generate_tensor(&mut a, DType::I64, vec![100], &o).unwrap();
        assert!(i.to_i64s().unwrap().iter().all(|&x| (0..4).contains(&x)));
        let mut c = Rng::new(8);
        let z = generate_tensor(&mut c, DType::F32, vec![4, 5], &o).unwrap();
        assert_ne!(x, z, "another seed gives other values");
    }

    #[test]
    fn inputs_stay_in_the_domain_of_their_readers() {
        for d in [
            Domain::Positive,
            Domain::NonZero,
            Domain::AboveOne,
            Domain::OffEdges,
        ] {
            for k in -1000..1000 {
                let x = k as f64 / 1000.0;
                let y = d.fit(x);
                match d {
                    Domain::Positive => assert!((0.1..=1.0).contains(&y), "{x} -> {y}"),
                    Domain::NonZero => {
                        assert!(y.abs() >= 0.1 && y.signum() == if x < 0.0 { -1.0 } else { 1.0 })
                    }
                    Domain::AboveOne => assert!(y >= 1.1),
                    Domain::OffEdges => {
                        let h = (y * 2.0).round() / 2.0;
                        assert!((y - h).abs() >= 1e-3 - 1e-12, "{x} -> {y}");
                        assert!((y - x).abs() <= 1e-3 + 1e-12);
                    }
                    Domain::Any => {}
                }
            }
        }
        let mut m = Model::new(17);
        m.graph.inputs.push(mutagraph_ir::pb::ValueInfoProto {
            name: Some("x".into()),
            r#type: Some(
                ValueType::Tensor(mutagraph_ir::types::TensorType::fixed(DType::F32, &[64]))
                    .to_proto(),
            ),
            ..Default::default()
        });
        m.graph.outputs.push(mutagraph_ir::pb::ValueInfoProto {
            name: Some("y".into()),
            r#type: Some(
                ValueType::Tensor(mutagraph_ir::types::TensorType::fixed(DType::F32, &[64]))
                    .to_proto(),
            ),
            ..Default::default()
        });
        let mut p = mutagraph_ir::patch::Patch::new();
        p.push(mutagraph_ir::patch::PatchOp::AddNode(
            mutagraph_ir::graph::Node::new("Log", &["x"], &["y"]),
        ));
        m.apply(&p).unwrap();
        assert_eq!(domain_of(&m, "x"), Domain::Positive);
        let v = generate(&m, 3, &GenOptions::default()).unwrap();
        let x = v[0].1.tensor().unwrap().to_f64s().unwrap();
        assert!(x.iter().all(|&x| x >= 0.1), "{x:?}");
    }
}
