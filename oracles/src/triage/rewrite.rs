//! The rewrite a finding needs: the part of the model that shows it is run again in workers
//! whose library applies fewer of its rewrites. ONNX Runtime leaves out one graph transformer
//! at a time of those that changed the part (its `disabled_optimizers`); tract stops its
//! declutter after fewer rewrites (its optimizer's `stopping_at`), bisecting for the first
//! that makes the part show it. A finding that goes with one rewrite left out, and stays with
//! all of them, is that rewrite's: the node it shows at only computes what the rewrite left.
use super::confirm::{Blamed, Expected, Shows, judged};
use mutagraph_backends::catalog::{self, Library, Rewrites};
use mutagraph_backends::rewrites::rule_name;
use mutagraph_backends::value::NamedValues;
use mutagraph_backends::worker::{Outcome, Pool};
use mutagraph_ir::model::Model;

/// What a run with some rewrites showed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Seen {
    /// The finding.
    Shown,
    /// The right result.
    Right,
    /// Anything else (another failure, a run that could not be judged).
    Other,
}

/// One search: the library, the part and what shows the finding on it, with the reference's
/// outputs of the part once computed (every run is judged against the same ones).
struct Search<'a, 'p> {
    pool: &'p mut Pool,
    at: &'a Blamed<'a>,
    part: (&'a Model, &'a NamedValues),
    shows: &'a Shows<'a>,
    expected: Expected,
}

impl Search<'_, '_> {
    /// The part's run with `rewrites`, judged, and the rewrites that changed it.
    fn seen(&mut self, rewrites: &Rewrites) -> Option<(Seen, Vec<String>)> {
        let (model, feed) = self.part;
        let run = self
            .pool
            .run_rewriting(self.at.faulty, rewrites, &model.to_bytes(), feed)
            .ok()?;
        let judged = judged(
            self.pool,
            self.at,
            self.part,
            self.shows,
            &run.outcome,
            &mut self.expected,
        );
        let seen = match judged {
            Some(true) => Seen::Shown,
            Some(false) if matches!(run.outcome, Outcome::Ok(_)) => Seen::Right,
            _ => Seen::Other,
        };
        Some((seen, run.rewrites))
    }

    /// ONNX Runtime: the transformer that changed the part and whose absence alone makes it
    /// right.
    fn ort(&mut self) -> Option<String> {
        let (Seen::Shown, fired) = self.seen(&Rewrites::Without(vec![]))? else {
            return None;
        };
        let mut tried: Vec<String> = Vec::new();
        for r in fired {
            if tried.contains(&r) {
                continue;
            }
            if self.seen(&Rewrites::Without(vec![r.clone()]))?.0 == Seen::Right {
                return Some(self.ort_rule(r));
            }
            tried.push(r);
        }
        None
    }

    /// The rule of a rule-based transformer (`Level1_RuleBasedTransformer`) whose absence
    /// alone makes the part right (`Pad_Fusion`); the transformer when none does or it has
    /// none.
    fn ort_rule(&mut self, transformer: String) -> String {
        for rule in catalog::ort_rules_of(&transformer) {
            if self
                .seen(&Rewrites::Without(vec![rule.to_string()]))
                .is_some_and(|s| s.0 == Seen::Right)
            {
                return rule.to_string();
            }
        }
        transformer
    }

    /// tract: the first patch of its declutter after which the part shows the finding,
    /// bisected between none (right) and all (shown).
    fn tract(&mut self) -> Option<String> {
        let (Seen::Shown, fired) = self.seen(&Rewrites::First(usize::MAX))? else {
            return None;
        };
        if fired.is_empty() || self.seen(&Rewrites::First(0))?.0 != Seen::Right {
            return None;
        }
        // The part is right after `lo` rewrites and shows the finding after `hi`.
        let (mut lo, mut hi) = (0, fired.len());
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            match self.seen(&Rewrites::First(mid))?.0 {
                Seen::Shown => hi = mid,
                Seen::Right => lo = mid,
                Seen::Other => return None,
            }
        }
        Some(rule_name(&fired[hi - 1]))
    }
}

/// The rewrite of `at.faulty` that `part` (the part of the model showing the finding, with the
/// values fed to it) needs, as [`rule_name`] words it; `None` when no single one is (the
/// finding is a kernel's, or the library cannot leave its rewrites out).
pub(super) fn culprit(
    pool: &mut Pool,
    at: &Blamed,
    part: (&Model, &NamedValues),
    shows: &Shows,
) -> Option<String> {
    let mut search = Search {
        pool,
        at,
        part,
        shows,
        expected: None,
    };
    match catalog::library(at.faulty) {
        Library::OnnxRuntime if catalog::is_optimized(at.faulty) => search.ort(),
        Library::Tract => search.tract(),
        _ => None,
    }
}
