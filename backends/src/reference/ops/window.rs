//! Window functions: HannWindow, HammingWindow, BlackmanWindow.
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;
use std::f64::consts::PI;

type Out = R<Vec<V>>;

fn window(n: &Node, ins: &[Option<&V>], f: impl Fn(f64, f64) -> f64) -> Out {
    let size = inp(ins, 0)?.scalar_i()?;
    if size < 0 {
        return Err(err("window size is negative"));
    }
    let size = size as usize;
    check_size(&[size])?;
    let periodic = n.int("periodic", 1) != 0;
    let dt = DType::from_code(n.int("output_datatype", 1) as i32);
    let nn = if periodic {
        size as f64
    } else {
        size as f64 - 1.0
    };
    let v = (0..size).map(|i| f(i as f64, nn)).collect();
    one(T::from_f64s(dt, vec![size], v)?)
}

pub(super) fn op_hann(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    window(n, ins, |i, nn| 0.5 - 0.5 * (2.0 * PI * i / nn).cos())
}

pub(super) fn op_hamming(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    window(n, ins, |i, nn| {
        25.0 / 46.0 - 21.0 / 46.0 * (2.0 * PI * i / nn).cos()
    })
}

pub(super) fn op_blackman(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    window(n, ins, |i, nn| {
        0.42 - 0.5 * (2.0 * PI * i / nn).cos() + 0.08 * (4.0 * PI * i / nn).cos()
    })
}
