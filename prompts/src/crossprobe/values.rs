//! The values a bug snippet writes down: tensor literals (`torch.tensor([[1000.0, -1e30]])`,
//! `tf.constant(...)`, `np.array(...)`) with their shape and element kind, and the numbers
//! passed to calls (`dim=-1`, `min=-1.0`, `[1, 1, 2, 2]`). These are what makes a snippet
//! trigger its bug (NaN, huge values, negative indices), so the transfer grammar lets the
//! model write them as literal initializers.
//!
//! Python expressions are read as far as snippets use them: numbers (`1e30`, `0x10`), unary
//! minus, `float("nan")` / `float('-inf')`, `math.inf`, `np.nan`, `torch.inf`, `**`, `*`, `/`,
//! `+`, `-` and parentheses, and nested lists or tuples of those. Anything else makes the
//! literal unknown and it is skipped.
use super::snippet::Snippet;

/// A tensor literal of a snippet.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorLiteral {
    /// The dims of the nested list (`[]` for a scalar).
    pub shape: Vec<usize>,
    /// The values in row-major order.
    pub values: Vec<f64>,
    /// Whether the elements are integers (every value written without a point or exponent,
    /// or an integer `dtype=`).
    pub integer: bool,
    /// The `dtype=` argument's last name (`int32`, `float16`), if any.
    pub dtype: Option<String>,
    /// The variable it is assigned to (`x = torch.tensor(...)`), if any.
    pub name: Option<String>,
}

/// The functions whose first argument is a tensor literal.
const CONSTRUCTORS: &[&str] = &[
    "torch.tensor",
    "torch.Tensor",
    "torch.as_tensor",
    "torch.FloatTensor",
    "torch.LongTensor",
    "tf.constant",
    "tf.convert_to_tensor",
    "numpy.array",
    "numpy.asarray",
    "np.array",
    "np.asarray",
];

/// The tensor literals of a snippet, in call order.
pub fn tensor_literals(snippet: &Snippet) -> Vec<TensorLiteral> {
    let mut out = Vec::new();
    for call in &snippet.calls {
        if !CONSTRUCTORS.contains(&call.api.as_str()) {
            continue;
        }
        let args = split_args(&call.args);
        let Some(first) = args.iter().find(|a| keyword(a).is_none()) else {
            continue;
        };
        let Some(v) = Parser::new(first).whole() else {
            continue;
        };
        let Some((shape, values, integer)) = flatten(&v) else {
            continue;
        };
        let dtype = args
            .iter()
            .find_map(|a| keyword(a).filter(|(k, _)| *k == "dtype").map(|(_, v)| v))
            .map(|v| v.rsplit('.').next().unwrap_or(v).trim().to_string());
        let integer = match dtype.as_deref() {
            Some(d) => d.starts_with("int") || d.starts_with("uint") || d == "long",
            None => integer,
        };
        out.push(TensorLiteral {
            shape,
            values,
            integer,
            dtype,
            name: assigned_name(&snippet.code, call.line),
        });
    }
    out
}

/// Every number written in the arguments of the snippet's calls other than the tensor
/// constructors (scalars and list elements: `dim=-1`, `kernel_size=[3, 3]`, `min=-1.0`),
/// without repeats, in order.
pub fn call_numbers(snippet: &Snippet) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    for call in &snippet.calls {
        if CONSTRUCTORS.contains(&call.api.as_str()) {
            continue;
        }
        for a in split_args(&call.args) {
            let text = keyword(&a).map_or(a.as_str(), |(_, v)| v);
            let Some(v) = Parser::new(text).whole() else {
                continue;
            };
            let mut flat = Vec::new();
            collect(&v, &mut flat);
            for x in flat {
                if !out.iter().any(|y| same(*y, x)) {
                    out.push(x);
                }
            }
        }
    }
    out
}

fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

/// A parsed Python value.
#[derive(Clone, Debug, PartialEq)]
enum Py {
    Num { value: f64, integer: bool },
    List(Vec<Py>),
}

fn collect(v: &Py, out: &mut Vec<f64>) {
    match v {
        Py::Num { value, .. } => out.push(*value),
        Py::List(items) => items.iter().for_each(|i| collect(i, out)),
    }
}

/// Shape, row-major values and whether all are integers; `None` for ragged lists.
fn flatten(v: &Py) -> Option<(Vec<usize>, Vec<f64>, bool)> {
    match v {
        Py::Num { value, integer } => Some((vec![], vec![*value], *integer)),
        Py::List(items) => {
            let mut shape = None;
            let mut values = Vec::new();
            let mut all_int = true;
            for i in items {
                let (s, v, int) = flatten(i)?;
                if shape.as_ref().is_some_and(|x| *x != s) {
                    return None;
                }
                shape = Some(s);
                values.extend(v);
                all_int &= int;
            }
            let mut dims = vec![items.len()];
            dims.extend(shape.unwrap_or_default());
            Some((dims, values, all_int))
        }
    }
}

/// `name=value` → (name, value) when the text is a keyword argument.
fn keyword(arg: &str) -> Option<(&str, &str)> {
    let (k, v) = arg.split_once('=')?;
    let k = k.trim();
    (!k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_') && !v.starts_with('='))
        .then_some((k, v.trim()))
}

/// The arguments of a call, split at top-level commas.
fn split_args(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut cur) = (0i32, None::<char>, String::new());
    for c in args.chars() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            cur.push(c);
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur).trim().to_string());
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// `x` of a line `x = torch.tensor(...)`.
fn assigned_name(code: &str, line: usize) -> Option<String> {
    let l = code.lines().nth(line.checked_sub(1)?)?;
    let (lhs, _) = l.split_once('=')?;
    let lhs = lhs.trim();
    (!lhs.is_empty() && lhs.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .then(|| lhs.to_string())
}

/// A small recursive-descent reader of Python number expressions and lists.
struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Parser {
            s: text.as_bytes(),
            i: 0,
        }
    }

    /// The whole text as one value, or `None`.
    fn whole(mut self) -> Option<Py> {
        let v = self.value()?;
        self.ws();
        (self.i == self.s.len()).then_some(v)
    }

    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn eat(&mut self, t: &str) -> bool {
        self.ws();
        if self.s[self.i..].starts_with(t.as_bytes()) {
            self.i += t.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Option<Py> {
        self.ws();
        match self.s.get(self.i)? {
            b'[' | b'(' if self.is_sequence() => {
                let close = if self.s[self.i] == b'[' { "]" } else { ")" };
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    if self.eat(close) {
                        break;
                    }
                    items.push(self.value()?);
                    if !self.eat(",") {
                        if !self.eat(close) {
                            return None;
                        }
                        break;
                    }
                }
                Some(Py::List(items))
            }
            _ => self.sum(),
        }
    }

    /// Whether the bracket at `i` opens a list (or a tuple: a parenthesis with a top-level
    /// comma inside) rather than a parenthesized expression.
    fn is_sequence(&self) -> bool {
        if self.s[self.i] == b'[' {
            return true;
        }
        let mut depth = 0;
        for &c in &self.s[self.i..] {
            match c {
                b'(' | b'[' => depth += 1,
                b')' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        return false;
                    }
                }
                b',' if depth == 1 => return true,
                _ => {}
            }
        }
        false
    }

    fn sum(&mut self) -> Option<Py> {
        let mut acc = self.product()?;
        loop {
            if self.eat("+") {
                acc = arith(acc, self.product()?, |a, b| a + b, true)?;
            } else if self.peek_minus() {
                self.i += 1;
                acc = arith(acc, self.product()?, |a, b| a - b, true)?;
            } else {
                return Some(acc);
            }
        }
    }

    fn peek_minus(&mut self) -> bool {
        self.ws();
        self.s.get(self.i) == Some(&b'-')
    }

    fn product(&mut self) -> Option<Py> {
        let mut acc = self.unary()?;
        loop {
            self.ws();
            if self.s[self.i..].starts_with(b"**") {
                break;
            }
            if self.eat("*") {
                acc = arith(acc, self.unary()?, |a, b| a * b, true)?;
            } else if self.eat("//") {
                acc = arith(acc, self.unary()?, |a, b| (a / b).floor(), true)?;
            } else if self.eat("/") {
                acc = arith(acc, self.unary()?, |a, b| a / b, false)?;
            } else {
                return Some(acc);
            }
        }
        Some(acc)
    }

    fn unary(&mut self) -> Option<Py> {
        if self.eat("-") {
            return match self.unary()? {
                Py::Num { value, integer } => Some(Py::Num {
                    value: -value,
                    integer,
                }),
                Py::List(_) => None,
            };
        }
        if self.eat("+") {
            return self.unary();
        }
        let base = self.atom()?;
        if self.eat("**") {
            let exp = self.unary()?;
            return arith(base, exp, f64::powf, true);
        }
        Some(base)
    }

    fn atom(&mut self) -> Option<Py> {
        self.ws();
        let c = *self.s.get(self.i)?;
        if c == b'(' {
            self.i += 1;
            let v = self.sum()?;
            return self.eat(")").then_some(v);
        }
        if c.is_ascii_digit() || c == b'.' {
            return self.number();
        }
        // Names: float("nan"), math.inf, np.nan, torch.inf, ...
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || matches!(self.s[self.i], b'_' | b'.'))
        {
            self.i += 1;
        }
        let name = std::str::from_utf8(&self.s[start..self.i]).ok()?;
        let last = name.rsplit('.').next().unwrap_or(name);
        if name == "float" && self.eat("(") {
            self.ws();
            let q = *self.s.get(self.i)?;
            if q != b'"' && q != b'\'' {
                let v = self.sum()?;
                let v = match v {
                    Py::Num { value, .. } => Py::Num {
                        value,
                        integer: false,
                    },
                    l => l,
                };
                return self.eat(")").then_some(v);
            }
            self.i += 1;
            let s0 = self.i;
            while self.i < self.s.len() && self.s[self.i] != q {
                self.i += 1;
            }
            let word = std::str::from_utf8(&self.s[s0..self.i])
                .ok()?
                .to_lowercase();
            self.i += 1;
            if !self.eat(")") {
                return None;
            }
            let value = match word.trim() {
                "nan" | "+nan" | "-nan" => f64::NAN,
                "inf" | "+inf" | "infinity" => f64::INFINITY,
                "-inf" | "-infinity" => f64::NEG_INFINITY,
                w => w.parse().ok()?,
            };
            return Some(Py::Num {
                value,
                integer: false,
            });
        }
        let value = match (name.contains('.'), last) {
            (true, "nan") | (true, "NaN") | (true, "NAN") => f64::NAN,
            (true, "inf") | (true, "Inf") | (true, "infty") => f64::INFINITY,
            (true, "pi") => std::f64::consts::PI,
            (true, "e") => std::f64::consts::E,
            _ => return None,
        };
        Some(Py::Num {
            value,
            integer: false,
        })
    }

    fn number(&mut self) -> Option<Py> {
        let start = self.i;
        if self.s[self.i..].starts_with(b"0x") || self.s[self.i..].starts_with(b"0X") {
            self.i += 2;
            let s0 = self.i;
            while self.i < self.s.len() && self.s[self.i].is_ascii_hexdigit() {
                self.i += 1;
            }
            let t = std::str::from_utf8(&self.s[s0..self.i]).ok()?;
            return Some(Py::Num {
                value: i64::from_str_radix(t, 16).ok()? as f64,
                integer: true,
            });
        }
        let mut integer = true;
        while self.i < self.s.len() {
            let c = self.s[self.i];
            if c.is_ascii_digit() || c == b'_' {
                self.i += 1;
            } else if c == b'.' {
                integer = false;
                self.i += 1;
            } else if (c == b'e' || c == b'E')
                && self
                    .s
                    .get(self.i + 1)
                    .is_some_and(|d| d.is_ascii_digit() || *d == b'-' || *d == b'+')
            {
                integer = false;
                self.i += 2;
            } else {
                break;
            }
        }
        let text: String = std::str::from_utf8(&self.s[start..self.i])
            .ok()?
            .replace('_', "");
        Some(Py::Num {
            value: text.parse().ok()?,
            integer,
        })
    }
}

/// Number arithmetic; `keeps_int`: the result is an integer when both operands are.
fn arith(a: Py, b: Py, f: impl Fn(f64, f64) -> f64, keeps_int: bool) -> Option<Py> {
    match (a, b) {
        (
            Py::Num {
                value: x,
                integer: i,
            },
            Py::Num {
                value: y,
                integer: j,
            },
        ) => Some(Py::Num {
            value: f(x, y),
            integer: keeps_int && i && j,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crossprobe::parse;

    #[test]
    fn tensor_literals_with_shapes_and_specials() {
        let s = parse(
            "import torch\nimport numpy as np\n\
             x = torch.tensor([[1000.0, float('nan'), -1e30]])\n\
             i = torch.tensor([2**30, -1, 0x10], dtype=torch.int32)\n\
             y = torch.clamp(x, min=-1.0, max=np.inf)\n\
             z = torch.tensor(3)\n\
             w = torch.tensor([[1, 2], [3]])\n",
        );
        let t = tensor_literals(&s);
        assert_eq!(t.len(), 3, "{t:?}");
        assert_eq!(t[0].shape, vec![1, 3]);
        assert_eq!(t[0].values[0], 1000.0);
        assert!(t[0].values[1].is_nan());
        assert_eq!(t[0].values[2], -1e30);
        assert!(!t[0].integer);
        assert_eq!(t[0].name.as_deref(), Some("x"));
        assert_eq!(t[1].values, vec![(1u64 << 30) as f64, -1.0, 16.0]);
        assert!(t[1].integer);
        assert_eq!(t[1].dtype.as_deref(), Some("int32"));
        assert_eq!(t[2].shape, Vec::<usize>::new());
        assert_eq!(t[2].values, vec![3.0]);
        let n = call_numbers(&s);
        assert_eq!(n, vec![-1.0, f64::INFINITY]);
    }

    #[test]
    fn arithmetic_tuples_and_tf() {
        let s = parse(
            "import tensorflow as tf\n\
             x = tf.constant(((1.0 / 4.0, -(2 + 3)), (0.5, 2 * 3)))\n\
             y = tf.nn.max_pool2d(x, ksize=(2, 2), strides=[1, 1], padding='SAME')\n",
        );
        let t = tensor_literals(&s);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].shape, vec![2, 2]);
        assert_eq!(t[0].values, vec![0.25, -5.0, 0.5, 6.0]);
        assert!(!t[0].integer);
        assert_eq!(call_numbers(&s), vec![2.0, 1.0]);
    }
}
