//! Lists the blocks seed reduction finds in a model and what reduction leaves of it:
//! `reduce-blocks MODEL.onnx [--quiet]` (one line per block: entry and exit values, the data ops,
//! the number of weight and shape-chain nodes it consumes).
use mutagraph_mutators::ir::Model;
use mutagraph_mutators::reduce::{find_blocks, reduce};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: reduce-blocks MODEL.onnx [--quiet]");
        std::process::exit(2);
    };
    let quiet = args.iter().any(|a| a == "--quiet");
    let m = Model::load(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let blocks = find_blocks(&m);
    println!("{path}: {} blocks", blocks.len());
    if !quiet {
        for (i, b) in blocks.iter().enumerate() {
            println!("  {i:3} {b}");
        }
    }
    match reduce(&m) {
        Ok((r, rep)) => {
            println!("{rep}");
            if !quiet {
                println!("after:");
                for (i, b) in find_blocks(&r).iter().enumerate() {
                    println!("  {i:3} {b}");
                }
            }
        }
        Err(e) => println!("reduce: {e}"),
    }
}
