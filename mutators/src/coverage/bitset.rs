//! A fixed-size bit set: each coverage family is one, over its items' dense ids.

/// A fixed-size set of small integers.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub(super) struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    pub(super) fn new(n: usize) -> BitSet {
        BitSet {
            words: vec![0; n.div_ceil(64)],
        }
    }
    /// Sets bit `i`; true when it was clear.
    pub(super) fn insert(&mut self, i: usize) -> bool {
        let (w, b) = (i / 64, 1u64 << (i % 64));
        let new = self.words[w] & b == 0;
        self.words[w] |= b;
        new
    }
    pub(super) fn contains(&self, i: usize) -> bool {
        self.words
            .get(i / 64)
            .is_some_and(|w| w & (1u64 << (i % 64)) != 0)
    }
    pub(super) fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }
    /// Unions `other` in; returns how many bits were newly set.
    pub(super) fn union(&mut self, other: &BitSet) -> usize {
        let mut n = 0;
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            n += (*b & !*a).count_ones() as usize;
            *a |= *b;
        }
        n
    }
    pub(super) fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &bits)| {
            (0..64)
                .filter(move |b| bits & (1u64 << b) != 0)
                .map(move |b| w * 64 + b)
        })
    }
}
