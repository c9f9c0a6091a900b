//! Recurrent sequence classifiers: stacked LSTM and GRU layers over a 8-step sequence.
use crate::builder::GraphBuilder;
use crate::ir::DType;

const SEQ: i64 = 8;
const BATCH: i64 = 2;
const FEATURES: i64 = 12;
const HIDDEN: i64 = 16;

/// Two recurrent layers (the first's full output sequence feeds the second), then a linear
/// classifier on the last hidden state.
fn stacked(name: &str, seed: u64, lstm: bool) -> GraphBuilder {
    let mut b = GraphBuilder::new(name, seed);
    let x = b.input("sequence", DType::F32, &[SEQ, BATCH, FEATURES]);
    let layer = |b: &mut GraphBuilder, x: &str| {
        if lstm {
            b.lstm(x, HIDDEN)
        } else {
            b.gru(x, HIDDEN)
        }
    };
    let (seq, _) = layer(&mut b, &x);
    // [seq, 1, batch, hidden] -> [seq, batch, hidden]
    let seq = b.reshape(&seq, &[SEQ, BATCH, HIDDEN]);
    let (_, last) = layer(&mut b, &seq);
    let last = b.reshape(&last, &[BATCH, HIDDEN]);
    let y = b.gemm(&last, 5);
    b.output(&y);
    b
}

/// Two stacked forward `LSTM` layers (hidden 16) over [8, 2, 12] and a linear head.
pub fn lstm() -> GraphBuilder {
    stacked("lstm", 0x157a, true)
}

/// Two stacked forward `GRU` layers (hidden 16) over [8, 2, 12] and a linear head.
pub fn gru() -> GraphBuilder {
    stacked("gru", 0x6e0, false)
}
