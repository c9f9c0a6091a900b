//! Seed selection (MEMO Alg. 2): a seed is a pair ⟨model of the pool, mutation operator⟩.
//!
//! * fitness(⟨m, op⟩) = (score(m) + score(op)) / (times ⟨m, op⟩ was selected + 1), where a
//!   score counts the diverse mutants (new coverage) made from the model / with the operator
//!   (MEMO Eq. 2-3);
//! * [`Mcmc`]: Metropolis-Hastings over the seeds sorted by fitness (best first) with a
//!   geometric target distribution: a candidate at sorted index k2 is accepted with
//!   probability min(1, (1-p)^(k2-k1)), k1 being the index of the last selected seed
//!   (MEMO Eq. 4);
//! * [`RandomSearch`]: uniform over the seeds (the MEMO_r ablation).
//!
//! Ties in fitness (at the start every fitness is 0) are broken by fewer selections first,
//! then by a fixed per-seed random key, so that an unproductive start explores evenly rather
//! than favouring the first models of the list.
use mutagraph_mutators::builder::SplitMix64;
use serde::{Deserialize, Serialize};

/// Selection statistics of every seed (saved with the campaign state).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedStats {
    /// Models in the pool.
    pub n_models: usize,
    /// Operators.
    pub n_ops: usize,
    /// Diverse mutants made from each model slot of the pool.
    pub model_score: Vec<u64>,
    /// Diverse mutants made with each operator.
    pub op_score: Vec<u64>,
    /// Times each seed (`m * n_ops + op`) was selected.
    pub selected: Vec<u64>,
    /// Random tie-break key of each seed.
    pub key: Vec<u64>,
    /// The seed selected last (index `m * n_ops + op`).
    pub last: Option<usize>,
}

impl SeedStats {
    /// Fresh statistics for `n_models × n_ops` seeds; tie-break keys drawn from `rng`.
    pub fn new(n_models: usize, n_ops: usize, rng: &mut SplitMix64) -> SeedStats {
        let n = n_models * n_ops;
        SeedStats {
            n_models,
            n_ops,
            model_score: vec![0; n_models],
            op_score: vec![0; n_ops],
            selected: vec![0; n],
            key: (0..n).map(|_| rng.next_u64()).collect(),
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

    /// MEMO Eq. 3.
    pub fn fitness(&self, seed: usize) -> f64 {
        let (m, op) = (seed / self.n_ops, seed % self.n_ops);
        (self.model_score[m] + self.op_score[op]) as f64 / (self.selected[seed] + 1) as f64
    }

    /// Seeds sorted by fitness, best first (ties: fewer selections, then the random key).
    pub fn sorted(&self) -> Vec<usize> {
        let mut v: Vec<usize> = (0..self.len()).collect();
        v.sort_by(|&a, &b| {
            self.fitness(b)
                .total_cmp(&self.fitness(a))
                .then(self.selected[a].cmp(&self.selected[b]))
                .then(self.key[a].cmp(&self.key[b]))
        });
        v
    }

    /// Notes that `seed` was selected.
    pub fn selected(&mut self, seed: usize) {
        self.selected[seed] += 1;
        self.last = Some(seed);
    }

    /// Notes that `seed` produced a diverse mutant.
    pub fn rewarded(&mut self, seed: usize) {
        self.model_score[seed / self.n_ops] += 1;
        self.op_score[seed % self.n_ops] += 1;
    }
}

/// Picks the next seed.
pub trait Scheduler: Send {
    /// `mcmc` or `random`.
    fn name(&self) -> &'static str;
    /// The next seed index (`m * n_ops + op`); records the selection in `stats`.
    fn select(&mut self, stats: &mut SeedStats, rng: &mut SplitMix64) -> usize;
}

/// Metropolis-Hastings selection with a geometric target (MEMO Eq. 4).
pub struct Mcmc {
    /// Success probability of the geometric distribution.
    pub p: f64,
}

impl Mcmc {
    /// The default `p` for `n` seeds: 3 / n clipped to [0.02, 0.5] — the top few dozen seeds
    /// get most of the probability mass whatever the pool size.
    pub fn default_p(n: usize) -> f64 {
        (3.0 / n.max(1) as f64).clamp(0.02, 0.5)
    }

    /// The probability of accepting a move from sorted index `k1` to `k2`.
    pub fn acceptance(&self, k1: usize, k2: usize) -> f64 {
        if k2 <= k1 {
            1.0
        } else {
            (1.0 - self.p).powi((k2 - k1) as i32)
        }
    }
}

impl Scheduler for Mcmc {
    fn name(&self) -> &'static str {
        "mcmc"
    }
    fn select(&mut self, stats: &mut SeedStats, rng: &mut SplitMix64) -> usize {
        let sorted = stats.sorted();
        let n = sorted.len();
        let k1 = stats
            .last
            .and_then(|l| sorted.iter().position(|&s| s == l))
            .unwrap_or(0);
        // The loop ends with probability 1; the cap only bounds pathological p.
        let mut pick = sorted[0];
        for _ in 0..100_000 {
            let k2 = (rng.next_u64() % n as u64) as usize;
            if rng.unit() < self.acceptance(k1, k2) {
                pick = sorted[k2];
                break;
            }
        }
        stats.selected(pick);
        pick
    }
}

/// Uniform selection (the ablation).
pub struct RandomSearch;

impl Scheduler for RandomSearch {
    fn name(&self) -> &'static str {
        "random"
    }
    fn select(&mut self, stats: &mut SeedStats, rng: &mut SplitMix64) -> usize {
        let pick = (rng.next_u64() % stats.len() as u64) as usize;
        stats.selected(pick);
        pick
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fitness_follows_eq3() {
        let mut rng = SplitMix64::new(1);
        let mut s = SeedStats::new(2, 3, &mut rng);
        s.rewarded(4); // model 1, op 1
        s.rewarded(1); // model 0, op 1
        s.selected(4);
        s.selected(4);
        // (score(m1)=1 + score(op1)=2) / (2 + 1)
        assert_eq!(s.fitness(4), 1.0);
        // model 0, op 1: (1 + 2) / 1
        assert_eq!(s.fitness(1), 3.0);
        // model 1, op 0: (1 + 0) / 1
        assert_eq!(s.fitness(3), 1.0);
        assert_eq!(s.sorted()[0], 1);
    }

    #[test]
    fn acceptance_is_geometric() {
        let m = Mcmc { p: 0.1 };
        assert_eq!(m.acceptance(5, 2), 1.0);
        assert_eq!(m.acceptance(5, 5), 1.0);
        assert!((m.acceptance(2, 5) - 0.9f64.powi(3)).abs() < 1e-12);
    }

    #[test]
    fn mcmc_prefers_fit_seeds_and_is_deterministic() {
        let run = |seed| {
            let mut rng = SplitMix64::new(seed);
            let mut s = SeedStats::new(4, 5, &mut rng);
            for _ in 0..10 {
                s.rewarded(7);
            }
            let mut m = Mcmc { p: 0.2 };
            let picks: Vec<usize> = (0..400).map(|_| m.select(&mut s, &mut rng)).collect();
            (picks, s)
        };
        let (a, s) = run(3);
        let (b, _) = run(3);
        assert_eq!(a, b);
        // The rewarded seed is picked far more than the 1/20 of a uniform choice.
        let hits = a.iter().filter(|&&x| x == 7).count();
        assert!(hits > 400 / 20 * 3, "seed 7 picked {hits} times");
        assert_eq!(s.selected.iter().sum::<u64>(), 400);
        // Seeds sharing its model or operator are favoured over the rest.
        let share = |x: usize| a.iter().filter(|&&y| y == x).count();
        assert!(share(5) + share(6) > share(10) + share(11));
    }

    #[test]
    fn random_search_is_uniform() {
        let mut rng = SplitMix64::new(9);
        let mut s = SeedStats::new(2, 2, &mut rng);
        s.rewarded(0);
        let mut r = RandomSearch;
        let mut counts = [0usize; 4];
        for _ in 0..4000 {
            counts[r.select(&mut s, &mut rng)] += 1;
        }
        for c in counts {
            assert!((850..1150).contains(&c), "{counts:?}");
        }
    }
}
