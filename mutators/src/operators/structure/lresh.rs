//! LResh (MEMO): inserts n ∈ [1, 5] reshaping ops (uncovered types first), each spliced in at
//! a value and adapted back to the value's type. Reshaping op types without a recipe in the
//! book are built by the fallback builders of this file.
use super::insert::insert_new_ops;
use crate::builder::SplitMix64;
use crate::error::BuildError;
use crate::ir::attr::AttrValue;
use crate::ir::types::TensorType;
use crate::ir::{DType, Model};
use crate::mutation::{Ctx, Family, Mutator, Outcome};
use crate::operators::common::reshaping;
use crate::recipes::{MAX_RANK, Recipe};
use crate::site::Site;

/// Layer reshaping.
pub struct LayerReshaping;

impl Mutator for LayerReshaping {
    fn name(&self) -> &'static str {
        "LResh"
    }
    fn family(&self) -> Family {
        Family::Structure
    }
    fn description(&self) -> &'static str {
        "insert 1-5 reshaping ops (uncovered types first) on the backbone"
    }
    fn mutate(&self, model: &mut Model, ctx: &mut Ctx<'_>) -> Outcome {
        let fallback = fallback_recipes();
        let recipes = ctx.recipes;
        let mut pool: Vec<&dyn Recipe> = Vec::new();
        for op in reshaping() {
            if let Some(r) = recipes.get(op) {
                pool.push(r);
            } else if let Some(f) = fallback.iter().find(|f| f.op_type() == op) {
                pool.push(f.as_ref());
            }
        }
        insert_new_ops(model, ctx, self.name(), pool)
    }
}

/// The fallback builders, one per reshaping op type this file knows (every one of
/// [`reshaping`] but `Resize`), in [`reshaping`]'s order.
pub fn fallback_recipes() -> Vec<Box<dyn Recipe>> {
    reshaping()
        .into_iter()
        .filter(|&op| op != "Resize")
        .map(|op| Box::new(Fallback { op }) as Box<dyn Recipe>)
        .collect()
}

struct Fallback {
    op: &'static str,
}

fn below(rng: &mut SplitMix64, n: usize) -> usize {
    (rng.next_u64() % n.max(1) as u64) as usize
}

impl Recipe for Fallback {
    fn op_type(&self) -> &'static str {
        self.op
    }
    fn accepts(&self, dtype: DType, rank: usize) -> bool {
        if !dtype.is_known() {
            return false;
        }
        match self.op {
            "Reshape" | "Flatten" | "Squeeze" | "Slice" | "Tile" | "Concat" | "Split"
            | "Gather" => rank >= 1,
            "Pad" => rank >= 1 && dtype != DType::Bool,
            "Transpose" => rank >= 2,
            "Unsqueeze" | "Expand" => rank < MAX_RANK,
            "DepthToSpace" | "SpaceToDepth" => rank == 4,
            _ => false,
        }
    }
    fn outputs(&self, dtype: DType, rank: usize) -> Vec<(DType, usize)> {
        match self.op {
            "Reshape" => (1..=MAX_RANK).map(|r| (dtype, r)).collect(),
            "Flatten" => vec![(dtype, 2)],
            "Squeeze" => vec![(dtype, rank.saturating_sub(1))],
            "Unsqueeze" | "Expand" => vec![(dtype, rank + 1), (dtype, rank)],
            _ => vec![(dtype, rank)],
        }
    }
    fn build(
        &self,
        site: &mut Site<'_>,
        x: &str,
        t: &TensorType,
        rng: &mut SplitMix64,
    ) -> Result<String, BuildError> {
        let dims = t.static_dims().ok_or_else(|| {
            BuildError::not_applicable(format!("{}: '{x}' has no static shape", self.op))
        })?;
        // An axis, drawn whatever the op (so every op's stream starts alike).
        let axis = below(rng, dims.len().max(1));
        match self.op {
            "Reshape" | "Flatten" | "Transpose" | "Squeeze" | "Unsqueeze" | "Expand" => {
                reshape_only(self.op, site, x, &dims, rng)
            }
            "Tile" | "Slice" | "Pad" | "Concat" | "Split" | "Gather" => {
                copying(self.op, site, (x, &dims, axis), rng)
            }
            "DepthToSpace" | "SpaceToDepth" => blocks(self.op, site, x, &dims, rng),
            other => no_fallback(other),
        }
    }
}

/// The fallback of the ops that only reshape (Reshape, Flatten, Transpose, Squeeze,
/// Unsqueeze, Expand) on `x` of static dims `dims`.
fn reshape_only(
    op: &str,
    site: &mut Site<'_>,
    x: &str,
    dims: &[i64],
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let r = dims.len();
    match op {
        "Reshape" => {
            let numel: i64 = dims.iter().product();
            let shape: Vec<i64> = match below(rng, 3) {
                0 => vec![numel],
                1 => dims.iter().rev().copied().collect(),
                _ => vec![dims[0], -1],
            };
            let s = site.constant_i64s("shape", &[shape.len() as i64], &shape);
            site.op1("Reshape", &[x, &s], vec![])
        }
        "Flatten" => site.op1(
            "Flatten",
            &[x],
            vec![("axis", AttrValue::Int(below(rng, r + 1) as i64))],
        ),
        "Transpose" => {
            let mut perm: Vec<i64> = (0..r as i64).collect();
            // A random non-identity permutation: rotate or swap two axes.
            if rng.unit() < 0.5 {
                perm.reverse();
            } else {
                let a = below(rng, r);
                let b = (a + 1 + below(rng, r - 1)) % r;
                perm.swap(a, b);
            }
            site.op1("Transpose", &[x], vec![("perm", AttrValue::Ints(perm))])
        }
        "Squeeze" => {
            let ones: Vec<i64> = (0..r).filter(|&i| dims[i] == 1).map(|i| i as i64).collect();
            if ones.is_empty() {
                return Err(BuildError::not_applicable("Squeeze: no dim of size 1"));
            }
            let a = ones[below(rng, ones.len())];
            let axes = site.constant_i64s("axes", &[1], &[a]);
            site.op1("Squeeze", &[x, &axes], vec![])
        }
        "Unsqueeze" => {
            let a = below(rng, r + 1) as i64;
            let axes = site.constant_i64s("axes", &[1], &[a]);
            site.op1("Unsqueeze", &[x, &axes], vec![])
        }
        "Expand" => {
            let mut shape = dims.to_vec();
            match (0..r).find(|&i| dims[i] == 1) {
                Some(i) if rng.unit() < 0.7 => shape[i] = 2,
                _ => shape.insert(0, 2),
            }
            let s = site.constant_i64s("shape", &[shape.len() as i64], &shape);
            site.op1("Expand", &[x, &s], vec![])
        }
        other => no_fallback(other),
    }
}

/// The fallback of the ops that copy, cut or gather elements (Tile, Slice, Pad, Concat,
/// Split, Gather) on `x` of static dims `dims`, along the axis `axis` drawn for it.
fn copying(
    op: &str,
    site: &mut Site<'_>,
    (x, dims, axis): (&str, &[i64], usize),
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    let r = dims.len();
    match op {
        "Tile" => {
            let mut reps = vec![1i64; r];
            reps[axis] = 2;
            let s = site.constant_i64s("repeats", &[r as i64], &reps);
            site.op1("Tile", &[x, &s], vec![])
        }
        "Slice" => {
            // The axes whose dim is at least 2 (for halving).
            let wide: Vec<usize> = (0..r).filter(|&i| dims[i] >= 2).collect();
            if wide.is_empty() {
                return Err(BuildError::not_applicable(
                    "Slice: no dim of size 2 or more",
                ));
            }
            let a = wide[below(rng, wide.len())];
            let half = dims[a] / 2;
            let (start, end) = if rng.unit() < 0.5 {
                (0, half)
            } else {
                (half, dims[a])
            };
            let st = site.constant_i64s("starts", &[1], &[start]);
            let en = site.constant_i64s("ends", &[1], &[end]);
            let ax = site.constant_i64s("axes", &[1], &[a as i64]);
            site.op1("Slice", &[x, &st, &en, &ax], vec![])
        }
        "Pad" => {
            let mut pads = vec![0i64; 2 * r];
            pads[axis] = below(rng, 2) as i64;
            pads[r + axis] = 1 + below(rng, 2) as i64;
            let p = site.constant_i64s("pads", &[2 * r as i64], &pads);
            let mode = ["constant", "reflect", "edge"][below(rng, 3)];
            if mode == "reflect" && dims[axis] <= 2 {
                return Err(BuildError::not_applicable(
                    "Pad: reflect needs a wider axis",
                ));
            }
            site.op1(
                "Pad",
                &[x, &p],
                vec![("mode", AttrValue::String(mode.as_bytes().to_vec()))],
            )
        }
        "Concat" => site.op1(
            "Concat",
            &[x, x],
            vec![("axis", AttrValue::Int(axis as i64))],
        ),
        "Split" => {
            let even: Vec<usize> = (0..r).filter(|&i| dims[i] % 2 == 0).collect();
            if even.is_empty() {
                return Err(BuildError::not_applicable("Split: no even dim"));
            }
            let a = even[below(rng, even.len())];
            let outs = site.op("Split", &[x], vec![("axis", AttrValue::Int(a as i64))], 2)?;
            Ok(outs[below(rng, 2)].clone())
        }
        "Gather" => {
            let n = dims[axis];
            let k = 1 + below(rng, n.clamp(1, 4) as usize) as i64;
            let idx: Vec<i64> = (0..k).map(|_| below(rng, n as usize) as i64).collect();
            let i = site.constant_i64s("indices", &[k], &idx);
            site.op1(
                "Gather",
                &[x, &i],
                vec![("axis", AttrValue::Int(axis as i64))],
            )
        }
        other => no_fallback(other),
    }
}

/// The fallback of DepthToSpace and SpaceToDepth (block size 2) on `x` of static dims `dims`.
fn blocks(
    op: &str,
    site: &mut Site<'_>,
    x: &str,
    dims: &[i64],
    rng: &mut SplitMix64,
) -> Result<String, BuildError> {
    match op {
        "DepthToSpace" => {
            if dims[1] % 4 != 0 {
                return Err(BuildError::not_applicable(
                    "DepthToSpace: channels not divisible by 4",
                ));
            }
            let mode = ["DCR", "CRD"][below(rng, 2)];
            site.op1(
                "DepthToSpace",
                &[x],
                vec![
                    ("blocksize", AttrValue::Int(2)),
                    ("mode", AttrValue::String(mode.as_bytes().to_vec())),
                ],
            )
        }
        "SpaceToDepth" => {
            if dims[2] % 2 != 0 || dims[3] % 2 != 0 {
                return Err(BuildError::not_applicable("SpaceToDepth: odd spatial dims"));
            }
            site.op1("SpaceToDepth", &[x], vec![("blocksize", AttrValue::Int(2))])
        }
        other => no_fallback(other),
    }
}

fn no_fallback(op: &str) -> Result<String, BuildError> {
    Err(BuildError::not_applicable(format!(
        "no fallback builder for {op}"
    )))
}
