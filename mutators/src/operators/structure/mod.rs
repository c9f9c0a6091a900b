//! Structure operators: they add, remove, copy, switch, merge or connect ops.
//!
//! MEMO (diversity-driven): NLA, LResh, LMerge, LConn. LEMON / How-Far: LA, LR, LC, LS, AFRm,
//! AFRp. OATest: PPlant (optimizer patterns).
use crate::mutation::Mutator;

mod afrm;
mod afrp;
mod insert;
mod la;
mod lc;
mod lconn;
mod lmerge;
mod lr;
mod lresh;
mod ls;
mod nla;
mod plant;

pub use afrm::ActivationRemoval;
pub use afrp::ActivationReplacement;
pub use la::LayerAddition;
pub use lc::LayerCopy;
pub use lconn::LayerConnecting;
pub use lmerge::{LayerMerging, merging_ops};
pub use lr::LayerRemoval;
pub use lresh::{LayerReshaping, fallback_recipes};
pub use ls::LayerSwitch;
pub use nla::NewLayerAddition;
pub use plant::PatternPlanting;

/// The structure operators.
pub fn all() -> Vec<Box<dyn Mutator>> {
    vec![
        Box::new(NewLayerAddition),
        Box::new(LayerReshaping),
        Box::new(LayerMerging),
        Box::new(LayerConnecting),
        Box::new(LayerAddition),
        Box::new(LayerRemoval),
        Box::new(LayerCopy),
        Box::new(LayerSwitch),
        Box::new(ActivationRemoval),
        Box::new(ActivationReplacement),
        Box::new(PatternPlanting),
    ]
}
