//! Limits on what reading a model may materialize in memory. A fuzzer is fed strange files
//! all day: a device, an endless pipe or a multi-gigabyte file given as a model must be
//! refused with a message, never read until memory runs out.
//!
//! The model size limit is process-wide: 1 GiB unless `MUTAGRAPH_MAX_MODEL_BYTES` (bytes,
//! or with a `K`, `M` or `G` suffix) or [`set_max_model_bytes`] (the CLI's
//! `--max-model-size`) says otherwise. Protobuf itself cannot hold a model over 2 GiB; larger
//! models keep their tensors in side files ([`crate::external`]), which are read tensor by
//! tensor at their declared lengths.

use std::sync::atomic::{AtomicU64, Ordering};

/// The limit when nothing sets one: 1 GiB.
pub const DEFAULT_MAX_MODEL_BYTES: u64 = 1 << 30;

/// 0: not set yet (read the environment on first use).
static MAX_MODEL_BYTES: AtomicU64 = AtomicU64::new(0);

/// The most bytes a model file may have.
pub fn max_model_bytes() -> u64 {
    match MAX_MODEL_BYTES.load(Ordering::Relaxed) {
        0 => {
            let v = std::env::var("MUTAGRAPH_MAX_MODEL_BYTES")
                .ok()
                .and_then(|s| parse_size(&s))
                .filter(|&v| v > 0)
                .unwrap_or(DEFAULT_MAX_MODEL_BYTES);
            MAX_MODEL_BYTES.store(v, Ordering::Relaxed);
            v
        }
        v => v,
    }
}

/// Sets the model size limit for this process (0 is taken as 1 byte).
pub fn set_max_model_bytes(bytes: u64) {
    MAX_MODEL_BYTES.store(bytes.max(1), Ordering::Relaxed);
}

/// Parses a size: bytes, or a number with a `K`, `M`, `G` suffix (powers of 1024, an optional
/// `B` or `iB` after it).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n: u64 = s[..digits].parse().ok()?;
    let unit = s[digits..].trim().to_ascii_uppercase();
    let mul: u64 = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(mul)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_and_without_units() {
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("2K"), Some(2048));
        assert_eq!(parse_size("64MiB"), Some(64 << 20));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("1gb"), Some(1 << 30));
        assert_eq!(parse_size("12X"), None);
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("99999999999999T"), None);
    }
}
