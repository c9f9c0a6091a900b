//! Findings as data: what kind of bug, which backend, where, and the signature that
//! deduplicates them.
mod message;
mod tract;

pub use message::{core_message, key_phrase, normalize_message, same_failure};
pub use tract::{tract_phrase, tract_rule};

use mutagraph_backends::backend::Stage;
use mutagraph_backends::compare::Metrics;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What kind of bug a finding points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// The backend crashed, panicked or reported an error where others ran the model.
    Crash,
    /// NaN / Inf outputs where the ground truth is finite.
    Nan,
    /// Outputs that differ from the ground truth beyond the tolerance.
    Inconsistency,
    /// No answer within the time limit where others finished.
    Hang,
    /// Much slower than the other backends, confirmed by re-runs.
    Slow,
    /// Over the memory cap, or peak memory far above the others.
    Memory,
    /// The same backend twice on the same model and inputs disagrees with itself.
    Flaky,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 7] = [
        Kind::Crash,
        Kind::Nan,
        Kind::Inconsistency,
        Kind::Hang,
        Kind::Slow,
        Kind::Memory,
        Kind::Flaky,
    ];

    /// The lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Crash => "crash",
            Kind::Nan => "nan",
            Kind::Inconsistency => "inconsistency",
            Kind::Hang => "hang",
            Kind::Slow => "slow",
            Kind::Memory => "memory",
            Kind::Flaky => "flaky",
        }
    }

    /// The kind of a name.
    pub fn by_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Kinds that the localizer can pin on a node (they are about values).
    pub fn is_numeric(self) -> bool {
        matches!(self, Kind::Nan | Kind::Inconsistency)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a finding was pinned by localization.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Location {
    /// The op type of the first node whose output diverges.
    pub op_type: String,
    /// The node's first output (node names are not stable; value names are).
    pub value: String,
    /// Its key attributes, `name=value` comma-separated (the categorical ones).
    pub attrs: String,
}

impl Location {
    /// The location of `node`: its op type, first output and key attributes.
    pub fn of(node: &mutagraph_ir::graph::Node) -> Location {
        Location {
            op_type: node.op_type.clone(),
            value: node.outputs.first().cloned().unwrap_or_default(),
            attrs: crate::localize::key_attrs(node),
        }
    }
}

/// Which part of a library a finding is in, told apart by running the library's variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    /// An unoptimized variant shows it (`ort-noopt`, `tract`): an op's implementation.
    Kernel,
    /// Only variants that run the graph optimizer show it (`ort` but not `ort-noopt`): a
    /// rewrite of the optimizer. That the unoptimized variant is right is the key fact.
    Optimizer,
}

impl Layer {
    /// The lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Layer::Kernel => "kernel",
            Layer::Optimizer => "optimizer",
        }
    }
}

/// One suspected bug, as data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// What kind.
    pub kind: Kind,
    /// The backends that showed it: variants of one library (`ort`, `ort-noopt`), the first
    /// one seen first; `reference` when the others agree against it.
    pub backends: Vec<String>,
    /// The stage that failed, for crashes and hangs.
    pub stage: Option<Stage>,
    /// The symptom within the kind: `signal-SIGSEGV`, `panic`, `exit`, `error` (crash);
    /// `partial` / `all` (NaN); `values` / `shape` / `dtype` / `missing-output`
    /// (inconsistency); `timeout`; `over-cap` / `peak` (memory); `slower` (slow);
    /// `values` / `outcome` (flaky).
    pub symptom: String,
    /// What happened, in words.
    pub message: String,
    /// Error metrics against the ground truth, when outputs were compared.
    pub metrics: Option<Metrics>,
    /// CRADLE's D_MAD between the faulty backend and the closest other backend, relative to
    /// the ground truth (0: as close as the others; 1: all the error is this backend's).
    pub d_mad: Option<f64>,
    /// Where localization pinned it.
    pub location: Option<Location>,
    /// Kernel or optimizer, when the library's variants were run to tell (`None`: only one
    /// variant exists or could be run).
    #[serde(default)]
    pub layer: Option<Layer>,
    /// Every variant of the library that was run on the model, each with whether it showed
    /// the bug (`ort: true, ort-noopt: false` is an optimizer bug).
    #[serde(default)]
    pub variants: Vec<(String, bool)>,
    /// An element type the library does not implement for some op (`bool` in tract's Pad):
    /// one finding per library and type, whatever the op.
    #[serde(default)]
    pub gap: Option<String>,
    /// The backends that ran the model fine and witness that it is runnable (unoptimized
    /// variants of other libraries, or the reference).
    #[serde(default)]
    pub witnesses: Vec<String>,
    /// True when the failure message names the node it is about (tract and ONNX Runtime
    /// quote their node): the message then places the failure better than the node a search
    /// of the model's prefixes finds, and the signature keeps the message alone.
    #[serde(default)]
    pub placed_by_message: bool,
    /// The attributes of the blamed node that the bug needs (each one, removed, makes it go
    /// away; `clip`, `layout=1`), found on the minimized model: with the op's family they
    /// name the root cause ([`Finding::root_signature`]). Empty when not searched or when no
    /// single attribute is needed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trigger: Vec<String>,
    /// The backend that stood in for the reference as the ground truth, when the reference
    /// lacks an op of the model (`ort-noopt`: ONNX Runtime without its optimizer): a weaker
    /// oracle than the reference, said wherever the finding is shown
    /// ([`crate::triage`]'s judging by peers). `None`: judged against the reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ground: Option<String>,
    /// Whether the blamed node, run without the rest of the model in a fresh worker of the
    /// library, shows the finding ([`Blame`]). `None`: not checked (no node blamed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blame: Option<Blame>,
}

/// The blame checked: the blamed node run without the rest of the model, fed the library's own
/// values of its inputs (what reached it in the model), in a worker started for that run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "shown", rename_all = "kebab-case")]
pub enum Blame {
    /// The node alone shows the finding.
    Alone,
    /// The node shows it only with the nodes that produce its inputs (op types, in the
    /// model's order): a rewrite over them, or a kernel that reads more than its inputs.
    WithProducers {
        /// The producers' op types.
        ops: Vec<String>,
    },
    /// Neither the node alone nor with its producers (up to the depth tried) shows it.
    NotShown {
        /// How many nodes the largest part tried had.
        nodes: usize,
    },
    /// It could not be checked (why).
    Unchecked {
        /// Why.
        why: String,
    },
}

impl Blame {
    /// In words, for reports: how the blamed node showed the finding on its own.
    pub fn describe(&self, op: &str) -> String {
        match self {
            Blame::Alone => format!(
                "the {op} node alone, fed the values that reached it, shows it in a fresh process"
            ),
            Blame::WithProducers { ops } => format!(
                "the {op} node shows it only together with the nodes producing its inputs ({}), \
                 in a fresh process",
                ops.join(", ")
            ),
            Blame::NotShown { nodes } => format!(
                "the {op} node does not show it without the rest of the model (alone, nor in a \
                 part of {nodes} nodes ending at it)"
            ),
            Blame::Unchecked { why } => format!("the blame on {op} was not checked alone: {why}"),
        }
    }
}

/// A signature without the peer it was judged against: the same bug judged against the
/// reference once a candidate lets the reference run (a minimizer dropping the op it lacks).
pub fn unground(signature: &str) -> &str {
    signature
        .find("|ground=")
        .map_or(signature, |at| &signature[..at])
}

impl Finding {
    /// A finding with the given kind, backend, symptom and message; the rest empty.
    pub fn new(kind: Kind, backend: &str, symptom: &str, message: String) -> Finding {
        Finding {
            kind,
            backends: vec![backend.to_string()],
            stage: None,
            symptom: symptom.to_string(),
            message,
            metrics: None,
            d_mad: None,
            location: None,
            layer: None,
            variants: Vec::new(),
            gap: None,
            witnesses: Vec::new(),
            placed_by_message: false,
            trigger: Vec::new(),
            ground: None,
            blame: None,
        }
    }

    /// The op type localization pinned, if any.
    pub fn op_type(&self) -> Option<&str> {
        self.location.as_ref().map(|l| l.op_type.as_str())
    }

    /// The library the finding is about (`ort` for `ort` and `ort-noopt`; a test backend's own
    /// name).
    pub fn library(&self) -> &str {
        mutagraph_backends::catalog::family(self.backends.first().map_or("", String::as_str))
    }

    /// The faulty library, from the catalog.
    fn faulty_library(&self) -> mutagraph_backends::catalog::Library {
        mutagraph_backends::catalog::library(self.backends.first().map_or("", String::as_str))
    }

    /// Whether the faulty library is tract (whose messages name rules and nodes its own way).
    fn is_tract(&self) -> bool {
        self.faulty_library() == mutagraph_backends::catalog::Library::Tract
    }

    /// The source site of an ONNX Runtime failure (`cast_op.cc:983`: the file and line its
    /// message names): one site is one fault, whichever op reached it (CastLike expands into
    /// the Cast kernel that refuses). `None` for other libraries and for messages without one.
    pub fn ort_site(&self) -> Option<String> {
        let ort = self.faulty_library() == mutagraph_backends::catalog::Library::OnnxRuntime;
        if !ort || self.kind.is_numeric() {
            return None;
        }
        self.message.split_whitespace().find_map(|w| {
            let file = w.rsplit('/').next()?;
            let (name, line) = file.rsplit_once(':')?;
            let source = [".cc", ".h", ".cpp", ".cu", ".cuh"]
                .iter()
                .any(|ext| name.ends_with(ext));
            (source && !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()))
                .then(|| format!("{name}:{line}"))
        })
    }

    /// The symptom class that stays the same on every smaller model showing this bug: for a
    /// numeric finding `shape` or `values` (NaN findings are their own kind), for a crash how
    /// it ended (`error`, `panic`, `signal-…`), else the symptom.
    pub fn symptom_class(&self) -> &str {
        match self.kind {
            Kind::Inconsistency if self.symptom == "shape" => "shape",
            Kind::Inconsistency if self.symptom == "dtype" => "dtype",
            Kind::Inconsistency => "values",
            Kind::Nan => "nan",
            // A panic caught in the worker and one that ended the process are one symptom.
            Kind::Crash if self.message.starts_with("panic: ") => "panic",
            _ => self.symptom.as_str(),
        }
    }

    /// The root cause's signature: with a [`trigger`](Finding::trigger), the op's family and
    /// the attributes the bug needs (`RNN/GRU/LSTM[clip]`: tract ignoring `clip` in GRU and in
    /// LSTM is one bug, whatever else the nodes had); else the [signature](Finding::signature).
    pub fn root_signature(&self) -> String {
        // A failure needs no trigger to be one root cause over the family: tract failing the
        // same way on the initial state of an RNN, a GRU and an LSTM is one fault of the
        // recurrent expansion they share. A numeric finding without a trigger stays the op's.
        let (Some(loc), None) = (&self.location, &self.gap) else {
            return self.signature();
        };
        if self.tract_rule().is_some() || self.ort_site().is_some() || self.ground.is_some() {
            return self.signature();
        }
        if let Some(root) = self.strided_input_root() {
            return root;
        }
        // NaN's trigger is what makes the wrong values non-finite (GlobalLpPool's odd `p` where
        // tract drops the abs), not what makes them wrong: its root is the kernel's.
        if (self.trigger.is_empty() && self.kind.is_numeric()) || self.kind == Kind::Nan {
            return self.numeric_root();
        }
        let family = mutagraph_ir::registry::Registry::global()
            .get("", &loc.op_type)
            .map_or(loc.op_type.as_str(), |s| s.family());
        // Two failures of one family that need the same attributes are one root cause only
        // when they fail the same way.
        let how = if self.kind.is_numeric() {
            String::new()
        } else {
            let phrase = self
                .is_tract()
                .then(|| tract_phrase(&self.message))
                .flatten()
                .unwrap_or_else(|| core_message(&self.message));
            format!("|msg={phrase}")
        };
        format!(
            "{}|{}|{}|{}|{family}[{}]{how}",
            self.kind,
            self.library(),
            self.layer.map(Layer::name).unwrap_or_default(),
            self.symptom_class(),
            self.trigger.join(",")
        )
    }

    /// The root cause of burn's wrong values that its node shows only after the nodes that
    /// produce its inputs ([`Blame::WithProducers`]: alone, fed burn's own values of them in
    /// fresh contiguous tensors, it computes them right). burn runs each op eagerly on the
    /// tensors it is given, so what differs is their memory layout (a Transpose's or
    /// one_hot_fill's strided view): one kernel path wrong on strided input (burn-ndarray's
    /// SIMD unary dispatch reached through Abs, Reciprocal, Softsign or LpNormalization),
    /// whichever op took it. Per backend: each device has its own kernels.
    fn strided_input_root(&self) -> Option<String> {
        let burn = self.faulty_library() == mutagraph_backends::catalog::Library::Burn;
        let after_producers = matches!(self.blame, Some(Blame::WithProducers { .. }));
        (burn && after_producers && self.kind.is_numeric() && self.symptom != "missing-output")
            .then(|| {
                format!(
                    "numeric|{}|{}|strided-input",
                    self.backends.first().map_or("", String::as_str),
                    self.layer.map(Layer::name).unwrap_or_default()
                )
            })
    }

    /// The root cause of a numeric finding without a trigger: its op's kernel computing wrong
    /// values, whether they came out NaN or merely wrong (tract's GlobalLpPool dividing by the
    /// window size gives both), whatever attributes the node had (the trigger search found
    /// none it needs: ONNX Runtime's Resize ignoring the coordinate transform where a scale is
    /// 1 shows in every mode). A wrong shape, element type or missing output stays apart.
    fn numeric_root(&self) -> String {
        match (self.symptom_class(), &self.location) {
            ("values" | "nan", Some(loc)) if self.symptom != "missing-output" => format!(
                "numeric|{}|{}|op={}",
                self.library(),
                self.layer.map(Layer::name).unwrap_or_default(),
                loc.op_type
            ),
            _ => self.signature(),
        }
    }

    /// The dedup signature: one per root cause as far as the campaign can tell. Kind, library
    /// (not the variant: `ort` and `ort-noopt` showing one kernel bug are one finding), layer
    /// (kernel or optimizer), symptom class, then the place: a missing element type (one
    /// finding per library and type, whatever the op), else the localized op with its key
    /// attributes, and for failures the core of the normalized message.
    pub fn signature(&self) -> String {
        let layer = self.layer.map(Layer::name).unwrap_or_default();
        let place = if let Some(g) = &self.gap {
            format!("gap={g}")
        } else {
            let op = match &self.location {
                Some(l) if l.attrs.is_empty() => format!("op={}", l.op_type),
                Some(l) => format!("op={}[{}]", l.op_type, l.attrs),
                None => "op=?".to_string(),
            };
            if self.kind.is_numeric() {
                op
            } else if let (Some(rule), Some(phrase)) =
                (self.tract_rule(), tract_phrase(&self.message))
            {
                // A rewrite rule that fails is one fault whichever op put the pulled node there
                // (a strided Conv and a stepped Slice both leave a Downsample to pull).
                format!("rule={rule}|msg={phrase}")
            } else if let Some(phrase) = self
                .is_tract()
                .then(|| tract_phrase(&self.message))
                .flatten()
            {
                // tract meets one fault at whichever stage first evaluates the op (type
                // analysis, constant folding, a pass, the run), each wrapping it in its own
                // context: the op and the innermost cause name it.
                let op = self.location.as_ref().map_or("?", |l| l.op_type.as_str());
                format!("op={op}|msg={phrase}")
            } else if let Some(site) = self.ort_site() {
                // An ONNX Runtime check that fails is one fault whichever op reached it.
                format!("site={site}|msg={}", core_message(&self.message))
            } else if self.placed_by_message {
                format!("msg={}", core_message(&self.message))
            } else {
                format!("{op}|msg={}", core_message(&self.message))
            }
        };
        // A missing element type is one finding however the library fails on it.
        let symptom = if self.gap.is_some() {
            ""
        } else {
            self.symptom_class()
        };
        // A finding judged against a peer is never filed as a hit of a reference-backed one.
        let ground = self
            .ground
            .as_ref()
            .map(|g| format!("|ground={g}"))
            .unwrap_or_default();
        format!(
            "{}|{}|{}|{}|{}{ground}",
            self.kind,
            self.library(),
            layer,
            symptom,
            place
        )
    }

    /// The tract rewrite rule a failure happened in, when tract names one: `Pulling #5 "a"
    /// Downsample over #4 "b" Reshape: Invalid axis` is the rule pulling a `Downsample` over an
    /// axis op (Reshape, AddAxis, RmAxis, MoveAxis: one rule in tract), written
    /// `Downsample/AxisOp`.
    pub fn tract_rule(&self) -> Option<String> {
        if !self.is_tract() {
            return None;
        }
        tract_rule(&self.message)
    }

    /// A file-name-safe id for the signature: `kind-library-what-<8 hex digits>`.
    pub fn signature_id(&self) -> String {
        let sig = self.signature();
        let what = match (&self.gap, self.op_type()) {
            (Some(g), _) => format!("{g}_gap"),
            (None, Some(op)) => op.to_string(),
            (None, None) => self.symptom.clone(),
        };
        let clean = |s: &str| -> String {
            s.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() {
                        c.to_ascii_lowercase()
                    } else {
                        '_'
                    }
                })
                .collect()
        };
        format!(
            "{}-{}-{}-{:08x}",
            self.kind,
            clean(self.library()),
            clean(&what),
            fnv1a(sig.as_bytes()) as u32
        )
    }
}

/// 64-bit FNV-1a (stable across builds and platforms, unlike `DefaultHasher`).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    mutagraph_ir::hash::fnv1a64(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_of_one_library_share_a_signature() {
        let mut a = Finding::new(Kind::Inconsistency, "ort", "values", "x".into());
        let loc = Location {
            op_type: "Celu".into(),
            value: "v".into(),
            attrs: String::new(),
        };
        a.location = Some(loc.clone());
        let mut b = Finding::new(Kind::Inconsistency, "ort-noopt", "values", "y".into());
        b.location = Some(loc.clone());
        let mut both = a.clone();
        both.backends.push("ort-noopt".into());
        assert_eq!(a.signature(), b.signature());
        assert_eq!(a.signature(), both.signature());
        // An optimizer bug is another root cause than a kernel bug of the same op.
        let mut opt = a.clone();
        opt.layer = Some(Layer::Optimizer);
        assert_ne!(opt.signature(), a.signature());
        // The symptom class stays: a wrong shape is not a wrong value.
        let mut shape = a.clone();
        shape.symptom = "shape".into();
        assert_ne!(shape.signature(), a.signature());
        // A dtype gap is one finding whatever the op.
        let mut g1 = Finding::new(
            Kind::Crash,
            "tract",
            "error",
            "run: evaluating #1 \"a\" Pad: bool is not a number".into(),
        );
        g1.gap = Some("bool".into());
        let mut g2 = Finding::new(
            Kind::Crash,
            "tract-opt",
            "error",
            "compile: EyeLike: bool is not a number".into(),
        );
        g2.gap = Some("bool".into());
        g2.location = Some(loc);
        assert_eq!(g1.signature(), g2.signature());
        assert!(g1.signature_id().starts_with("crash-tract-bool_gap-"));
    }

    #[test]
    fn one_tract_fault_met_at_different_stages_is_one_signature() {
        let at = |msg: &str, op: &str| {
            let mut f = Finding::new(Kind::Crash, "tract", "error", msg.into());
            f.layer = Some(Layer::Kernel);
            f.placed_by_message = true;
            f.location = Some(Location {
                op_type: op.into(),
                value: "v".into(),
                attrs: String::new(),
            });
            f.signature()
        };
        // IsInf reached by type analysis, by constant folding and at run time.
        let a = at(
            "compile: Failed analyse for node #1 \"IsInf_5\" IsInf: Eager eval during inference: Evaluating #1 \"adhoc\" IsInf: Element wise eval in-place not defined",
            "IsInf",
        );
        let b = at(
            "run: Evaluating #1 \"IsInf_11\" IsInf: Element wise eval in-place not defined",
            "IsInf",
        );
        let c = at(
            "compile: running pass PropConst(6): Eager eval #7 \"IsInf_4\" IsInf during optimisation: Element wise eval in-place not defined",
            "IsInf",
        );
        assert_eq!(a, b);
        assert_eq!(a, c);
        assert!(
            a.ends_with("op=IsInf|msg=element wise eval in-place not defined"),
            "{a}"
        );
        // Another op with the same words is another finding.
        assert_ne!(
            a,
            at(
                "run: Evaluating #1 \"n\" IsNan: Element wise eval in-place not defined",
                "IsNaN"
            )
        );
        // Shapes in a message are the model's.
        assert_eq!(
            at(
                "compile: Translating node #1 \"F_5\" Flatten ToTypedTranslator: Reshape volume mismatch: input [Val(1), Val(0), Val(1)] (vol=0) vs shape [Val(1), Val(1)] (vol=1)",
                "Flatten"
            ),
            at(
                "compile: Failed analyse for node #5 \"F_13\" Flatten: Eager eval during inference: Reshape volume mismatch: input [Val(0), Val(1)] (vol=0) vs shape [Val(1), Val(1)] (vol=1)",
                "Flatten"
            ),
        );
        // The condition that failed stays (backticks are code, not a name).
        let cond = at(
            "compile: Translating node #2 \"M_11\" MatMulInference ToTypedTranslator: Condition failed: `a_rank > 1 || b_rank > 1`",
            "MatMul",
        );
        assert!(cond.contains("a_rank > # || b_rank > #"), "{cond}");
        assert_eq!(
            cond,
            at(
                "compile: Failed analyse for node #2 \"M_13\" MatMulInference: Eager eval during inference: Condition failed: `a_rank > 1 || b_rank > 1`",
                "MatMul"
            )
        );
        assert_ne!(
            cond,
            at(
                "compile: Translating node #5 \"S\" StridedSlice ToTypedTranslator: Slice: Condition failed: `start <= end` (425 vs 360)",
                "MatMul"
            )
        );
        // Element types meeting in one op, whichever types and words.
        let mix = at(
            "compile: Failed analyse for node #5 \"G\" Gemm: Eager eval during inference: Evaluating #5 \"adhoc.alpha_ab\" Mul: Tensor datum type error: tensor is F16, accessed as F32",
            "Gemm",
        );
        assert!(mix.ends_with("op=Gemm|msg=mixes element types"), "{mix}");
        for other in [
            "compile: running pass PropConst(0): Eager eval #5 \"G.beta_c\" Mul during optimisation: Tensor datum type error: tensor is F32, accessed as F64",
            "compile: Translating node #3 \"G\" Gemm ToTypedTranslator: in output_facts invocation for G.beta_c: Mul: No super type for F32 and I32",
            "compile: Translating node #3 \"G\" Gemm ToTypedTranslator: Output mismatch after rewiring expansion for output #0: expected 1,5,F16 got 1,5,F32",
        ] {
            assert_eq!(mix, at(other, "Gemm"), "{other}");
        }
        // A shape mismatch of one type is not a type mix.
        let shape = at(
            "compile: Translating node #3 \"R\" RNN ToTypedTranslator: Output mismatch after rewiring expansion for output #0: expected 1,1,2,19,F32 got 1,2,1,19,F32",
            "RNN",
        );
        assert!(!shape.contains("mixes"), "{shape}");
        // Panics: the source location goes, the panic's words stay.
        assert_eq!(
            at(
                "panic: assertion failed: end <= axis_len (at /x/ndarray-0.17.2/src/impl_methods.rs:591)",
                "Pad"
            ),
            at(
                "panic: assertion failed: end <= axis_len (at /y/ndarray-0.17.2/src/impl_methods.rs:12)",
                "Pad"
            ),
        );
    }

    #[test]
    fn the_reductions_sharing_an_attributes_bug_are_one_root_cause() {
        // ONNX Runtime keeps a zero-length axis given as negative: ReduceL1 and ReduceMean
        // (and every ReduceX) through one axes handling.
        let reduce = |op: &str| {
            let mut f = Finding::new(Kind::Inconsistency, "ort", "shape", "output 'y'".into());
            f.location = Some(Location {
                op_type: op.into(),
                value: "y".into(),
                attrs: String::new(),
            });
            f.trigger = vec!["axes".into()];
            f
        };
        assert_eq!(
            reduce("ReduceL1").root_signature(),
            reduce("ReduceMean").root_signature()
        );
        assert_ne!(
            reduce("ReduceL1").root_signature(),
            reduce("ArgMax").root_signature()
        );
    }

    #[test]
    fn nan_and_wrong_values_of_one_kernel_are_one_root_cause() {
        let at = |kind: Kind, symptom: &str, op: &str| {
            let mut f = Finding::new(kind, "tract", symptom, "output 'y'".into());
            f.layer = Some(Layer::Kernel);
            f.location = Some(Location {
                op_type: op.into(),
                value: "y".into(),
                attrs: String::new(),
            });
            f
        };
        let mut nan = at(Kind::Nan, "partial", "GlobalLpPool");
        let values = at(Kind::Inconsistency, "values", "GlobalLpPool");
        assert_ne!(nan.signature(), values.signature());
        assert_eq!(nan.root_signature(), values.root_signature());
        // An odd `p` is what makes tract's wrong values NaN, not what makes them wrong.
        nan.trigger = vec!["p".into()];
        assert_eq!(nan.root_signature(), values.root_signature());
        // Attributes the trigger search found no need for are not the root's.
        let mut with_p = at(Kind::Inconsistency, "values", "GlobalLpPool");
        with_p.location.as_mut().unwrap().attrs = "p=3".into();
        assert_ne!(with_p.signature(), values.signature());
        assert_eq!(with_p.root_signature(), values.root_signature());
        // Another op, a wrong shape, a missing output: other root causes.
        let others = [
            at(Kind::Inconsistency, "values", "GlobalAveragePool"),
            at(Kind::Inconsistency, "shape", "GlobalLpPool"),
            at(Kind::Inconsistency, "missing-output", "GlobalLpPool"),
        ];
        for o in others {
            assert_ne!(o.root_signature(), values.root_signature(), "{o:?}");
        }
    }

    #[test]
    fn burns_values_wrong_only_after_their_producers_are_one_root_cause() {
        let after = |kind: Kind, op: &str, producer: &str, backend: &str| {
            let mut f = Finding::new(kind, backend, "values", "output 'y'".into());
            f.layer = Some(Layer::Kernel);
            f.location = Some(Location {
                op_type: op.into(),
                value: "y".into(),
                attrs: String::new(),
            });
            f.blame = Some(Blame::WithProducers {
                ops: vec![producer.into()],
            });
            f
        };
        let abs = after(Kind::Inconsistency, "Abs", "Transpose", "burn-ndarray");
        let recip = after(Kind::Nan, "Reciprocal", "OneHot", "burn-ndarray");
        assert_ne!(abs.signature(), recip.signature());
        assert_eq!(abs.root_signature(), recip.root_signature());
        // Shown alone, on another device, or by another library: apart.
        let mut alone = abs.clone();
        alone.blame = Some(Blame::Alone);
        let wgpu = after(Kind::Inconsistency, "Abs", "Transpose", "burn-wgpu");
        let tract = after(Kind::Inconsistency, "Abs", "Transpose", "tract");
        for o in [alone, wgpu, tract] {
            assert_ne!(o.root_signature(), abs.root_signature(), "{o:?}");
        }
    }

    #[test]
    fn root_signatures_of_failures_keep_how_they_fail() {
        let mut a = Finding::new(
            Kind::Crash,
            "tract",
            "error",
            "run: Evaluating #1 \"p\" Pad: index out of bounds".into(),
        );
        a.location = Some(Location {
            op_type: "Pad".into(),
            value: "v".into(),
            attrs: "mode=\"reflect\"".into(),
        });
        a.trigger = vec!["mode=\"reflect\"".into()];
        let mut b = a.clone();
        b.message = "run: Evaluating #1 \"p\" Pad: start <= axis_len failed".into();
        assert_ne!(a.root_signature(), b.root_signature());
        let mut c = a.clone();
        c.message = "compile: Failed analyse for node #4 \"q\" Pad: Eager eval during inference: index out of bounds".into();
        assert_eq!(a.root_signature(), c.root_signature());
    }

    #[test]
    fn an_onnx_runtime_check_is_one_signature_whichever_op_reached_it() {
        let at = |backend: &str, op: &str| {
            let mut f = Finding::new(
                Kind::Crash,
                backend,
                "error",
                "compile: Exception during initialization: /onnxruntime_src/onnxruntime/core/providers/cpu/tensor/cast_op.cc:983 onnxruntime::{anonymous}::Cast::Cast(const onnxruntime::OpKernelInfo&) Attribute saturate is only used for cast to float 8 types.".into(),
            );
            f.layer = Some(Layer::Kernel);
            f.location = Some(Location {
                op_type: op.into(),
                value: "v".into(),
                attrs: String::new(),
            });
            f
        };
        let cast = at("ort", "Cast");
        let cast_like = at("ort-noopt", "CastLike");
        assert_eq!(cast.ort_site().as_deref(), Some("cast_op.cc:983"));
        assert_eq!(cast.signature(), cast_like.signature());
        assert_eq!(cast.root_signature(), cast_like.root_signature());
        assert!(
            cast.signature().contains("|site=cast_op.cc:983|msg="),
            "{}",
            cast.signature()
        );
        // tract's messages name no such site.
        assert_eq!(at("tract", "Cast").ort_site(), None);
    }

    #[test]
    fn a_failing_tract_rule_is_one_signature_whichever_op_left_the_node() {
        let at = |op: &str, msg: &str| {
            let mut f = Finding::new(Kind::Crash, "tract", "error", msg.into());
            f.stage = Some(Stage::Compile);
            f.layer = Some(Layer::Kernel);
            f.location = Some(Location {
                op_type: op.into(),
                value: "v".into(),
                attrs: String::new(),
            });
            f.trigger = vec!["strides".into()];
            f
        };
        let conv = at(
            "Conv",
            "compile: running pass declutter: declutter node #51 \"Conv_5.downsample.1\" Downsample: Pulling #51 \"Conv_5.downsample.1\" Downsample over #50 \"Reshape_18.1\" Reshape: Invalid axis",
        );
        let slice = at(
            "Slice",
            "compile: running pass declutter: declutter node #55 \"/Slice\" Downsample: Pulling #55 \"/Slice\" Downsample over #30 \"/Reshape.0\" Reshape: Invalid axis",
        );
        assert_eq!(conv.tract_rule().as_deref(), Some("Downsample/AxisOp"));
        assert_eq!(conv.signature(), slice.signature());
        // Pulled over an added axis instead of a reshape: the same rule of tract's.
        let add_axis = at(
            "Slice",
            "compile: running pass declutter: declutter node #15 \"Slice_1.stride-axis-0\" Downsample: Pulling #15 \"Slice_1.stride-axis-0\" Downsample over #1 \"Reshape_2.0\" AddAxis: Invalid axis",
        );
        assert_eq!(add_axis.signature(), conv.signature());
        assert_eq!(conv.root_signature(), slice.root_signature());
        assert!(
            conv.signature()
                .contains("rule=Downsample/AxisOp|msg=invalid axis"),
            "{}",
            conv.signature()
        );
        // Pulled over another op, or failing another way, is another fault.
        let expand = at(
            "Expand",
            "compile: declutter node #34 \"c.downsample.1\" Downsample: Pulling #34 \"c.downsample.1\" Downsample over #33 \"/Expand\" MultiBroadcastTo: Trying to substitute a 1,37,5,16,F16 by 1,37,5,32,F16 as output #0",
        );
        assert_eq!(
            expand.tract_rule().as_deref(),
            Some("Downsample/MultiBroadcastTo")
        );
        assert_ne!(expand.signature(), conv.signature());
        // Another library's message, or one naming no rule, keeps the op.
        let mut ort = conv.clone();
        ort.backends = vec!["ort".into()];
        assert_eq!(ort.tract_rule(), None);
        assert!(ort.signature().contains("op=Conv"));
        assert_eq!(tract_rule("run: Evaluating #1 \"p\" Pad: bad"), None);
    }

    #[test]
    fn one_failure_of_a_family_is_one_root_cause_without_a_trigger() {
        let at = |kind: Kind, op: &str, msg: &str| {
            let mut f = Finding::new(kind, "tract", "error", msg.into());
            f.layer = Some(Layer::Kernel);
            f.location = Some(Location {
                op_type: op.into(),
                value: "v".into(),
                attrs: String::new(),
            });
            f
        };
        let msg = |op: &str| {
            format!(
                "compile: running pass ChangeAxes: Making patch for AxisChange from #4 \"{op}_5.h0\" Const: Trying to substitute a 1,1,2,F32 by 1,2,F32 as output #0 of #4 \"{op}_5.h0\" RmAxis."
            )
        };
        let rnn = at(Kind::Crash, "RNN", &msg("RNN"));
        let lstm = at(Kind::Crash, "LSTM", &msg("LSTM"));
        assert_ne!(rnn.signature(), lstm.signature());
        assert_eq!(rnn.root_signature(), lstm.root_signature());
        // Failing another way is another root cause.
        let other = at(
            Kind::Crash,
            "LSTM",
            "compile: seq_len only supported for trivial noop case",
        );
        assert_ne!(other.root_signature(), rnn.root_signature());
        // Ops of different families stay apart, and wrong values without a trigger stay the op's.
        assert_ne!(
            at(Kind::Crash, "Pad", &msg("RNN")).root_signature(),
            rnn.root_signature()
        );
        let mut gru = at(Kind::Inconsistency, "GRU", "x");
        gru.symptom = "values".into();
        let mut lstm_values = gru.clone();
        lstm_values.location.as_mut().unwrap().op_type = "LSTM".into();
        assert_ne!(gru.root_signature(), lstm_values.root_signature());
    }

    #[test]
    fn signatures_use_the_location_else_the_message() {
        let mut f = Finding::new(Kind::Crash, "tract", "error", "node \"a1\" failed 3".into());
        f.stage = Some(Stage::Compile);
        let mut g = f.clone();
        g.message = "node \"b7\" failed 12".into();
        assert_eq!(f.signature(), g.signature());
        assert_eq!(f.signature_id(), g.signature_id());
        assert_eq!(
            f.signature(),
            "crash|tract||error|op=?|msg=node '_' failed #"
        );
        let mut h = Finding::new(Kind::Inconsistency, "ort", "values", "x".into());
        assert!(h.signature().ends_with("op=?"));
        h.location = Some(Location {
            op_type: "Conv".into(),
            value: "v1".into(),
            attrs: "auto_pad=NOTSET".into(),
        });
        h.layer = Some(Layer::Kernel);
        assert_eq!(
            h.signature(),
            "inconsistency|ort|kernel|values|op=Conv[auto_pad=NOTSET]"
        );
        assert!(h.signature_id().starts_with("inconsistency-ort-conv-"));
        assert_ne!(h.signature_id(), f.signature_id());
    }
}
