//! The documents of a bundle, rendered from its files: `REPORT.md` (and its title, the spec
//! points, the comparisons), `repro.py`, `snippet.py` and burn's `repro/` project.
use super::*;

mod spec;
mod title;
use spec::{other_runners, spec_points};
#[cfg(test)]
use title::whole_words;
use title::{rewrite, title, without_incidental};

/// The model as the report lists it: inputs, one line per node, outputs.
pub fn describe_model(m: &Model, file: &str) -> ModelDescription {
    let ty = |n: &str| m.graph.value_type(n).to_string();
    let mut d = ModelDescription {
        file: file.into(),
        opset: m.default_opset().to_string(),
        ..Default::default()
    };
    for i in m.graph.real_inputs() {
        let n = i.name.clone().unwrap_or_default();
        d.inputs.push(ValueLine {
            ty: ty(&n),
            name: n,
        });
    }
    if let Ok(order) = m.graph.topo_order() {
        for id in order {
            let n = m.graph.node(id).expect("listed");
            d.nodes.push(NodeLine {
                op_type: n.op_type.clone(),
                inputs: n
                    .inputs
                    .iter()
                    .map(|i| {
                        if m.graph.initializers.contains_key(i) {
                            format!("{i} (weight {})", ty(i))
                        } else {
                            i.clone()
                        }
                    })
                    .collect(),
                outputs: n
                    .outputs
                    .iter()
                    .map(|o| format!("{o}: {}", ty(o)))
                    .collect(),
                attributes: n
                    .attributes
                    .iter()
                    .map(|a| format!("{}={}", a.name, a.value.short()))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    for o in &m.graph.outputs {
        let n = o.name.clone().unwrap_or_default();
        d.outputs.push(ValueLine {
            ty: ty(&n),
            name: n,
        });
    }
    d
}

/// Expected vs actual per output, the differing elements first.
pub(super) fn comparisons(
    want: &NamedValues,
    native: Option<&NamedValues>,
    got: &NamedValues,
    reproduce: &Reproduce,
) -> Vec<Comparison> {
    let mut out = Vec::new();
    for (name, wv) in want {
        let Some((_, gv)) = got.iter().find(|(g, _)| g == name) else {
            continue;
        };
        let (Some(e), Some(a)) = (wv.tensor(), gv.tensor()) else {
            continue;
        };
        let n = native
            .and_then(|nv| nv.iter().find(|(k, _)| k == name))
            .and_then(|(_, v)| v.tensor());
        let (rtol, atol) = reproduce
            .tolerances
            .get(name)
            .copied()
            .unwrap_or(reproduce.default_tolerance);
        if e.shape != a.shape {
            out.push(Comparison {
                output: name.clone(),
                expected: format!("shape {:?}", e.shape),
                actual: format!("shape {:?}", a.shape),
                max_abs: None,
                wrong: None,
            });
            continue;
        }
        let (Some(ev), Some(av)) = (e.to_f64s(), a.to_f64s()) else {
            continue;
        };
        let nv = n.and_then(|t| t.to_f64s()).filter(|v| v.len() == ev.len());
        let float = e.dtype.is_float();
        let tol = Tolerance {
            name: "report",
            atol: if float || atol >= 1.0 { atol } else { 0.0 },
            rtol: if float { rtol } else { 0.0 },
        };
        let bad: Vec<usize> = (0..ev.len())
            .filter(|&i| {
                let z = nv.as_ref().map_or(ev[i], |v| v[i]);
                !mutagraph_backends::compare::envelope_holds(ev[i], z, av[i], tol)
            })
            .collect();
        // The error of the wrong elements finite on both sides (none: every wrong element is
        // NaN or infinite on one side, which has no size).
        let max_abs = bad
            .iter()
            .map(|&i| (ev[i], av[i]))
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|(x, y)| (x - y).abs())
            .reduce(f64::max)
            .or(bad.is_empty().then_some(0.0));
        let fmt = |x: f64| {
            if e.dtype.is_float() {
                format!("{x:.6}")
            } else {
                format!("{}", x as i64)
            }
        };
        let show = |v: &[f64]| -> String {
            let idx: Vec<usize> = if bad.is_empty() {
                (0..v.len().min(6)).collect()
            } else {
                bad.iter().copied().take(6).collect()
            };
            idx.iter()
                .map(|&i| format!("[{i}] {}", fmt(v[i])))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push(Comparison {
            output: name.clone(),
            expected: show(&ev),
            actual: show(&av),
            max_abs,
            wrong: Some((bad.len(), ev.len())),
        });
    }
    out
}

/// The burn calls the interpreter runs the reproduced node of `model` with
/// ([`mutagraph_backends::burn::repro::burn_calls`]); none without burn.
fn burn_calls(model: &Model, inputs: &NamedValues) -> Vec<String> {
    #[cfg(feature = "burn")]
    return mutagraph_backends::burn::repro::burn_calls(model, inputs);
    #[cfg(not(feature = "burn"))]
    {
        let _ = (model, inputs);
        Vec::new()
    }
}

/// Writes `repro/` (a cargo project calling burn's tensor API the way the interpreter ran the
/// blamed node `node`) when the op is one the generator covers; returns its `main.rs`.
#[cfg(feature = "burn")]
#[allow(clippy::too_many_arguments)]
pub(super) fn burn_project(
    dir: &Path,
    model: &Model,
    node: Option<mutagraph_ir::graph::NodeId>,
    inputs: &NamedValues,
    expected: Option<&NamedValues>,
    blamed: Option<&NamedValues>,
    blame: Option<&Blame>,
    rp: &Reproduce,
    title: &str,
    symptom: &str,
) -> Result<Option<String>> {
    use mutagraph_backends::burn::repro::{Expect, PRODUCERS, project};
    use mutagraph_oracles::localize::{InProcess, node_alone, run_reference};
    // A model of several nodes (the minimizer keeps what the bug needs upstream): the blamed
    // node alone, fed the values burn computed for it when the node alone showed the finding
    // on them (`blamed`), else those the reference computes for it.
    let alone;
    // A node that shows it only after a producer the generator writes (`PRODUCERS`: a
    // Transpose, a OneHot, a GatherElements): the project runs both (burn's layout of the producer's value is what the node
    // misreads).
    let after_producer = matches!(
        blame,
        Some(Blame::WithProducers { ops }) if ops.len() == 1 && PRODUCERS.contains(&ops[0].as_str())
    );
    let (model, inputs, expected) = match (model.graph.node_count(), node) {
        (2, Some(_)) if after_producer => (model, inputs, expected),
        // A node that does not show it alone has no reproduction of its own.
        _ if !matches!(
            blame,
            None | Some(Blame::Alone) | Some(Blame::Unchecked { .. })
        ) =>
        {
            return Ok(None);
        }
        (n, Some(id)) if n > 1 => {
            let a = match blamed {
                Some(fed) => mutagraph_ir::slice::extract(model, &[id])
                    .ok()
                    .and_then(|single| {
                        let want = run_reference(&single, fed).ok()?;
                        Some((single, fed.clone(), want))
                    }),
                // The reference ran this minimized model to completion in a worker already.
                None => node_alone(model, id, inputs, &mut InProcess),
            };
            let Some(a) = a else {
                return Ok(None);
            };
            alone = a;
            (&alone.0, &alone.1, Some(&alone.2))
        }
        _ => (model, inputs, expected),
    };
    let Some((name, want)) = expected
        .and_then(|e| e.first())
        .and_then(|(n, v)| Some((n.clone(), v.tensor()?.clone())))
    else {
        return Ok(None);
    };
    let tolerance = rp
        .tolerances
        .get(&name)
        .copied()
        .unwrap_or(rp.default_tolerance);
    let Some(p) = project(
        model,
        inputs,
        &Expect {
            expected: &want,
            tolerance,
            symptom,
            title,
        },
    ) else {
        return Ok(None);
    };
    let src = dir.join("repro").join("src");
    std::fs::create_dir_all(&src).with_context(|| format!("creating {}", src.display()))?;
    w(
        &dir.join("repro").join("Cargo.toml"),
        p.cargo_toml.as_bytes(),
    )?;
    w(&src.join("main.rs"), p.main_rs.as_bytes())?;
    Ok(Some(p.main_rs))
}

#[cfg(not(feature = "burn"))]
#[allow(clippy::too_many_arguments)]
pub(super) fn burn_project(
    _: &Path,
    _: &Model,
    _: Option<mutagraph_ir::graph::NodeId>,
    _: &NamedValues,
    _: Option<&NamedValues>,
    _: Option<&NamedValues>,
    _: Option<&Blame>,
    _: &Reproduce,
    _: &str,
    _: &str,
) -> Result<Option<String>> {
    Ok(None)
}

/// Writes `snippet.py` (`onnx.helper` and the library's Python API) for ONNX Runtime and
/// tract bundles; returns it.
fn write_snippet(
    dir: &Path,
    model: &Model,
    (model_file, inputs_npz): &(&str, String),
    inputs: &NamedValues,
    expected: Option<&NamedValues>,
    rp: &Reproduce,
) -> Result<Option<String>> {
    let api = match rp.library.as_str() {
        "onnxruntime" => Api::OnnxRuntime {
            optimized: rp.showing.iter().all(|b| catalog::is_optimized(b)),
        },
        "tract" => Api::Tract,
        _ => return Ok(None),
    };
    let snippet = python_snippet(model, model_file, inputs, inputs_npz, expected, api);
    if let Some(s) = &snippet {
        w(&dir.join("snippet.py"), s.as_bytes())?;
    }
    Ok(snippet)
}

/// The op types of a model of at most four nodes, in order (`Pad, MaxPool, Sqrt`).
fn op_chain(model: &Model) -> Option<String> {
    let order = model.graph.topo_order().ok()?;
    (!order.is_empty() && order.len() <= 4).then(|| {
        order
            .iter()
            .filter_map(|id| Some(model.graph.node(*id)?.op_type.clone()))
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// The model in `path`, decoded and typed.
fn typed_file(path: &Path) -> Result<Model> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mut model =
        Model::from_bytes(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    mutagraph_ir::infer::infer_model(&mut model, Default::default());
    Ok(model)
}

/// Renders `repro.py`, `snippet.py`, `repro/` (burn) and `REPORT.md` from the bundle's files:
/// the minimized model and its values once minimized, else the original.
pub fn render_docs(dir: &Path, meta: &Meta) -> Result<()> {
    render_docs_of(dir, meta, None)
}

/// [`render_docs`], given the typed model of the bundle's model file when the caller holds it
/// (`None`: it is read from the bundle).
pub fn render_docs_of(dir: &Path, meta: &Meta, typed: Option<&Model>) -> Result<()> {
    let minimized = dir.join("minimized.onnx").exists();
    let p = if minimized { "minimized_" } else { "" };
    let model_file = if minimized {
        "minimized.onnx"
    } else {
        "original.onnx"
    };
    let read;
    let model = match typed {
        Some(m) => m,
        None => {
            read = typed_file(&dir.join(model_file))?;
            &read
        }
    };
    let inputs = npz_values(&dir.join(format!("{p}inputs.npz"))).unwrap_or_default();
    let expected = npz_values(&dir.join(format!("{p}expected.npz")));
    let native = npz_values(&dir.join(format!("{p}expected_native.npz")));
    let actual = npz_values(&dir.join(format!("{p}actual.npz")));
    let has = |n: &str| dir.join(n).exists();
    let rp = &meta.reproduce;
    let finding = if minimized {
        meta.minimized_finding.as_ref().unwrap_or(&meta.finding)
    } else {
        &meta.finding
    };
    let loc_value = finding.location.as_ref().map(|l| l.value.clone());
    // Not pinned on a node (an optimizer's rewrite that exposing the intermediates undoes):
    // the report names the ops of the small model, not one of them.
    let node = loc_value
        .is_some()
        .then(|| focus(model, loc_value.as_deref()))
        .flatten();
    let op = meta
        .minimized
        .as_ref()
        .and_then(|m| m.op_type.clone())
        .or(meta.op_type.clone())
        .or_else(|| node.map(|n| n.key()))
        .or_else(|| op_chain(model));
    let mut facts = node
        .map(|n| trigger_facts(model, n, &inputs))
        .unwrap_or_default();
    if minimized {
        facts = without_incidental(facts, &meta.trigger);
    }
    let calls = if finding.on_strided_input() {
        burn_calls(model, &inputs)
    } else {
        Vec::new()
    };
    let title = title(meta, finding, op.as_deref(), &facts, &calls);
    let repro = ReproSpec {
        title: title.clone(),
        kind: meta.kind.name().into(),
        symptom: finding.symptom_class().into(),
        library: rp.library.clone(),
        showing: rp.showing.clone(),
        clean: rp.clean.clone(),
        ground: finding.ground.clone().filter(|g| rp.clean.contains(g)),
        model_file: model_file.into(),
        inputs_npz: format!("{p}inputs.npz"),
        expected_npz: has(&format!("{p}expected.npz")).then(|| format!("{p}expected.npz")),
        expected_native_npz: has(&format!("{p}expected_native.npz"))
            .then(|| format!("{p}expected_native.npz")),
        tolerances: rp
            .tolerances
            .iter()
            .map(|(n, (r, a))| (n.clone(), *r, *a))
            .collect(),
        default_tolerance: rp.default_tolerance,
        expect_error: rp.expect_error.clone(),
        slow_seconds: rp.slow_seconds,
        embedded_expected: embedded_expected(meta, expected.as_ref()),
        optimizer_pass: pass_to_leave_out(finding, &rp.library),
    };
    w(&dir.join("repro.py"), render_repro_py(&repro).as_bytes())?;
    let files = (model_file, format!("{p}inputs.npz"));
    let snippet = write_snippet(dir, model, &files, &inputs, expected.as_ref(), rp)?;
    let blamed = npz_values(&dir.join(format!("{p}blamed_inputs.npz")));
    let burn_main = if rp.library == "burn" {
        burn_project(
            dir,
            model,
            node.map(|n| n.id),
            &inputs,
            expected.as_ref(),
            blamed.as_ref(),
            finding.blame.as_ref(),
            rp,
            &title,
            finding.symptom_class(),
        )?
    } else {
        None
    };
    if rp.library == "burn" && burn_main.is_none() {
        // No project for this model: one from an earlier rendering would not match it.
        let stale = dir.join("repro");
        if stale.is_dir() {
            std::fs::remove_dir_all(&stale)
                .with_context(|| format!("removing {}", stale.display()))?;
        }
    }

    let facts_lines = facts_lines(meta, finding, &op);
    let summary = summary(meta, finding, &op, &facts);
    let others = other_backends(meta, finding);
    let steps = repro_steps(meta, burn_main.is_some());
    let environment = environment(meta);
    let comparisons = match (&expected, &actual) {
        (Some(e), Some(a)) if meta.kind.is_numeric() => comparisons(e, native.as_ref(), a, rp),
        _ => Vec::new(),
    };
    let snippet_block = snippet
        .map(|s| ("python".to_string(), s))
        .or(burn_main.map(|m| ("rust".to_string(), m)));
    let report = ReportSpec {
        title,
        summary,
        facts: facts_lines,
        spec: spec_points(meta, finding, model, op.as_deref()),
        snippet: snippet_block,
        model: describe_model(model, model_file),
        values: shown_values(model, &inputs),
        comparisons,
        error: (meta.kind == Kind::Crash).then(|| finding.message.clone()),
        steps,
        environment,
        others,
        provenance: Some(provenance(meta)),
        minimization: meta.minimized.as_ref().map(|m| Minimization {
            nodes_before: m.nodes_before,
            nodes_after: m.nodes_after,
        }),
        upstream: meta
            .upstream
            .as_ref()
            .map_or_else(Default::default, super::upstream::Search::section),
    };
    w(&dir.join("REPORT.md"), render_report_md(&report).as_bytes())
}

/// The report's facts table: library, configurations, operator, stage, needs, aliases.
fn facts_lines(meta: &Meta, finding: &Finding, op: &Option<String>) -> Vec<(String, String)> {
    let faulty = &meta.backends[0];
    let mut facts_lines = vec![(
        "Library".to_string(),
        format!(
            "{} {}",
            meta.library,
            meta.backend_versions
                .get(faulty)
                .cloned()
                .unwrap_or_default()
        ),
    )];
    let mut shown: Vec<String> = Vec::new();
    for (n, s) in &finding.variants {
        shown.push(format!("{n}: {}", if *s { "shows it" } else { "correct" }));
    }
    if !shown.is_empty() {
        facts_lines.push(("Configurations".into(), shown.join("; ")));
    }
    if let Some(op) = &op {
        facts_lines.push(("Operator".into(), op.clone()));
    }
    if let Some(rule) = rewrite(finding) {
        facts_lines.push((
            "Rewrite rule".into(),
            match &finding.blame {
                Some(Blame::InRewrite { .. }) => {
                    format!("{rule}: ONNX Runtime names the node it failed on after the rewrite")
                }
                Some(Blame::Rewrite { library, .. }) => format!(
                    "{rule}: the part shows it with all of {library}'s rewrites and not with \
                     this one left out"
                ),
                _ => format!("{rule}: tract's message names the rewrite that failed"),
            },
        ));
    }
    if let Some(pass) = finding.optimizer_pass() {
        facts_lines.push((
            "Optimizer pass".into(),
            format!(
                "{pass}: the process died while applying it (the optimizer's verbose log names \
                 each pass as it starts it); repro.py runs the model again with it disabled"
            ),
        ));
    }
    // The stage of this model's failure (a minimized model may fail later than the seed).
    if let Some(s) = finding.stage.or(meta.stage) {
        facts_lines.push(("Fails at".into(), s.to_string()));
    }
    if finding.on_strided_input() {
        facts_lines.push((
            "Needs".into(),
            "its input in the strided layout its producers leave (fed the same values in a \
             fresh tensor, the node is right); the attributes only decide whether the read \
             order shows in the result"
                .into(),
        ));
    } else if !meta.trigger.is_empty() {
        facts_lines.push((
            "Needs".into(),
            format!(
                "{} (on this model: the library is right with it removed)",
                meta.trigger.join(", ")
            ),
        ));
    }
    if let (Some(b), Some(op)) = (&finding.blame, op) {
        facts_lines.push(("Blame checked".into(), b.describe(op)));
    }
    if let Some(first) = fails_first_elsewhere(meta, finding) {
        facts_lines.push((
            "Original model".into(),
            format!(
                "run whole, {} stops first with another error (`{first}`), a fault of its own \
                 or this one met downstream; this one shows on the part of it that the \
                 minimized model keeps",
                meta.library
            ),
        ));
    }
    if !meta.aliases.is_empty() {
        facts_lines.push((
            "Also seen as".into(),
            format!(
                "{} other signature{} with the same root cause (their bundles are in merged/)",
                meta.aliases.len(),
                if meta.aliases.len() == 1 { "" } else { "s" }
            ),
        ));
    }
    facts_lines
}

/// The facts a title or a summary may claim: the attributes the trigger search kept and the
/// special values the node met. The element type and the kind of indices are the model's, not
/// checked causes (a triage found "on f16" beside bugs of every type).
fn claimed(facts: &[String]) -> impl Iterator<Item = &String> {
    facts
        .iter()
        .filter(|f| !f.starts_with("on ") && !f.contains(" indices in '"))
}

/// The report's summary: what the library does wrong, what it shows with, what it needs.
fn summary(meta: &Meta, finding: &Finding, op: &Option<String>, facts: &[String]) -> String {
    // Judged against another run where the reference lacks an op (round 13: "differ from
    // ONNX's definition" where the expected values were ONNX Runtime's unoptimized ones).
    let definition = match &finding.ground {
        Some(g) => {
            format!("{g}'s run (which stands in for the reference: it lacks an op of the model)")
        }
        None => "ONNX's definition".to_string(),
    };
    let what = match (meta.kind, finding.optimizer_pass()) {
        (Kind::Crash, Some(pass)) => format!(
            "{} dies while its optimizer pass {} rewrites a valid model that {}.",
            meta.library,
            pass,
            runners(finding)
        ),
        (Kind::Crash, None) => format!(
            "{} fails on a valid model{} that {}.",
            meta.library,
            op.as_ref()
                .map(|o| format!(" at its {o} node"))
                .unwrap_or_default(),
            runners(finding)
        ),
        (Kind::Nan, _) => format!(
            "{} returns NaN or infinite values where {definition} gives finite ones.",
            meta.library
        ),
        (Kind::Inconsistency, _) if finding.symptom_class() == "shape" => format!(
            "{} returns an output whose shape differs from the one {definition} gives.",
            meta.library
        ),
        (Kind::Inconsistency, _) => format!(
            "{} returns values that differ from {definition} beyond rounding.",
            meta.library
        ),
        (Kind::Hang, _) => format!(
            "{} does not finish{} on a valid model that {}: {}.",
            meta.library,
            title::hang_step(meta, finding)
                .map(|s| format!(" {s}"))
                .unwrap_or_default(),
            runners(finding),
            finding.message
        ),
        _ => format!("{}: {}", meta.library, finding.message),
    };
    let shown: Vec<&str> = claimed(facts).map(String::as_str).collect();
    let trig = if shown.is_empty() {
        String::new()
    } else {
        format!(" It shows with {}.", shown.join(", "))
    };
    let needs = match meta.trigger.len() {
        // The attributes only decide whether burn's read order shows (round 13: "axes is what
        // it needs" beside a Needs line saying the layout is).
        _ if finding.on_strided_input() => format!(
            " It needs its input in the strided layout its producers leave: fed the same values \
             in a fresh tensor, {} is right.",
            meta.library
        ),
        0 => String::new(),
        // What the trigger search checked, and no more: the attribute removed (its default)
        // on this model, the rest unchanged (round 13: "pads is what it needs: without it,
        // tract is right" where the rest of the model then left nothing to compute).
        1 => format!(
            " With the attribute {} removed (its default), the rest of this model unchanged, \
             {} gives the right result.",
            meta.trigger[0], meta.library
        ),
        _ => format!(
            " With any one of the attributes {} removed (its default), the rest of this model \
             unchanged, {} gives the right result.",
            meta.trigger
                .iter()
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            meta.library
        ),
    };
    format!("{what}{trig}{needs}")
}

/// The error the library stopped with on the whole original model, when it is another than the
/// finding's (a crash found on a part: round 13's triage saw tract's Python package stop at a
/// Compress it cannot type, on a bundle about a Downsample rule, and REPORT.md did not say; or
/// the same fault met at a later node, a Reshape given the wrong shape).
fn fails_first_elsewhere(meta: &Meta, finding: &Finding) -> Option<String> {
    let faulty = finding.backends.first()?;
    let run = meta.runs.iter().find(|r| &r.backend == faulty)?;
    let family = mutagraph_backends::catalog::family(faulty);
    (finding.kind == Kind::Crash
        && matches!(run.status.as_str(), "error" | "crash")
        && !mutagraph_oracles::finding::same_failure(family, &finding.message, &run.detail))
    .then(|| run.detail.chars().take(160).collect())
}

/// Who runs the finding's model without the failure, as the end of a sentence (`tract runs`).
fn runners(finding: &Finding) -> String {
    match other_runners(finding).as_slice() {
        [] => "mutagraph's interpreter of ONNX's definitions runs".to_string(),
        [one] => format!("{one} runs"),
        o => format!(
            "{} run",
            o.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// What the other libraries did with the model (the report's "other backends"): their runs in
/// the bundle, then the witnesses the triage ran on its own (a library that runs the model
/// where the campaign's set lacked it), which the bundle does not store.
fn other_backends(meta: &Meta, finding: &Finding) -> Vec<BackendStatus> {
    let runs = if meta.minimized_runs.is_empty() {
        &meta.runs
    } else {
        &meta.minimized_runs
    };
    let mut out: Vec<BackendStatus> = runs
        .iter()
        .filter(|r| !meta.backends.contains(&r.backend) && !catalog::is_reference(&r.backend))
        .map(|r| BackendStatus {
            name: r.backend.clone(),
            version: r.version.clone(),
            status: match r.status.as_str() {
                "ok" => "runs it".to_string(),
                s => format!("{s}: {}", r.detail.chars().take(200).collect::<String>()),
            },
        })
        .collect();
    for w in other_runners(finding) {
        if out.iter().any(|b| &b.name == w) {
            continue;
        }
        out.push(BackendStatus {
            name: w.clone(),
            version: meta.backend_versions.get(w).cloned().unwrap_or_default(),
            status: "runs it (a run of its own by the triage, not stored in this bundle)".into(),
        });
    }
    out
}

/// The expected values `repro.py` carries in itself for a numeric finding, when they are
/// small ([`EMBED_LIMIT`](mutagraph_oracles::bundle::repro::EMBED_LIMIT)): the model and
/// inputs then suffice wherever onnx.reference cannot compute them.
fn embedded_expected(meta: &Meta, expected: Option<&NamedValues>) -> Vec<(String, HostTensor)> {
    let Some(expected) = expected.filter(|_| meta.kind.is_numeric()) else {
        return Vec::new();
    };
    let tensors: Vec<(String, HostTensor)> = expected
        .iter()
        .filter_map(|(n, v)| Some((n.clone(), v.tensor()?.clone())))
        .collect();
    let bytes: usize = tensors
        .iter()
        .map(|(_, t)| t.num_elements() * t.dtype.bits().unwrap_or(64).div_ceil(8))
        .sum();
    if bytes > mutagraph_oracles::bundle::repro::EMBED_LIMIT {
        return Vec::new();
    }
    tensors
}

/// How to reproduce: the library's own package (for burn, the `repro/` project when there is
/// one), then mutagraph.
fn repro_steps(meta: &Meta, burn_project: bool) -> Vec<(String, String)> {
    let rp = &meta.reproduce;
    let faulty = &meta.backends[0];
    let mut steps = Vec::new();
    match rp.library.as_str() {
        "onnxruntime" => steps.push((
            "With ONNX Runtime's Python package".to_string(),
            "pip install onnxruntime numpy\npython repro.py".to_string(),
        )),
        "tract" => steps.push((
            "With tract's Python package (the same version; it prepares the model with tract's \
             optimizer, the tract-opt pipeline)"
                .to_string(),
            format!(
                "pip install tract=={} numpy onnx\npython repro.py",
                meta.backend_versions
                    .get(faulty)
                    .cloned()
                    .unwrap_or_default()
            ),
        )),
        "burn" if burn_project => steps.push((
            "With burn's tensor API (a cargo project in repro/)".to_string(),
            "cd repro && cargo run --release".to_string(),
        )),
        _ => {}
    }
    let with_mutagraph = if rp.library == "burn" && !burn_project {
        "With mutagraph (burn has no Python API, and mutagraph writes a repro/ project calling \
         burn's tensor API only for the ops and symptoms it covers, not this one)"
    } else {
        "With mutagraph (every backend, the same verdict as the campaign)"
    };
    steps.push((with_mutagraph.into(), "mutagraph recheck .".to_string()));
    steps
}

/// The environment the finding was seen in.
fn environment(meta: &Meta) -> Vec<(String, String)> {
    let rp = &meta.reproduce;
    let env = &meta.environment;
    let mut environment = vec![("OS".to_string(), env.os.clone())];
    if !env.cpu.is_empty() {
        environment.push(("CPU".into(), env.cpu.clone()));
    }
    if let Some(py) = &env.python {
        environment.push(("Python".into(), py.clone()));
    }
    for (k, v) in &env.packages {
        environment.push((k.clone(), v.clone()));
    }
    for (b, v) in &meta.backend_versions {
        if meta.backends.contains(b) {
            environment.push((format!("backend {b}"), v.clone()));
        }
    }
    if rp.library == "onnxruntime" {
        environment.push(("Execution provider".into(), "CPUExecutionProvider".into()));
    }
    environment
}

/// Where the finding came from: its seed (and the seed it was derived from), the mutations,
/// its hits.
fn provenance(meta: &Meta) -> Provenance {
    Provenance {
        seed: meta.seed.clone(),
        derived: meta.derived_from.as_ref().map(|d| {
            let region = match (d.region.first(), d.region.last()) {
                (Some(a), Some(b)) => format!(" (its nodes {a} .. {b})"),
                _ => String::new(),
            };
            let whole = match &meta.whole_model {
                Some(w) => format!("; the same mutations on the whole model: {w}"),
                None => String::new(),
            };
            format!("`{}`, {}{region}{whole}", d.seed, d.how)
        }),
        iteration: meta.iteration,
        operators: meta.operators.clone(),
        hits: meta.hits,
        first_seen: format!(
            "{:.1} s (iteration {})",
            meta.first_seen.elapsed_s, meta.first_seen.iteration
        ),
        last_seen: format!(
            "{:.1} s (iteration {})",
            meta.last_seen.elapsed_s, meta.last_seen.iteration
        ),
        variants: meta
            .variants_seen
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect(),
        ops: meta.ops_seen.iter().map(|(k, v)| (k.clone(), *v)).collect(),
    }
}

/// The pass repro.py runs the model again without: the one the process died in, or the
/// rewrite a finding is blamed on, needed or failing inside it (ONNX Runtime's
/// `disabled_optimizers`; tract's Python package has no such switch).
fn pass_to_leave_out(finding: &Finding, library: &str) -> Option<String> {
    finding
        .optimizer_pass()
        .or_else(|| finding.rewrite_rule().filter(|_| library == "onnxruntime"))
        .map(String::from)
}

#[cfg(test)]
mod tests;
