//! A library's graph rewrites by name: the words a rewrite is recorded, counted and keyed by,
//! whichever model it changed. ONNX Runtime names its graph transformers
//! (`SkipLayerNormFusion`), which hold on any model as they are. tract names each patch its
//! optimizer applies after the pass, its round, the node it rewrites and the steps of the rule
//! (`declutter/0 >> declutter #12 "conv.1" Conv >> declutter_stride_slice_to_downsample`), so
//! its rule is that name without the round, node numbers, node names, axis numbers and slice
//! bounds: `declutter Conv > declutter_stride_slice_to_downsample`.

/// A rewrite in words that hold on any model ([`self`] says which words are dropped); a name
/// already in those words is kept as it is.
pub fn rule_name(patch: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    for p in patch.split(" >> ").flat_map(|p| p.split(" > ")) {
        let p = step_words(p);
        if !p.is_empty() && parts.last() != Some(&p) {
            parts.push(p);
        }
    }
    // `codegen >> codegen #3 "x" Reshape`: the pass names itself again before the node.
    if parts.len() > 1 && parts[1].starts_with(&format!("{} ", parts[0])) {
        parts.remove(0);
    }
    parts.join(" > ")
}

/// One step of a patch's name, in words that hold on any model.
fn step_words(step: &str) -> String {
    let step = step.trim();
    // `AxisChange { outlet: 11/0>, op: Rm(2) }`: the kind of change only.
    if let Some(rest) = step.strip_prefix("AxisChange {") {
        let kind: String = rest
            .split_once("op: ")
            .map(|(_, op)| op.chars().take_while(|c| c.is_alphanumeric()).collect())
            .unwrap_or_default();
        return format!("AxisChange {kind}").trim().to_string();
    }
    let mut s = without_groups(&without_nodes(step));
    // What follows names a node, an axis or bounds of this model.
    for cut in [" into ", " by [", " on axis "] {
        if let Some(i) = s.find(cut) {
            s.truncate(i);
        }
    }
    // The optimizer's round of a pass (`declutter/0`, `PropConst(3)/1`).
    if let Some((pass, round)) = s.rsplit_once('/')
        && !round.is_empty()
        && round.bytes().all(|b| b.is_ascii_digit())
    {
        s = pass.to_string();
    }
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `step` without node references (`#12 "conv.1"`; tract quotes node names, which may hold
/// spaces).
fn without_nodes(step: &str) -> String {
    let mut out = String::new();
    let mut rest = step;
    while let Some(i) = rest.find('#') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let digits = after.bytes().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 {
            out.push('#');
            rest = after;
            continue;
        }
        let after = &after[digits..];
        rest = match after.strip_prefix(" \"").and_then(|q| q.split_once('"')) {
            Some((_name, tail)) => tail,
            None => after,
        };
    }
    out.push_str(rest);
    out
}

/// `s` without parenthesized groups (`PropConst(3)`, `Reshape(1, [288], [32,3,3])`,
/// `ConcatThenEinsum(Some(2))`): arguments of this model.
fn without_groups(s: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::rule_name;

    #[test]
    fn a_patch_is_named_without_its_round_nodes_names_and_arguments() {
        let cases = [
            (
                "declutter/0 >> declutter #5 \"y.downsample.0\" Downsample",
                "declutter Downsample",
            ),
            (
                "declutter/1 >> declutter #4 \"a b\" Conv >> declutter_stride_slice_to_downsample",
                "declutter Conv > declutter_stride_slice_to_downsample",
            ),
            (
                "ChangeAxes/0 >> AxisChange { outlet: 11/0>, op: Rm(2) }",
                "ChangeAxes > AxisChange Rm",
            ),
            (
                "ChangeAxes/0 >> AxisChange { outlet: 25/0>, op: Reshape(1, [288], [32,3,3]) }",
                "ChangeAxes > AxisChange Reshape",
            ),
            ("PropConst(17)/1", "PropConst"),
            (
                "fuse/1 >> fuse #62 \"Relu_43.low.prefused\" OptMatMul >> bake const operands into Relu_43.low.prefused",
                "fuse OptMatMul > bake const operands",
            ),
            (
                "fuse/0 >> fuse #7 \"g\" OptMatMul >> fusing #9 \"h\" OptAddByScalar",
                "fuse OptMatMul > fusing OptAddByScalar",
            ),
            (
                "PushSliceUp/0 >> Slice #3 \"m\" EinSum by [Val(0), Val(4)]",
                "PushSliceUp > Slice EinSum",
            ),
            (
                "ConcatThenEinsum(Some(2))/0 >> Split Einsum for concat on axis I",
                "ConcatThenEinsum > Split Einsum for concat",
            ),
            (
                "declutter/0 >> declutter #2 \"s\" Scan >> declutter_pull_batcheable_input >> Outer patch for input extraction of #7 \"e\" EinSum",
                "declutter Scan > declutter_pull_batcheable_input > Outer patch for input extraction of EinSum",
            ),
            ("SkipLayerNormFusion", "SkipLayerNormFusion"),
        ];
        for (patch, rule) in cases {
            assert_eq!(rule_name(patch), rule, "{patch}");
            assert_eq!(rule_name(rule), rule, "a rule's name is its own name");
        }
    }
}
