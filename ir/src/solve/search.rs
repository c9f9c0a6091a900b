//! The search for sizes: inference of the graph at candidate sizes ([`Search`]) and the steps
//! of [`find_sizes`] (the metadata's sizes, one size for all, each symbol lowered on its own).
use super::{CANDIDATES, Input, MAX_INPUT_ELEMENTS, MAX_LOWERING_TRIALS, Rejection, Slot, Symbol};
use crate::infer::{self, Options, Scope};
use crate::model::Model;
use crate::tensor;
use crate::types::{TensorType, ValueType};
use std::collections::{BTreeMap, HashMap};

/// Inference of the graph at candidate sizes (the model is not copied: each candidate's input
/// types are handed to inference in place of the declared ones).
pub(super) struct Search<'a> {
    model: &'a Model,
    /// The position of each graph input, by name (the first one of that name).
    position: HashMap<&'a str, usize>,
    inputs: &'a [Input],
    values: &'a BTreeMap<String, f64>,
}

impl<'a> Search<'a> {
    /// A search over the inputs `inputs` of `model`, with the input values `values`.
    pub(super) fn new(
        model: &'a Model,
        inputs: &'a [Input],
        values: &'a BTreeMap<String, f64>,
    ) -> Search<'a> {
        let g = &model.graph;
        let mut position: HashMap<&str, usize> = HashMap::with_capacity(g.inputs.len());
        for (i, v) in g.inputs.iter().enumerate() {
            position.entry(v.name.as_deref().unwrap_or("")).or_insert(i);
        }
        Search {
            model,
            position,
            inputs,
            values,
        }
    }

    /// `Ok` when inference finds no node rejecting the inputs at `sizes`; else the first
    /// node's complaint.
    pub(super) fn check(&mut self, sizes: &[usize]) -> Result<(), Rejection> {
        let mut scope = Scope::default();
        let mut types: Vec<Option<ValueType>> = vec![None; self.model.graph.inputs.len()];
        let mut total = 0usize;
        for inp in self.inputs {
            let Some(d) = &inp.dims else { continue };
            let shape = concrete(d, sizes);
            let n = shape.iter().fold(1usize, |a, &d| a.saturating_mul(d));
            total = total.saturating_add(n);
            if let Some(v) = self.values.get(&inp.name)
                && n <= 4096
            {
                let dims: Vec<i64> = shape.iter().map(|&x| x as i64).collect();
                let t = tensor::from_f64s(&inp.name, inp.dtype, &dims, &vec![*v; n]);
                scope.consts.insert(inp.name.clone(), t);
            }
            let dims: Vec<i64> = shape.iter().map(|&x| x as i64).collect();
            let ty = ValueType::Tensor(TensorType::fixed(inp.dtype, &dims));
            if let Some(&i) = self.position.get(inp.name.as_str()) {
                types[i] = Some(ty);
            }
        }
        if total > MAX_INPUT_ELEMENTS {
            return Err(Rejection::TooLarge(total));
        }
        // Valued inputs are constants of the outer scope: the graph sees them as consts, and
        // their types come from the graph's own inputs.
        let mut rep = infer::Report::default();
        infer::run_graph_with_inputs(
            &self.model.graph,
            self.model.default_opset(),
            &scope,
            Options {
                use_declared: false,
            },
            &types,
            &mut rep,
        );
        match rep.errors.into_iter().next() {
            None => Ok(()),
            Some((node, problem)) => Err(Rejection::Node { node, problem }),
        }
    }
}

/// The shape of an input at the symbols' `sizes`.
pub(super) fn concrete(dims: &[Slot], sizes: &[usize]) -> Vec<usize> {
    dims.iter()
        .map(|s| match s {
            Slot::Fixed(k) => *k,
            Slot::Sym(i) => sizes[*i],
        })
        .collect()
}

/// What the search found: a size per symbol, whether every node accepts them, why each
/// symbol has its size, and the first rejection met.
pub(super) struct Found {
    pub(super) sizes: Vec<usize>,
    pub(super) valid: bool,
    pub(super) reason: Vec<String>,
    pub(super) first_error: Option<Rejection>,
}

/// Sizes for `symbols` (those given keep theirs); `no_values`: no input value is chosen.
pub(super) fn find_sizes(search: &mut Search, symbols: &[Symbol], no_values: bool) -> Found {
    let n = symbols.len();
    let mut sizes: Vec<usize> = symbols.iter().map(|s| s.given.unwrap_or(1)).collect();
    let free: Vec<usize> = (0..n).filter(|&i| symbols[i].given.is_none()).collect();
    // Nothing to choose (every input dim is known, no input value is chosen): the declared
    // sizes are the plan, and whether every node accepts them is validation's question, not
    // one more inference of the whole graph here.
    let mut valid = n == 0 && no_values;
    let mut first_error = None;
    if !valid {
        valid = metadata_sizes(search, symbols, &free, &mut sizes);
    }
    if !valid {
        valid = uniform_size(search, symbols, &free, &mut sizes, &mut first_error);
    }
    let reason = if valid {
        lower_each(search, symbols, &free, &mut sizes)
    } else {
        for &i in &free {
            sizes[i] = if symbols[i].batch {
                1
            } else {
                symbols[i].floor.size
            };
        }
        vec![String::new(); n]
    };
    Found {
        sizes,
        valid,
        reason,
        first_error,
    }
}

/// Step 0: the sizes the model's metadata names, the other symbols at their floors (tried when
/// the metadata names any).
fn metadata_sizes(
    search: &mut Search,
    symbols: &[Symbol],
    free: &[usize],
    sizes: &mut [usize],
) -> bool {
    if !free.iter().any(|&i| symbols[i].floor.hint.is_some()) {
        return false;
    }
    for &i in free {
        sizes[i] = symbols[i].floor.hint.unwrap_or(symbols[i].floor.size);
    }
    search.check(sizes).is_ok()
}

/// Step 1: one size for every free symbol that is not a batch (at least its floor); batches at 1.
/// Then, should no size fit, batches too.
fn uniform_size(
    search: &mut Search,
    symbols: &[Symbol],
    free: &[usize],
    sizes: &mut Vec<usize>,
    first_error: &mut Option<Rejection>,
) -> bool {
    let floor = |i: usize| symbols[i].floor.size;
    for batches_too in [false, true] {
        if batches_too && !free.iter().any(|&i| symbols[i].batch) {
            break;
        }
        let mut last: Option<Vec<usize>> = None;
        for &c in CANDIDATES {
            for &i in free {
                sizes[i] = if symbols[i].batch && !batches_too {
                    1
                } else {
                    c.max(floor(i))
                };
            }
            // Candidates under every floor give the same sizes: checked once.
            if last.as_ref() == Some(sizes) {
                continue;
            }
            last = Some(sizes.clone());
            match search.check(sizes) {
                Ok(()) => return true,
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
            if free.iter().all(|&i| symbols[i].batch && !batches_too) {
                break;
            }
        }
    }
    false
}

/// Step 2: each symbol on its own, down to the smallest valid size (within a budget of trials:
/// each infers the whole graph). Returns why each symbol has its size.
fn lower_each(
    search: &mut Search,
    symbols: &[Symbol],
    free: &[usize],
    sizes: &mut Vec<usize>,
) -> Vec<String> {
    let floor = |i: usize| symbols[i].floor.size;
    let mut reason: Vec<String> = vec![String::new(); symbols.len()];
    let mut trials = 0usize;
    for &i in free {
        let mut blocked = None;
        let mut spent = false;
        if symbols[i].floor.hint == Some(sizes[i]) {
            reason[i] = "the size the model's metadata names".to_string();
            continue;
        }
        let lower = CANDIDATES
            .iter()
            .filter(|&&c| c >= floor(i))
            .take_while(|&&c| c < sizes[i]);
        for &c in lower {
            if trials == MAX_LOWERING_TRIALS {
                spent = true;
                break;
            }
            trials += 1;
            let mut trial = sizes.clone();
            trial[i] = c;
            match search.check(&trial) {
                Ok(()) => {
                    *sizes = trial;
                    blocked = None;
                    break;
                }
                Err(e) => blocked = Some((c, e)),
            }
        }
        reason[i] = match blocked {
            _ if spent => format!(
                "kept at the size every symbol fits (the search for smaller sizes stops \
                 after {MAX_LOWERING_TRIALS} trials)"
            ),
            Some((c, e)) => format!(
                "the smallest valid size ({}); at {c}: {e}",
                symbols[i].floor.why
            ),
            None if sizes[i] == 1 && symbols[i].batch => "named as a batch".to_string(),
            None => format!("the smallest size ({})", symbols[i].floor.why),
        };
    }
    reason
}
