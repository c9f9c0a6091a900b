//! Mutation operators over the IR (structure, layer, weight, NaN), one struct per mutation.
//!
//! * `mutation`: the [`mutation::Mutator`] trait, outcomes and replayable records.
//! * `operators`: the 21 mutation operators.
//! * `recipes`: how each op type the generator knows is instantiated after a value.
//! * `site`: building a validated edit of an existing model op by op.
//! * `coverage`: the coverage model of the MCMC search.
//! * `builder` / `zoo`: a graph builder with seeded weights and the built-in seed zoo.
//! * `error`: [`BuildError`], why an op could not be built at a site (the other modules'
//!   errors live beside them: [`mutation::RecordError`], [`coverage::UniverseError`],
//!   [`reduce::ReduceError`]).
pub use error::BuildError;
pub use mutagraph_ir as ir;
pub mod builder;
pub mod coverage;
pub mod error;
pub mod mutation;
pub mod operators;
pub mod patterns;
pub mod recipes;
pub mod reduce;
pub mod site;
pub mod zoo;
