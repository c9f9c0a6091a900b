//! Numeric and structural traits of an op ([`Traits`]): the facts about an op that the oracles
//! and the mutators act on, declared with the op's spec so that they live in one place.

/// A set of op traits (a small bit set; combine with `|`).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Traits(u8);

impl Traits {
    /// No trait.
    pub const NONE: Traits = Traits(0);
    /// The result is discrete (rounding, comparisons, selections, casts): moving the inputs by
    /// a rounding step may flip it, which says nothing about how well-conditioned the op is.
    pub const DISCRETE: Traits = Traits(1);
    /// What a NaN input does is left open by ONNX: the op selects or compares (max, min,
    /// clipping, sorting, thresholds), so whether a NaN wins, loses or propagates is the
    /// implementation's choice.
    pub const NAN_UNSPECIFIED: Traits = Traits(1 << 1);
    /// The result with an infinite input depends on the order of the op's arithmetic (an Inf
    /// meets a zero or an opposite Inf in one evaluation order and not in another), which
    /// ONNX does not fix.
    pub const INF_UNSPECIFIED: Traits = Traits(1 << 2);
    /// The op only moves, copies or reshapes data (MEMO's reshaping layers, inserted by LResh).
    pub const RESHAPING: Traits = Traits(1 << 3);
    /// An activation function: one input whose type the output keeps, replaceable by another
    /// activation (MEMO's AFRm / AFRp).
    pub const ACTIVATION: Traits = Traits(1 << 4);

    /// Every trait with its name, in bit order.
    const NAMED: [(Traits, &'static str); 5] = [
        (Traits::DISCRETE, "discrete"),
        (Traits::NAN_UNSPECIFIED, "nan-unspecified"),
        (Traits::INF_UNSPECIFIED, "inf-unspecified"),
        (Traits::RESHAPING, "reshaping"),
        (Traits::ACTIVATION, "activation"),
    ];

    /// Whether every trait of `other` is in `self`.
    pub const fn contains(self, other: Traits) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The names of the traits in the set, in bit order.
    pub fn names(self) -> Vec<&'static str> {
        Self::NAMED
            .iter()
            .filter(|(t, _)| self.contains(*t))
            .map(|(_, n)| *n)
            .collect()
    }
}

impl std::ops::BitOr for Traits {
    type Output = Traits;
    fn bitor(self, rhs: Traits) -> Traits {
        Traits(self.0 | rhs.0)
    }
}

impl std::ops::BitOrAssign for Traits {
    fn bitor_assign(&mut self, rhs: Traits) {
        self.0 |= rhs.0;
    }
}

impl std::fmt::Debug for Traits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.names()).finish()
    }
}

impl serde::Serialize for Traits {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.names())
    }
}

#[cfg(test)]
mod tests {
    use super::Traits;

    #[test]
    fn sets_hold_what_was_put_in_and_name_it() {
        let t = Traits::DISCRETE | Traits::NAN_UNSPECIFIED;
        assert!(t.contains(Traits::DISCRETE) && t.contains(Traits::NAN_UNSPECIFIED));
        assert!(!t.contains(Traits::RESHAPING));
        assert!(!t.contains(Traits::DISCRETE | Traits::RESHAPING));
        assert_eq!(t.names(), ["discrete", "nan-unspecified"]);
        assert!(Traits::NONE.is_empty() && !t.is_empty());
        assert_eq!(format!("{t:?}"), r#"{"discrete", "nan-unspecified"}"#);
    }
}
