//! The printer: IR (through its protobuf export, reduced by [`super::normalize`]'s rules) to
//! text.
use super::tensor::{self, Data};
use super::{dtype_name, is_ident, is_type_keyword};
use crate::attr::AttrKind;
use crate::graph::Graph;
use crate::model::Model;
use crate::pb;
use std::fmt::Write;

const INDENT: usize = 3;

/// Prints a model in the textual syntax (header, main graph, functions). What the text cannot
/// carry is left out (see the [module documentation](super)).
pub fn print_model(m: &Model) -> String {
    let mut p = crate::export::model_to_proto(m);
    tensor::normalize_model(&mut p);
    let mut out = String::new();
    let mut entries = Vec::new();
    if let Some(v) = p.ir_version {
        entries.push(format!("ir_version: {v}"));
    }
    if !p.opset_import.is_empty() {
        entries.push(format!("opset_import: {}", opsets(&p.opset_import)));
    }
    for (key, v) in [
        ("producer_name", &p.producer_name),
        ("producer_version", &p.producer_version),
        ("domain", &p.domain),
    ] {
        if let Some(v) = v {
            entries.push(format!("{key}: {}", quote(v)));
        }
    }
    if let Some(v) = p.model_version {
        entries.push(format!("model_version: {v}"));
    }
    if let Some(v) = &p.doc_string {
        entries.push(format!("doc_string: {}", quote(v)));
    }
    if !p.metadata_props.is_empty() {
        let kv: Vec<String> = p.metadata_props.iter().map(entry).collect();
        entries.push(format!("metadata_props: [{}]", kv.join(", ")));
    }
    header(&mut out, &entries);
    if let Some(g) = &p.graph {
        graph(&mut out, g, 0);
    }
    out.push('\n');
    for f in &p.functions {
        out.push('\n');
        function(&mut out, f);
    }
    out
}

/// Prints a graph alone (`name (inputs) => (outputs) <...> { nodes }`).
pub fn print_graph(g: &Graph) -> String {
    let mut p = crate::export::graph_to_proto(g);
    tensor::normalize_graph(&mut p);
    let mut out = String::new();
    graph(&mut out, &p, 0);
    out.push('\n');
    out
}

/// Prints a model-local function (header, signature, body).
pub fn print_function(f: &pb::FunctionProto) -> String {
    let mut f = f.clone();
    tensor::normalize_function(&mut f);
    let mut out = String::new();
    function(&mut out, &f);
    out
}

fn header(out: &mut String, entries: &[String]) {
    if entries.is_empty() {
        return;
    }
    out.push_str("<\n");
    for (i, e) in entries.iter().enumerate() {
        let sep = if i + 1 < entries.len() { "," } else { "" };
        let _ = writeln!(out, "{:INDENT$}{e}{sep}", "");
    }
    out.push_str(">\n");
}

fn opsets(v: &[pb::OperatorSetIdProto]) -> String {
    let items: Vec<String> = v
        .iter()
        .map(|o| {
            format!(
                "{} : {}",
                quote(o.domain.as_deref().unwrap_or("")),
                o.version.unwrap_or(0)
            )
        })
        .collect();
    format!("[{}]", items.join(", "))
}

fn entry(e: &pb::StringStringEntryProto) -> String {
    format!(
        "{}: {}",
        quote(e.key.as_deref().unwrap_or("")),
        quote(e.value.as_deref().unwrap_or(""))
    )
}

fn function(out: &mut String, f: &pb::FunctionProto) {
    let mut entries = Vec::new();
    if let Some(d) = &f.domain {
        entries.push(format!("domain: {}", quote(d)));
    }
    if let Some(o) = &f.overload {
        entries.push(format!("overload: {}", quote(o)));
    }
    if !f.opset_import.is_empty() {
        entries.push(format!("opset_import: {}", opsets(&f.opset_import)));
    }
    if let Some(d) = &f.doc_string {
        entries.push(format!("doc_string: {}", quote(d)));
    }
    header(out, &entries);
    out.push_str(&name(f.name.as_deref().unwrap_or("")));
    let mut attrs: Vec<String> = f.attribute.iter().map(|a| name(a)).collect();
    for a in &f.attribute_proto {
        attrs.push(attribute(a, 0));
    }
    if !attrs.is_empty() {
        let _ = write!(out, " <{}>", attrs.join(", "));
    }
    let names = |v: &[String]| v.iter().map(|s| name(s)).collect::<Vec<_>>().join(", ");
    let _ = write!(out, " ({}) => ({})", names(&f.input), names(&f.output));
    if !f.value_info.is_empty() {
        let vis: Vec<String> = f.value_info.iter().map(value_info).collect();
        let _ = write!(out, "\n{:INDENT$}<{}>\n{{\n", "", vis.join(", "));
    } else {
        out.push_str(" {\n");
    }
    for n in &f.node {
        node(out, n, INDENT);
    }
    out.push_str("}\n");
}

/// Writes a graph whose first line is already indented; nodes go `indent + INDENT` deep.
fn graph(out: &mut String, g: &pb::GraphProto, indent: usize) {
    let ins: Vec<String> = g.input.iter().map(value_info).collect();
    let outs: Vec<String> = g.output.iter().map(value_info).collect();
    let _ = write!(
        out,
        "{} ({}) => ({})",
        name(g.name.as_deref().unwrap_or("")),
        ins.join(", "),
        outs.join(", ")
    );
    let mut extra: Vec<String> = g.initializer.iter().map(initializer).collect();
    extra.extend(g.value_info.iter().map(value_info));
    if extra.is_empty() {
        out.push_str(" {\n");
    } else {
        let _ = write!(
            out,
            "\n{:w$}<{}>\n{:indent$}{{\n",
            "",
            extra.join(", "),
            "",
            w = indent + INDENT
        );
    }
    for n in &g.node {
        node(out, n, indent + INDENT);
    }
    let _ = write!(out, "{:indent$}}}", "");
}

fn node(out: &mut String, n: &pb::NodeProto, indent: usize) {
    let _ = write!(out, "{:indent$}", "");
    if let Some(label) = &n.name {
        let _ = write!(out, "[{}] ", name(label));
    }
    let outs: Vec<String> = n.output.iter().map(|s| name(s)).collect();
    if !outs.is_empty() {
        out.push_str(&outs.join(", "));
        out.push(' ');
    }
    out.push_str("= ");
    if let Some(d) = n.domain.as_deref().filter(|d| !d.is_empty()) {
        out.push_str(&qualified_or_quoted(d));
        out.push('.');
    }
    out.push_str(&name_or_quoted(n.op_type.as_deref().unwrap_or("")));
    let ins: Vec<String> = n.input.iter().map(|s| name(s)).collect();
    let ins = format!(" ({})", ins.join(", "));
    let attrs = if n.attribute.is_empty() {
        String::new()
    } else {
        let a: Vec<String> = n.attribute.iter().map(|a| attribute(a, indent)).collect();
        format!(" <{}>", a.join(", "))
    };
    // Graph-valued attributes are long: the inputs go first so that they stay in view.
    if n.attribute
        .iter()
        .any(|a| a.g.is_some() || !a.graphs.is_empty())
    {
        out.push_str(&ins);
        out.push_str(&attrs);
    } else {
        out.push_str(&attrs);
        out.push_str(&ins);
    }
    out.push('\n');
}

fn attribute(a: &pb::AttributeProto, indent: usize) -> String {
    let mut s = name_or_quoted(a.name.as_deref().unwrap_or(""));
    let kind = a.r#type.and_then(AttrKind::from_code);
    if let Some(k) = kind {
        let _ = write!(s, ": {}", k.name());
    }
    s.push_str(" = ");
    if let Some(r) = &a.ref_attr_name {
        s.push('@');
        s.push_str(&name_or_quoted(r));
        return s;
    }
    let list = |items: Vec<String>| format!("[{}]", items.join(", "));
    let value = match kind {
        Some(AttrKind::Float) => fmt_f32(a.f.unwrap_or_default(), true),
        Some(AttrKind::Int) => a.i.unwrap_or_default().to_string(),
        Some(AttrKind::String) => quote_bytes(a.s.as_deref().unwrap_or_default()),
        Some(AttrKind::Tensor) => a.t.as_ref().map(tensor_constant).unwrap_or_default(),
        Some(AttrKind::Graph) => {
            let mut g = String::new();
            graph(&mut g, a.g.as_ref().unwrap_or(&Default::default()), indent);
            g
        }
        Some(AttrKind::TypeProto) => a.tp.as_ref().map(type_str).unwrap_or_default(),
        Some(AttrKind::Floats) => list(a.floats.iter().map(|v| fmt_f32(*v, true)).collect()),
        Some(AttrKind::Ints) => list(a.ints.iter().map(|v| v.to_string()).collect()),
        Some(AttrKind::Strings) => list(a.strings.iter().map(|v| quote_bytes(v)).collect()),
        Some(AttrKind::Tensors) => list(a.tensors.iter().map(tensor_constant).collect()),
        Some(AttrKind::Graphs) => list(
            a.graphs
                .iter()
                .map(|g| {
                    let mut s = String::new();
                    graph(&mut s, g, indent);
                    s
                })
                .collect(),
        ),
        Some(AttrKind::TypeProtos) => list(a.type_protos.iter().map(type_str).collect()),
        // Normalization removed the kinds the text cannot write.
        _ => String::new(),
    };
    s.push_str(&value);
    s
}

/// `float[2, 3] name {1.0, 2.0, ...}` (attribute values).
fn tensor_constant(t: &pb::TensorProto) -> String {
    let mut s = tensor_type(t);
    if let Some(n) = t.name.as_deref().filter(|n| !n.is_empty()) {
        s.push(' ');
        s.push_str(&name_or_quoted(n));
    }
    s.push(' ');
    s.push_str(&tensor_values(t));
    s
}

/// `float[2] w = {1.0, 2.0}` or `float[2] w = ["location": "w.bin"]` (initializers).
fn initializer(t: &pb::TensorProto) -> String {
    let data = if t.data_location == Some(1) {
        let kv: Vec<String> = t.external_data.iter().map(entry).collect();
        format!("[{}]", kv.join(", "))
    } else {
        tensor_values(t)
    };
    format!(
        "{} {} = {data}",
        tensor_type(t),
        name(t.name.as_deref().unwrap_or(""))
    )
}

fn tensor_type(t: &pb::TensorProto) -> String {
    let mut s = dtype_name(t.data_type.unwrap_or(0))
        .unwrap_or("undefined")
        .to_string();
    if !t.dims.is_empty() {
        let dims: Vec<String> = t.dims.iter().map(|d| d.to_string()).collect();
        let _ = write!(s, "[{}]", dims.join(", "));
    }
    s
}

fn tensor_values(t: &pb::TensorProto) -> String {
    let items: Vec<String> = match tensor::data_of(t) {
        Some(Data::F32(v)) => v.iter().map(|x| fmt_f32(*x, false)).collect(),
        Some(Data::F64(v)) => v.iter().map(|x| fmt_f64(*x)).collect(),
        Some(Data::I32(v)) => v.iter().map(|x| x.to_string()).collect(),
        Some(Data::I64(v)) => v.iter().map(|x| x.to_string()).collect(),
        Some(Data::U64(v)) => v.iter().map(|x| x.to_string()).collect(),
        Some(Data::Str(v)) => v.iter().map(|x| quote_bytes(x)).collect(),
        None => Vec::new(),
    };
    format!("{{{}}}", items.join(", "))
}

fn value_info(v: &pb::ValueInfoProto) -> String {
    let n = name(v.name.as_deref().unwrap_or(""));
    match &v.r#type {
        Some(t) => format!("{} {n}", type_str(t)),
        None => n,
    }
}

/// A type as the text format writes it (`float[1, 4, 8, 8]`, `seq(int64[N])`).
pub fn print_type(t: &crate::types::ValueType) -> String {
    type_str(&t.to_proto())
}

fn type_str(t: &pb::TypeProto) -> String {
    use pb::type_proto::Value;
    match &t.value {
        Some(Value::TensorType(x)) => tensor_type_str(x.elem_type, x.shape.as_ref()),
        Some(Value::SparseTensorType(x)) => format!(
            "sparse_tensor({})",
            tensor_type_str(x.elem_type, x.shape.as_ref())
        ),
        Some(Value::SequenceType(s)) => format!(
            "seq({})",
            s.elem_type.as_deref().map(type_str).unwrap_or_default()
        ),
        Some(Value::OptionalType(s)) => format!(
            "optional({})",
            s.elem_type.as_deref().map(type_str).unwrap_or_default()
        ),
        Some(Value::MapType(m)) => format!(
            "map({}, {})",
            dtype_name(m.key_type.unwrap_or(0)).unwrap_or("undefined"),
            m.value_type.as_deref().map(type_str).unwrap_or_default()
        ),
        Some(Value::OpaqueType(o)) => {
            let n = name_or_quoted(o.name.as_deref().unwrap_or(""));
            match (&o.domain, &o.name) {
                (Some(d), _) => format!("opaque({}, {n})", qualified_or_quoted(d)),
                (None, Some(_)) => format!("opaque({n})"),
                (None, None) => "opaque()".into(),
            }
        }
        None => String::new(),
    }
}

fn tensor_type_str(elem: Option<i32>, shape: Option<&pb::TensorShapeProto>) -> String {
    use pb::tensor_shape_proto::dimension::Value;
    let mut s = dtype_name(elem.unwrap_or(0))
        .unwrap_or("undefined")
        .to_string();
    match shape {
        None => s.push_str("[]"),
        Some(sh) if sh.dim.is_empty() => {}
        Some(sh) => {
            let dims: Vec<String> = sh
                .dim
                .iter()
                .map(|d| match &d.value {
                    Some(Value::DimValue(v)) => v.to_string(),
                    Some(Value::DimParam(p)) => name_or_quoted(p),
                    None => "?".into(),
                })
                .collect();
            let _ = write!(s, "[{}]", dims.join(", "));
        }
    }
    s
}

/// A value name: bare when it is an identifier that is not a type keyword, else quoted.
fn name(s: &str) -> String {
    if is_ident(s) && !is_type_keyword(s) {
        s.to_string()
    } else {
        quote(s)
    }
}

/// A name in a place where keywords are not ambiguous: bare when it is an identifier.
fn name_or_quoted(s: &str) -> String {
    if is_ident(s) { s.to_string() } else { quote(s) }
}

fn qualified_or_quoted(s: &str) -> String {
    if !s.is_empty() && s.split('.').all(is_ident) {
        s.to_string()
    } else {
        quote(s)
    }
}

/// A quoted string: `"` and `\` are escaped with a backslash, everything else is literal.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

fn quote_bytes(b: &[u8]) -> String {
    quote(&String::from_utf8_lossy(b))
}

/// A float that reads back to the same value. `point`: integral values keep their `.0` so
/// that the literal reads as a float where the kind is not declared.
fn fmt_f32(v: f32, point: bool) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    let s = format!("{v:?}");
    match s.strip_suffix(".0") {
        Some(short) if !point && s != "-0.0" => short.to_string(),
        _ => s,
    }
}

fn fmt_f64(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    format!("{v:?}")
}
