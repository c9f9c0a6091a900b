//! The recurrent layers `LSTM`, `GRU` and `RNN` (every direction and layout, hidden sizes over
//! their buckets, optional bias / sequence lengths / initial state, named activations).
use super::weight;
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::DType;
use crate::ir::attr::AttrValue;
use crate::ir::types::TensorType;
use crate::recipes::util::*;
use crate::site::Site;

pub(super) fn rnn(
    op: &'static str,
    site: &mut Site<'_>,
    x: &str,
    t: &TensorType,
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let d = dims(t);
    let layout = if site.opset() >= 14 && chance(rng, 0.3) {
        1
    } else {
        0
    };
    let (seq, batch, input) = if layout == 1 {
        (d[1], d[0], d[2])
    } else {
        (d[0], d[1], d[2])
    };
    let h = match below(rng, 8) {
        0 | 1 => 1,
        2..=4 => between(rng, 2, 8),
        5 if op != "LSTM" && input <= 8 => 129,
        _ => between(rng, 17, 20),
    };
    let dir = pick(rng, &["forward", "reverse", "bidirectional"]);
    let nd = if dir == "bidirectional" { 2 } else { 1 };
    let gates = match op {
        "LSTM" => 4,
        "GRU" => 3,
        _ => 1,
    };
    let w = weight(site, t.dtype, &[nd, gates * h, input], input, rng);
    let rw = weight(site, t.dtype, &[nd, gates * h, h], h, rng);
    let mut a = vec![("hidden_size", ai(h))];
    if dir != "forward" || chance(rng, 0.5) {
        a.push(("direction", astr(dir)));
    }
    if layout == 1 || (site.opset() >= 14 && chance(rng, 0.2)) {
        a.push(("layout", ai(layout)));
    }
    float_of(rng, &mut a, "clip", &[0.5, 3.0, 20.0]);
    if site.opset() < 7 {
        flag(rng, &mut a, "output_sequence");
    }
    // The activation functions of one direction, and their alpha and beta (one per function
    // of every direction).
    let acts = if chance(rng, 0.1) {
        // The default functions, named, with empty parameter lists.
        let one: &[&str] = match op {
            "LSTM" => &["Sigmoid", "Tanh", "Tanh"],
            "GRU" => &["Sigmoid", "Tanh"],
            _ => &["Tanh"],
        };
        Some((one, None))
    } else if chance(rng, 0.3) {
        // HardSigmoid for the gate (LSTM, GRU) or the hidden (RNN) function, with its
        // alpha and beta per direction.
        let one: &[&str] = match op {
            "LSTM" => &["HardSigmoid", "Tanh", "Tanh"],
            "GRU" => &["HardSigmoid", "Tanh"],
            _ => &["HardSigmoid"],
        };
        // ONNX says the values are "consumed in the order of the activation functions":
        // runtimes read that as one value per function (ONNX Runtime) or one per function that
        // takes a parameter; one value per function, the same everywhere, means the same under
        // both readings.
        let ab = if chance(rng, 0.5) {
            (0.2, 0.5)
        } else {
            (0.3, 0.55)
        };
        Some((one, Some(ab)))
    } else {
        None
    };
    if let Some((one, ab)) = acts {
        let acts: Vec<Vec<u8>> = (0..nd)
            .flat_map(|_| one.iter().map(|s| s.as_bytes().to_vec()))
            .collect();
        let (alpha, beta) = match ab {
            Some((alpha0, beta0)) => (vec![alpha0; acts.len()], vec![beta0; acts.len()]),
            None => (vec![], vec![]),
        };
        a.push(("activations", AttrValue::Strings(acts)));
        a.push(("activation_alpha", AttrValue::Floats(alpha)));
        a.push(("activation_beta", AttrValue::Floats(beta)));
    }
    match op {
        "LSTM" => flag(rng, &mut a, "input_forget"),
        "GRU" if site.opset() >= 3 => flag(rng, &mut a, "linear_before_reset"),
        _ => {}
    }
    let mut ins = vec![x.to_string(), w, rw];
    if chance(rng, 0.6) {
        ins.push(site.random_constant("b", t.dtype, &[nd, 2 * gates * h], -0.3, 0.3, rng));
        if chance(rng, 0.5) {
            let lens: Vec<f64> = (0..batch).map(|_| between(rng, 1, seq) as f64).collect();
            ins.push(site.constant_f64s("sequence_lens", DType::I32, &[batch], &lens));
            let hs = if layout == 1 {
                vec![batch, nd, h]
            } else {
                vec![nd, batch, h]
            };
            ins.push(site.random_constant("initial_h", t.dtype, &hs, -0.5, 0.5, rng));
        }
    }
    let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
    let n_out = if op == "LSTM" { 3 } else { 2 };
    Ok(site.op(op, &refs, a, n_out)?.remove(0))
}
