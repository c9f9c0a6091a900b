//! The rule assembly: an op's models (inputs declared or written as initializers) and node
//! lines (attributes) from what the search found.

use super::instance::{Found, Plan, Shape, Slot};
use super::literals::{fixed_init, trigger_rule, value_rule, values_expr, values_with_trigger};
use super::values::{attr_text, count, dims_text, dtype_text};
use super::{Literal, MAX_INIT_VALUES, Task};
use crate::grammar::{Expr, Grammar, ordered_subset, rule_name};
use mutagraph_ir::DType;
use mutagraph_ir::attr::{AttrKind, AttrValue};

impl Plan {
    /// Adds this op's rules; returns the expression of its models.
    pub(super) fn add_rules(&self, g: &mut Grammar, task: &Task) -> Expr {
        let p = format!("o-{}", rule_name(self.op));
        let mut models = Models::default();
        for (li, f) in self.found.iter().enumerate() {
            let lp = format!("{p}-l{li}");
            let node = self.node_rule(g, task, f, &lp);
            let outs = f.layout.graph_outputs();
            let outs = format!(") => ({})", outs.join(", "));
            let slots: Vec<&Slot> = f.layout.args.iter().flatten().collect();
            for (bi, b) in f.binding_list().iter().enumerate() {
                let inputs = InputRules::add(g, task, f, &slots, b, &format!("{lp}-b{bi}"));
                inputs.add_models(task, &outs, &node, &mut models);
            }
        }
        // Required literals: the models that hold one, when the op has any.
        let alts = if task.require_literal && !models.held.is_empty() {
            models.held
        } else {
            models.alts
        };
        let name = format!("{p}-model");
        g.rule(name.clone(), Expr::Alt(alts));
        Expr::r(name)
    }

    /// The node line of a layout: `Y = Op <attributes> (inputs)`.
    fn node_rule(&self, g: &mut Grammar, task: &Task, f: &Found, lp: &str) -> String {
        let outs = f.layout.node_outputs();
        let args: Vec<String> = f
            .layout
            .args
            .iter()
            .map(|a| a.as_ref().map_or("\"\"".to_string(), |s| s.name.clone()))
            .collect();
        let mut items = Vec::new();
        for (i, a) in f.attrs.iter().enumerate() {
            let mut values = a.values.clone();
            for l in &task.literals {
                let v = match l {
                    Literal::Int(x) if a.spec.kind == AttrKind::Int => AttrValue::Int(*x),
                    Literal::Ints(x) if a.spec.kind == AttrKind::Ints => AttrValue::Ints(x.clone()),
                    Literal::Float(x) if a.spec.kind == AttrKind::Float => {
                        AttrValue::Float(*x as f32)
                    }
                    _ => continue,
                };
                if a.spec.check(&v).is_ok()
                    && let Some(t) = attr_text(a.spec.name, &v)
                    && !values.contains(&t)
                {
                    values.push(t);
                }
            }
            let n = format!("{lp}-a{i}");
            g.rule(n.clone(), Expr::lits(values));
            items.push((Expr::r(n), a.required));
        }
        let attrs = match ordered_subset(g, &format!("{lp}-at"), &items, ", ") {
            None => Expr::Seq(vec![]),
            Some(list) => {
                let e = Expr::seq([Expr::lit(" <"), list, Expr::lit(">")]);
                if items.iter().any(|(_, r)| *r) {
                    e
                } else {
                    e.opt()
                }
            }
        };
        let name = format!("{lp}-node");
        g.rule(
            name.clone(),
            Expr::seq([
                Expr::lit(format!("{} = {}", outs.join(", "), self.op)),
                attrs,
                Expr::lit(format!(" ({})", args.join(", "))),
            ]),
        );
        name
    }
}

impl Found {
    fn binding_list(&self) -> &[Vec<DType>] {
        &self.bindings
    }
}

/// The models of an op: those in which no initializer must hold a task literal, and those in
/// which one does (when the task requires literals).
#[derive(Default)]
struct Models {
    alts: Vec<Expr>,
    held: Vec<Expr>,
}

/// The rules of a binding's written inputs, per input (`None` where it cannot be one).
struct InputRules {
    /// Its declaration as a graph input.
    decl: Vec<Option<Expr>>,
    /// Its initializer.
    init: Vec<Option<Expr>>,
    /// The initializer holding a task literal.
    trig: Vec<Option<Expr>>,
}

/// The alternatives of one written input: declarations, initializers, initializers holding a
/// task literal.
#[derive(Default)]
struct InputAlts {
    ins: Vec<Expr>,
    consts: Vec<Expr>,
    triggered: Vec<Expr>,
}

impl InputAlts {
    /// Input `k` (`s`, of dtype `d`) with the shapes the search found for it.
    fn of(task: &Task, shapes: &[Shape], s: &Slot, d: DType, k: usize) -> InputAlts {
        let t = dtype_text(d);
        let mut alts = InputAlts::default();
        for sh in shapes {
            match &sh.values {
                None => {
                    alts.ins
                        .push(Expr::lit(format!("{t}{} {}", dims_text(&sh.dims), s.name)));
                    if let Some(v) = value_rule(d)
                        && count(&sh.dims) <= MAX_INIT_VALUES
                        && k < 4
                    {
                        alts.add_literal_init(task, t, &sh.dims, &s.name, v);
                    }
                }
                Some(vals) => {
                    if let Some(e) = fixed_init(t, d, &sh.dims, &s.name, vals, task) {
                        alts.consts.push(e);
                    }
                }
            }
        }
        alts
    }

    /// An initializer of free values of rule `v`, and one holding a task literal where the
    /// task has literals `v` can write.
    fn add_literal_init(&mut self, task: &Task, t: &str, dims: &[i64], name: &str, v: &str) {
        let head = Expr::lit(format!("{t}{} {name} = {{", dims_text(dims)));
        self.consts.push(Expr::seq([
            head.clone(),
            values_expr(v, count(dims)),
            Expr::lit("}"),
        ]));
        if let Some(tr) = trigger_rule(v, task)
            && count(dims) > 0
        {
            self.triggered.push(Expr::seq([
                head,
                values_with_trigger(v, tr, count(dims)),
                Expr::lit("}"),
            ]));
        }
    }
}

/// A rule `name` of the alternatives `alts` and a reference to it (`None` when there are none).
fn alt_rule(g: &mut Grammar, name: String, alts: Vec<Expr>) -> Option<Expr> {
    if alts.is_empty() {
        return None;
    }
    g.rule(name.clone(), Expr::Alt(alts));
    Some(Expr::r(name))
}

impl InputRules {
    /// Adds the rules of the written inputs `slots` of `f` with binding `b`, named after
    /// `bp`.
    fn add(
        g: &mut Grammar,
        task: &Task,
        f: &Found,
        slots: &[&Slot],
        b: &[DType],
        bp: &str,
    ) -> InputRules {
        let mut rules = InputRules {
            decl: Vec::new(),
            init: Vec::new(),
            trig: Vec::new(),
        };
        for (k, s) in slots.iter().enumerate() {
            let alts = InputAlts::of(task, &f.shapes[k], s, b[s.tc], k);
            rules
                .trig
                .push(alt_rule(g, format!("{bp}-t{k}"), alts.triggered));
            rules.decl.push(alt_rule(g, format!("{bp}-i{k}"), alts.ins));
            rules
                .init
                .push(alt_rule(g, format!("{bp}-c{k}"), alts.consts));
        }
        rules
    }

    /// Adds the models of these inputs to `models`, for every choice of which inputs are
    /// initializers: every mask where each input can be what the mask says (all masks up to
    /// three free inputs, else at most one initializer among them).
    fn add_models(&self, task: &Task, outs: &str, node: &str, models: &mut Models) {
        let n = self.decl.len();
        let free: Vec<usize> = (0..n)
            .filter(|&k| self.decl[k].is_some() && self.init[k].is_some())
            .collect();
        let masks: Vec<u32> = if free.len() <= 3 {
            (0..(1u32 << free.len())).collect()
        } else {
            std::iter::once(0)
                .chain((0..free.len()).map(|i| 1 << i))
                .collect()
        };
        for m in masks {
            let as_init = |k: usize| match free.iter().position(|&x| x == k) {
                Some(i) => m & (1 << i) != 0,
                None => self.decl[k].is_none(),
            };
            let inputs: Vec<usize> = (0..n).filter(|&k| !as_init(k)).collect();
            let inits: Vec<usize> = (0..n).filter(|&k| as_init(k)).collect();
            // Which initializer holds the task literal: each that can, when required.
            // (None: no initializer must hold one; these models are offered unless
            // literals are required and some model can hold one.)
            let mut holders: Vec<Option<usize>> = vec![None];
            if task.require_literal {
                holders.extend(
                    inits
                        .iter()
                        .copied()
                        .filter(|&k| self.trig[k].is_some())
                        .map(Some),
                );
            }
            for holder in holders {
                let model = self.model(outs, node, &inputs, &inits, holder);
                if holder.is_some() {
                    models.held.push(model);
                } else {
                    models.alts.push(model);
                }
            }
        }
    }

    /// A model: `inputs` declared, `inits` as initializers (`holder` the one holding a task
    /// literal), the node rule `node`.
    fn model(
        &self,
        outs: &str,
        node: &str,
        inputs: &[usize],
        inits: &[usize],
        holder: Option<usize>,
    ) -> Expr {
        let mut seq = vec![Expr::lit("main (")];
        for (j, &k) in inputs.iter().enumerate() {
            if j > 0 {
                seq.push(Expr::lit(", "));
            }
            if let Some(e) = &self.decl[k] {
                seq.push(e.clone());
            }
        }
        seq.push(Expr::lit(outs));
        if !inits.is_empty() {
            seq.push(Expr::lit(" <"));
            for (j, &k) in inits.iter().enumerate() {
                if j > 0 {
                    seq.push(Expr::lit(", "));
                }
                let e = if holder == Some(k) {
                    &self.trig[k]
                } else {
                    &self.init[k]
                };
                if let Some(e) = e {
                    seq.push(e.clone());
                }
            }
            seq.push(Expr::lit(">"));
        }
        seq.push(Expr::lit("\n{\n  "));
        seq.push(Expr::r(node));
        seq.push(Expr::lit("\n}\n"));
        Expr::Seq(seq)
    }
}
