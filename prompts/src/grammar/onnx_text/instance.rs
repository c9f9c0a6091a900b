//! What the search works with: candidate shapes, layouts of an op's inputs, what a layout's
//! search found, and a concrete instance printed as a model text and validated.

use super::ir_version;
use super::values::{dims_text, dtype_text, value_text};
use mutagraph_ir::DType;
use mutagraph_ir::registry::AttrSpec;

/// A candidate for one input: its dims and, for a constant, its values.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Shape {
    pub(super) dims: Vec<i64>,
    pub(super) values: Option<Vec<f64>>,
}

impl Shape {
    pub(super) fn input(dims: Vec<i64>) -> Shape {
        Shape { dims, values: None }
    }
    pub(super) fn constant(dims: Vec<i64>, values: Vec<f64>) -> Shape {
        Shape {
            dims,
            values: Some(values),
        }
    }
}

/// A present input slot of a layout.
#[derive(Clone, Debug)]
pub(super) struct Slot {
    /// The value's name.
    pub(super) name: String,
    /// Index into the layout's type variables.
    pub(super) tc: usize,
}

/// A layout: which inputs are written, the type variables they use.
#[derive(Clone, Debug)]
pub(super) struct Layout {
    /// Per node input position: `None` for an absent optional input (`""`).
    pub(super) args: Vec<Option<Slot>>,
    /// Output names (`""` for an absent optional output in the middle).
    pub(super) outputs: Vec<String>,
    /// Type variables of the written inputs, each with the dtypes offered.
    pub(super) tcs: Vec<Vec<DType>>,
}

impl Layout {
    /// The graph's outputs: the node's outputs that are present.
    pub(super) fn graph_outputs(&self) -> Vec<&str> {
        self.outputs
            .iter()
            .filter(|o| !o.is_empty())
            .map(|s| s.as_str())
            .collect()
    }

    /// The node's outputs as the text writes them (`""` for an absent one).
    pub(super) fn node_outputs(&self) -> Vec<String> {
        self.outputs
            .iter()
            .map(|o| {
                if o.is_empty() {
                    "\"\"".into()
                } else {
                    o.clone()
                }
            })
            .collect()
    }
}

/// A validated layout: the base instance and what may vary around it.
#[derive(Clone, Debug)]
pub(super) struct Found {
    pub(super) layout: Layout,
    /// Per written input (in `args` order, absent ones skipped): the base shape first, then
    /// the alternatives that validate.
    pub(super) shapes: Vec<Vec<Shape>>,
    /// Dtype bindings that validate (one dtype per type variable), the base first.
    pub(super) bindings: Vec<Vec<DType>>,
    /// Attributes: name, required, the values (rendered) that validate, the base's first
    /// when it writes the attribute.
    pub(super) attrs: Vec<AttrChoice>,
}

#[derive(Clone, Debug)]
pub(super) struct AttrChoice {
    pub(super) spec: AttrSpec,
    pub(super) required: bool,
    pub(super) values: Vec<String>,
}

/// What the search found for one op.
#[derive(Debug)]
pub(super) struct Plan {
    pub(super) op: &'static str,
    pub(super) found: Vec<Found>,
}

/// Everything needed to print one instance.
pub(super) struct Instance<'a> {
    pub(super) op: &'a str,
    pub(super) opset: i64,
    pub(super) layout: &'a Layout,
    pub(super) binding: &'a [DType],
    /// Per written input: `None` = an input of unknown rank (while searching).
    pub(super) shapes: Vec<Option<Shape>>,
    pub(super) attrs: Vec<String>,
}

impl Instance<'_> {
    pub(super) fn text(&self) -> Option<String> {
        let mut decls = Vec::new();
        let mut inits = Vec::new();
        let mut args = Vec::new();
        let mut k = 0;
        for a in &self.layout.args {
            let Some(s) = a else {
                args.push("\"\"".to_string());
                continue;
            };
            let d = self.binding[s.tc];
            let t = dtype_text(d);
            args.push(s.name.clone());
            match self.shapes.get(k).cloned().flatten().as_ref() {
                None => decls.push(format!("{t}[] {}", s.name)),
                Some(Shape { dims, values: None }) => {
                    decls.push(format!("{t}{} {}", dims_text(dims), s.name))
                }
                Some(Shape {
                    dims,
                    values: Some(v),
                }) => {
                    let vals = v
                        .iter()
                        .map(|x| value_text(d, *x))
                        .collect::<Option<Vec<_>>>()?;
                    inits.push(format!(
                        "{t}{} {} = {{{}}}",
                        dims_text(dims),
                        s.name,
                        vals.join(", ")
                    ));
                }
            }
            k += 1;
        }
        let attrs = if self.attrs.is_empty() {
            String::new()
        } else {
            format!(" <{}>", self.attrs.join(", "))
        };
        let inits = if inits.is_empty() {
            String::new()
        } else {
            format!(" <{}>", inits.join(", "))
        };
        let outs = self.layout.graph_outputs();
        let node_outs = self.layout.node_outputs();
        Some(format!(
            "<ir_version: {}, opset_import: [\"\" : {}]>\nmain ({}) => ({}){}\n{{\n  {} = {}{} ({})\n}}\n",
            ir_version(self.opset),
            self.opset,
            decls.join(", "),
            outs.join(", "),
            inits,
            node_outs.join(", "),
            self.op,
            attrs,
            args.join(", ")
        ))
    }

    pub(super) fn valid(&self) -> bool {
        self.text().is_some_and(|t| valid_text(&t))
    }
}

/// Whether a model text parses, infers and validates without errors or ambiguous cases.
/// A panic of inference (a bug of the registry) counts as invalid.
fn valid_text(text: &str) -> bool {
    let Ok(mut m) = mutagraph_ir::text::parse_model(text) else {
        return false;
    };
    std::panic::catch_unwind(move || {
        mutagraph_ir::infer::infer_model(&mut m, Default::default());
        matches!(mutagraph_ir::validate::validate(&m), Ok(d) if d.ambiguous.is_empty())
    })
    .unwrap_or(false)
}
