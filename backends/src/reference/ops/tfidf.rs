//! TfIdfVectorizer.
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one};
use mutagraph_ir::attr::{AttrLookup, AttrValue};
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;
use std::collections::HashMap;

type Out = R<Vec<V>>;

/// An n-gram item: an integer or a byte string.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Item {
    I(i64),
    S(Vec<u8>),
}

pub(super) fn op_tfidf(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let items: Vec<Item> = match &x.buf {
        Buf::I(v) => v.iter().map(|&i| Item::I(i)).collect(),
        Buf::S(v) => v.iter().map(|s| Item::S(s.clone())).collect(),
        _ => return Err(err("TfIdfVectorizer input must be integers or strings")),
    };
    let min_n = n.int("min_gram_length", 1).max(1) as usize;
    let max_n = n.int("max_gram_length", 1).max(1) as usize;
    let max_skip = n.int("max_skip_count", 0).max(0) as usize;
    let mode = n.string("mode", "TF");
    let counts = n.ints("ngram_counts").unwrap_or(&[]).to_vec();
    let indexes = n.ints("ngram_indexes").unwrap_or(&[]).to_vec();
    let weights = n.floats("weights").map(|w| w.to_vec());
    let pool: Vec<Item> = match (n.ints("pool_int64s"), n.attr("pool_strings")) {
        (Some(p), _) => p.iter().map(|&i| Item::I(i)).collect(),
        (None, Some(AttrValue::Strings(s))) => s.iter().map(|b| Item::S(b.clone())).collect(),
        _ => return Err(err("TfIdfVectorizer without a pool")),
    };
    // n-gram (as items) -> output column.
    let mut table: HashMap<Vec<Item>, usize> = HashMap::new();
    let mut ordinal = 0usize;
    for (k, &start) in counts.iter().enumerate() {
        let gl = k + 1;
        let end = counts.get(k + 1).map(|&e| e as usize).unwrap_or(pool.len());
        let start = start as usize;
        if start > end || end > pool.len() {
            return Err(err("ngram_counts out of range"));
        }
        let mut p = start;
        while p + gl <= end {
            let col = *indexes
                .get(ordinal)
                .ok_or_else(|| err("ngram_indexes too short"))?;
            if col < 0 {
                return Err(err("negative ngram index"));
            }
            table.insert(pool[p..p + gl].to_vec(), col as usize);
            ordinal += 1;
            p += gl;
        }
    }
    let width = indexes.iter().map(|&i| i as usize + 1).max().unwrap_or(0);
    let (rows, len) = match x.rank() {
        1 => (1, x.shape[0]),
        2 => (x.shape[0], x.shape[1]),
        _ => return Err(err("TfIdfVectorizer input must be 1-D or 2-D")),
    };
    let mut out = vec![0.0; rows * width];
    for r in 0..rows {
        let row = &items[r * len..(r + 1) * len];
        for gl in min_n..=max_n {
            let skips = if gl == 1 { 0 } else { max_skip };
            for skip in 0..=skips {
                let step = skip + 1;
                for start in 0..len {
                    let last = start + (gl - 1) * step;
                    if last >= len {
                        break;
                    }
                    let gram: Vec<Item> = (0..gl).map(|j| row[start + j * step].clone()).collect();
                    if let Some(&col) = table.get(&gram) {
                        out[r * width + col] += 1.0;
                    }
                }
            }
        }
    }
    for (i, v) in out.iter_mut().enumerate() {
        let w = weights
            .as_ref()
            .and_then(|w| w.get(i % width.max(1)))
            .map(|&w| w as f64)
            .unwrap_or(1.0);
        *v = match mode.as_str() {
            "TF" => *v,
            "IDF" => {
                if *v > 0.0 {
                    w
                } else {
                    0.0
                }
            }
            "TFIDF" => *v * w,
            m => return Err(err(format!("TfIdfVectorizer mode {m}"))),
        };
    }
    let shape = if x.rank() == 1 {
        vec![width]
    } else {
        vec![rows, width]
    };
    one(T::f(DType::F32, shape, out))
}
