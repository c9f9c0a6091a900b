//! The mutation operators, one struct per mutation (MEMO Table 2, How-Far Table 3).
//!
//! * `structure/`: NLA, LResh, LMerge, LConn (MEMO); LA, LR, LC, LS, AFRm, AFRp (LEMON /
//!   How-Far).
//! * `layer/`: CShape, CMode (MEMO); PM (How-Far); SM, DM (input shape / rank); NaN (MEMO).
//! * `weight/`: WS, NS, GF, NAI, NEB (LEMON / How-Far).
//!
//! Every operator is valid by construction: it builds its edit with a [`crate::site::Site`]
//! (which runs the registry's type-and-shape transfer on each new op) and applies it as one
//! validated patch; an edit that fails validation is returned as
//! [`crate::mutation::Outcome::Rejected`] and counted as an illegal mutant.
use crate::mutation::Mutator;

pub mod common;
pub mod layer;
pub mod structure;
pub mod weight;

/// Every operator, in a fixed order.
pub fn all() -> Vec<Box<dyn Mutator>> {
    let mut v = structure::all();
    v.extend(layer::all());
    v.extend(weight::all());
    v
}

/// The operator of a name (case-insensitive).
pub fn by_name(name: &str) -> Option<Box<dyn Mutator>> {
    all()
        .into_iter()
        .find(|m| m.name().eq_ignore_ascii_case(name))
}
