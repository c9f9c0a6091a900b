//! JSON schema (a subset) to a grammar of JSON text without white space.
//!
//! Handled: `type` (`object`, `string`, `number`, `integer`, `boolean`, `null`, `array`, or a
//! list of those), `properties` with `required` (the others may be left out), `enum` and `const` (of strings, numbers, booleans, null), `anyOf` /
//! `oneOf` (any of the alternatives), `items` and `minItems` / `maxItems` of arrays,
//! `minLength` / `maxLength` of strings, `minimum` / `maximum` of integers (enumerated when
//! the range holds at most 1000 values). Lengths are bounded so that generation ends: strings
//! have at most [`MAX_STRING`] characters and arrays [`MAX_ITEMS`] items unless the schema says
//! less. Objects allow no other properties. Anything else (`$ref`, `pattern`,
//! `additionalProperties` as a schema, ...) is an error naming where it is.
//!
//! Properties are written in a fixed order: that of `propertyOrdering` when the schema has one,
//! else the `required` properties in the order `required` lists them, then the others by name
//! (a `serde_json` map does not keep the order the schema's text wrote).

use super::{Expr, Grammar, GrammarError, ordered_subset, rule_name};
use serde_json::Value;

/// The longest string when the schema gives no `maxLength`.
pub const MAX_STRING: u64 = 300;
/// The most items of an array when the schema gives no `maxItems`.
pub const MAX_ITEMS: u64 = 16;
/// Integer ranges up to this many values are enumerated.
const MAX_ENUMERATED: i64 = 1000;

/// The grammar of JSON text that `schema` accepts; the root rule is `root`.
pub fn from_schema(schema: &Value) -> Result<Grammar, GrammarError> {
    let mut g = Grammar::new("root");
    let mut b = Builder {
        g: &mut g,
        counter: 0,
    };
    let e = b.schema(schema, "", 0)?;
    g.rule("root", e);
    add_common(&mut g);
    g.check()?;
    Ok(g)
}

fn err(path: &str, problem: impl Into<String>) -> GrammarError {
    GrammarError::Schema {
        path: if path.is_empty() {
            "/".into()
        } else {
            path.into()
        },
        problem: problem.into(),
    }
}

/// Keywords that say nothing about the text (annotations).
const IGNORED: &[&str] = &[
    "title",
    "description",
    "$schema",
    "$id",
    "$comment",
    "examples",
    "default",
    "additionalProperties",
    "format",
];

struct Builder<'g> {
    g: &'g mut Grammar,
    counter: usize,
}

impl Builder<'_> {
    fn fresh(&mut self, hint: &str) -> String {
        self.counter += 1;
        format!("s{}-{}", self.counter, rule_name(hint))
    }

    fn schema(&mut self, s: &Value, path: &str, depth: usize) -> Result<Expr, GrammarError> {
        if depth > 32 {
            return Err(err(path, "the schema nests deeper than 32 levels"));
        }
        let obj = match s {
            Value::Bool(true) => return Err(err(path, "'true' (any value) is not supported")),
            Value::Object(o) => o,
            _ => return Err(err(path, "a schema must be an object")),
        };
        for k in obj.keys() {
            let known = [
                "type",
                "properties",
                "required",
                "enum",
                "const",
                "anyOf",
                "oneOf",
                "items",
                "minItems",
                "maxItems",
                "minLength",
                "maxLength",
                "minimum",
                "maximum",
                "propertyOrdering",
            ];
            if !known.contains(&k.as_str()) && !IGNORED.contains(&k.as_str()) {
                return Err(err(path, format!("keyword '{k}' is not supported")));
            }
        }
        if let Some(Value::Object(_)) = obj.get("additionalProperties") {
            return Err(err(
                path,
                "additionalProperties as a schema is not supported",
            ));
        }
        if let Some(v) = obj.get("const") {
            return Ok(Expr::lit(literal(v, path)?));
        }
        if let Some(v) = obj.get("enum") {
            let Value::Array(vs) = v else {
                return Err(err(path, "'enum' must be a list"));
            };
            if vs.is_empty() {
                return Err(err(path, "'enum' is empty"));
            }
            let lits = vs
                .iter()
                .map(|v| literal(v, path))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Expr::lits(lits));
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(v) = obj.get(key) {
                let Value::Array(vs) = v else {
                    return Err(err(path, format!("'{key}' must be a list")));
                };
                if vs.is_empty() {
                    return Err(err(path, format!("'{key}' is empty")));
                }
                let mut alts = Vec::new();
                for (i, sub) in vs.iter().enumerate() {
                    alts.push(self.schema(sub, &format!("{path}/{key}/{i}"), depth + 1)?);
                }
                return Ok(Expr::Alt(alts));
            }
        }
        let types: Vec<&str> = match obj.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts
                .iter()
                .map(|t| {
                    t.as_str()
                        .ok_or_else(|| err(path, "'type' lists a non-string"))
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(err(path, "'type' must be a string or a list")),
            None if obj.contains_key("properties") => vec!["object"],
            None if obj.contains_key("items") => vec!["array"],
            None => return Err(err(path, "no 'type' (any value is not supported)")),
        };
        let mut alts = Vec::new();
        for t in types {
            alts.push(self.typed(t, obj, path, depth)?);
        }
        Ok(if alts.len() == 1 {
            alts.remove(0)
        } else {
            Expr::Alt(alts)
        })
    }

    fn typed(
        &mut self,
        t: &str,
        obj: &serde_json::Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Result<Expr, GrammarError> {
        let uint = |k: &str| -> Result<Option<u64>, GrammarError> {
            match obj.get(k) {
                None => Ok(None),
                Some(v) => v
                    .as_u64()
                    .map(Some)
                    .ok_or_else(|| err(path, format!("'{k}' must be a non-negative integer"))),
            }
        };
        Ok(match t {
            "string" => {
                let min = uint("minLength")?.unwrap_or(0);
                let max = uint("maxLength")?.unwrap_or(MAX_STRING.max(min));
                if max < min {
                    return Err(err(path, "maxLength is below minLength"));
                }
                Expr::seq([
                    Expr::lit("\""),
                    Expr::r("json-char").repeat(min as u32, Some(max as u32)),
                    Expr::lit("\""),
                ])
            }
            "number" => Expr::r("json-number"),
            "integer" => integer(obj, path)?,
            "boolean" => Expr::lits(["true", "false"]),
            "null" => Expr::lit("null"),
            "array" => {
                let item = match obj.get("items") {
                    Some(s) => self.schema(s, &format!("{path}/items"), depth + 1)?,
                    None => return Err(err(path, "an array needs 'items'")),
                };
                let name = self.fresh(&format!("{path}-item"));
                self.g.rule(name.clone(), item);
                let min = uint("minItems")?.unwrap_or(0);
                let max = uint("maxItems")?.unwrap_or(MAX_ITEMS.max(min));
                if max < min {
                    return Err(err(path, "maxItems is below minItems"));
                }
                let more = Expr::seq([Expr::lit(","), Expr::r(name.clone())]);
                let list = |lo: u64| {
                    Expr::seq([
                        Expr::r(name.clone()),
                        more.clone()
                            .repeat(lo.saturating_sub(1) as u32, Some((max - 1) as u32)),
                    ])
                };
                match (min, max) {
                    (_, 0) => Expr::lit("[]"),
                    (0, _) => Expr::seq([Expr::lit("["), list(1).opt(), Expr::lit("]")]),
                    (m, _) => Expr::seq([Expr::lit("["), list(m), Expr::lit("]")]),
                }
            }
            "object" => {
                let required: Vec<&str> = match obj.get("required") {
                    None => vec![],
                    Some(Value::Array(r)) => r
                        .iter()
                        .map(|v| {
                            v.as_str()
                                .ok_or_else(|| err(path, "'required' lists a non-string"))
                        })
                        .collect::<Result<_, _>>()?,
                    Some(_) => return Err(err(path, "'required' must be a list")),
                };
                let props = match obj.get("properties") {
                    None => serde_json::Map::new(),
                    Some(Value::Object(p)) => p.clone(),
                    Some(_) => return Err(err(path, "'properties' must be an object")),
                };
                if let Some(r) = required.iter().find(|r| !props.contains_key(**r)) {
                    return Err(err(
                        path,
                        format!("required property '{r}' is not in 'properties'"),
                    ));
                }
                let mut order: Vec<&str> = Vec::new();
                if let Some(Value::Array(o)) = obj.get("propertyOrdering") {
                    order.extend(o.iter().filter_map(|v| v.as_str()));
                }
                order.extend(required.iter().copied());
                order.extend(props.keys().map(|k| k.as_str()));
                let mut seen = Vec::new();
                order.retain(|k| {
                    let keep = props.contains_key(*k) && !seen.contains(k);
                    seen.push(*k);
                    keep
                });
                let mut items = Vec::new();
                for k in order {
                    let sub = &props[k];
                    let v = self.schema(sub, &format!("{path}/properties/{k}"), depth + 1)?;
                    let name = self.fresh(&format!("{path}-{k}"));
                    self.g.rule(name.clone(), v);
                    let key = serde_json::to_string(k).unwrap_or_default();
                    items.push((
                        Expr::seq([Expr::lit(format!("{key}:")), Expr::r(name)]),
                        required.contains(&k),
                    ));
                }
                let prefix = self.fresh(&format!("{path}-obj"));
                match ordered_subset(self.g, &prefix, &items, ",") {
                    None => Expr::lit("{}"),
                    Some(list) if items.iter().any(|(_, r)| *r) => {
                        Expr::seq([Expr::lit("{"), list, Expr::lit("}")])
                    }
                    Some(list) => Expr::seq([Expr::lit("{"), list.opt(), Expr::lit("}")]),
                }
            }
            other => return Err(err(path, format!("type '{other}' is not supported"))),
        })
    }
}

/// A JSON value written as compact JSON text.
fn literal(v: &Value, path: &str) -> Result<String, GrammarError> {
    match v {
        Value::Array(_) | Value::Object(_) => {
            Err(err(path, "enum and const values must be scalars"))
        }
        v => Ok(v.to_string()),
    }
}

fn integer(obj: &serde_json::Map<String, Value>, path: &str) -> Result<Expr, GrammarError> {
    let bound = |k: &str| -> Result<Option<i64>, GrammarError> {
        match obj.get(k) {
            None => Ok(None),
            Some(v) => v
                .as_i64()
                .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
                .map(Some)
                .ok_or_else(|| err(path, format!("'{k}' must be an integer"))),
        }
    };
    let (lo, hi) = (bound("minimum")?, bound("maximum")?);
    if let (Some(lo), Some(hi)) = (lo, hi) {
        if hi < lo {
            return Err(err(path, "maximum is below minimum"));
        }
        if hi - lo < MAX_ENUMERATED {
            return Ok(Expr::lits((lo..=hi).map(|i| i.to_string())));
        }
    }
    // Non-negative when the minimum says so, else any sign (never "-0").
    let nonzero = Expr::seq([
        Expr::class(&[('1', '9')]),
        Expr::class(&[('0', '9')]).repeat(0, Some(17)),
    ]);
    Ok(if lo.is_some_and(|l| l >= 0) {
        Expr::alt([Expr::lit("0"), nonzero])
    } else {
        Expr::alt([Expr::lit("0"), Expr::seq([Expr::lit("-").opt(), nonzero])])
    })
}

/// The rules every JSON grammar shares: string characters and numbers.
fn add_common(g: &mut Grammar) {
    let hex = Expr::class(&[('0', '9'), ('a', 'f'), ('A', 'F')]);
    g.rule(
        "json-char",
        Expr::alt([
            Expr::not_class(&[('"', '"'), ('\\', '\\'), ('\u{0}', '\u{1f}')]),
            Expr::seq([
                Expr::lit("\\"),
                Expr::alt([
                    Expr::class(&[
                        ('"', '"'),
                        ('\\', '\\'),
                        ('/', '/'),
                        ('b', 'b'),
                        ('f', 'f'),
                        ('n', 'n'),
                        ('r', 'r'),
                        ('t', 't'),
                    ]),
                    // \uXXXX outside the surrogates (a lone one is not valid JSON text).
                    Expr::seq([
                        Expr::lit("u"),
                        Expr::alt([
                            Expr::seq([
                                Expr::class(&[
                                    ('0', '9'),
                                    ('a', 'c'),
                                    ('A', 'C'),
                                    ('e', 'f'),
                                    ('E', 'F'),
                                ]),
                                hex.clone().repeat(3, Some(3)),
                            ]),
                            Expr::seq([
                                Expr::class(&[('d', 'd'), ('D', 'D')]),
                                Expr::class(&[('0', '7')]),
                                hex.clone().repeat(2, Some(2)),
                            ]),
                        ]),
                    ]),
                ]),
            ]),
        ]),
    );
    let d = Expr::class(&[('0', '9')]);
    g.rule(
        "json-number",
        Expr::seq([
            Expr::lit("-").opt(),
            Expr::alt([
                Expr::lit("0"),
                Expr::seq([Expr::class(&[('1', '9')]), d.clone().repeat(0, Some(15))]),
            ]),
            Expr::seq([Expr::lit("."), d.clone().repeat(1, Some(15))]).opt(),
            Expr::seq([
                Expr::class(&[('e', 'e'), ('E', 'E')]),
                Expr::class(&[('+', '+'), ('-', '-')]).opt(),
                // At most two digits: every number stays within f64.
                d.repeat(1, Some(2)),
            ])
            .opt(),
        ]),
    );
}
