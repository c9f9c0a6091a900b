//! Findings as data: what kind of bug, which backend, where, and the signature that
//! deduplicates them.
mod message;
mod tract;

pub use message::{core_message, key_phrase, normalize_message, same_failure};
use tract::{MIXED_TYPES, in_expansion_wiring};
pub use tract::{tract_derived_op, tract_phrase, tract_rule};

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
    /// The op key (`Op`, or `domain::Op` outside the default domain) of the first node whose
    /// output diverges.
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
            op_type: node.key(),
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
    /// The node shows it only inside the part an ONNX Runtime rewrite matched around it
    /// (the rule names its node after an anchor that need not be the pattern's last).
    InRewrite {
        /// The rewrite, as ONNX Runtime names it (`LayerNormFusion`).
        rule: String,
        /// The part's op types, in the model's order.
        ops: Vec<String>,
    },
    /// The part ending at the node shows it with all of the library's rewrites and not with
    /// one of them left out (ONNX Runtime without that graph transformer, tract's declutter
    /// stopped before that rewrite): the rewrite is the cause, not the node's kernel.
    Rewrite {
        /// The library, as reports name it (`tract`).
        library: String,
        /// The rewrite in words that hold on any model (`declutter Downsample`,
        /// `SkipLayerNormFusion`).
        rule: String,
        /// The part's op types, in the model's order.
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
            Blame::InRewrite { rule, ops } => format!(
                "the {op} node shows it only inside the part around it that ONNX Runtime's \
                 {rule} rewrites ({}), in a fresh process",
                ops.join(", ")
            ),
            Blame::Rewrite { library, rule, ops } => format!(
                "the part ending at the {op} node ({}) shows it in a fresh process, and does not \
                 without {library}'s rewrite {rule}",
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

/// A signature without the peer it was judged against, nor the rewrite found to cause it: the
/// same bug judged against the reference once a candidate lets the reference run (a minimizer
/// dropping the op it lacks), where the rewrite can be looked for (it needs the reference).
pub fn unground(signature: &str) -> String {
    let s = signature
        .find("|ground=")
        .map_or(signature, |at| &signature[..at]);
    match s.find("rewrite=") {
        Some(at) => {
            let rest = &s[at..];
            let end = rest.find('|').map_or(rest.len(), |e| e + 1);
            format!("{}{}", &s[..at], &rest[end..])
        }
        None => s.to_string(),
    }
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

    /// The source line a Rust library panicked at, in the library's own crates
    /// (`tract-linalg/src/frame/weights.rs:24`, the crate's version left out): one panic site
    /// is one fault whichever op or element type reached it (tract's MatMul, Gemm and Einsum on
    /// i64, u32 and u64 all panic building tract-linalg's WeightType). `None` for other
    /// failures and for sites outside the library's crates (ndarray's index check, core's
    /// unwrap), which many faults share.
    pub fn panic_site(&self) -> Option<String> {
        use mutagraph_backends::catalog::Library;
        let prefix = match self.faulty_library() {
            Library::Tract => "/tract-",
            Library::Burn => "/burn-",
            _ => return None,
        };
        if self.kind.is_numeric() || !self.message.starts_with("panic:") {
            return None;
        }
        let at = self.message.rfind("(at ")?;
        let path = self.message[at + 4..].split(')').next()?;
        let rest = &path[path.find(prefix)? + 1..];
        let (krate, file) = rest.split_once('/')?;
        // `tract-linalg-0.23.9`: the crate, without its version
        let krate = krate
            .rsplit_once('-')
            .filter(|(_, v)| v.starts_with(|c: char| c.is_ascii_digit()))
            .map_or(krate, |(k, _)| k);
        Some(format!("{krate}/{file}"))
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
        // A source line is one fault whether the optimized level alone met it or both did
        // (ONNX Runtime's Cast refusing saturate=0 where its unoptimized level had removed the
        // Cast), and whichever rewrite or node led there (ORT's PadFusion leaving pads a 1×1
        // pool refuses, filed once at the Softmax a part ended at and once at a Reshape): the
        // layer, the node and the rewrite are no part of its root.
        if self.gap.is_none() && (self.ort_site().is_some() || self.panic_site().is_some()) {
            let mut at_site = self.clone();
            at_site.layer = None;
            at_site.blame = None;
            return at_site.signature();
        }
        if let Some(root) = self.rewrite_root() {
            return root;
        }
        let (Some(loc), None) = (&self.location, &self.gap) else {
            return self.signature();
        };
        if self.tract_rule().is_some() || self.optimizer_pass().is_some() || self.ground.is_some() {
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
        let family = op_family(&loc.op_type);
        // Two failures of one family that need the same attributes are one root cause only
        // when they fail the same way.
        let how = if self.kind.is_numeric() {
            String::new()
        } else {
            let phrase = self
                .tract_fault()
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

    /// The root cause of a finding a rewrite of the library needs: one fault of that rewrite
    /// where it leaves ops of one family (tract folding the square of a square root is one
    /// fault in ReduceL2 and ReduceSumSquare; its Downsample pulled over a Softmax above a Conv
    /// and into the Conv before a Slice are two), failing one way.
    fn rewrite_root(&self) -> Option<String> {
        let rule = self.rewrite()?;
        let family = self
            .location
            .as_ref()
            .map_or("?", |l| op_family(&l.op_type));
        let how = if self.kind.is_numeric() {
            String::new()
        } else {
            format!("|msg={}", core_message(&self.message))
        };
        Some(format!(
            "{}|{}|{}|{}|rewrite={rule}|family={family}{how}",
            self.kind,
            self.library(),
            self.layer.map(Layer::name).unwrap_or_default(),
            self.symptom_class(),
        ))
    }

    /// The root cause of burn's wrong values that its node shows only after the nodes that
    /// produce its inputs ([`Blame::WithProducers`]: alone, fed burn's own values of them in
    /// fresh contiguous tensors, it computes them right). burn runs each op eagerly on the
    /// tensors it is given, so what differs is their memory layout (a Transpose's or
    /// one_hot_fill's strided view): one kernel path wrong on strided input (burn-ndarray's
    /// SIMD unary dispatch reached through Abs, Reciprocal, Softsign or LpNormalization),
    /// whichever op took it. Per backend: each device has its own kernels.
    fn strided_input_root(&self) -> Option<String> {
        self.on_strided_input().then(|| {
            format!(
                "numeric|{}|{}|strided-input",
                self.backends.first().map_or("", String::as_str),
                self.layer.map(Layer::name).unwrap_or_default()
            )
        })
    }

    /// Whether this is burn's wrong values on an input its producers left strided
    /// ([`Finding::strided_input_root`]): the node's attributes only decide whether the read
    /// order shows in the result.
    pub fn on_strided_input(&self) -> bool {
        let burn = self.faulty_library() == mutagraph_backends::catalog::Library::Burn;
        let after_producers = matches!(self.blame, Some(Blame::WithProducers { .. }));
        burn && after_producers && self.kind.is_numeric() && self.symptom != "missing-output"
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
        let place = if let Some(site) = self.panic_site() {
            // A Rust panic is one fault at its source line, whichever op or element type
            // reached it.
            format!("site={site}")
        } else if let Some(g) = &self.gap {
            // A missing element type is one finding per library, op and type, whichever
            // consumer exposed it (the blamed node is the op that lacks it: tract's Equal, EyeLike
            // and Pad on bool are three kernels to write, not one). TDim is no ONNX type: its
            // leak out of tract's shape computations is one fault whatever op it meets.
            match self.gap_op() {
                Some(op) => format!("gap={g}|op={op}"),
                None => format!("gap={g}"),
            }
        } else {
            let op = match &self.location {
                Some(l) if l.attrs.is_empty() => format!("op={}", l.op_type),
                Some(l) => format!("op={}[{}]", l.op_type, l.attrs),
                None => "op=?".to_string(),
            };
            if let Some(rule) = self.rewrite() {
                // A rewrite of the library that the finding needs (the part shows it with the
                // rewrite and not without), where it leaves this op.
                let how = if self.kind.is_numeric() {
                    String::new()
                } else {
                    format!("|msg={}", core_message(&self.message))
                };
                format!("rewrite={rule}|{op}{how}")
            } else if self.kind.is_numeric() {
                op
            } else if let Some(pass) = self.optimizer_pass() {
                // The process died applying one pass of the optimizer: one fault of that pass,
                // whichever nodes it was rewriting.
                format!("pass={pass}|msg={}", core_message(&self.message))
            } else if let (Some(rule), Some(phrase)) =
                (self.tract_rule(), tract_phrase(&self.message))
            {
                // A rewrite rule that fails is one fault whichever op put the pulled node there
                // (a strided Conv and a stepped Slice both leave a Downsample to pull).
                format!("rule={rule}|msg={phrase}")
            } else if let Some(phrase) = self.tract_fault() {
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

    /// What a tract failure's key says went wrong ([`tract_phrase`]), except that a failure
    /// wiring the expansion of a placed contrib op ([`in_expansion_wiring`]) is one per op: the inner
    /// op that notices a wrong wiring depends on the model's shapes (round 13: RotaryEmbedding on 1-D
    /// position_ids failed in a Reshape, an AddAxis, a Concat and the output check, one fault).
    /// Element types meeting in the translation stay a fault apart.
    fn tract_fault(&self) -> Option<String> {
        if !self.is_tract() {
            return None;
        }
        let phrase = tract_phrase(&self.message)?;
        // tract's contrib ops are expansions whose wiring shows in whichever inner op; a
        // standard op's translation fails in words of its own at every stage (round 14: a
        // StridedSlice's `start <= end` met while translating it and while running it).
        let contrib = self
            .location
            .as_ref()
            .is_some_and(|l| !mutagraph_ir::registry::split_key(&l.op_type).0.is_empty());
        Some(
            if contrib && in_expansion_wiring(&self.message) && phrase != MIXED_TYPES {
                "its expansion into tract ops is wired wrong".to_string()
            } else {
                phrase
            },
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

    /// The output a numeric finding's message names first (`output 'y': …`).
    pub fn named_output(&self) -> Option<&str> {
        let rest = self.message.strip_prefix("output '")?;
        rest.split_once('\'').map(|(n, _)| n)
    }

    /// The rewrite of the library the finding needs, when the blame check found one
    /// ([`Blame::Rewrite`]).
    pub fn rewrite(&self) -> Option<&str> {
        match &self.blame {
            Some(Blame::Rewrite { rule, .. }) => Some(rule),
            _ => None,
        }
    }

    /// The rewrite the finding is blamed on, whether the part needs it (`rewrite`) or the node
    /// fails inside what it rewrote (`in-rewrite`, ONNX Runtime naming the node after it).
    pub fn rewrite_rule(&self) -> Option<&str> {
        match &self.blame {
            Some(Blame::Rewrite { rule, .. } | Blame::InRewrite { rule, .. }) => Some(rule),
            _ => None,
        }
    }

    /// The optimizer pass a failure happened in, when the worker died applying one (ONNX
    /// Runtime's verbose log names each graph transformer as it starts it: `signal 11
    /// (SIGSEGV): in ONNX Runtime's optimizer pass NchwcTransformer`). The pass is the place,
    /// not a node: no node had run.
    pub fn optimizer_pass(&self) -> Option<&str> {
        if self.kind.is_numeric() {
            return None;
        }
        mutagraph_backends::worker::context::pass_named(&self.message)
    }

    /// The op a missing element type is filed on: the blamed op, or the op tract derived from
    /// it whose kernel lacks the type (tract's Gelu runs an Erf: Erf on f64 is one gap whether
    /// a Gelu or an Erf reached it); none for tract's own dimension type (a TDim leaking into
    /// values is one fault, whichever op it reaches).
    pub fn gap_op(&self) -> Option<&str> {
        self.gap.as_deref().filter(|g| *g != "tdim")?;
        let derived = self.is_tract().then(|| tract_derived_op(&self.message));
        derived.flatten().or(self.op_type())
    }

    /// A file-name-safe id for the signature: `kind-library-what-<8 hex digits>`.
    pub fn signature_id(&self) -> String {
        let sig = self.signature();
        let what = match (&self.gap, self.op_type(), self.optimizer_pass()) {
            (_, _, Some(pass)) => pass.to_string(),
            (Some(g), _, _) => match self.gap_op() {
                Some(op) => format!("{op}-{g}_gap"),
                None => format!("{g}_gap"),
            },
            (None, Some(op), None) => op.to_string(),
            (None, None, None) => self.symptom.clone(),
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

/// The family an op's root causes are keyed on (`RNN/GRU/LSTM`, `Reduce*`; the op itself when
/// the registry gives it none).
fn op_family(op_type: &str) -> &str {
    mutagraph_ir::registry::Registry::global()
        .get("", op_type)
        .map_or(op_type, |s| s.family())
}

/// 64-bit FNV-1a (stable across builds and platforms, unlike `DefaultHasher`).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    mutagraph_ir::hash::fnv1a64(bytes)
}

#[cfg(test)]
mod tests;
