//! The string ops: StringNormalizer, TfIdfVectorizer, StringConcat, RegexFullMatch and
//! StringSplit.

use crate::attr::{AttrKind, AttrLookup, AttrValue};
use crate::dtype::DType::{self, Bool, F32, I32, I64};
use crate::dtype::sets::*;
use crate::ops::common::*;
use crate::registry::{AttrSpec, Category, InferCtx, OpSpec, Registry};
use crate::types::Dim;

fn string_normalizer_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    // Stopwords may drop entries; without them every entry stays.
    let keeps = ctx
        .attr("stopwords")
        .is_none_or(|s| matches!(s, AttrValue::Strings(v) if v.is_empty()));
    let shape = match &x.shape {
        None => None,
        Some(s) => {
            if s.is_empty() || s.len() > 2 {
                return Err(rule!(
                    "StringNormalizer needs [C] or [1, C], found rank {}",
                    s.len()
                ));
            }
            if let (2, Dim::Known(b)) = (s.len(), &s[0])
                && *b != 1
            {
                return Err(rule!(
                    "StringNormalizer needs [1, C] for 2-D input, found [{b}, ..]"
                ));
            }
            let mut s = s.clone();
            if !keeps {
                *s.last_mut().unwrap() = Dim::Unknown;
            }
            Some(s)
        }
    };
    Ok(vec![tensor(DType::String, shape)])
}

fn tfidf_infer(ctx: &InferCtx) -> Infer {
    let x = ctx.tensor(0)?;
    let width = ctx
        .ints("ngram_indexes")
        .and_then(|v| v.iter().max().map(|m| Dim::Known(m + 1)))
        .unwrap_or(Dim::Unknown);
    let shape = match &x.shape {
        None => None,
        Some(s) if s.len() == 1 || s.is_empty() => Some(vec![width]),
        Some(s) if s.len() == 2 => Some(vec![s[0].clone(), width]),
        Some(s) => {
            return Err(rule!(
                "TfIdfVectorizer needs [C] or [N, C], found rank {}",
                s.len()
            ));
        }
    };
    Ok(vec![tensor(F32, shape)])
}

/// Registers the string ops.
pub(super) fn register(r: &mut Registry) {
    let string = &[DType::String][..];
    r.add(
        OpSpec::new("StringNormalizer", &[10], Category::Misc)
            .input("X", "tensor(string)")
            .output("Y", "tensor(string)")
            .attr(
                AttrSpec::string("case_change_action", "NONE").one_of(&["LOWER", "UPPER", "NONE"]),
            )
            .attr(AttrSpec::int("is_case_sensitive", 0).one_of_ints(&[0, 1]))
            .attr(AttrSpec::of("locale", AttrKind::String).no_buckets())
            .attr(AttrSpec::of("stopwords", AttrKind::Strings).no_buckets())
            .types("tensor(string)", string)
            .infer(string_normalizer_infer),
    );
    r.add(
        OpSpec::new("TfIdfVectorizer", &[9], Category::Misc)
            .input("X", "T")
            .output("Y", "T1")
            .attr(
                AttrSpec::of("mode", AttrKind::String)
                    .required()
                    .one_of(&["TF", "IDF", "TFIDF"]),
            )
            .attr(
                AttrSpec::of("min_gram_length", AttrKind::Int)
                    .required()
                    .range(1, i64::MAX)
                    .int_buckets(&[(1, 1), (2, 2), (3, i64::MAX)]),
            )
            .attr(
                AttrSpec::of("max_gram_length", AttrKind::Int)
                    .required()
                    .range(1, i64::MAX)
                    .int_buckets(&[(1, 1), (2, 2), (3, i64::MAX)]),
            )
            .attr(
                AttrSpec::of("max_skip_count", AttrKind::Int)
                    .required()
                    .range(0, i64::MAX)
                    .int_buckets(&[(0, 0), (1, 2), (3, i64::MAX)]),
            )
            .attr(
                AttrSpec::of("ngram_counts", AttrKind::Ints)
                    .required()
                    .no_buckets(),
            )
            .attr(
                AttrSpec::of("ngram_indexes", AttrKind::Ints)
                    .required()
                    .no_buckets(),
            )
            .attr(AttrSpec::of("pool_int64s", AttrKind::Ints).no_buckets())
            .attr(AttrSpec::of("pool_strings", AttrKind::Strings).no_buckets())
            .attr(AttrSpec::of("weights", AttrKind::Floats).no_buckets())
            .types("T", &[DType::String, I32, I64])
            .types("T1", &[F32])
            .infer(tfidf_infer),
    );
    r.add(
        OpSpec::new("StringConcat", &[20], Category::Misc)
            .input("X", "T")
            .input("Y", "T")
            .output("Z", "T")
            .types("T", string)
            .infer(|c| broadcast(c, Some(DType::String))),
    );
    r.add(
        OpSpec::new("RegexFullMatch", &[20], Category::Misc)
            .input("X", "T1")
            .output("Y", "T2")
            .attr(AttrSpec::of("pattern", AttrKind::String).no_buckets())
            .types("T1", string)
            .types("T2", BOOL)
            .infer(|c| unary_to(c, Bool)),
    );
    r.add(
        OpSpec::new("StringSplit", &[20], Category::Misc)
            .input("X", "T1")
            .output("Y", "T2")
            .output("Z", "T3")
            .attr(AttrSpec::of("delimiter", AttrKind::String).no_buckets())
            .attr(AttrSpec::of("maxsplit", AttrKind::Int).int_buckets(&[
                (i64::MIN, 0),
                (1, 1),
                (2, i64::MAX),
            ]))
            .types("T1", string)
            .types("T2", string)
            .types("T3", &[I64])
            .infer(|c| {
                let s = c.tensor(0)?.shape;
                let y = s.clone().map(|mut s| {
                    s.push(Dim::Unknown);
                    s
                });
                Ok(vec![tensor(DType::String, y), tensor(I64, s)])
            }),
    );
}
