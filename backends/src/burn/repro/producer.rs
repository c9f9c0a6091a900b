//! The node before the reproduced one, in a model of two: the value burn holds there is made
//! as the interpreter makes it (a view, or a layout of its own that some kernels misread).
use super::onehot::OneHot;
use super::{MAX_ELEMENTS, R, bax, dims_list, input, literal_list, padded};
use crate::value::{HostTensor, NamedValues};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;
use mutagraph_ir::model::Model;
use mutagraph_ir::ops::common::norm_axis;

/// The ops [`super::project`] writes before the reproduced node, in a model of two.
pub const PRODUCERS: &[&str] = &["Transpose", "OneHot", "GatherElements"];

/// The statements keeping a second handle on `x`, as the interpreter holds every value it
/// computed while later nodes run.
const HELD: &str = "    // the interpreter holds every value it computed while later nodes run\n    \
                    let _held = x.clone();\n";

/// The node producing the reproduced node's first input.
pub(super) enum Producer {
    /// A Transpose: burn's permuted view.
    Transpose(Permuted),
    /// A OneHot: burn's `one_hot_fill`.
    OneHot(OneHot),
    /// A GatherElements: burn's `gather` of the data cut to the indices.
    Gather(Gathered),
}

impl Producer {
    /// The producer `p` of `model`, its inputs graph inputs or weights.
    pub(super) fn of(model: &Model, inputs: &NamedValues, p: &Node) -> Option<Producer> {
        match p.op_type.as_str() {
            "Transpose" => Some(Producer::Transpose(Permuted::of(model, inputs, p)?)),
            "OneHot" => Some(Producer::OneHot(OneHot::of(model, inputs, p)?)),
            "GatherElements" => Some(Producer::Gather(Gathered::of(model, inputs, p)?)),
            _ => None,
        }
    }

    /// The value the reproduced node reads.
    pub(super) fn output(&self) -> Option<HostTensor> {
        match self {
            Producer::Transpose(t) => t.output(),
            Producer::OneHot(o) => o.output(),
            Producer::Gather(g) => g.output(),
        }
    }

    /// The statements making `x`, the producer's inputs written in element type `elem`.
    pub(super) fn lines(&self, elem: &str) -> Option<String> {
        let made = match self {
            Producer::Transpose(t) => t.lines(elem)?,
            Producer::OneHot(o) => format!(
                "    // input '{}' of the OneHot: {}{:?}\n{}",
                o.name,
                o.dtype,
                o.shape,
                o.lines("x")
            ),
            Producer::Gather(g) => g.lines(elem)?,
        };
        Some(made + HELD)
    }
}

/// A Transpose: its input and permutation (ONNX axes). burn's permute makes a view in another
/// memory order.
pub(super) struct Permuted {
    name: String,
    input: HostTensor,
    perm: Vec<usize>,
}

impl Permuted {
    /// The Transpose `p` of `model` over a graph input or weight.
    fn of(model: &Model, inputs: &NamedValues, p: &Node) -> Option<Permuted> {
        let input = input(model, inputs, p, 0)?;
        let rank = input.shape.len();
        let perm: Vec<usize> = match p.attributes.ints("perm") {
            Some(v) => v
                .iter()
                .map(|&a| usize::try_from(a).ok())
                .collect::<Option<_>>()?,
            None => (0..rank).rev().collect(),
        };
        (perm.len() == rank).then(|| Permuted {
            name: p.inputs[0].clone(),
            input,
            perm,
        })
    }

    /// The transposed value (what the node reads).
    fn output(&self) -> Option<HostTensor> {
        crate::reference::transposed(&self.input, &self.perm)
    }

    /// The permutation of the rank-[`R`] tensor burn holds.
    fn padded_perm(&self) -> Vec<usize> {
        let off = R - self.perm.len();
        (0..off).chain(self.perm.iter().map(|&a| a + off)).collect()
    }

    fn lines(&self, elem: &str) -> Option<String> {
        Some(format!(
            "    // input '{}' before the Transpose: {}{:?}\n    \
             let x = tensor(vec![{}], [{}]).permute([{}]);\n",
            self.name,
            self.input.dtype,
            self.input.shape,
            literal_list(&self.input, elem)?,
            dims_list(&padded(&self.input.shape)),
            dims_list(&self.padded_perm())
        ))
    }
}

/// A GatherElements as the interpreter runs it: the data cut to the indices' shape outside the
/// axis (burn's `slice`), then burn's `gather` along the axis.
pub(super) struct Gathered {
    names: [String; 2],
    data: HostTensor,
    /// The indices, made non-negative.
    indices: Vec<i64>,
    /// The indices' element type and shape (the result's).
    dtype: mutagraph_ir::DType,
    shape: Vec<usize>,
    /// The ONNX axis.
    axis: usize,
}

impl Gathered {
    /// The GatherElements `p` of `model` over graph inputs or weights, when the interpreter
    /// runs it on burn (indices within the axis, no larger than the data outside it, nothing
    /// empty).
    fn of(model: &Model, inputs: &NamedValues, p: &Node) -> Option<Gathered> {
        let data = input(model, inputs, p, 0)?;
        let idx = input(model, inputs, p, 1)?;
        let r = data.shape.len();
        let axis = norm_axis(p.attributes.int("axis", 0), r).ok()?;
        let fits = (0..r).all(|i| i == axis || idx.shape[i] <= data.shape[i]);
        let sizes = [data.num_elements(), idx.num_elements()];
        if r == 0 || idx.shape.len() != r || !fits || sizes.contains(&0) {
            return None;
        }
        if sizes.iter().any(|&n| n > MAX_ELEMENTS) {
            return None;
        }
        let n = data.shape[axis] as i64;
        let indices = idx
            .to_i64s()?
            .into_iter()
            .map(|i| {
                (-n..n)
                    .contains(&i)
                    .then_some(if i < 0 { i + n } else { i })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Gathered {
            names: [p.inputs[0].clone(), p.inputs[1].clone()],
            data,
            indices,
            dtype: idx.dtype,
            shape: idx.shape,
            axis,
        })
    }

    /// The gathered value: at each position of the indices, the data's element at that
    /// position with the axis coordinate replaced by the index.
    fn output(&self) -> Option<HostTensor> {
        let v = self.data.to_f64s()?;
        let (at_data, at_out) = (strides(&self.data.shape), strides(&self.shape));
        let picked: Vec<f64> = (0..self.indices.len())
            .map(|k| {
                let at: usize = (0..self.shape.len())
                    .map(|d| {
                        let coord = (k / at_out[d]) % self.shape[d];
                        let coord = if d == self.axis {
                            self.indices[k] as usize
                        } else {
                            coord
                        };
                        coord * at_data[d]
                    })
                    .sum();
                v[at]
            })
            .collect();
        HostTensor::from_f64s(self.data.dtype, self.shape.clone(), &picked).ok()
    }

    /// The end of each burn axis of the interpreter's cut (the indices' extent outside the
    /// axis, the data's along it), as burn `Slice`s.
    fn cut(&self) -> String {
        let r = self.shape.len();
        let mut sl = vec!["burn::tensor::Slice::new(0, None, 1)".to_string(); R];
        for i in 0..r {
            let end = if i == self.axis {
                self.data.shape[i]
            } else {
                self.shape[i]
            };
            sl[bax(r, i)] = format!("burn::tensor::Slice::new(0, Some({end}), 1)");
        }
        sl.join(", ")
    }

    fn lines(&self, elem: &str) -> Option<String> {
        let [data, idx] = &self.names;
        let d = bax(self.shape.len(), self.axis);
        let indices: Vec<String> = self.indices.iter().map(|i| format!("{i}_i64")).collect();
        Some(format!(
            "    // input '{data}' of the GatherElements: {}{:?} (held by the interpreter)\n    \
             let data = tensor(vec![{}], [{}]);\n    \
             // cut to the indices' shape outside axis {} (the interpreter's Slice)\n    \
             let cut = data.clone().slice([{}].as_slice());\n    \
             // input '{idx}' (made non-negative): {}{:?}\n    \
             let i = Tensor::<B, {R}, Int>::from_data(TensorData::new(vec![{}], [{}]), &Default::default());\n    \
             let x = cut.clone().gather({d}, i.clone());\n",
            self.data.dtype,
            self.data.shape,
            literal_list(&self.data, elem)?,
            dims_list(&padded(&self.data.shape)),
            self.axis,
            self.cut(),
            self.dtype,
            self.shape,
            indices.join(", "),
            dims_list(&padded(&self.shape)),
        ))
    }
}

/// Row-major strides of `shape`.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1];
    }
    s
}
