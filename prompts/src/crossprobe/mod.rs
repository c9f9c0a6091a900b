//! CrossProbe: transfer of bug-triggering programs between frameworks (alignment database,
//! screening, distinction prompts).
