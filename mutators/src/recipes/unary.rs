//! Elementwise unary ops: same shape out as in; attributes drawn over their buckets.
use super::Recipe;
use crate::builder::SplitMix64;
use crate::ir::DType;
use crate::ir::attr::AttrValue;
use crate::ir::types::TensorType;
use crate::site::Site;

const FLOATS: &[DType] = &[DType::F32, DType::F16, DType::F64];

/// One unary op: its dtypes and how to draw its attributes.
struct Unary {
    op: &'static str,
    dtypes: &'static [DType],
    attrs: DrawAttrs,
}

/// Draws the attributes of one build.
type DrawAttrs = fn(&mut SplitMix64) -> Vec<(&'static str, AttrValue)>;

fn none(_: &mut SplitMix64) -> Vec<(&'static str, AttrValue)> {
    Vec::new()
}

fn alpha(rng: &mut SplitMix64) -> Vec<(&'static str, AttrValue)> {
    vec![("alpha", AttrValue::Float(rng.range(0.01, 2.0) as f32))]
}

impl Recipe for Unary {
    fn op_type(&self) -> &'static str {
        self.op
    }
    fn accepts(&self, dtype: DType, _rank: usize) -> bool {
        self.dtypes.contains(&dtype)
    }
    fn outputs(&self, dtype: DType, rank: usize) -> Vec<(DType, usize)> {
        vec![(dtype, rank)]
    }
    fn build(
        &self,
        site: &mut Site<'_>,
        x: &str,
        _t: &TensorType,
        rng: &mut SplitMix64,
    ) -> Result<String, String> {
        let attrs = (self.attrs)(rng);
        site.op1(self.op, &[x], attrs)
    }
}

pub(super) fn register(list: &mut Vec<Box<dyn Recipe>>) {
    let table: &[(&'static str, &'static [DType], DrawAttrs)] = &[
        ("Relu", FLOATS, none),
        ("Sigmoid", FLOATS, none),
        ("Tanh", FLOATS, none),
        ("Softsign", FLOATS, none),
        ("Exp", FLOATS, none),
        ("LeakyRelu", FLOATS, alpha),
        ("Elu", FLOATS, alpha),
    ];
    for &(op, dtypes, attrs) in table {
        list.push(Box::new(Unary { op, dtypes, attrs }));
    }
}
