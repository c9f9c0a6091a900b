//! The window geometry of Conv, ConvTranspose and the pools: kernel, strides, dilations, pads
//! (explicit or `auto_pad`) and the output size.
use crate::reference::tensor::*;
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;
use mutagraph_ir::ops::auto_pad::{
    axis_pads, ceil_output_len, effective_kernel, is_same, same_output_len,
};

/// Window geometry of a conv or pool over the spatial dims.
#[derive(Clone, Debug, PartialEq)]
pub struct Geo {
    /// Input spatial size.
    pub input: Vec<usize>,
    /// Kernel size.
    pub kernel: Vec<usize>,
    /// Strides.
    pub strides: Vec<usize>,
    /// Dilations.
    pub dil: Vec<usize>,
    /// Padding at the start of each dim.
    pub pb: Vec<i64>,
    /// Padding at the end of each dim.
    pub pe: Vec<i64>,
    /// Output spatial size.
    pub out: Vec<usize>,
}

pub(super) fn ints_or(n: &Node, name: &str, len: usize, d: i64) -> R<Vec<i64>> {
    match n.ints(name) {
        Some(v) if v.len() == len => Ok(v.to_vec()),
        Some([]) => Ok(vec![d; len]),
        Some(v) => Err(err(format!("{name} {v:?} for {len} spatial dims"))),
        None => Ok(vec![d; len]),
    }
}

pub(super) fn positive(v: Vec<i64>, what: &str) -> R<Vec<usize>> {
    if v.iter().any(|&x| x < 1) {
        return Err(err(format!("{what} {v:?} must be positive")));
    }
    Ok(v.into_iter().map(|x| x as usize).collect())
}

/// Computes the window geometry of a conv or pool from the node's attributes.
pub fn geometry(n: &Node, input: &[usize], kernel: &[usize], ceil_mode: bool) -> R<Geo> {
    let r = input.len();
    let strides = positive(ints_or(n, "strides", r, 1)?, "strides")?;
    let dil = positive(ints_or(n, "dilations", r, 1)?, "dilations")?;
    let pads = match n.ints("pads") {
        Some(p) if p.len() == 2 * r => p.to_vec(),
        Some([]) => vec![0; 2 * r],
        Some(p) => return Err(err(format!("pads {p:?} for {r} spatial dims"))),
        None => vec![0; 2 * r],
    };
    let auto = n.string("auto_pad", "NOTSET");
    let mut pb = pads[..r].to_vec();
    let mut pe = pads[r..].to_vec();
    let mut out = Vec::with_capacity(r);
    for d in 0..r {
        let i = input[d] as i64;
        let s = strides[d] as i64;
        let ek = effective_kernel(kernel[d] as i64, dil[d] as i64);
        let o = match auto.as_str() {
            "NOTSET" | "" => {
                let span = i + pb[d] + pe[d] - ek;
                if span < 0 {
                    return Err(err(format!("kernel larger than padded input on dim {d}")));
                }
                if ceil_mode {
                    ceil_output_len(i, pb[d], span, s)
                } else {
                    span / s + 1
                }
            }
            "VALID" => {
                pb[d] = 0;
                pe[d] = 0;
                let span = i - ek;
                if span < 0 {
                    return Err(err(format!("kernel larger than input on dim {d}")));
                }
                if ceil_mode {
                    (span + s - 1) / s + 1
                } else {
                    span / s + 1
                }
            }
            a if is_same(a) => {
                (pb[d], pe[d]) = axis_pads(a, i, ek, s, (pb[d], pe[d]));
                same_output_len(i, s)
            }
            a => return Err(err(format!("auto_pad {a}"))),
        };
        out.push(o.max(0) as usize);
    }
    Ok(Geo {
        input: input.to_vec(),
        kernel: kernel.to_vec(),
        strides,
        dil,
        pb,
        pe,
        out,
    })
}

impl Geo {
    /// For each output position and kernel position: the input spatial position (flat), or
    /// `Err(inside_padding)` when it falls outside the input (`true` when it is within the
    /// declared pads, `false` beyond them).
    pub fn taps(&self) -> Vec<Vec<Result<usize, bool>>> {
        let r = self.input.len();
        let ist = strides(&self.input);
        let no = numel(&self.out);
        let nk = numel(&self.kernel);
        let mut all = Vec::with_capacity(no);
        for o in 0..no {
            let oi = unravel(o, &self.out);
            let mut row = Vec::with_capacity(nk);
            for k in 0..nk {
                let ki = unravel(k, &self.kernel);
                let mut flat = 0usize;
                let mut res = Ok(());
                for d in 0..r {
                    let p = (oi[d] * self.strides[d] + ki[d] * self.dil[d]) as i64 - self.pb[d];
                    let dim = self.input[d] as i64;
                    if p < 0 || p >= dim {
                        let within = p >= -self.pb[d] && p < dim + self.pe[d];
                        res = match res {
                            Ok(()) => Err(within),
                            Err(w) => Err(w && within),
                        };
                    } else {
                        flat += p as usize * ist[d];
                    }
                }
                row.push(res.map(|_| flat));
            }
            all.push(row);
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mutagraph_ir::attr::AttrValue;

    #[test]
    fn same_upper_padding() {
        let node = Node::new("Conv", &[], &[])
            .with_attr("auto_pad", AttrValue::String(b"SAME_UPPER".to_vec()))
            .with_attr("strides", AttrValue::Ints(vec![2]));
        let g = geometry(&node, &[5], &[3], false).unwrap();
        // out = ceil(5/2) = 3; total pad = (3-1)*2 + 3 - 5 = 2 -> 1 before, 1 after.
        assert_eq!(g.out, vec![3]);
        assert_eq!((g.pb[0], g.pe[0]), (1, 1));
    }
}
