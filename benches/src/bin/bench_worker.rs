//! The worker loop of `mutagraph worker`, as its own executable for the round-trip benchmark.
fn main() -> std::io::Result<()> {
    mutagraph_backends::worker::serve()
}
