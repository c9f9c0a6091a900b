//! `mutagraph ops`: the op registry, one line per op (opsets, arity, attributes, parameter
//! buckets).
use mutagraph_ir::Registry;
use std::process::ExitCode;

/// The arguments of `mutagraph ops`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `mutagraph ops`.
pub fn main(a: Args, _g: &super::Globals) -> anyhow::Result<std::process::ExitCode> {
    let Args { json } = a;
    let reg = Registry::global();
    if json {
        let specs: Vec<_> = reg.iter().collect();
        crate::outln!("{}", serde_json::to_string_pretty(&specs)?);
    } else {
        crate::outln!(
            "{:<36} {:<10} {:<24} {:>7} {:>7} {:>6} {:>8}",
            "op",
            "category",
            "opsets",
            "inputs",
            "outputs",
            "attrs",
            "buckets"
        );
        for s in reg.iter() {
            let name = if s.domain.is_empty() {
                s.op_type.to_string()
            } else {
                format!("{}.{}", s.domain, s.op_type)
            };
            let vers: Vec<String> = s.versions.iter().map(|v| v.to_string()).collect();
            let (ilo, ihi) = s.input_arity();
            let (olo, ohi) = s.output_arity();
            let ar = |lo: usize, hi: Option<usize>| match hi {
                Some(h) if h == lo => lo.to_string(),
                Some(h) => format!("{lo}-{h}"),
                None => format!("{lo}+"),
            };
            crate::outln!(
                "{:<36} {:<10} {:<24} {:>7} {:>7} {:>6} {:>8}",
                name,
                format!("{:?}", s.category),
                vers.join(","),
                ar(ilo, ihi),
                ar(olo, ohi),
                s.attrs.len(),
                s.bucket_count()
            );
        }
        crate::outln!("{} ops", reg.len());
    }
    Ok(ExitCode::SUCCESS)
}
