//! Generates the prost types of `proto/onnx.proto` with protox (pure Rust, no `protoc`).
fn main() {
    println!("cargo:rerun-if-changed=proto/onnx.proto");
    let fds = protox::compile(["proto/onnx.proto"], ["proto"]).expect("parse proto/onnx.proto");
    prost_build::Config::new()
        // Weights as reference-counted bytes: cloning a model (every mutation does, and the
        // patch validation twice more) no longer copies megabytes of weights.
        .bytes([".onnx.TensorProto.raw_data"])
        .compile_fds(fds)
        .expect("generate prost types from proto/onnx.proto");
}
