//! OneHot in a burn reproduction, as the interpreter runs it: the indices made non-negative on
//! the host (those outside the depth made 0), burn's `one_hot_fill` on them held at rank
//! `R - 1`, then the rows of the indices outside the depth set to the off value
//! (`mask_fill`). Reproduced alone, or as the producer of the reproduced node's input.
use super::{MAX_ELEMENTS, Plan, R, dims_list, float_literal, input};
use crate::value::{HostTensor, NamedValues};
use mutagraph_ir::DType;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;
use mutagraph_ir::model::Model;
use mutagraph_ir::ops::common::norm_axis;

/// A OneHot whose indices, depth and values are graph inputs or weights.
pub(super) struct OneHot {
    /// The indices' name.
    pub(super) name: String,
    /// The indices' element type and shape.
    pub(super) dtype: DType,
    pub(super) shape: Vec<usize>,
    /// The indices as the interpreter hands them to burn: non-negative, those outside the
    /// depth made 0.
    indices: Vec<i64>,
    /// Which indices lie outside [-depth, depth - 1] (their rows are the off value).
    outside: Vec<bool>,
    depth: usize,
    off: f64,
    on: f64,
    /// The ONNX axis of the result.
    axis: usize,
    /// The values' element type (the result's).
    values: DType,
}

impl OneHot {
    /// The OneHot `node` of `model`, when the interpreter runs it on burn with float values
    /// (integer values are cast afterwards) on indices that are not empty.
    pub(super) fn of(model: &Model, inputs: &NamedValues, node: &Node) -> Option<OneHot> {
        let at = |i| input(model, inputs, node, i);
        let (raw, depth, values) = (at(0)?, at(1)?.to_f64s()?, at(2)?);
        let vv = values.to_f64s()?;
        let r = raw.shape.len();
        let n = raw.num_elements();
        // f64 indices with f32 values: the interpreter would compute in f64, the values' type
        // says f32
        let mixed = raw.dtype == DType::F64 && values.dtype != DType::F64;
        if depth.len() != 1 || depth[0] < 1.0 || vv.len() != 2 || !values.dtype.is_float() {
            return None;
        }
        if r + 1 > R || n == 0 || n > MAX_ELEMENTS || mixed {
            return None;
        }
        let depth = depth[0] as usize;
        let d = depth as i64;
        // the interpreter reads the indices as i64 (floats truncated)
        let idx: Vec<i64> = raw.to_f64s()?.iter().map(|&v| v as i64).collect();
        let outside: Vec<bool> = idx.iter().map(|&i| i < -d || i >= d).collect();
        let indices = idx
            .iter()
            .zip(&outside)
            .map(|(&i, &o)| {
                if o {
                    0
                } else if i < 0 {
                    i + d
                } else {
                    i
                }
            })
            .collect();
        Some(OneHot {
            name: node.inputs[0].clone(),
            dtype: raw.dtype,
            shape: raw.shape,
            indices,
            outside,
            depth,
            off: vv[0],
            on: vv[1],
            axis: norm_axis(node.attributes.int("axis", -1), r + 1).ok()?,
            values: values.dtype,
        })
    }

    /// The one-hot value (ONNX's: the rows of the indices outside the depth are off).
    pub(super) fn output(&self) -> Option<HostTensor> {
        let depth = self.depth;
        let mut shape = self.shape.clone();
        shape.insert(self.axis, depth);
        let inner: usize = self.shape[self.axis..].iter().product();
        let v: Vec<f64> = (0..self.indices.len() * depth)
            .map(|k| {
                let (outer, rest) = (k / (depth * inner), k % (depth * inner));
                let (d, i) = (rest / inner, outer * inner + rest % inner);
                if !self.outside[i] && self.indices[i] as usize == d {
                    self.on
                } else {
                    self.off
                }
            })
            .collect();
        HostTensor::from_f64s(self.values, shape, &v).ok()
    }

    /// The statements making `var`, the one-hot value held at rank [`R`].
    pub(super) fn lines(&self, var: &str) -> String {
        let r = self.shape.len();
        let mut shape5 = vec![1usize; R - 1 - r];
        shape5.extend_from_slice(&self.shape);
        let baxis = R - (r + 1) + self.axis;
        let f32s = |v: &mut dyn Iterator<Item = f64>| {
            v.map(|x| float_literal(x, "f32"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        // the interpreter passes the values as f32
        let on = float_literal(self.on as f32 as f64, "f32");
        let off = float_literal(self.off as f32 as f64, "f32");
        let from = |values: String| {
            format!(
                "Tensor::<B, {}>::from_data(TensorData::new(vec![{values}], [{}]), &Default::default())",
                R - 1,
                dims_list(&shape5)
            )
        };
        let mut s = format!(
            "    // the indices as the interpreter hands them to burn (non-negative, those outside\n    \
             // the depth made 0), held at rank {}\n    \
             let i = {};\n    \
             let {var}: Tensor<B, {R}> = i.one_hot_fill({}, {on}, {off}, {baxis});\n",
            R - 1,
            from(f32s(&mut self.indices.iter().map(|&i| i as f64))),
            self.depth
        );
        if self.outside.contains(&true) {
            s.push_str(&format!(
                "    // the rows of the indices outside the depth are set to the off value\n    \
                 let o = {};\n    \
                 let mask = o.unsqueeze_dim::<{R}>({baxis}).expand({var}.shape()).equal_elem(1.0);\n    \
                 let {var} = {var}.mask_fill(mask, {off});\n",
                from(f32s(&mut self.outside.iter().map(|&o| f64::from(u8::from(o)))))
            ));
        }
        s
    }

    /// The plan of a project reproducing the OneHot alone: no input outside the caught panic,
    /// burn's float type the values' (f64 where the model holds f64 values).
    pub(super) fn plan(&self) -> Plan {
        let float = if self.values == DType::F64 || self.dtype == DType::F64 {
            "f64"
        } else {
            "f32"
        };
        Plan {
            float,
            elem: float,
            kind: "",
            inputs: format!(
                "    // input '{}' of the OneHot: {}{:?}, written below\n",
                self.name, self.dtype, self.shape
            ),
            stmts: self.lines("y"),
            held_rank: R,
        }
    }
}
