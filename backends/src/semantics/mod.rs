//! What ONNX says about an op's attributes and input shapes, read once for every interpreter
//! of this crate (the f64 reference and burn's): the recurrent ops' attributes, activations
//! and shapes ([`rnn`]), the control-flow ops' attributes and limits ([`control`]). Each
//! interpreter computes with its own values; what a node means is decided here.
pub mod control;
pub mod rnn;
