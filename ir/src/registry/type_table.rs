//! The dtypes each version of an ONNX schema allows on each port, read from
//! `ir/data/type_constraints.tsv`.

use super::FnvMap;
use crate::dtype::DType;
use std::sync::OnceLock;

/// Per op: its schema versions, each with the dtypes of its input and output ports; from
/// `ir/data/type_constraints.tsv` (facts of the ONNX schemas, written by
/// `tests/python/gen_type_constraints.py`).
type PortTypes = Vec<Vec<DType>>;
type TypeTable = FnvMap<&'static str, Vec<(i64, PortTypes, PortTypes)>>;

fn type_table() -> &'static TypeTable {
    static TABLE: OnceLock<TypeTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t: TypeTable = FnvMap::default();
        for line in include_str!("../../data/type_constraints.tsv").lines() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split('\t').collect();
            let [op, since, side, port, list] = f[..] else {
                continue;
            };
            let (Ok(since), Ok(port)) = (since.parse::<i64>(), port.parse::<usize>()) else {
                continue;
            };
            let dtypes: Vec<DType> = list.split(',').filter_map(DType::from_name).collect();
            let versions = t.entry(op).or_default();
            if versions.last().is_none_or(|(v, _, _)| *v != since) {
                versions.push((since, Vec::new(), Vec::new()));
            }
            let (_, ins, outs) = versions.last_mut().expect("pushed above");
            let ports = if side == "out" { outs } else { ins };
            if ports.len() <= port {
                ports.resize(port + 1, Vec::new());
            }
            ports[port] = dtypes;
        }
        for versions in t.values_mut() {
            versions.sort_by_key(|(v, _, _)| *v);
        }
        t
    })
}

/// The dtypes the ONNX schema of `op` active at `opset` allows on a port (the last port of a
/// variadic list stands for the rest), if the table knows.
pub(super) fn schema_port_types(
    op: &str,
    out: bool,
    slot: usize,
    opset: i64,
) -> Option<&'static [DType]> {
    let versions = type_table().get(op)?;
    let (_, ins, outs) = versions.iter().rev().find(|(v, _, _)| *v <= opset)?;
    let ports = if out { outs } else { ins };
    let p = ports.get(slot).or_else(|| ports.last())?;
    (!p.is_empty()).then_some(p.as_slice())
}
