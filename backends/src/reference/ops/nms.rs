//! NonMaxSuppression.
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one, opt};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

pub(super) fn op_nms(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let boxes = inp(ins, 0)?;
    let scores = inp(ins, 1)?;
    let max_out = match opt(ins, 2)? {
        Some(t) if !t.is_empty() => t.scalar_i()?.max(0) as usize,
        _ => 0,
    };
    let iou_th = match opt(ins, 3)? {
        Some(t) if !t.is_empty() => t.scalar_f()?,
        _ => 0.0,
    };
    let score_th = match opt(ins, 4)? {
        Some(t) if !t.is_empty() => Some(t.scalar_f()?),
        _ => None,
    };
    let center = n.int("center_point_box", 0) != 0;
    if boxes.rank() != 3 || scores.rank() != 3 || boxes.shape[2] != 4 {
        return Err(err("NonMaxSuppression shapes"));
    }
    let (nb, nbox) = (boxes.shape[0], boxes.shape[1]);
    let nc = scores.shape[1];
    if scores.shape[0] != nb || scores.shape[2] != nbox {
        return Err(err("NonMaxSuppression boxes and scores disagree"));
    }
    let bv = boxes.floats()?;
    let sv = scores.floats()?;
    // (y1, x1, y2, x2) with y1 <= y2, x1 <= x2.
    let corners = |b: usize, i: usize| -> [f64; 4] {
        let p = &bv[(b * nbox + i) * 4..(b * nbox + i) * 4 + 4];
        if center {
            let (xc, yc, w, h) = (p[0], p[1], p[2], p[3]);
            [yc - h / 2.0, xc - w / 2.0, yc + h / 2.0, xc + w / 2.0]
        } else {
            [
                p[0].min(p[2]),
                p[1].min(p[3]),
                p[0].max(p[2]),
                p[1].max(p[3]),
            ]
        }
    };
    let iou = |a: [f64; 4], b: [f64; 4]| {
        let ih = (a[2].min(b[2]) - a[0].max(b[0])).max(0.0);
        let iw = (a[3].min(b[3]) - a[1].max(b[1])).max(0.0);
        let inter = ih * iw;
        let ua = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
        if ua <= 0.0 { 0.0 } else { inter / ua }
    };
    let mut out = Vec::new();
    for b in 0..nb {
        for c in 0..nc {
            let s = &sv[(b * nc + c) * nbox..(b * nc + c + 1) * nbox];
            let mut order: Vec<usize> = (0..nbox)
                .filter(|&i| score_th.is_none_or(|t| s[i] > t))
                .collect();
            order.sort_by(|&i, &j| s[j].total_cmp(&s[i]).then(i.cmp(&j)));
            let mut kept: Vec<usize> = Vec::new();
            for i in order {
                if kept.len() >= max_out {
                    break;
                }
                if kept
                    .iter()
                    .all(|&k| iou(corners(b, k), corners(b, i)) <= iou_th)
                {
                    kept.push(i);
                }
            }
            for k in kept {
                out.extend([b as i64, c as i64, k as i64]);
            }
        }
    }
    let rows = out.len() / 3;
    one(T::i(DType::I64, vec![rows, 3], out))
}
