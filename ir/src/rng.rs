//! SplitMix64: the small deterministic generator every seeded stream of the workspace draws
//! from (generated inputs, grammar samples, randomized tests), so one seed gives the same
//! values everywhere and on every machine.

/// A SplitMix64 stream (Steele, Lea and Flood's increment and finalizer).
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// The stream whose state starts at `state`.
    pub fn from_state(state: u64) -> SplitMix64 {
        SplitMix64(state)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A number below `n` (modulo draw); draws nothing when there is no choice (`n` ≤ 1), so a
    /// choice among one keeps the stream where it was.
    pub fn below(&mut self, n: u64) -> u64 {
        if n <= 1 { 0 } else { self.next_u64() % n }
    }
}

#[cfg(test)]
mod tests {
    use super::SplitMix64;

    #[test]
    fn reference_values() {
        // SplitMix64 from state 0 (the published first outputs).
        let mut r = SplitMix64::from_state(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        let u = r.unit();
        assert!((0.0..1.0).contains(&u));
        let before = r.clone().next_u64();
        assert_eq!(r.below(1), 0);
        assert_eq!(r.next_u64(), before, "below(1) draws nothing");
    }
}
