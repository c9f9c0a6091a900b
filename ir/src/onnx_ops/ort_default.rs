//! The schemas ONNX Runtime registers in the default ONNX domain that ONNX itself does not
//! define: the one table of them, and the warning a node of one gets.
//!
//! ORT's transformer optimizer (`onnxruntime.transformers`) writes these ops into the default
//! domain of the models it fuses, at whatever opset the model had (13 or 14 is common): ORT
//! runs them, `onnx.checker` refuses them. Validation admits such a node with a warning
//! ([`super::OpStatus::OrtSchema`]) where ONNX's own table ([`super::OPS`]) says the op does not
//! exist at the model's opset; the mutators never put one into a mutant (a node of one only
//! exists where the seed had it).
//!
//! The facts come from ORT's schema registry
//! (`onnxruntime.capi.onnxruntime_pybind11_state.get_all_operator_schema()`, ORT 1.31.1): the
//! default-domain schemas of these names whose version ONNX does not have.

/// One of ONNX Runtime's own schemas in the default domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrtSchema {
    /// The op type.
    pub op: &'static str,
    /// The `since_version` of ORT's schema.
    pub since: i64,
    /// The first version at which ONNX defines an op of this name (`None`: never): from there
    /// on ONNX's schema rules and ORT's is not consulted.
    pub onnx_since: Option<i64>,
    /// What the op computes, for the warning.
    pub what: &'static str,
}

/// Every schema ONNX Runtime registers in the default domain that ONNX lacks, and that this
/// build admits. Sorted by op.
pub const TABLE: &[OrtSchema] = &[
    OrtSchema {
        op: "LayerNormalization",
        since: 1,
        onnx_since: Some(17),
        what: "ONNX's LayerNormalization-17 at any opset",
    },
    OrtSchema {
        op: "SimplifiedLayerNormalization",
        since: 1,
        onnx_since: None,
        what: "RMS normalization, Y = X / sqrt(mean(X^2) + epsilon) * scale over the axes \
               from axis on",
    },
];

/// ORT's schema of `op` in the default domain (`""` or `ai.onnx`) where ONNX defines no op of
/// that name at `version` and ORT's does exist.
pub fn lookup(domain: &str, op: &str, version: i64) -> Option<&'static OrtSchema> {
    if !matches!(domain, "" | "ai.onnx") {
        return None;
    }
    TABLE.iter().find(|s| {
        s.op == op && s.since <= version && s.onnx_since.is_none_or(|first| version < first)
    })
}

/// The warning for a node (`label`) that only ORT's schema defines at `version`.
pub fn warning(s: &OrtSchema, label: &str, version: i64) -> String {
    let onnx = match s.onnx_since {
        Some(v) => format!("ONNX defines it from opset {v} on, not at {version}"),
        None => "ONNX defines no such op".to_string(),
    };
    format!(
        "node {label}: {} is ONNX Runtime's own schema in the default domain (since version \
         {}: {}), written by onnxruntime.transformers; {onnx}, so onnx.checker refuses it, but \
         ONNX Runtime runs it",
        s.op, s.since, s.what
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_stops_where_onnx_starts() {
        assert_eq!(lookup("", "LayerNormalization", 13).unwrap().since, 1);
        assert!(lookup("ai.onnx", "LayerNormalization", 16).is_some());
        assert!(lookup("", "LayerNormalization", 17).is_none());
        assert!(lookup("", "SimplifiedLayerNormalization", 23).is_some());
        assert!(lookup("com.microsoft", "SimplifiedLayerNormalization", 1).is_none());
        assert!(lookup("", "Relu", 13).is_none());
        assert!(TABLE.windows(2).all(|w| w[0].op < w[1].op));
    }
}
