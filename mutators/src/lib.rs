//! Mutation operators over the IR (structure, layer, weight, NaN), one struct per mutation.
//!
//! So far: the coverage model of the MCMC search (`coverage`), a graph builder with seeded
//! weights (`builder`) and the built-in seed zoo (`zoo`). The mutation operators come next.
pub use mutagraph_ir as ir;
pub mod builder;
pub mod coverage;
pub mod zoo;
