//! The recurrent layers (RNN, GRU, LSTM), whose kernel is `crate::burn::rnn`: their names.

// The ops of this file, found from their names (see `super::find`).
table! {
    // recurrent layers
    "RNN" | "GRU" | "LSTM" => crate::burn::rnn::recurrent,
}
