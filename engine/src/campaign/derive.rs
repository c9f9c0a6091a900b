//! Seeds derived from an admitted seed: what the campaign mutates when the user's model itself
//! is too heavy to mutate fast, or could be smaller. Each is a new model, recorded in
//! `admission.json` and printed, never the user's model: what it shows is a mutant's finding.
//!
//! - **Reduced** ([`reduced`]): MEMO's Alg. 1 ([`mutagraph_mutators::reduce`]) drops repeated
//!   ops and blocks while coverage stays; it rewires the graph (readers of one value read
//!   another), so the reduced seed computes something else, recorded with the op types it
//!   dropped.
//! - **Windows** ([`windows`], heavy seeds only): runs of [`WINDOW_OPS`] consecutive ops of the
//!   user's model, chosen to cover its op types, each fed the real intermediate tensors that
//!   reached it in one run of the whole model (the values windows read exposed as outputs):
//!   the reference's, or, for a seed with an op the reference lacks, a library's (then only
//!   windows without such ops are taken).
//!   Their ops, attributes and weights are the model's own; small integer inputs (shapes,
//!   indices) become constants of the window, as they were constants of the model.
//!
//! Each derived seed runs once on every backend ([`admit`]) to learn its baselines; one the
//! reference cannot run, or whose outputs are mostly NaN or Inf, is not used (and says why).
use super::Seed;
use super::admission::{
    Admitted, Derived, MAX_NONFINITE, baselines, nonfinite_share, outcome_line, run_everywhere,
};
use mutagraph_backends::inputs::{self, GenOptions};
use mutagraph_backends::value::{HostTensor, NamedValues};
use mutagraph_backends::worker::Pool;
use mutagraph_ir::solve::IMAGE_FLOOR;
use mutagraph_ir::{Dim, Model, NodeId, TensorType, ValueType};
use mutagraph_oracles::MutantRuns;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A seed whose [`work`] is above this is *heavy*: it is not mutated itself; its windows and
/// its reduced model are (the seed at smaller image sizes too, when it is light). About a
/// tenth of a second on the f64 reference, decided from the graph alone, so that which seeds
/// the campaign mutates is a function of the seeds, never of the machine's speed.
pub const HEAVY_WORK: u64 = 4_000_000;

/// What running `m` costs, in a unit of the reference's time: [`node_work`] of every node,
/// plus 10 000 per node (what an op costs every library however small its values).
pub fn work(m: &Model) -> u64 {
    m.graph
        .nodes()
        .map(|n| 10_000 + node_work(&m.graph, n))
        .fold(0u64, u64::saturating_add)
}

/// The static element count of a value (`None` when its shape is not known).
fn elements(g: &mutagraph_ir::Graph, v: &str) -> Option<(u64, Vec<u64>)> {
    let ValueType::Tensor(t) = g.value_type(v) else {
        return None;
    };
    let dims: Vec<u64> = t
        .shape?
        .iter()
        .map(|d| match d {
            Dim::Known(k) if *k >= 0 => *k as u64,
            _ => 1,
        })
        .collect();
    Some((dims.iter().product(), dims))
}

/// What one node costs: the elements it computes, plus an eighth of its multiply-adds where
/// it reduces over a dim (convolutions, matrix products, recurrent layers).
pub fn node_work(g: &mutagraph_ir::Graph, n: &mutagraph_ir::Node) -> u64 {
    let out: u64 = n
        .outputs
        .iter()
        .filter(|o| !o.is_empty())
        .filter_map(|o| elements(g, o).map(|e| e.0))
        .sum();
    let shape = |i: usize| {
        n.inputs
            .get(i)
            .filter(|v| !v.is_empty())
            .and_then(|v| elements(g, v))
            .map(|e| e.1)
            .unwrap_or_default()
    };
    let reduced: u64 = match n.op_type.as_str() {
        "Conv" | "ConvInteger" | "ConvTranspose" => shape(1).iter().skip(1).product(),
        "QLinearConv" => shape(3).iter().skip(1).product(),
        "MatMul" | "MatMulInteger" | "Gemm" => shape(0).last().copied().unwrap_or(1),
        "LSTM" | "GRU" | "RNN" => {
            let (w, r) = (shape(1), shape(2));
            let gates = w.get(1).copied().unwrap_or(1) / r.get(2).copied().unwrap_or(1).max(1);
            gates * (w.get(2).copied().unwrap_or(1) + r.get(2).copied().unwrap_or(1))
        }
        _ => 1,
    };
    out.saturating_add(out.saturating_mul(reduced.saturating_sub(1)) / 8)
}

/// A window whose [`work`] is at most this is cheap: windows are taken among the cheap runs
/// of ops first, then among the others (light ones) for the op types the cheap ones lack.
pub const WINDOW_WORK: u64 = 1_000_000;

/// Ops of one window (constants feeding them aside).
pub const WINDOW_OPS: usize = 12;

/// Windows taken from one heavy seed, at most.
pub const MAX_WINDOWS: usize = 6;

/// Integer inputs of a window with at most this many elements become constants (shapes,
/// axes, indices: they were computed from constants in the whole model).
const CONST_INPUT_ELEMENTS: usize = 64;

/// A derived seed before its admission run.
pub struct Candidate {
    /// The seed.
    pub seed: Seed,
    /// What is recorded of it.
    pub record: Derived,
    /// Inputs it is always fed (a window's captured tensors).
    pub tensors: BTreeMap<String, HostTensor>,
}

impl Candidate {
    /// The derived seed `model`, recorded as `record`, fed `tensors`.
    fn new(record: Derived, model: Model, tensors: BTreeMap<String, HostTensor>) -> Candidate {
        Candidate {
            seed: Seed {
                name: record.name.clone(),
                file: record.file.clone(),
                origin: Some(record.origin()),
                model,
                given: None,
            },
            record,
            tensors,
        }
    }
}

/// How many ops of each type `m`'s main graph has.
fn histogram(m: &Model) -> BTreeMap<String, usize> {
    let mut h = BTreeMap::new();
    for n in m.graph.nodes() {
        *h.entry(n.op_type.clone()).or_default() += 1;
    }
    h
}

/// Op types `a` has more of than `b`, with how many more.
fn dropped(a: &Model, b: &Model) -> BTreeMap<String, usize> {
    let hb = histogram(b);
    histogram(a)
        .into_iter()
        .filter_map(|(op, n)| {
            let left = hb.get(&op).copied().unwrap_or(0);
            (n > left).then(|| (op, n - left))
        })
        .collect()
}

/// The file name of a derived seed under `seeds/`: its origin's stem with a suffix.
fn file_of(from: &Seed, suffix: &str) -> String {
    let stem = from.file.strip_suffix(".onnx").unwrap_or(&from.file);
    format!("{stem}.{suffix}.onnx")
}

/// The seed at smaller image sizes, when it reads images larger than twice
/// [`IMAGE_FLOOR`] (as admitted: `shapes`) and the graph accepts a quarter or half of their
/// sides (multiples of 32, at least the floor): its declared output shapes and value types are
/// left to inference. With the new input shapes.
pub fn smaller(
    from: &Seed,
    shapes: &BTreeMap<String, Vec<usize>>,
) -> Option<(Candidate, BTreeMap<String, Vec<usize>>)> {
    let float = |name: &str| {
        let ty = from.model.graph.value_type(name);
        ty.tensor().is_some_and(|t| t.dtype.is_float())
    };
    let big: Vec<String> = shapes
        .iter()
        .filter(|(n, s)| s.len() == 4 && s[2].max(s[3]) > 2 * IMAGE_FLOOR && float(n))
        .map(|(n, _)| n.clone())
        .collect();
    if big.is_empty() {
        return None;
    }
    for k in [4usize, 2] {
        let mut new = shapes.clone();
        for n in &big {
            let s = new.get_mut(n)?;
            for d in &mut s[2..4] {
                *d = (*d / k / 32 * 32).max(IMAGE_FLOOR).min(*d);
            }
        }
        let mut m = from.model.clone();
        for o in m.graph.outputs.iter_mut() {
            if let Some(ValueType::Tensor(t)) = o.r#type.as_ref().map(ValueType::from_proto) {
                let open = TensorType {
                    dtype: t.dtype,
                    shape: t.shape.map(|d| vec![Dim::Unknown; d.len()]),
                };
                o.r#type = Some(ValueType::Tensor(open).to_proto());
            }
        }
        m.graph.value_info.clear();
        let m = mutagraph_ir::solve::concretize(&m, &new);
        if mutagraph_ir::validate::validate(&m).is_err() {
            continue;
        }
        let describe = |s: &BTreeMap<String, Vec<usize>>| {
            big.iter()
                .map(|n| format!("{n}{:?}", s[n]))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let record = Derived {
            name: format!("{}#small", from.name),
            from: from.name.clone(),
            file: file_of(from, "small"),
            how: format!(
                "the seed at smaller image sizes: {} instead of {}",
                describe(&new),
                describe(shapes)
            ),
            nodes: (from.model.graph.node_count(), m.graph.node_count()),
            ..Derived::default()
        };
        return Some((Candidate::new(record, m, BTreeMap::new()), new));
    }
    None
}

/// The seed reduced by MEMO's Alg. 1, when that changes it.
pub fn reduced(from: &Seed) -> Option<Candidate> {
    let (m, report) = mutagraph_mutators::reduce::reduce(&from.model).ok()?;
    if report.nodes_after >= report.nodes_before {
        return None;
    }
    let record = Derived {
        name: format!("{}#reduced", from.name),
        from: from.name.clone(),
        file: file_of(from, "reduced"),
        how: format!("reduced by MEMO's Alg. 1 ({report})"),
        nodes: (report.nodes_before, report.nodes_after),
        dropped: dropped(&from.model, &m),
        ..Derived::default()
    };
    Some(Candidate::new(record, m, BTreeMap::new()))
}

/// A window of a seed before its inputs are known.
pub struct Window {
    /// Its number among the seed's windows.
    k: usize,
    /// The ops it holds (constants feeding them aside), by name.
    region: Vec<String>,
    /// The seed cut down to its ops and the constants they read.
    model: Model,
}

impl Window {
    /// The values it reads from the rest of the model (its real inputs).
    pub fn inputs(&self) -> Vec<String> {
        input_names(&self.model)
    }
}

/// The names of `m`'s real inputs.
fn input_names(m: &Model) -> Vec<String> {
    m.graph
        .real_inputs()
        .iter()
        .filter_map(|v| v.name.clone())
        .collect()
}

/// Runs of [`WINDOW_OPS`] consecutive non-constant ops of `from` (topological order), at most
/// [`MAX_WINDOWS`], chosen greedily for the op types they add (the cheap runs first:
/// [`WINDOW_WORK`]; none heavy), each cut out of the model with the `Constant`s it reads; only
/// runs whose every op `allowed` (domain, op type) accepts.
pub fn windows(from: &Seed, allowed: &dyn Fn(&str, &str) -> bool) -> Vec<Window> {
    let g = &from.model.graph;
    let Ok(order) = g.topo_order() else {
        return Vec::new();
    };
    let is_const = |id: &NodeId| g.node(*id).is_some_and(|n| n.op_type == "Constant");
    let ops: Vec<NodeId> = order.iter().copied().filter(|id| !is_const(id)).collect();
    let fits = |c: &&[NodeId]| {
        c.iter().all(|id| {
            g.node(*id).is_some_and(|n| {
                let d = n.domain.as_deref().unwrap_or("");
                allowed(if d == "ai.onnx" { "" } else { d }, &n.op_type)
            })
        })
    };
    let chunks: Vec<&[NodeId]> = ops.chunks(WINDOW_OPS).filter(fits).collect();
    let types = |c: &[NodeId]| -> BTreeSet<String> {
        c.iter()
            .filter_map(|id| g.node(*id).map(|n| n.op_type.clone()))
            .collect()
    };
    let cost: Vec<u64> = chunks
        .iter()
        .map(|c| {
            c.iter()
                .filter_map(|id| g.node(*id))
                .map(|n| 10_000 + node_work(g, n))
                .sum()
        })
        .collect();
    let mut covered: BTreeSet<String> = BTreeSet::new();
    let mut picks: Vec<usize> = Vec::new();
    for limit in [WINDOW_WORK, HEAVY_WORK] {
        while picks.len() < MAX_WINDOWS {
            let best = (0..chunks.len())
                .filter(|&i| !picks.contains(&i) && cost[i] <= limit)
                .map(|i| (types(chunks[i]).difference(&covered).count(), i))
                .max_by_key(|&(new, i)| (new, std::cmp::Reverse(i)));
            match best {
                Some((new, i)) if new > 0 => {
                    covered.extend(types(chunks[i]));
                    picks.push(i);
                }
                _ => break,
            }
        }
    }
    picks.sort();
    let mut out = Vec::new();
    for i in picks {
        let chunk = chunks[i];
        let mut nodes: Vec<NodeId> = chunk.to_vec();
        for id in chunk {
            let reads = g.node(*id).map(|n| n.present_inputs().collect::<Vec<_>>());
            for v in reads.unwrap_or_default() {
                if let Some(p) = g.producer(v)
                    && is_const(&p)
                    && !nodes.contains(&p)
                {
                    nodes.push(p);
                }
            }
        }
        let Ok(model) = mutagraph_ir::slice::extract(&from.model, &nodes) else {
            continue;
        };
        let region = chunk
            .iter()
            .filter_map(|id| g.node(*id).map(|n| n.label()))
            .collect();
        out.push(Window {
            k: out.len(),
            region,
            model,
        });
    }
    out
}

/// `model` with the values `names` among its outputs too (typed by inference), so that one
/// run captures what windows read.
pub fn exposing(model: &Model, names: &BTreeSet<String>) -> Model {
    let mut m = model.clone();
    let present: BTreeSet<String> = m
        .graph
        .outputs
        .iter()
        .filter_map(|o| o.name.clone())
        .collect();
    let real: BTreeSet<String> = input_names(&m).into_iter().collect();
    for n in names {
        if present.contains(n) || real.contains(n) {
            continue;
        }
        m.graph.outputs.push(mutagraph_ir::pb::ValueInfoProto {
            name: Some(n.clone()),
            r#type: Some(m.graph.value_type(n).to_proto()),
            ..Default::default()
        });
    }
    m
}

/// A window made a seed: fed the values of `captured` (a run of the whole model by `by`, its
/// inputs included); `None` when one it reads was not captured.
pub fn window_seed(from: &Seed, w: Window, captured: &NamedValues, by: &str) -> Option<Candidate> {
    let Window { k, region, model } = w;
    let mut m = model;
    let mut tensors = BTreeMap::new();
    for name in input_names(&m) {
        let t = captured
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| v.tensor())?
            .clone();
        let n: usize = t.shape.iter().product();
        if t.dtype.is_int() && n <= CONST_INPUT_ELEMENTS {
            m.graph.initializers.insert(name.clone(), t.to_proto(&name));
        } else {
            tensors.insert(name, t);
        }
    }
    // Read back, typed: the model the campaign mutates is the one its file holds.
    let mut m = Model::from_bytes(&m.to_bytes()).ok()?;
    super::seeds::typed(&mut m);
    let file = file_of(from, &format!("window-{k}"));
    let record = Derived {
        name: format!("{}#window-{k}", from.name),
        from: from.name.clone(),
        how: format!(
            "a window of {} ops of the seed ({} .. {}), fed the values that reached it in {by}'s \
             run of the whole seed",
            region.len(),
            region.first().cloned().unwrap_or_default(),
            region.last().cloned().unwrap_or_default()
        ),
        nodes: (from.model.graph.node_count(), m.graph.node_count()),
        dropped: BTreeMap::new(),
        region,
        inputs_file: Some(file.replace(".onnx", ".inputs.npz")),
        file,
        ..Derived::default()
    };
    Some(Candidate::new(record, m, tensors))
}

/// Runs a derived seed once on every backend, with the inputs its origin was admitted at
/// (`base`; a window's own tensors first), and records its baselines, or why it is not used.
pub fn admit(
    c: &mut Candidate,
    base: &Admitted,
    backends: &[String],
    reference: Option<usize>,
    pools: &mut [Vec<Pool>],
    input_seed: u64,
) -> Option<(GenOptions, NamedValues)> {
    let mut chosen = Admitted {
        mutated: true,
        why: base.why.clone(),
        shapes: base.shapes.clone(),
        values: base.values.clone(),
        ranges: base.ranges.clone(),
        float_range: base.float_range,
        free_dim: base.free_dim,
        batch_one: base.batch_one,
        ..Admitted::default()
    };
    let mut opts = chosen.gen_options();
    opts.tensors = Arc::new(c.tensors.clone());
    let refuse = |c: &mut Candidate, why: String| {
        c.record.not_used = Some(why);
        None
    };
    let ins = match inputs::generate(&c.seed.model, input_seed, &opts) {
        Ok(v) => v,
        Err(e) => return refuse(c, format!("its inputs cannot be generated: {e}")),
    };
    let bytes = c.seed.model.to_bytes();
    let runs = match run_everywhere(backends, pools, &bytes, &ins, None) {
        Ok(r) => r,
        Err(why) => return refuse(c, why),
    };
    if let Some(r) = reference.and_then(|r| runs.get(r)) {
        match r.outcome.outputs() {
            None => {
                let why = format!("the reference cannot run it: {}", outcome_line(r));
                return refuse(c, why);
            }
            Some(out) => {
                let share = nonfinite_share(out);
                chosen.nonfinite_percent = 100.0 * share;
                if share > MAX_NONFINITE {
                    let why = format!(
                        "{:.0} % of the reference's output elements are NaN or Inf",
                        100.0 * share
                    );
                    return refuse(c, why);
                }
            }
        }
    }
    let mr = MutantRuns {
        runs,
        reference,
        reruns: Vec::new(),
        slow_baseline: Default::default(),
    };
    baselines(&mut chosen, &mr, &ins);
    c.record.admitted = Some(chosen);
    Some((opts, ins))
}
