//! Seed selection of the campaign (MEMO Algorithm 2).
//!
//! A seed is a pair ⟨pool model, operator⟩; with `m` pool slots and `o` operators, seed
//! `s = model * o + op`. Its fitness (MEMO Eq. 3) is
//! `(score(model) + score(op)) / (times s was selected + 1)`, where a score counts the diverse
//! mutants made from that pool slot / with that operator. [`Mcmc`] picks seeds by
//! Metropolis-Hastings over the seeds sorted by fitness (Eq. 4): a uniformly drawn candidate at
//! sorted index `k2` is accepted with probability `min(1, (1-p)^(k2-k1))`, `k1` being the
//! sorted index of the last selected seed. [`RandomSearch`] is uniform over the seeds (the
//! MEMO_r ablation).
use mutagraph_mutators::builder::SplitMix64;
use serde::{Deserialize, Serialize};

/// The statistics of the seed pool: what the fitness function reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedStats {
    /// Pool slots.
    pub models: usize,
    /// Operators.
    pub ops: usize,
    /// Times each seed was selected (index `model * ops + op`).
    pub selected: Vec<u64>,
    /// Diverse mutants made from each pool slot (its model may have been replaced by them).
    pub model_score: Vec<u64>,
    /// Diverse mutants made with each operator.
    pub op_score: Vec<u64>,
    /// The last selected seed.
    pub last: Option<usize>,
}

impl SeedStats {
    /// Fresh statistics for `models` × `ops` seeds.
    pub fn new(models: usize, ops: usize) -> SeedStats {
        SeedStats {
            models,
            ops,
            selected: vec![0; models * ops],
            model_score: vec![0; models],
            op_score: vec![0; ops],
            last: None,
        }
    }

    /// Number of seeds.
    pub fn len(&self) -> usize {
        self.selected.len()
    }

    /// True when there is no seed.
    pub fn is_empty(&self) -> bool {
        self.selected.is_empty()
    }

    /// The (pool slot, operator) of a seed.
    pub fn split(&self, seed: usize) -> (usize, usize) {
        (seed / self.ops, seed % self.ops)
    }

    /// MEMO Eq. 3.
    pub fn fitness(&self, seed: usize) -> f64 {
        let (m, o) = self.split(seed);
        (self.model_score[m] + self.op_score[o]) as f64 / (self.selected[seed] + 1) as f64
    }

    /// Seeds from the highest fitness to the lowest. Ties (at the start every fitness is 0)
    /// go to the seed selected fewer times, then to the lower index, so that an unproductive
    /// stretch explores the seeds evenly instead of favouring the first models and operators.
    pub fn sorted(&self) -> Vec<usize> {
        let fit: Vec<f64> = (0..self.len()).map(|s| self.fitness(s)).collect();
        let mut v: Vec<usize> = (0..self.len()).collect();
        v.sort_by(|&a, &b| {
            fit[b]
                .total_cmp(&fit[a])
                .then(self.selected[a].cmp(&self.selected[b]))
                .then(a.cmp(&b))
        });
        v
    }

    /// Counts a selection.
    pub fn record_selected(&mut self, seed: usize) {
        self.selected[seed] += 1;
        self.last = Some(seed);
    }

    /// Counts a diverse mutant made by `seed` (UpdateSeeds: the slot's model is replaced by
    /// the caller; the seeds of the slot keep their statistics).
    pub fn record_diverse(&mut self, seed: usize) {
        let (m, o) = self.split(seed);
        self.model_score[m] += 1;
        self.op_score[o] += 1;
    }
}

/// How the next seed is chosen.
pub trait Scheduler: Send {
    /// `mcmc` or `random`.
    fn name(&self) -> &'static str;
    /// Chooses a seed (`stats` non-empty) and records the selection.
    fn select(&self, stats: &mut SeedStats, rng: &mut SplitMix64) -> usize;
}

/// The default MH parameter for `n` seeds: `1 / n` clipped to `[0.02, 0.5]`, so that the
/// geometric target distribution spreads over about the whole sorted list but never becomes
/// flat for large pools nor degenerate for tiny ones.
pub fn default_p(n: usize) -> f64 {
    (1.0 / n.max(1) as f64).clamp(0.02, 0.5)
}

/// MEMO's Metropolis-Hastings selection.
#[derive(Clone, Debug)]
pub struct Mcmc {
    /// Success probability of the geometric target distribution, in `(0, 1)`.
    pub p: f64,
}

/// Probability of moving from sorted index `k1` to `k2` (MEMO Eq. 4).
pub fn acceptance(p: f64, k1: usize, k2: usize) -> f64 {
    if k2 <= k1 {
        1.0
    } else {
        (1.0 - p).powf((k2 - k1) as f64)
    }
}

fn below(rng: &mut SplitMix64, n: usize) -> usize {
    (rng.next_u64() % n.max(1) as u64) as usize
}

impl Scheduler for Mcmc {
    fn name(&self) -> &'static str {
        "mcmc"
    }

    fn select(&self, stats: &mut SeedStats, rng: &mut SplitMix64) -> usize {
        let sorted = stats.sorted();
        let k1 = stats
            .last
            .and_then(|l| sorted.iter().position(|&s| s == l))
            .unwrap_or(0);
        let seed = loop {
            let k2 = below(rng, sorted.len());
            if rng.unit() < acceptance(self.p, k1, k2) {
                break sorted[k2];
            }
        };
        stats.record_selected(seed);
        seed
    }
}

/// Uniform selection (MEMO_r).
#[derive(Clone, Debug, Default)]
pub struct RandomSearch;

impl Scheduler for RandomSearch {
    fn name(&self) -> &'static str {
        "random"
    }

    fn select(&self, stats: &mut SeedStats, rng: &mut SplitMix64) -> usize {
        let seed = below(rng, stats.len());
        stats.record_selected(seed);
        seed
    }
}

/// The scheduler of a name (`mcmc` with parameter `p`, or `random`).
pub fn by_name(name: &str, p: f64) -> Option<Box<dyn Scheduler>> {
    match name {
        "mcmc" => Some(Box::new(Mcmc { p })),
        "random" => Some(Box::new(RandomSearch)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fitness_follows_eq3_and_orders_seeds() {
        let mut s = SeedStats::new(2, 3);
        assert_eq!(s.sorted(), vec![0, 1, 2, 3, 4, 5]);
        // Slot 1 made two diverse mutants with op 2, op 0 made one from slot 0.
        s.record_diverse(5);
        s.record_diverse(5);
        s.record_diverse(0);
        s.selected[5] = 3;
        // seed 5 = <1, 2>: (2 + 2) / 4 = 1; seed 3 = <1, 0>: (2 + 1) / 1 = 3.
        assert_eq!(s.fitness(5), 1.0);
        assert_eq!(s.fitness(3), 3.0);
        assert_eq!(s.fitness(0), 2.0); // (1 + 1) / 1
        assert_eq!(s.fitness(1), 1.0); // (1 + 0) / 1
        assert_eq!(s.fitness(4), 2.0); // (2 + 0) / 1
        assert_eq!(s.fitness(2), 3.0); // <0, 2>: (1 + 2) / 1
        // Ties keep the lower seed index first.
        let sorted = s.sorted();
        assert_eq!(sorted, vec![2, 3, 0, 4, 1, 5]);
        assert_eq!(s.split(5), (1, 2));
    }

    #[test]
    fn acceptance_is_eq4() {
        assert_eq!(acceptance(0.1, 5, 2), 1.0);
        assert_eq!(acceptance(0.1, 5, 5), 1.0);
        assert!((acceptance(0.1, 2, 5) - 0.9f64.powi(3)).abs() < 1e-12);
        assert!(acceptance(0.5, 0, 40) < 1e-11);
    }

    #[test]
    fn mcmc_prefers_fit_seeds_and_random_does_not() {
        let draws = |sched: &dyn Scheduler| {
            let mut s = SeedStats::new(10, 10);
            for m in 0..10 {
                s.model_score[m] = 10 - m as u64; // low slot index = fitter
            }
            let mut rng = SplitMix64::new(7);
            let mut hits = [0u32; 100];
            for _ in 0..2000 {
                // Keep the fitness order fixed: do not let selection counts change it.
                let seed = sched.select(&mut s, &mut rng);
                s.selected[seed] = 0;
                hits[seed] += 1;
            }
            let top: u32 = hits[..30].iter().sum();
            let bottom: u32 = hits[70..].iter().sum();
            (top, bottom)
        };
        let (top, bottom) = draws(&Mcmc { p: 0.05 });
        assert!(top > 3 * bottom, "mcmc: top {top}, bottom {bottom}");
        let (top, bottom) = draws(&RandomSearch);
        let ratio = top as f64 / bottom as f64;
        assert!((0.7..1.4).contains(&ratio), "random: {top} vs {bottom}");
    }

    #[test]
    fn selection_is_deterministic_and_counts() {
        for sched in [
            by_name("mcmc", 0.1).unwrap(),
            by_name("random", 0.1).unwrap(),
        ] {
            let run = || {
                let mut s = SeedStats::new(4, 5);
                let mut rng = SplitMix64::new(99);
                let mut picks = Vec::new();
                for i in 0..200 {
                    let seed = sched.select(&mut s, &mut rng);
                    if i % 7 == 0 {
                        s.record_diverse(seed);
                    }
                    picks.push(seed);
                }
                (picks, s)
            };
            let (a, sa) = run();
            let (b, sb) = run();
            assert_eq!(a, b, "{}", sched.name());
            assert_eq!(sa, sb);
            assert_eq!(sa.selected.iter().sum::<u64>(), 200);
            assert_eq!(sa.last, a.last().copied());
            let distinct: std::collections::BTreeSet<_> = a.iter().collect();
            assert!(distinct.len() > 5, "{}: {distinct:?}", sched.name());
        }
        assert!(by_name("greedy", 0.1).is_none());
    }

    #[test]
    fn default_p_is_clipped() {
        assert_eq!(default_p(1), 0.5);
        assert_eq!(default_p(10), 0.1);
        assert_eq!(default_p(1000), 0.02);
    }
}
