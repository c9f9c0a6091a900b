//! The rewrite a finding needs: the part of the model that shows it is run again in workers
//! whose library applies fewer of its rewrites. ONNX Runtime leaves out one graph transformer
//! at a time of those that changed the part (its `disabled_optimizers`); tract stops its
//! declutter after fewer rewrites (its optimizer's `stopping_at`), bisecting for the first
//! that makes the part show it. A finding that goes with one rewrite left out, and stays with
//! all of them, is that rewrite's: the node it shows at only computes what the rewrite left.
use super::confirm::{Blamed, Expected, Shows, judged};
use mutagraph_backends::catalog::{self, Library, Rewrites};
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
                return Some(r);
            }
            tried.push(r);
        }
        None
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

/// A rewrite in words that hold on any model: tract's patch name without its optimizer pass
/// and round (`declutter/0 >>`), node numbers and node names (`declutter #5 "y.ds" Downsample >>
/// pull_up` is `declutter Downsample > pull_up`); ONNX Runtime's transformer names as they are.
pub fn rule_name(patch: &str) -> String {
    let round = |s: &str| {
        s.split_once('/')
            .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let parts: Vec<&str> = patch.split(" >> ").collect();
    let parts = match parts.first() {
        Some(first) if parts.len() > 1 && round(first) => &parts[1..],
        _ => &parts[..],
    };
    parts
        .iter()
        .map(|p| {
            let mut out = Vec::new();
            let mut quoted = false;
            for w in p.split_whitespace() {
                let opens = w.starts_with('"');
                if opens || quoted {
                    quoted = !(w.ends_with('"') && (w.len() > 1 || !opens));
                    continue;
                }
                if w.starts_with('#') && w[1..].bytes().all(|b| b.is_ascii_digit()) {
                    continue;
                }
                out.push(w);
            }
            out.join(" ")
        })
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" > ")
}

#[cfg(test)]
mod tests {
    use super::rule_name;

    #[test]
    fn a_patch_is_named_without_its_round_nodes_and_names() {
        assert_eq!(
            rule_name("declutter/0 >> declutter #5 \"y.downsample.0\" Downsample"),
            "declutter Downsample"
        );
        assert_eq!(
            rule_name(
                "declutter/1 >> declutter #4 \"a b\" Conv >> declutter_stride_slice_to_downsample"
            ),
            "declutter Conv > declutter_stride_slice_to_downsample"
        );
        assert_eq!(rule_name("SkipLayerNormFusion"), "SkipLayerNormFusion");
    }
}
