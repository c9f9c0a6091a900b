//! ATOC: LLM-built test oracles from operator specifications, with confidence voting.
