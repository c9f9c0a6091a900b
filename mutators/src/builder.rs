//! A small graph builder over the IR: typed graph inputs, seeded random weights and one helper
//! per common layer (convolution, pooling, normalization, attention pieces, recurrent layers).
//!
//! Every helper takes value names, adds its nodes and initializers, and returns the name of its
//! output. Value names are generated (`<hint>_<n>`), so they never collide. The builder tracks
//! the static shape of every value itself (all shapes are fixed), which is what lets a helper
//! size its weights (`conv` reads the input channel count); [`GraphBuilder::finish`] checks
//! these shapes against the IR's own inference.
//!
//! Weights are drawn from a SplitMix64 generator seeded by the caller, so the same calls give
//! the same model, byte for byte. They are scaled like He (after ReLU-like activations) or
//! Xavier (otherwise) uniform initializations, so activations keep a sane range through deep
//! nets.
//!
//! ```
//! use mutagraph_mutators::builder::GraphBuilder;
//! use mutagraph_mutators::ir::DType;
//! let mut b = GraphBuilder::new("tiny", 7);
//! let x = b.input("x", DType::F32, &[1, 3, 8, 8]);
//! let y = b.conv(&x, 4, 3, 1, 1, 1);
//! let y = b.relu(&y);
//! let y = b.global_avg_pool(&y);
//! b.output(&y);
//! let model = b.finish().unwrap();
//! assert_eq!(model.graph.node_count(), 3);
//! ```
use crate::ir::attr::AttrValue;
use crate::ir::error::{Error, Result};
use crate::ir::infer;
use crate::ir::ops::common::broadcast_dims;
use crate::ir::patch::{Patch, PatchOp};
use crate::ir::tensor::{self, Tensor};
use crate::ir::types::{Dim, ValueType};
use crate::ir::{DType, Model, Node, pb};
use std::collections::HashMap;

/// The opset a builder targets unless told otherwise.
pub const DEFAULT_OPSET: i64 = 17;

/// The workspace's one SplitMix64 stream (weights here, the campaign's draws), kept where
/// every seeded stream draws from: [`mutagraph_ir::rng`].
pub use crate::ir::rng::SplitMix64;

/// Builds one model (single main graph, one default-domain opset, f32 weights).
#[derive(Clone, Debug)]
pub struct GraphBuilder {
    name: String,
    opset: i64,
    rng: SplitMix64,
    counter: usize,
    nodes: Vec<Node>,
    initializers: Vec<Tensor>,
    inputs: Vec<pb::ValueInfoProto>,
    outputs: Vec<String>,
    shapes: HashMap<String, Vec<i64>>,
    params: usize,
}

/// The numpy broadcast of two static shapes ([`broadcast_dims`]); panics where they do not
/// broadcast (a builder call that makes no model).
fn broadcast(a: &[i64], b: &[i64]) -> Vec<i64> {
    broadcast_dims(a, b).unwrap_or_else(|| panic!("shapes {a:?} and {b:?} do not broadcast"))
}

fn tensor_info(name: &str, dtype: DType, dims: &[i64]) -> pb::ValueInfoProto {
    let ty = ValueType::t(dtype, Some(dims.iter().map(|&d| Dim::Known(d)).collect()));
    pb::ValueInfoProto {
        name: Some(name.to_string()),
        r#type: Some(ty.to_proto()),
        ..Default::default()
    }
}

fn pool_out(size: i64, k: i64, stride: i64, pad: i64) -> i64 {
    (size + 2 * pad - k) / stride + 1
}

impl GraphBuilder {
    /// A builder for opset [`DEFAULT_OPSET`] whose weights come from `seed`.
    pub fn new(name: &str, seed: u64) -> GraphBuilder {
        GraphBuilder::with_opset(name, seed, DEFAULT_OPSET)
    }

    /// A builder for a given opset.
    pub fn with_opset(name: &str, seed: u64, opset: i64) -> GraphBuilder {
        GraphBuilder {
            name: name.to_string(),
            opset,
            rng: SplitMix64::new(seed),
            counter: 0,
            nodes: Vec::new(),
            initializers: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            shapes: HashMap::new(),
            params: 0,
        }
    }

    /// The builder's random generator (for callers that draw their own constants).
    pub fn rng(&mut self) -> &mut SplitMix64 {
        &mut self.rng
    }

    /// The static shape of a value made by this builder.
    ///
    /// # Panics
    /// If the value is unknown to the builder.
    pub fn shape(&self, value: &str) -> Vec<i64> {
        self.shapes
            .get(value)
            .unwrap_or_else(|| panic!("builder: unknown value '{value}'"))
            .clone()
    }

    /// Number of weight elements added so far.
    pub fn param_count(&self) -> usize {
        self.params
    }

    /// A fresh value name `<hint>_<n>`.
    pub fn fresh(&mut self, hint: &str) -> String {
        self.counter += 1;
        format!("{hint}_{}", self.counter)
    }

    /// Declares a graph input with a fixed shape and returns its name.
    pub fn input(&mut self, name: &str, dtype: DType, dims: &[i64]) -> String {
        self.inputs.push(tensor_info(name, dtype, dims));
        self.shapes.insert(name.to_string(), dims.to_vec());
        name.to_string()
    }

    /// Marks a value as a graph output (declared f32 with the tracked shape; the builder makes
    /// f32 models only).
    pub fn output(&mut self, value: &str) {
        self.outputs.push(value.to_string());
    }

    /// An f32 initializer with the given values.
    pub fn constant(&mut self, hint: &str, dims: &[i64], values: &[f64]) -> String {
        let name = self.fresh(hint);
        self.initializers
            .push(tensor::from_f64s(&name, DType::F32, dims, values));
        self.shapes.insert(name.clone(), dims.to_vec());
        name
    }

    /// An i64 initializer (shapes, axes).
    pub fn constant_i64(&mut self, hint: &str, dims: &[i64], values: &[i64]) -> String {
        let name = self.fresh(hint);
        self.initializers
            .push(tensor::from_i64s(&name, dims, values));
        self.shapes.insert(name.clone(), dims.to_vec());
        name
    }

    /// A random f32 weight, uniform in `[-bound, bound)`; counted as parameters.
    pub fn weight_bounded(&mut self, hint: &str, dims: &[i64], bound: f64) -> String {
        let n: i64 = dims.iter().product();
        let values: Vec<f64> = (0..n).map(|_| self.rng.range(-bound, bound)).collect();
        self.params += values.len();
        self.constant(hint, dims, &values)
    }

    /// A random f32 weight, uniform in `[lo, hi)`; counted as parameters.
    pub fn weight_range(&mut self, hint: &str, dims: &[i64], lo: f64, hi: f64) -> String {
        let n: i64 = dims.iter().product();
        let values: Vec<f64> = (0..n).map(|_| self.rng.range(lo, hi)).collect();
        self.params += values.len();
        self.constant(hint, dims, &values)
    }

    /// A random weight whose fan-in is taken as the product of all dims but the first
    /// (Xavier-like uniform bound `sqrt(3 / fan_in)`: unit-variance inputs give unit-variance
    /// outputs before the activation).
    pub fn weight(&mut self, hint: &str, dims: &[i64]) -> String {
        let fan_in: i64 = dims.iter().skip(1).product::<i64>().max(1);
        self.weight_bounded(hint, dims, (3.0 / fan_in as f64).sqrt())
    }

    /// Adds a node with attributes whose outputs have the given shapes; returns the outputs.
    pub fn node(
        &mut self,
        op: &str,
        inputs: &[&str],
        attrs: Vec<(&str, AttrValue)>,
        out_shapes: Vec<Vec<i64>>,
    ) -> Vec<String> {
        let hint = op.to_lowercase();
        let outs: Vec<String> = out_shapes.iter().map(|_| self.fresh(&hint)).collect();
        let out_refs: Vec<&str> = outs.iter().map(String::as_str).collect();
        let mut node = Node::new(op, inputs, &out_refs);
        node.name = Some(format!("{op}_{}", self.nodes.len()));
        for (k, v) in attrs {
            node = node.with_attr(k, v);
        }
        self.nodes.push(node);
        for (o, s) in outs.iter().zip(out_shapes) {
            self.shapes.insert(o.clone(), s);
        }
        outs
    }

    fn single(
        &mut self,
        op: &str,
        inputs: &[&str],
        attrs: Vec<(&str, AttrValue)>,
        shape: Vec<i64>,
    ) -> String {
        self.node(op, inputs, attrs, vec![shape]).remove(0)
    }

    /// An elementwise unary op (`Relu`, `Sigmoid`, `Tanh`, `Erf`, ...).
    pub fn unary(&mut self, op: &str, x: &str) -> String {
        let s = self.shape(x);
        self.single(op, &[x], vec![], s)
    }

    /// `Relu`.
    pub fn relu(&mut self, x: &str) -> String {
        self.unary("Relu", x)
    }

    /// `Sigmoid`.
    pub fn sigmoid(&mut self, x: &str) -> String {
        self.unary("Sigmoid", x)
    }

    /// `Tanh`.
    pub fn tanh(&mut self, x: &str) -> String {
        self.unary("Tanh", x)
    }

    /// ReLU6 as `Clip(x, 0, 6)`.
    pub fn relu6(&mut self, x: &str) -> String {
        let lo = self.constant("clip_min", &[], &[0.0]);
        let hi = self.constant("clip_max", &[], &[6.0]);
        let s = self.shape(x);
        self.single("Clip", &[x, &lo, &hi], vec![], s)
    }

    /// Exact GELU decomposed as `0.5 * x * (1 + erf(x / sqrt(2)))` (there is no `Gelu` op
    /// before opset 20).
    pub fn gelu(&mut self, x: &str) -> String {
        let r = self.constant("gelu_rsqrt2", &[], &[std::f64::consts::FRAC_1_SQRT_2]);
        let one = self.constant("gelu_one", &[], &[1.0]);
        let half = self.constant("gelu_half", &[], &[0.5]);
        let t = self.mul(x, &r);
        let t = self.unary("Erf", &t);
        let t = self.add(&t, &one);
        let t = self.mul(x, &t);
        self.mul(&t, &half)
    }

    /// A broadcasting binary op (`Add`, `Mul`, `Sub`, `Div`).
    pub fn binary(&mut self, op: &str, a: &str, b: &str) -> String {
        let s = broadcast(&self.shape(a), &self.shape(b));
        self.single(op, &[a, b], vec![], s)
    }

    /// `Add`.
    pub fn add(&mut self, a: &str, b: &str) -> String {
        self.binary("Add", a, b)
    }

    /// `Mul`.
    pub fn mul(&mut self, a: &str, b: &str) -> String {
        self.binary("Mul", a, b)
    }

    /// `Conv` with a bias: `out_ch` filters of `k`×`k`, square stride and padding, `group`
    /// groups (`group == in_channels == out_ch` is a depthwise convolution). He-uniform
    /// weights (the caller usually follows with a ReLU).
    pub fn conv(
        &mut self,
        x: &str,
        out_ch: i64,
        k: i64,
        stride: i64,
        pad: i64,
        group: i64,
    ) -> String {
        let s = self.shape(x);
        assert_eq!(s.len(), 4, "conv takes NCHW input");
        let in_ch = s[1];
        assert!(
            in_ch % group == 0 && out_ch % group == 0,
            "bad group {group}"
        );
        let fan_in = (in_ch / group) * k * k;
        let w = self.weight_bounded(
            "conv_w",
            &[out_ch, in_ch / group, k, k],
            (6.0 / fan_in as f64).sqrt(),
        );
        let b = self.weight_bounded("conv_b", &[out_ch], 0.1);
        let out = vec![
            s[0],
            out_ch,
            pool_out(s[2], k, stride, pad),
            pool_out(s[3], k, stride, pad),
        ];
        self.single(
            "Conv",
            &[x, &w, &b],
            vec![
                ("kernel_shape", AttrValue::Ints(vec![k, k])),
                ("strides", AttrValue::Ints(vec![stride, stride])),
                ("pads", AttrValue::Ints(vec![pad, pad, pad, pad])),
                ("group", AttrValue::Int(group)),
            ],
            out,
        )
    }

    fn pool(&mut self, op: &str, x: &str, k: i64, stride: i64, pad: i64) -> String {
        let s = self.shape(x);
        let out = vec![
            s[0],
            s[1],
            pool_out(s[2], k, stride, pad),
            pool_out(s[3], k, stride, pad),
        ];
        let mut attrs = vec![
            ("kernel_shape", AttrValue::Ints(vec![k, k])),
            ("strides", AttrValue::Ints(vec![stride, stride])),
        ];
        if pad > 0 {
            attrs.push(("pads", AttrValue::Ints(vec![pad, pad, pad, pad])));
        }
        self.single(op, &[x], attrs, out)
    }

    /// `MaxPool` (square kernel, stride and padding).
    pub fn maxpool(&mut self, x: &str, k: i64, stride: i64, pad: i64) -> String {
        self.pool("MaxPool", x, k, stride, pad)
    }

    /// `AveragePool` without padding (padded averages differ between libraries on
    /// `count_include_pad`, so the builder does not offer them).
    pub fn avgpool(&mut self, x: &str, k: i64, stride: i64) -> String {
        self.pool("AveragePool", x, k, stride, 0)
    }

    /// `GlobalAveragePool`: NCHW → NC11.
    pub fn global_avg_pool(&mut self, x: &str) -> String {
        let s = self.shape(x);
        self.single("GlobalAveragePool", &[x], vec![], vec![s[0], s[1], 1, 1])
    }

    /// `BatchNormalization` (inference mode) with random but well-conditioned statistics.
    pub fn batchnorm(&mut self, x: &str) -> String {
        let s = self.shape(x);
        let c = s[1];
        let scale = self.weight_range("bn_scale", &[c], 0.8, 1.2);
        let bias = self.weight_range("bn_bias", &[c], -0.1, 0.1);
        let mean = self.weight_range("bn_mean", &[c], -0.1, 0.1);
        let var = self.weight_range("bn_var", &[c], 0.5, 1.5);
        self.single(
            "BatchNormalization",
            &[x, &scale, &bias, &mean, &var],
            vec![("epsilon", AttrValue::Float(1e-5))],
            s,
        )
    }

    /// `Flatten` at `axis`.
    pub fn flatten(&mut self, x: &str, axis: usize) -> String {
        let s = self.shape(x);
        let out = vec![s[..axis].iter().product(), s[axis..].iter().product()];
        self.single(
            "Flatten",
            &[x],
            vec![("axis", AttrValue::Int(axis as i64))],
            out,
        )
    }

    /// `Reshape` to `dims` (one `-1` allowed, no `0`).
    pub fn reshape(&mut self, x: &str, dims: &[i64]) -> String {
        let total: i64 = self.shape(x).iter().product();
        let known: i64 = dims.iter().filter(|&&d| d != -1).product();
        let out: Vec<i64> = dims
            .iter()
            .map(|&d| if d == -1 { total / known } else { d })
            .collect();
        assert_eq!(out.iter().product::<i64>(), total, "bad reshape of '{x}'");
        let shape = self.constant_i64("shape", &[dims.len() as i64], dims);
        self.single("Reshape", &[x, &shape], vec![], out)
    }

    /// `Transpose` by `perm`.
    pub fn transpose(&mut self, x: &str, perm: &[i64]) -> String {
        let s = self.shape(x);
        let out = perm.iter().map(|&p| s[p as usize]).collect();
        self.single(
            "Transpose",
            &[x],
            vec![("perm", AttrValue::Ints(perm.to_vec()))],
            out,
        )
    }

    /// `Concat` along `axis`.
    pub fn concat(&mut self, xs: &[&str], axis: usize) -> String {
        let mut out = self.shape(xs[0]);
        out[axis] = xs.iter().map(|x| self.shape(x)[axis]).sum();
        self.single(
            "Concat",
            xs,
            vec![("axis", AttrValue::Int(axis as i64))],
            out,
        )
    }

    /// `Softmax` along `axis` (negative counts from the end).
    pub fn softmax(&mut self, x: &str, axis: i64) -> String {
        let s = self.shape(x);
        self.single("Softmax", &[x], vec![("axis", AttrValue::Int(axis))], s)
    }

    /// `Dropout` in inference mode (the identity).
    pub fn dropout(&mut self, x: &str) -> String {
        let s = self.shape(x);
        self.single("Dropout", &[x], vec![], s)
    }

    /// `MatMul` with numpy batching.
    pub fn matmul(&mut self, a: &str, b: &str) -> String {
        let (sa, sb) = (self.shape(a), self.shape(b));
        assert!(sa.len() >= 2 && sb.len() >= 2, "matmul takes rank ≥ 2");
        assert_eq!(sa[sa.len() - 1], sb[sb.len() - 2], "matmul inner dims");
        let mut out = broadcast(&sa[..sa.len() - 2], &sb[..sb.len() - 2]);
        out.push(sa[sa.len() - 2]);
        out.push(sb[sb.len() - 1]);
        self.single("MatMul", &[a, b], vec![], out)
    }

    /// A fully connected layer on a 2-D input as `Gemm(x, W, b, transB=1)`.
    pub fn gemm(&mut self, x: &str, out_features: i64) -> String {
        let s = self.shape(x);
        assert_eq!(s.len(), 2, "gemm takes a matrix");
        let w = self.weight("fc_w", &[out_features, s[1]]);
        let b = self.weight_bounded("fc_b", &[out_features], 0.1);
        self.single(
            "Gemm",
            &[x, &w, &b],
            vec![("transB", AttrValue::Int(1))],
            vec![s[0], out_features],
        )
    }

    /// A fully connected layer on the last axis of any rank as `MatMul` + `Add`.
    pub fn linear(&mut self, x: &str, out_features: i64) -> String {
        let s = self.shape(x);
        let w = self.weight_bounded(
            "lin_w",
            &[s[s.len() - 1], out_features],
            (3.0 / s[s.len() - 1] as f64).sqrt(),
        );
        let b = self.weight_bounded("lin_b", &[out_features], 0.1);
        let y = self.matmul(x, &w);
        self.add(&y, &b)
    }

    /// `LayerNormalization` over the last axis.
    pub fn layer_norm(&mut self, x: &str) -> String {
        let s = self.shape(x);
        let d = s[s.len() - 1];
        let scale = self.weight_range("ln_scale", &[d], 0.8, 1.2);
        let bias = self.weight_range("ln_bias", &[d], -0.1, 0.1);
        self.single(
            "LayerNormalization",
            &[x, &scale, &bias],
            vec![
                ("axis", AttrValue::Int(-1)),
                ("epsilon", AttrValue::Float(1e-5)),
            ],
            s,
        )
    }

    fn recurrent(&mut self, op: &str, gates: i64, x: &str, hidden: i64) -> (String, String) {
        let s = self.shape(x);
        assert_eq!(s.len(), 3, "{op} takes [seq, batch, input]");
        let (seq, batch, input) = (s[0], s[1], s[2]);
        let bound = 1.0 / (hidden as f64).sqrt();
        let w = self.weight_bounded("rnn_w", &[1, gates * hidden, input], bound);
        let r = self.weight_bounded("rnn_r", &[1, gates * hidden, hidden], bound);
        let b = self.weight_bounded("rnn_b", &[1, 2 * gates * hidden], bound);
        let outs = self.node(
            op,
            &[x, &w, &r, &b],
            vec![("hidden_size", AttrValue::Int(hidden))],
            vec![vec![seq, 1, batch, hidden], vec![1, batch, hidden]],
        );
        (outs[0].clone(), outs[1].clone())
    }

    /// A forward `LSTM` over `x: [seq, batch, input]`; returns `(Y: [seq, 1, batch, hidden],
    /// Y_h: [1, batch, hidden])`.
    pub fn lstm(&mut self, x: &str, hidden: i64) -> (String, String) {
        self.recurrent("LSTM", 4, x, hidden)
    }

    /// A forward `GRU` over `x: [seq, batch, input]`; returns `(Y, Y_h)` as [`Self::lstm`].
    pub fn gru(&mut self, x: &str, hidden: i64) -> (String, String) {
        self.recurrent("GRU", 3, x, hidden)
    }

    /// Builds the model: applies everything as one patch (which validates it), types the
    /// outputs from inference, and checks inferred shapes against the builder's own.
    pub fn finish(self) -> Result<Model> {
        let mut model = Model::new(self.opset);
        model.graph.name = Some(self.name.clone());
        let mut patch = Patch::new();
        for i in &self.inputs {
            patch.push(PatchOp::AddInput(i.clone()));
        }
        for t in &self.initializers {
            patch.push(PatchOp::AddInitializer(t.clone()));
        }
        for n in &self.nodes {
            patch.push(PatchOp::AddNode(n.clone()));
        }
        for o in &self.outputs {
            patch.push(PatchOp::AddOutput(tensor_info(
                o,
                DType::F32,
                &self.shape(o),
            )));
        }
        model.apply(&patch)?;
        // Inference alone (not the declared output types) must find every shape.
        let mut check = model.clone();
        let report = infer::infer_model(
            &mut check,
            infer::Options {
                use_declared: false,
            },
        );
        if !report.errors.is_empty() || !report.unknown_ops.is_empty() {
            return Err(Error::Invalid(format!(
                "builder: inference failed: {:?} {:?}",
                report.errors, report.unknown_ops
            )));
        }
        for (name, shape) in &self.shapes {
            let ty = check.graph.value_type(name);
            let inferred = ty.tensor().and_then(|t| t.static_dims());
            if inferred.as_deref() != Some(shape.as_slice()) {
                return Err(Error::Invalid(format!(
                    "builder: value '{name}' has shape {shape:?} but inference says {ty:?}"
                )));
            }
        }
        Ok(model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_is_deterministic_and_in_range() {
        let mut a = SplitMix64::new(1);
        let mut b = SplitMix64::new(1);
        for _ in 0..1000 {
            let x = a.range(-2.0, 3.0);
            assert_eq!(x, b.range(-2.0, 3.0));
            assert!((-2.0..3.0).contains(&x));
        }
        assert_ne!(SplitMix64::new(1).next_u64(), SplitMix64::new(2).next_u64());
    }

    #[test]
    fn names_are_unique_and_shapes_tracked() {
        let mut b = GraphBuilder::new("t", 3);
        let x = b.input("x", DType::F32, &[1, 4, 9, 9]);
        let y = b.conv(&x, 8, 3, 2, 1, 1);
        assert_eq!(b.shape(&y), vec![1, 8, 5, 5]);
        let d = b.conv(&y, 8, 3, 1, 1, 8);
        let p = b.maxpool(&d, 3, 2, 1);
        assert_eq!(b.shape(&p), vec![1, 8, 3, 3]);
        let f = b.flatten(&p, 1);
        let g = b.gemm(&f, 5);
        assert_eq!(b.shape(&g), vec![1, 5]);
        assert_ne!(y, d);
        b.output(&g);
        let params = b.param_count();
        assert_eq!(params, 8 * 4 * 9 + 8 + 8 * 9 + 8 + 5 * 72 + 5);
        let m = b.finish().unwrap();
        crate::ir::validate::validate(&m).unwrap();
    }

    #[test]
    fn a_wrong_shape_claim_is_caught_by_finish() {
        let mut b = GraphBuilder::new("t", 3);
        let x = b.input("x", DType::F32, &[2, 3]);
        // Claim a wrong output shape through the generic `node`.
        let y = b.node("Relu", &[&x], vec![], vec![vec![3, 2]]).remove(0);
        b.output(&y);
        assert!(b.finish().is_err());
    }
}
