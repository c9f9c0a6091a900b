//! The order of writes: scatters and unpooling with duplicate indices.
use super::{Seen, slot};
use mutagraph_ir::attr::AttrLookup;
use mutagraph_ir::graph::Node;

/// Flat positions written by ScatterND-like index tuples: `Some(true)` when two tuples are
/// equal.
fn has_duplicate_rows(idx: &[i64], width: usize) -> bool {
    if width == 0 {
        return idx.is_empty();
    }
    let mut rows: Vec<&[i64]> = idx.chunks(width).collect();
    rows.sort();
    rows.windows(2).any(|w| w[0] == w[1])
}

pub(super) fn scatter_duplicate_indices(node: &Node, seen: &Seen) -> Option<String> {
    if !matches!(
        node.op_type.as_str(),
        "ScatterElements" | "ScatterND" | "Scatter"
    ) || node.attributes.string("reduction", "none") != "none"
    {
        return None;
    }
    let data = slot(node, seen, 0)?;
    let idx_t = slot(node, seen, 1)?;
    let idx = idx_t.to_i64s()?;
    let dup = if node.op_type == "ScatterND" {
        let width = *idx_t.shape.last()?;
        // Negative indices count from the end.
        let norm: Vec<i64> = idx
            .chunks(width.max(1))
            .flat_map(|row| {
                row.iter()
                    .enumerate()
                    .map(|(k, &i)| {
                        let d = data.shape.get(k).copied().unwrap_or(1) as i64;
                        if i < 0 { i + d } else { i }
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        has_duplicate_rows(&norm, width)
    } else {
        // ScatterElements: element (i0..ik) writes data[i0..idx..ik] along `axis`.
        let rank = idx_t.shape.len();
        let axis = node.attributes.int("axis", 0);
        let axis = if axis < 0 { axis + rank as i64 } else { axis } as usize;
        if axis >= rank {
            return None;
        }
        let dim = *data.shape.get(axis)? as i64;
        let mut coords: Vec<i64> = Vec::with_capacity(idx.len() * rank);
        let mut pos = vec![0usize; rank];
        for &i in &idx {
            for (d, &p) in pos.iter().enumerate() {
                coords.push(if d == axis {
                    if i < 0 { i + dim } else { i }
                } else {
                    p as i64
                });
            }
            for d in (0..rank).rev() {
                pos[d] += 1;
                if pos[d] < idx_t.shape[d] {
                    break;
                }
                pos[d] = 0;
            }
        }
        has_duplicate_rows(&coords, rank)
    };
    dup.then(|| {
        format!(
            "{} with duplicate indices and reduction 'none'",
            node.op_type
        )
    })
}

pub(super) fn maxunpool_duplicate_indices(node: &Node, seen: &Seen) -> Option<String> {
    if node.op_type != "MaxUnpool" {
        return None;
    }
    let idx = slot(node, seen, 1)?.to_i64s()?;
    has_duplicate_rows(&idx, 1).then(|| "MaxUnpool with duplicate indices".into())
}
