//! The findings seen per backend and per op type, computed from the bundles.
//!
//! A bundle counts for every backend it lists (the variants of its library that showed it:
//! `ort` and `ort-noopt` for a kernel bug), so the per-backend rows can add up to more than
//! the number of bundles.

use super::bundles::{Bundle, Minimized};
use super::read::Campaign;
use mutagraph_backends::catalog::family;
use std::collections::BTreeMap;

/// Bundles and hits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Count {
    pub bundles: usize,
    pub hits: u64,
}

impl Count {
    fn add(&mut self, b: &Bundle) {
        self.bundles += 1;
        self.hits += b.hits.unwrap_or(0);
    }
}

/// One backend's row.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct BackendRow {
    pub backend: String,
    /// Runs on it (`stats.json`), when known.
    pub runs: Option<u64>,
    /// All its bundles.
    pub total: Count,
    /// Per kind (by [`BackendView::kinds`]).
    pub by_kind: BTreeMap<String, Count>,
    /// Bundles minimized, and still pending.
    pub minimized: usize,
    pub pending: usize,
    /// Bundles the triage put in the optimizer.
    pub optimizer: usize,
}

/// Findings per backend.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct BackendView {
    /// Kinds with at least one bundle, by name.
    pub kinds: Vec<String>,
    /// The configuration's backends (in its order, also those without findings), each
    /// followed by the variants of its library that bundles name (`ort-noopt` after `ort`),
    /// then the other backends named, by name.
    pub rows: Vec<BackendRow>,
}

/// One op type's row.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct OpRow {
    pub op: String,
    pub total: Count,
    /// Per backend (by [`OpView::backends`]).
    pub by_backend: BTreeMap<String, Count>,
    /// Per kind.
    pub by_kind: BTreeMap<String, Count>,
    /// Some of its bundles were blamed on it without localization.
    pub inferred: bool,
}

/// Findings per op type.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct OpView {
    /// The backends with at least one bundle, in the order of [`BackendView::rows`].
    pub backends: Vec<String>,
    /// By bundles (descending), then hits (descending), then name; bundles without an op last
    /// (as "—").
    pub rows: Vec<OpRow>,
}

fn kind_of(b: &Bundle) -> String {
    b.kind.clone().unwrap_or_else(|| super::DASH.to_string())
}

impl Campaign {
    pub fn backend_view(&self) -> BackendView {
        let runs = self.backend_runs();
        let config = self.config_backends();
        let mut others: Vec<String> = self
            .bundles
            .iter()
            .flat_map(|b| b.backends.iter().cloned())
            .chain(runs.keys().cloned())
            .filter(|b| !config.contains(b))
            .collect();
        others.sort();
        others.dedup();
        // Variants the triage ran (`ort-noopt`) right after their library's configured backend.
        let mut order: Vec<String> = Vec::new();
        for c in &config {
            order.push(c.clone());
            let fam = family(c);
            for o in others.iter().filter(|o| family(o) == fam) {
                if !order.contains(o) {
                    order.push(o.clone());
                }
            }
        }
        for o in others {
            if !order.contains(&o) {
                order.push(o);
            }
        }
        let mut kinds: Vec<String> = self.bundles.iter().map(kind_of).collect();
        kinds.sort();
        kinds.dedup();
        let rows = order
            .into_iter()
            .map(|backend| {
                let mut row = BackendRow {
                    runs: runs.get(&backend).copied(),
                    backend,
                    ..BackendRow::default()
                };
                for b in self
                    .bundles
                    .iter()
                    .filter(|b| b.backends.contains(&row.backend))
                {
                    row.total.add(b);
                    row.by_kind.entry(kind_of(b)).or_default().add(b);
                    match b.minimized {
                        Minimized::Done(..) => row.minimized += 1,
                        Minimized::Pending => row.pending += 1,
                        Minimized::Unknown => {}
                    }
                    if b.triage.iter().any(|t| t == "optimizer") {
                        row.optimizer += 1;
                    }
                }
                row
            })
            .collect();
        BackendView { kinds, rows }
    }

    pub fn op_view(&self) -> OpView {
        let backends: Vec<String> = self
            .backend_view()
            .rows
            .into_iter()
            .filter(|r| r.total.bundles > 0)
            .map(|r| r.backend)
            .collect();
        let mut ops: BTreeMap<Option<String>, OpRow> = BTreeMap::new();
        for b in &self.bundles {
            let key = b.op().map(String::from);
            let row = ops.entry(key.clone()).or_insert_with(|| OpRow {
                op: key.unwrap_or_else(|| super::DASH.to_string()),
                ..OpRow::default()
            });
            row.total.add(b);
            row.by_kind.entry(kind_of(b)).or_default().add(b);
            for be in &b.backends {
                row.by_backend.entry(be.clone()).or_default().add(b);
            }
            if b.blame.as_ref().is_some_and(|x| !x.localized) {
                row.inferred = true;
            }
        }
        let unblamed = ops.remove(&None);
        let mut rows: Vec<OpRow> = ops.into_values().collect();
        rows.sort_by(|a, b| {
            b.total
                .bundles
                .cmp(&a.total.bundles)
                .then_with(|| b.total.hits.cmp(&a.total.hits))
                .then_with(|| a.op.cmp(&b.op))
        });
        rows.extend(unblamed);
        OpView { backends, rows }
    }
}
