//! Recurrent ops: RNN, GRU, LSTM.
use super::OpFn;
use std::collections::BTreeMap;

pub(super) fn register(_t: &mut BTreeMap<&'static str, OpFn>) {}
