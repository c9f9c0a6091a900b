//! The grammars of `mutagraph_prompts::grammar`: every sentence they allow parses, most
//! validate; GBNF output is well formed; JSON answers follow their schema.

use mutagraph_prompts::grammar::json::from_schema;
use mutagraph_prompts::grammar::onnx_text::{self, Literal, Task};
use mutagraph_prompts::grammar::{Expr, Grammar, GrammarError};
use std::collections::{BTreeMap, BTreeSet};

const OPSET: i64 = 18;
const SAMPLES: u64 = 100;

fn valid(text: &str) -> Result<(), String> {
    let mut m = mutagraph_ir::text::parse_model(text).map_err(|e| e.to_string())?;
    mutagraph_ir::infer::infer_model(&mut m, Default::default());
    mutagraph_ir::validate::validate(&m)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn task(op: &str) -> Task {
    Task {
        ops: vec![op.to_string()],
        opset: OPSET,
        literals: vec![],
        fenced: false,
    }
}

#[test]
fn every_supported_op_samples_parse_and_mostly_validate() {
    let start = std::time::Instant::now();
    let ops = onnx_text::supported_ops(OPSET);
    let unsupported = onnx_text::unsupported_ops(OPSET);
    eprintln!(
        "opset {OPSET}: {} ops get a grammar, {} do not ({:.1} s)",
        ops.len(),
        unsupported.len(),
        start.elapsed().as_secs_f64()
    );
    for (op, why) in &unsupported {
        eprintln!("  no grammar: {op}: {why}");
    }
    let (mut ok_all, mut n_all) = (0usize, 0usize);
    let mut rates: Vec<(f64, &str, String)> = Vec::new();
    for op in &ops {
        let g = onnx_text::grammar(&task(op)).unwrap_or_else(|e| panic!("{op}: {e}"));
        let mut ok = 0;
        let mut first_err = String::new();
        for seed in 0..SAMPLES {
            let s = g.sample(seed).unwrap();
            if let Err(e) = mutagraph_ir::text::parse_model(&s) {
                panic!("{op}, seed {seed}: does not parse: {e}\n{s}");
            }
            match valid(&s) {
                Ok(()) => ok += 1,
                Err(e) if first_err.is_empty() => first_err = format!("{e}\n{s}"),
                Err(_) => {}
            }
        }
        ok_all += ok;
        n_all += SAMPLES as usize;
        rates.push((ok as f64 / SAMPLES as f64, op, first_err));
    }
    rates.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (r, op, e) in &rates {
        eprintln!("  {op}: {:.0} % valid", r * 100.0);
        if *r < 0.5 {
            eprintln!("      e.g. {}", e.replace('\n', "\n      "));
        }
    }
    let overall = ok_all as f64 / n_all as f64;
    eprintln!(
        "overall: {ok_all} of {n_all} valid ({:.1} %), {:.1} s",
        overall * 100.0,
        start.elapsed().as_secs_f64()
    );
    assert!(overall > 0.0);
}
