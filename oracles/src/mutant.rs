//! A mutant as it travels from the search to its bundle: its bytes, and what is derived from
//! them once, by whichever stage first needs it (the typed model, the precision of its
//! values), never parsed again on the way.
use crate::envelope::Precision;
use mutagraph_backends::compare::Tolerance;
use mutagraph_ir::model::Model;
use std::sync::OnceLock;

/// A model's bytes and, computed on first use and kept, its typed model and precision.
/// Shareable between threads: the search, the triage and the bundle writer read one value.
#[derive(Debug, Default)]
pub struct Mutant {
    bytes: Vec<u8>,
    typed: OnceLock<Option<Model>>,
    precision: OnceLock<Precision>,
}

impl Mutant {
    /// A mutant of these bytes (nothing decoded yet).
    pub fn new(bytes: Vec<u8>) -> Mutant {
        Mutant {
            bytes,
            ..Mutant::default()
        }
    }

    /// The serialized model, as the backends run it.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The model decoded from the bytes with its types and shapes inferred (`None`: the bytes
    /// do not decode); decoded on the first call only.
    pub fn model(&self) -> Option<&Model> {
        self.typed
            .get_or_init(|| {
                let mut m = Model::from_bytes(&self.bytes).ok()?;
                mutagraph_ir::infer::infer_model(&mut m, Default::default());
                Some(m)
            })
            .as_ref()
    }

    /// The tolerance of each of its values under `base` ([`Precision::of`] the typed model,
    /// flat when it does not decode). Kept for the first tolerance asked; another one is
    /// computed afresh.
    pub fn precision(&self, base: Tolerance) -> Precision {
        let compute = || match self.model() {
            Some(m) => Precision::of(m, base),
            None => Precision::flat(base),
        };
        let kept = self.precision.get_or_init(compute);
        if kept.base == base {
            kept.clone()
        } else {
            compute()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model with an intermediate value (`h`) whose type only inference knows.
    fn two_relus() -> Vec<u8> {
        mutagraph_ir::text::parse_model(
            "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (float[4] x) => (float[4] y) {\n\
               h = Relu (x)\n\
               y = Relu (h)\n\
             }",
        )
        .unwrap()
        .to_bytes()
    }

    #[test]
    fn the_model_is_decoded_once_and_typed() {
        let m = Mutant::new(two_relus());
        let first = m.model().expect("decodes") as *const Model;
        let again = m.model().expect("decodes") as *const Model;
        assert_eq!(first, again, "the second call returns the kept model");
        assert!(
            m.model().unwrap().graph.types.contains_key("h"),
            "the kept model is typed"
        );
    }

    #[test]
    fn bytes_that_do_not_decode_give_no_model_and_a_flat_precision() {
        let m = Mutant::new(vec![0xff, 0x01, 0x02]);
        assert!(m.model().is_none());
        assert_eq!(m.precision(Tolerance::CLOSE).base, Tolerance::CLOSE);
    }

    #[test]
    fn a_second_tolerance_is_answered_with_its_own_base() {
        let m = Mutant::new(two_relus());
        assert_ne!(Tolerance::APPROXIMATE, Tolerance::CLOSE);
        assert_eq!(
            m.precision(Tolerance::APPROXIMATE).base,
            Tolerance::APPROXIMATE
        );
        assert_eq!(m.precision(Tolerance::CLOSE).base, Tolerance::CLOSE);
    }
}
