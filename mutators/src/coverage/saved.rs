//! The serialized form of a [`Coverage`]: readable item keys, read back over a universe
//! rebuilt from the registry.
use super::covered::Coverage;
use super::report::Delta;
use super::universe::Universe;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

impl Coverage {
    /// The covered items as saved keys.
    pub(super) fn to_saved(&self) -> Saved {
        let u = &self.universe;
        Saved {
            restricted: u.restricted.clone(),
            models: self.models,
            op_types: self.ops.iter().map(|i| u.ops[i].key.to_string()).collect(),
            op_pairs: self
                .covered_pairs()
                .into_iter()
                .map(|(a, b)| format!("{a}->{b}"))
                .collect(),
            params: self.params.iter().map(|i| u.param_key(i)).collect(),
            inputs: self.inputs.iter().map(|i| u.input_key(i)).collect(),
            outside_op_types: self.outside_ops.iter().cloned().collect(),
            outside_pairs: self
                .outside_pairs
                .iter()
                .map(|&(a, b)| format!("{}->{}", u.ops[a as usize].key, u.ops[b as usize].key))
                .collect(),
        }
    }

    /// The covered items of the three families that make a model diverse (op types, op pairs,
    /// parameter buckets) as keys that name each item uniquely across families (`Conv`,
    /// `Conv->Relu`, `Conv.group@1#2`): what a corpus entry contributes, for culling entries
    /// whose items others cover.
    pub fn item_keys(&self) -> Vec<String> {
        let s = self.to_saved();
        let mut keys = s.op_types;
        keys.extend(s.op_pairs);
        keys.extend(s.params);
        keys
    }

    /// What covering the items `keys` (as [`Coverage::item_keys`] names them) would add,
    /// leaving `self` unchanged: whether another campaign's corpus entry is new here, without
    /// rebuilding its model.
    pub fn novelty_of_keys(&self, keys: &[String]) -> Delta {
        let mut s = Saved {
            restricted: None,
            models: 0,
            op_types: Vec::new(),
            op_pairs: Vec::new(),
            params: Vec::new(),
            inputs: Vec::new(),
            outside_op_types: Vec::new(),
            outside_pairs: Vec::new(),
        };
        for k in keys {
            if k.contains("->") {
                s.op_pairs.push(k.clone());
            } else if k.contains('@') {
                s.params.push(k.clone());
            } else {
                s.op_types.push(k.clone());
            }
        }
        self.clone().add_saved(&s)
    }

    /// Covers the saved keys that `self`'s universe has; returns what was new.
    pub(super) fn add_saved(&mut self, s: &Saved) -> Delta {
        let u = Arc::clone(&self.universe);
        let mut d = Delta::default();
        self.models += s.models;
        for o in &s.op_types {
            if let Some(&i) = u.op_index.get(o.as_str())
                && self.ops.insert(i as usize)
            {
                d.op_types += 1;
            }
        }
        let pair = |k: &str| {
            let (a, b) = k.split_once("->")?;
            Some((*u.op_index.get(a)?, *u.op_index.get(b)?))
        };
        for k in &s.op_pairs {
            if let Some((a, b)) = pair(k) {
                let id = u.pair_id(a, b);
                if u.connectable.contains(id) && self.pairs.insert(id) {
                    d.op_pairs += 1;
                }
            }
        }
        for k in &s.outside_pairs {
            if let Some(p) = pair(k) {
                self.outside_pairs.insert(p);
            }
        }
        if !s.params.is_empty() {
            let keys: HashMap<String, usize> =
                (0..u.params.len()).map(|i| (u.param_key(i), i)).collect();
            for k in &s.params {
                if let Some(&i) = keys.get(k)
                    && self.params.insert(i)
                {
                    d.params += 1;
                }
            }
        }
        if !s.inputs.is_empty() {
            let keys: HashMap<String, usize> =
                (0..u.n_inputs).map(|i| (u.input_key(i), i)).collect();
            for k in &s.inputs {
                if let Some(&i) = keys.get(k)
                    && self.inputs.insert(i)
                {
                    d.inputs += 1;
                }
            }
        }
        self.outside_ops.extend(s.outside_op_types.iter().cloned());
        d
    }
}

/// The serialized form of a [`Coverage`].
#[derive(Serialize, Deserialize)]
pub(super) struct Saved {
    restricted: Option<Vec<String>>,
    pub(super) models: u64,
    op_types: Vec<String>,
    op_pairs: Vec<String>,
    params: Vec<String>,
    inputs: Vec<String>,
    #[serde(default)]
    outside_op_types: Vec<String>,
    #[serde(default)]
    outside_pairs: Vec<String>,
}

impl Serialize for Coverage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_saved().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Coverage {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Coverage, D::Error> {
        let saved = Saved::deserialize(d)?;
        let universe = match &saved.restricted {
            None => Universe::full(),
            Some(list) => Arc::new(Universe::restricted(list).map_err(serde::de::Error::custom)?),
        };
        let mut c = Coverage::new(universe);
        c.add_saved(&saved);
        Ok(c)
    }
}

impl Coverage {
    /// The same covered items over another universe (after deserializing a coverage whose
    /// universe was made by [`Universe::with_pairs`], which the saved form does not describe).
    pub fn rebase(&self, universe: Arc<Universe>) -> Coverage {
        let mut c = Coverage::new(universe);
        c.add_saved(&self.to_saved());
        c
    }
}
