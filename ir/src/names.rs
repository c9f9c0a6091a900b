//! Plain names for what the mutators named.
//!
//! A mutator names what it adds `HINT_mTAG_N` (`retuned_m3b17de67_5`): the tag, a hash of the
//! edit, keeps names of different edits apart in one model. In a bug bundle those names are
//! noise a maintainer has to read past; [`plain`] gives them back as `HINT_K` (`retuned_1`).
use crate::model::Model;
use crate::pb;
use std::collections::{BTreeSet, HashMap};

/// The hint of a generated name (`retuned` of `retuned_m3b17de67_5`), `None` for any other
/// name.
pub fn generated_hint(name: &str) -> Option<&str> {
    let (head, n) = name.rsplit_once('_')?;
    let (hint, tag) = head.rsplit_once('_')?;
    let tag = tag.strip_prefix('m')?;
    let generated = !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
        && tag.len() == 8
        && tag.bytes().all(|b| b.is_ascii_hexdigit());
    generated.then_some(hint)
}

/// `m` with every generated value and node name ([`generated_hint`]) replaced by `HINT_K`,
/// `K` counting from 1 per hint and skipping names the model already has, in every graph of
/// the model. Returns the model (not inferred) and the value renames (`old → new`); `None`
/// when no name is generated, or when the model holds names this renaming does not reach
/// (sparse initializers, quantization annotations, functions).
pub fn plain(m: &Model) -> Option<(Model, Vec<(String, String)>)> {
    let mut p = crate::export::model_to_proto(m);
    let g = p.graph.as_mut()?;
    if !p.functions.is_empty() || !reachable(g) {
        return None;
    }
    let mut taken = BTreeSet::new();
    let mut values = BTreeSet::new();
    let mut nodes = BTreeSet::new();
    collect(g, &mut taken, &mut values, &mut nodes);
    let value_map = fresh_names(&values, &mut taken);
    let node_map = fresh_names(&nodes, &mut taken);
    if value_map.is_empty() && node_map.is_empty() {
        return None;
    }
    rename(g, &value_map, &node_map);
    let model = crate::import::model_from_proto(p).ok()?;
    let mut renames: Vec<(String, String)> = value_map.into_iter().collect();
    renames.sort();
    Some((model, renames))
}

/// Whether every name of `g` and its subgraphs is one [`rename`] reaches.
fn reachable(g: &pb::GraphProto) -> bool {
    g.sparse_initializer.is_empty()
        && g.quantization_annotation.is_empty()
        && subgraphs(g).all(reachable)
}

fn subgraphs(g: &pb::GraphProto) -> impl Iterator<Item = &pb::GraphProto> {
    g.node
        .iter()
        .flat_map(|n| &n.attribute)
        .flat_map(|a| a.g.iter().chain(&a.graphs))
}

/// Every name of `g` and its subgraphs into `taken`; generated value names into `values`,
/// generated node names into `nodes`.
fn collect(
    g: &pb::GraphProto,
    taken: &mut BTreeSet<String>,
    values: &mut BTreeSet<String>,
    nodes: &mut BTreeSet<String>,
) {
    let infos = g.input.iter().chain(&g.output).chain(&g.value_info);
    let value_names = infos
        .filter_map(|v| v.name.as_deref())
        .chain(g.initializer.iter().filter_map(|t| t.name.as_deref()))
        .chain(
            g.node
                .iter()
                .flat_map(|n| n.input.iter().chain(&n.output))
                .map(String::as_str),
        );
    for v in value_names.filter(|v| !v.is_empty()) {
        taken.insert(v.to_string());
        if generated_hint(v).is_some() {
            values.insert(v.to_string());
        }
    }
    for n in g.node.iter().filter_map(|n| n.name.as_deref()) {
        taken.insert(n.to_string());
        if generated_hint(n).is_some() {
            nodes.insert(n.to_string());
        }
    }
    for s in subgraphs(g) {
        collect(s, taken, values, nodes);
    }
}

/// `HINT_K` for each generated name, in name order, none of them in `taken` (which gains them).
fn fresh_names(names: &BTreeSet<String>, taken: &mut BTreeSet<String>) -> HashMap<String, String> {
    let mut next: HashMap<&str, usize> = HashMap::new();
    let mut map = HashMap::new();
    for old in names {
        let hint = generated_hint(old).filter(|h| !h.is_empty()).unwrap_or("v");
        let k = next.entry(hint).or_insert(0);
        let new = loop {
            *k += 1;
            let candidate = format!("{hint}_{k}");
            if !taken.contains(&candidate) {
                break candidate;
            }
        };
        taken.insert(new.clone());
        map.insert(old.clone(), new);
    }
    map
}

/// Applies the renames to `g` and its subgraphs (values read there from outside too).
fn rename(
    g: &mut pb::GraphProto,
    values: &HashMap<String, String>,
    nodes: &HashMap<String, String>,
) {
    let re = |s: &mut String, map: &HashMap<String, String>| {
        if let Some(new) = map.get(s.as_str()) {
            *s = new.clone();
        }
    };
    let infos = g
        .input
        .iter_mut()
        .chain(&mut g.output)
        .chain(&mut g.value_info);
    for name in infos.filter_map(|v| v.name.as_mut()) {
        re(name, values);
    }
    for name in g.initializer.iter_mut().filter_map(|t| t.name.as_mut()) {
        re(name, values);
    }
    for n in &mut g.node {
        for v in n.input.iter_mut().chain(&mut n.output) {
            re(v, values);
        }
        if let Some(name) = n.name.as_mut() {
            re(name, nodes);
        }
        for a in &mut n.attribute {
            for s in a.g.iter_mut().chain(&mut a.graphs) {
                rename(s, values, nodes);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_names_are_recognized() {
        assert_eq!(generated_hint("retuned_m3b17de67_5"), Some("retuned"));
        assert_eq!(generated_hint("Mean_m04dc886a_4"), Some("Mean"));
        assert_eq!(generated_hint("x_mzzzzzzzz_1"), None);
        assert_eq!(generated_hint("conv_m3b17de67"), None);
        assert_eq!(generated_hint("input_1"), None);
    }

    #[test]
    fn generated_names_become_plain_everywhere_and_others_stay() {
        let text = r#"
            <ir_version: 8, opset_import: ["" : 17]>
            g (float[2] x, float[2] retuned_m3b17de67_5) => (float[2] y) {
                Relu_m0000aaaa_1 = Relu(x)
                retuned_1 = Identity(Relu_m0000aaaa_1)
                y = Add(retuned_1, retuned_m3b17de67_5)
            }
        "#;
        let m = crate::text::parse_model(text).unwrap();
        let (p, renames) = plain(&m).unwrap();
        // `retuned_1` is taken: the generated input becomes `retuned_2`.
        assert_eq!(
            renames,
            vec![
                ("Relu_m0000aaaa_1".to_string(), "Relu_1".to_string()),
                ("retuned_m3b17de67_5".to_string(), "retuned_2".to_string()),
            ]
        );
        let names: Vec<String> = p
            .graph
            .inputs
            .iter()
            .filter_map(|v| v.name.clone())
            .collect();
        assert_eq!(names, ["x", "retuned_2"]);
        let reads: Vec<Vec<String>> = p.graph.nodes().map(|n| n.inputs.clone()).collect();
        assert!(reads.contains(&vec!["Relu_1".to_string()]), "{reads:?}");
        assert!(reads.contains(&vec!["retuned_1".to_string(), "retuned_2".to_string()]));
        let plain_again = plain(&p);
        assert!(plain_again.is_none(), "nothing generated is left");
    }
}
