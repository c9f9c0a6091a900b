//! If, Loop and Scan: the attributes of Scan, the iteration cap every interpreter applies to
//! Loop, and the value a scan output takes when the body never ran.
use crate::backend::{BackendError, Stage};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::{Graph, Node};
use mutagraph_ir::types::ValueType;

fn err(msg: impl Into<String>) -> BackendError {
    BackendError::failed(Stage::Run, msg)
}

/// A Loop that has run this many iterations and would run another is stopped with an error
/// (ONNX allows an unbounded loop; an interpreter must not hang on one).
pub const MAX_LOOP_ITERATIONS: i64 = 1_000_000;

/// The subgraph attribute `name` of `n`.
pub fn body<'n>(n: &'n Node, name: &str) -> Result<&'n Graph, BackendError> {
    n.graph(name)
        .ok_or_else(|| err(format!("{} without attribute {name}", n.op_type)))
}

/// A Scan node's attributes, checked against its inputs and its body.
///
/// From opset 9 the inputs are the N initial states then the M scan inputs, each scanned
/// along its own axis and direction, and each scan output is stacked along its own axis in
/// its own direction. Scan-8 takes `sequence_lens` first, then states and scan inputs that
/// all carry a batch axis first; the sequence axis is the next one, scan outputs are stacked
/// along it, and only the inputs have directions (`directions`). [`ScanSpec`] describes both
/// per batch entry: for Scan-8 the axes are those of one entry (0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanSpec {
    /// N: loop-carried states.
    pub states: usize,
    /// M: scan inputs.
    pub scan_inputs: usize,
    /// K: scan outputs (the body's outputs after the N states).
    pub scan_outputs: usize,
    /// Axis of each scan input (possibly negative: count from the end).
    pub input_axes: Vec<i64>,
    /// Whether each scan input is read last to first.
    pub input_reverse: Vec<bool>,
    /// Axis of each scan output in the stacked result (possibly negative).
    pub output_axes: Vec<i64>,
    /// Whether each scan output is stacked last to first.
    pub output_reverse: Vec<bool>,
    /// Scan-8: a leading `sequence_lens` input and a batch axis on everything.
    pub batched: bool,
}

impl ScanSpec {
    /// Reads the attributes of Scan node `n` at `opset`, given how many inputs the node has
    /// (absent optional ones counted) and how many outputs its body has.
    pub fn parse(
        n: &Node,
        opset: i64,
        inputs: usize,
        body_outputs: usize,
    ) -> Result<ScanSpec, BackendError> {
        let batched = opset < 9;
        let m = n.int("num_scan_inputs", 0);
        if m < 1 {
            return Err(err("num_scan_inputs must be positive"));
        }
        let m = m as usize;
        let lead = usize::from(batched);
        if m + lead > inputs {
            return Err(err(format!(
                "num_scan_inputs {m} exceeds the {} inputs",
                inputs - lead.min(inputs)
            )));
        }
        let states = inputs - lead - m;
        if body_outputs < states {
            return Err(err(format!(
                "the body has {body_outputs} outputs for {states} states"
            )));
        }
        let k = body_outputs - states;
        let list = |name: &str, len: usize| -> Result<Vec<i64>, BackendError> {
            match n.ints(name) {
                Some(v) if v.len() != len => Err(err(format!(
                    "{name} has {} entries for {len} values",
                    v.len()
                ))),
                Some(v) => Ok(v.to_vec()),
                None => Ok(vec![0; len]),
            }
        };
        let flags = |v: Vec<i64>| v.into_iter().map(|d| d != 0).collect::<Vec<bool>>();
        Ok(if batched {
            ScanSpec {
                states,
                scan_inputs: m,
                scan_outputs: k,
                input_axes: vec![0; m],
                input_reverse: flags(list("directions", m)?),
                output_axes: vec![0; k],
                output_reverse: vec![false; k],
                batched,
            }
        } else {
            ScanSpec {
                states,
                scan_inputs: m,
                scan_outputs: k,
                input_axes: list("scan_input_axes", m)?,
                input_reverse: flags(list("scan_input_directions", m)?),
                output_axes: list("scan_output_axes", k)?,
                output_reverse: flags(list("scan_output_directions", k)?),
                batched,
            }
        })
    }
}

/// The element type and shape of a scan output (output `i` of `body`, stacked along `axis`)
/// when the body never ran: the output's declared element type (f32 when it declares none),
/// and its declared dims with a 0 inserted at `axis` when it declares every dim, else `[0]`.
pub fn empty_scan_output(body: &Graph, i: usize, axis: i64) -> (DType, Vec<usize>) {
    let ty = body
        .outputs
        .get(i)
        .and_then(|o| o.r#type.as_ref())
        .map(ValueType::from_proto);
    let Some(ValueType::Tensor(t)) = ty else {
        return (DType::F32, vec![0]);
    };
    let dtype = match t.dtype {
        DType::Other(_) => DType::F32,
        d => d,
    };
    let dims: Option<Vec<usize>> = t
        .static_dims()
        .and_then(|d| d.iter().map(|&x| usize::try_from(x).ok()).collect());
    let shape = match dims {
        Some(mut d) => {
            let r = d.len() as i64 + 1;
            let a = if axis < 0 { axis + r } else { axis };
            if (0..r).contains(&a) {
                d.insert(a as usize, 0);
                d
            } else {
                vec![0]
            }
        }
        None => vec![0],
    };
    (dtype, shape)
}

/// The position a sequence op (SequenceInsert, SequenceAt, SequenceErase) acts at in a
/// sequence of `len` values: `p` counts from the end when negative; without `p`, the end
/// (insert: after the last value; the others: the last value). Insertion accepts `len`.
pub fn sequence_position(p: Option<i64>, len: usize, insert: bool) -> Result<usize, BackendError> {
    let l = len as i64;
    let Some(p) = p else {
        return if insert {
            Ok(len)
        } else if len > 0 {
            Ok(len - 1)
        } else {
            Err(err("position in an empty sequence"))
        };
    };
    let q = if p < 0 { p + l } else { p };
    let hi = if insert { l } else { l - 1 };
    if q < 0 || q > hi {
        return Err(err(format!("position {p} for a sequence of {len}")));
    }
    Ok(q as usize)
}
