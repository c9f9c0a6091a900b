//! String ops: StringNormalizer, StringConcat, StringSplit.
use super::binary::bcast2;
use crate::reference::tensor::*;
use crate::reference::{Cx, V, inp, one};
use mutagraph_ir::attr::{AttrLookup, AttrValue};
use mutagraph_ir::dtype::DType;
use mutagraph_ir::graph::Node;

type Out = R<Vec<V>>;

pub(super) fn op_string_normalizer(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let Buf::S(v) = &x.buf else {
        return Err(err("StringNormalizer needs strings"));
    };
    let action = n.string("case_change_action", "NONE");
    let sensitive = n.int("is_case_sensitive", 0) != 0;
    let stop: Vec<String> = match n.attr("stopwords") {
        Some(AttrValue::Strings(s)) => s
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect(),
        _ => vec![],
    };
    let is_stop = |s: &str| {
        stop.iter().any(|w| {
            if sensitive {
                w == s
            } else {
                w.to_lowercase() == s.to_lowercase()
            }
        })
    };
    let mut out: Vec<Vec<u8>> = Vec::new();
    for b in v {
        let s = String::from_utf8_lossy(b).into_owned();
        if is_stop(&s) {
            continue;
        }
        let s = match action.as_str() {
            "LOWER" => s.to_lowercase(),
            "UPPER" => s.to_uppercase(),
            "NONE" => s,
            a => return Err(err(format!("case_change_action {a}"))),
        };
        out.push(s.into_bytes());
    }
    let two_d = x.rank() == 2;
    if out.is_empty() {
        out.push(vec![]);
    }
    let shape = if two_d {
        vec![1, out.len()]
    } else {
        vec![out.len()]
    };
    one(T {
        dt: DType::String,
        shape,
        buf: Buf::S(out),
    })
}

pub(super) fn op_string_concat(_: &Cx, _: &Node, ins: &[Option<&V>]) -> Out {
    let a = inp(ins, 0)?;
    let b = inp(ins, 1)?;
    let (Buf::S(x), Buf::S(y)) = (&a.buf, &b.buf) else {
        return Err(err("StringConcat needs strings"));
    };
    let (shape, ia, ib) = bcast2(a, b)?;
    let v = ia
        .iter()
        .zip(&ib)
        .map(|(&i, &j)| {
            let mut s = x[i].clone();
            s.extend_from_slice(&y[j]);
            s
        })
        .collect();
    one(a.with(shape, Buf::S(v)))
}

pub(super) fn op_string_split(_: &Cx, n: &Node, ins: &[Option<&V>]) -> Out {
    let x = inp(ins, 0)?;
    let Buf::S(v) = &x.buf else {
        return Err(err("StringSplit needs strings"));
    };
    let delim = n.string("delimiter", "");
    let maxsplit = n
        .int_opt("maxsplit")
        .filter(|&m| m >= 0)
        .map(|m| m as usize);
    let mut parts: Vec<Vec<String>> = Vec::with_capacity(v.len());
    for b in v {
        let s = String::from_utf8_lossy(b).into_owned();
        let p: Vec<String> = if delim.is_empty() {
            let mut out: Vec<String> = Vec::new();
            let mut rest = s.trim_start();
            while !rest.is_empty() {
                if maxsplit.is_some_and(|m| out.len() == m) {
                    out.push(rest.trim_end().to_string());
                    break;
                }
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                out.push(rest[..end].to_string());
                rest = rest[end..].trim_start();
            }
            out
        } else {
            match maxsplit {
                Some(m) => s.splitn(m + 1, delim.as_str()).map(String::from).collect(),
                None => s.split(delim.as_str()).map(String::from).collect(),
            }
        };
        parts.push(p);
    }
    let width = parts.iter().map(|p| p.len()).max().unwrap_or(0);
    let mut y = Vec::with_capacity(parts.len() * width);
    let mut z = Vec::with_capacity(parts.len());
    for p in &parts {
        z.push(p.len() as i64);
        for k in 0..width {
            y.push(p.get(k).map(|s| s.clone().into_bytes()).unwrap_or_default());
        }
    }
    let mut ys = x.shape.clone();
    ys.push(width);
    Ok(vec![
        V::T(x.with(ys, Buf::S(y))),
        V::T(T::i(DType::I64, x.shape.clone(), z)),
    ])
}
