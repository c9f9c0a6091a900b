//! RNN, GRU and LSTM: what a node's attributes say (direction, layout, hidden size, clip,
//! `linear_before_reset`, `input_forget`, the activation functions with their alpha / beta) and
//! which input shapes fit them.
//!
//! Inputs, in order: X, W, R, B, sequence_lens, initial_h, and for LSTM initial_c, P. Gate
//! order in W, R and B: RNN `i`; GRU `z r h`; LSTM `i o f c`; peepholes P: `i o f`.
use crate::backend::{BackendError, Stage};
use mutagraph_ir::attr::{AttrLookup, AttrValue};
use mutagraph_ir::graph::Node;

fn err(msg: impl Into<String>) -> BackendError {
    BackendError::failed(Stage::Run, msg)
}

fn unsup(msg: impl Into<String>) -> BackendError {
    BackendError::unsupported(Stage::Run, msg)
}

/// The recurrent cell of an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    /// `RNN`: one gate, `H = f(X Wi + H Ri + Wbi + Rbi)`.
    Rnn,
    /// `GRU`: update, reset and hidden gates.
    Gru,
    /// `LSTM`: input, output, forget and cell gates, a cell state and optional peepholes.
    Lstm,
}

impl Cell {
    /// The cell of op type `op` (ONNX Runtime's DynamicQuantizeLSTM is an LSTM layer).
    pub fn of(op: &str) -> Option<Cell> {
        match op {
            "RNN" => Some(Cell::Rnn),
            "GRU" => Some(Cell::Gru),
            "LSTM" | "DynamicQuantizeLSTM" => Some(Cell::Lstm),
            _ => None,
        }
    }

    /// Gates stacked in W, R and B.
    pub fn gates(self) -> usize {
        match self {
            Cell::Rnn => 1,
            Cell::Gru => 3,
            Cell::Lstm => 4,
        }
    }

    /// Activation functions per direction (f; f, g; f, g, h).
    pub fn functions(self) -> usize {
        match self {
            Cell::Rnn => 1,
            Cell::Gru => 2,
            Cell::Lstm => 3,
        }
    }

    fn default_functions(self) -> &'static [&'static str] {
        match self {
            Cell::Rnn => &["Tanh"],
            Cell::Gru => &["Sigmoid", "Tanh"],
            Cell::Lstm => &["Sigmoid", "Tanh", "Tanh"],
        }
    }

    fn op(self) -> &'static str {
        match self {
            Cell::Rnn => "RNN",
            Cell::Gru => "GRU",
            Cell::Lstm => "LSTM",
        }
    }
}

/// An activation function of a recurrent op, with its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Act {
    /// `1 / (1 + e^-x)`.
    Sigmoid,
    /// `tanh(x)`.
    Tanh,
    /// `max(0, x)`.
    Relu,
    /// `alpha * x + beta`.
    Affine(f64, f64),
    /// `x` if `x >= 0` else `alpha * x`.
    LeakyRelu(f64),
    /// `x` if `x > alpha` else 0.
    ThresholdedRelu(f64),
    /// `alpha * tanh(beta * x)`.
    ScaledTanh(f64, f64),
    /// `clamp(alpha * x + beta, 0, 1)`.
    HardSigmoid(f64, f64),
    /// `x` if `x >= 0` else `alpha * (e^x - 1)`.
    Elu(f64),
    /// `x / (1 + |x|)`.
    Softsign,
    /// `ln(1 + e^x)`.
    Softplus,
}

impl Act {
    /// The function named `name` (any case, as ONNX's list spells them), its alpha and beta
    /// taken from the given values or, when absent, the defaults of the ONNX ops of the same
    /// name.
    pub fn parse(name: &str, alpha: Option<f64>, beta: Option<f64>) -> Result<Act, BackendError> {
        let a = |d: f64| alpha.unwrap_or(d);
        let b = |d: f64| beta.unwrap_or(d);
        Ok(match name.to_ascii_lowercase().as_str() {
            "sigmoid" => Act::Sigmoid,
            "tanh" => Act::Tanh,
            "relu" => Act::Relu,
            "affine" => Act::Affine(a(1.0), b(0.0)),
            "leakyrelu" => Act::LeakyRelu(a(0.01)),
            "thresholdedrelu" => Act::ThresholdedRelu(a(1.0)),
            "scaledtanh" => Act::ScaledTanh(a(1.0), b(1.0)),
            "hardsigmoid" => Act::HardSigmoid(a(0.2), b(0.5)),
            "elu" => Act::Elu(a(1.0)),
            "softsign" => Act::Softsign,
            "softplus" => Act::Softplus,
            _ => return Err(unsup(format!("activation {name}"))),
        })
    }
}

/// The `direction` attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Time steps first to last.
    Forward,
    /// Last to first.
    Reverse,
    /// Both, the forward direction first.
    Bidirectional,
}

/// A recurrent node's attributes, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    /// The cell.
    pub cell: Cell,
    /// `hidden_size`.
    pub hidden: usize,
    /// `direction`.
    pub direction: Direction,
    /// `layout` = 1: X, Y, the initial and final states carry the batch first.
    pub batch_first: bool,
    /// `clip`: gate pre-activations are clamped to `[-threshold, threshold]`.
    pub clip: Option<f64>,
    /// GRU's `linear_before_reset`.
    pub linear_before_reset: bool,
    /// The activation functions, [`Cell::functions`] per direction.
    acts: Vec<Act>,
}

/// The sizes of a recurrent node's inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    /// Time steps.
    pub seq: usize,
    /// Batch entries.
    pub batch: usize,
    /// Features per time step.
    pub input: usize,
}

impl Spec {
    /// Reads and checks the attributes of `n` (an `RNN`, `GRU` or `LSTM` node). What ONNX
    /// leaves undefined (LSTM's `input_forget`: the spec does not say how the gates are
    /// coupled) and activation names outside ONNX's list are refused as unsupported.
    pub fn parse(n: &Node) -> Result<Spec, BackendError> {
        let cell =
            Cell::of(&n.op_type).ok_or_else(|| err(format!("{} is not recurrent", n.op_type)))?;
        let hidden = n.int("hidden_size", 0);
        if hidden < 1 {
            return Err(err("hidden_size must be positive"));
        }
        let direction = match n.string("direction", "forward").as_str() {
            "forward" => Direction::Forward,
            "reverse" => Direction::Reverse,
            "bidirectional" => Direction::Bidirectional,
            d => return Err(err(format!("direction '{d}'"))),
        };
        let batch_first = match n.int("layout", 0) {
            0 => false,
            1 => true,
            l => return Err(err(format!("layout {l}"))),
        };
        if cell == Cell::Lstm && n.int("input_forget", 0) != 0 {
            return Err(unsup(
                "LSTM input_forget = 1 (ONNX does not define how the gates are coupled)",
            ));
        }
        let clip = match n.attr("clip") {
            Some(AttrValue::Float(c)) => Some((*c as f64).abs()),
            _ => None,
        };
        let dirs = if direction == Direction::Bidirectional {
            2
        } else {
            1
        };
        let per = cell.functions();
        let names: Vec<String> = match n.attr("activations") {
            Some(AttrValue::Strings(v)) => v
                .iter()
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect(),
            _ => (0..dirs)
                .flat_map(|_| cell.default_functions().iter().map(|s| s.to_string()))
                .collect(),
        };
        if names.len() != per * dirs {
            return Err(err(format!(
                "{} activations for {dirs} direction(s) of {}",
                names.len(),
                cell.op()
            )));
        }
        // activation_alpha / activation_beta: one entry per function, in the functions' order.
        let alphas = n.floats("activation_alpha").unwrap_or(&[]);
        let betas = n.floats("activation_beta").unwrap_or(&[]);
        let acts = names
            .iter()
            .enumerate()
            .map(|(i, s)| {
                Act::parse(
                    s,
                    alphas.get(i).map(|&x| x as f64),
                    betas.get(i).map(|&x| x as f64),
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Spec {
            cell,
            hidden: hidden as usize,
            direction,
            batch_first,
            clip,
            linear_before_reset: n.int("linear_before_reset", 0) != 0,
            acts,
        })
    }

    /// Directions: 2 when bidirectional, else 1.
    pub fn dirs(&self) -> usize {
        if self.direction == Direction::Bidirectional {
            2
        } else {
            1
        }
    }

    /// Whether direction `d` walks the time steps last to first.
    pub fn reverse(&self, d: usize) -> bool {
        self.direction == Direction::Reverse || d == 1
    }

    /// The functions `[f, g, h]` of direction `d` (those the cell does not use repeat the
    /// last one it does).
    pub fn functions(&self, d: usize) -> [Act; 3] {
        let per = self.cell.functions();
        let own = &self.acts[d * per..(d + 1) * per];
        let f = own[0];
        let g = own.get(1).copied().unwrap_or(f);
        let h = own.get(2).copied().unwrap_or(g);
        [f, g, h]
    }

    /// Checks the shapes of the inputs (`None` for an absent optional one, in the op's input
    /// order) against the attributes; returns the sizes.
    pub fn dims(&self, shapes: &[Option<&[usize]>]) -> Result<Dims, BackendError> {
        let get = |i: usize| shapes.get(i).copied().flatten();
        let x = get(0).ok_or_else(|| err("input X is missing"))?;
        if x.len() != 3 {
            return Err(err(format!("X of shape {x:?} is not 3-D")));
        }
        let (seq, batch, input) = if self.batch_first {
            (x[1], x[0], x[2])
        } else {
            (x[0], x[1], x[2])
        };
        let (dirs, h, g) = (self.dirs(), self.hidden, self.cell.gates());
        let state = if self.batch_first {
            [batch, dirs, h]
        } else {
            [dirs, batch, h]
        };
        let want: [(&str, usize, Vec<usize>); 7] = [
            ("W", 1, vec![dirs, g * h, input]),
            ("R", 2, vec![dirs, g * h, h]),
            ("B", 3, vec![dirs, 2 * g * h]),
            ("sequence_lens", 4, vec![batch]),
            ("initial_h", 5, state.to_vec()),
            ("initial_c", 6, state.to_vec()),
            ("P", 7, vec![dirs, 3 * h]),
        ];
        for (name, i, shape) in want {
            if i >= 6 && self.cell != Cell::Lstm {
                continue;
            }
            match get(i) {
                Some(s) if s != shape.as_slice() => {
                    return Err(err(format!(
                        "{name} has shape {s:?}, {} wants {shape:?}",
                        self.cell.op()
                    )));
                }
                None if i <= 2 => return Err(err(format!("input {name} is missing"))),
                _ => {}
            }
        }
        Ok(Dims { seq, batch, input })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_repeat_per_direction_and_parameters_follow_the_functions() {
        let n = Node::new("LSTM", &["x", "w", "r"], &["y"])
            .with_attr("hidden_size", AttrValue::Int(2))
            .with_attr("direction", AttrValue::String(b"bidirectional".to_vec()));
        let s = Spec::parse(&n).unwrap();
        assert_eq!(s.dirs(), 2);
        assert!(!s.reverse(0) && s.reverse(1));
        assert_eq!(s.functions(1), [Act::Sigmoid, Act::Tanh, Act::Tanh]);
        let n = Node::new("RNN", &["x", "w", "r"], &["y"])
            .with_attr("hidden_size", AttrValue::Int(2))
            .with_attr(
                "activations",
                AttrValue::Strings(vec![b"leakyrelu".to_vec()]),
            )
            .with_attr("activation_alpha", AttrValue::Floats(vec![0.5]));
        let s = Spec::parse(&n).unwrap();
        assert_eq!(s.functions(0)[0], Act::LeakyRelu(0.5));
    }

    #[test]
    fn what_onnx_does_not_define_is_refused_and_bad_shapes_are_errors() {
        let lstm = Node::new("LSTM", &["x", "w", "r"], &["y"])
            .with_attr("hidden_size", AttrValue::Int(2))
            .with_attr("input_forget", AttrValue::Int(1));
        let e = Spec::parse(&lstm).unwrap_err();
        assert!(e.unsupported && e.message.contains("input_forget"), "{e}");
        let gelu = Node::new("GRU", &["x", "w", "r"], &["y"])
            .with_attr("hidden_size", AttrValue::Int(2))
            .with_attr(
                "activations",
                AttrValue::Strings(vec![b"Gelu".to_vec(), b"Tanh".to_vec()]),
            );
        let e = Spec::parse(&gelu).unwrap_err();
        assert!(
            e.unsupported && e.message.contains("activation Gelu"),
            "{e}"
        );
        let gru = Node::new("GRU", &["x", "w", "r"], &["y"])
            .with_attr("hidden_size", AttrValue::Int(2))
            .with_attr("layout", AttrValue::Int(1));
        let s = Spec::parse(&gru).unwrap();
        let x: &[usize] = &[4, 5, 3];
        let w: &[usize] = &[1, 6, 3];
        let r: &[usize] = &[1, 6, 2];
        let h0: &[usize] = &[4, 1, 2];
        let d = s
            .dims(&[Some(x), Some(w), Some(r), None, None, Some(h0)])
            .unwrap();
        assert_eq!((d.seq, d.batch, d.input), (5, 4, 3));
        // the state of a batch-first layer carries the batch first
        let bad: &[usize] = &[1, 4, 2];
        let e = s.dims(&[Some(x), Some(w), Some(r), None, None, Some(bad)]);
        assert!(e.unwrap_err().message.contains("initial_h"));
    }
}
