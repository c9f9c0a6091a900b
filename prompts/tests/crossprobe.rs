//! CrossProbe: the alignment database, snippet parsing, screening, the distinction prompt,
//! reading answers, and one transfer against the stub server.
use mutagraph_ir::registry::Registry;
use mutagraph_prompts::crossprobe::{
    self, AlignmentDb, SupportFn, SupportTable, extract_onnx_text, preserves_functionality, screen,
};
use mutagraph_prompts::llm::stub::{StubReply, StubServer};
use mutagraph_prompts::llm::{ChatRequest, HttpLlm, Llm, LlmConfig, Provider};
use std::path::{Path, PathBuf};

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(rel)
}

fn db() -> AlignmentDb {
    AlignmentDb::builtin().unwrap()
}

#[test]
fn database_size_and_every_op_is_known() {
    let db = db();
    assert!(db.pairs().len() >= 300, "{} pairs", db.pairs().len());
    let pt = db
        .pairs()
        .iter()
        .filter(|p| p.framework == "pytorch")
        .count();
    let tf = db
        .pairs()
        .iter()
        .filter(|p| p.framework == "tensorflow")
        .count();
    assert!(pt >= 150 && tf >= 100, "pytorch {pt}, tensorflow {tf}");
    let ops = db.ops();
    assert!(ops.len() >= 110, "{} ops", ops.len());
    let reg = Registry::global();
    let unknown: Vec<&String> = ops.iter().filter(|o| reg.get("", o).is_none()).collect();
    // Attention (opset 23) is the one op newer than our registry.
    assert!(
        unknown.iter().all(|o| *o == "Attention"),
        "ops unknown to the registry: {unknown:?}"
    );
    for p in db.pairs() {
        assert!(!p.provenance.is_empty(), "{} has no provenance", p.api);
        assert!(p.provenance.contains(&p.api), "{}: {}", p.api, p.provenance);
    }
}

#[test]
fn lookup_follows_aliases() {
    let db = db();
    for api in [
        "torch.nn.functional.relu",
        "torch.relu",
        "torch.Tensor.relu",
        "torch.nn.ReLU",
    ] {
        assert_eq!(
            db.lookup(api).map(|p| p.onnx.as_str()),
            Some("Relu"),
            "{api}"
        );
    }
    assert_eq!(db.lookup("torch.Tensor.sum").unwrap().onnx, "ReduceSum");
    assert_eq!(db.lookup("torch.Tensor.add_").unwrap().onnx, "Add");
    assert_eq!(db.lookup("tf.reduce_sum").unwrap().onnx, "ReduceSum");
    assert_eq!(db.lookup("tensorflow.nn.relu").unwrap().onnx, "Relu");
    assert_eq!(db.lookup("keras.layers.Conv2D").unwrap().onnx, "Conv");
    assert_eq!(db.lookup("tf.compat.v1.math.exp").unwrap().onnx, "Exp");
    assert!(db.lookup("torch.nn.functional.no_such_thing").is_none());
    assert!(db.lookup("tf.math.lgamma").is_none(), "no ONNX counterpart");
}

#[test]
fn parses_calls_with_import_aliases() {
    let s = crossprobe::parse(
        "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\
         from torch.nn import Conv2d as C\n\n\
         x = torch.randn(1, 3, 8, 8)  # input\n\
         conv = C(3, 4, kernel_size=3)\n\
         y = F.relu(conv(x)).sum(dim=(2,\n 3))\n\
         z = nn.Softmax(dim=1)(y)\n\
         print(\"F.gelu(x) in a string\")\n",
    );
    assert_eq!(s.framework, "pytorch");
    let apis: Vec<(&str, usize)> = s.calls.iter().map(|c| (c.api.as_str(), c.line)).collect();
    assert_eq!(
        apis,
        vec![
            ("torch.randn", 6),
            ("torch.nn.Conv2d", 7),
            ("torch.nn.functional.relu", 8),
            ("conv", 8),
            ("torch.Tensor.sum", 8),
            ("torch.nn.Softmax", 10),
        ],
        "{:#?}",
        s.calls
    );
    assert_eq!(s.calls[1].args, "3, 4, kernel_size=3");
    assert!(s.calls[4].method);
    assert_eq!(s.calls[4].args, "dim=(2, 3)");

    let t = crossprobe::parse(
        "import tensorflow as tf\nfrom tensorflow.keras import layers\nimport keras\n\
         a = layers.Dense(3)(tf.constant([[1.0]]))\nb = keras.layers.ReLU()(a)\n",
    );
    assert_eq!(t.framework, "tensorflow");
    let apis: Vec<&str> = t.calls.iter().map(|c| c.api.as_str()).collect();
    assert_eq!(
        apis,
        vec![
            "tf.keras.layers.Dense",
            "tf.constant",
            "tf.keras.layers.ReLU"
        ]
    );
}

#[test]
fn markdown_issues_and_bad_files() {
    let s = crossprobe::load(&data("snippets/issue-29-cumsum-reverse.md")).unwrap();
    assert_eq!(s.framework, "pytorch");
    assert!(s.calls.iter().any(|c| c.api == "torch.cumsum"));
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("no-code.md");
    std::fs::write(&md, "# A bug\n\nNo code here.\n").unwrap();
    let e = crossprobe::load(&md).unwrap_err().to_string();
    assert!(e.contains("no-code.md") && e.contains("python"), "{e}");
    let e = crossprobe::load(Path::new("/nonexistent/x.py"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("/nonexistent/x.py"), "{e}");
}

#[test]
fn screening_keeps_drops_with_reasons() {
    let db = db();
    let table = SupportTable::builtin().unwrap();
    assert!(table.len() >= 150);
    let s = crossprobe::load(&data("snippets/28-tf-unsupported.py")).unwrap();
    let sc = screen(&s, &db, &table);
    assert!(!sc.transferable);
    assert!(sc.kept.is_empty());
    let reasons: Vec<(&str, &str)> = sc
        .dropped
        .iter()
        .map(|(c, r)| (c.api.as_str(), r.as_str()))
        .collect();
    assert!(
        reasons.contains(&("tf.raw_ops.Igamma", "no aligned ONNX op")),
        "{reasons:?}"
    );
    assert!(sc.other.iter().any(|c| c.api == "tf.constant"));

    let s = crossprobe::load(&data("snippets/03-conv-padding.py")).unwrap();
    let sc = screen(&s, &db, &table);
    assert!(sc.transferable);
    assert_eq!(sc.ops(), vec!["Conv".to_string()]);
    assert!(sc.other.iter().any(|c| c.api == "torch.randn"));

    // A support source without Conv drops the call, saying why.
    let no_conv = SupportFn(|op: &str| {
        if op == "Conv" {
            vec![]
        } else {
            vec!["ort".to_string()]
        }
    });
    let sc = screen(&s, &db, &no_conv);
    assert!(!sc.transferable);
    assert!(
        sc.dropped[0].1.contains("no backend under test runs it"),
        "{:?}",
        sc.dropped
    );
}

#[test]
fn shipped_snippets_parse_and_most_transfer() {
    let db = db();
    let table = SupportTable::builtin().unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(data("snippets"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 25, "{} snippets", files.len());
    let mut transferable = 0;
    let mut ops = std::collections::BTreeSet::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(
            text.contains("source:") || text.contains("tracker"),
            "{}: no provenance line",
            f.display()
        );
        let s = crossprobe::load(f).unwrap();
        let sc = screen(&s, &db, &table);
        if sc.transferable {
            transferable += 1;
            ops.extend(sc.ops());
        }
    }
    assert!(transferable >= 20, "{transferable} transferable");
    assert!(ops.len() >= 20, "{} distinct ops: {ops:?}", ops.len());
}

fn golden(name: &str, text: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, text).unwrap();
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    assert_eq!(text, want, "{} differs (UPDATE_GOLDEN=1)", path.display());
}

#[test]
fn distinction_spells_out_the_differences() {
    let db = db();
    let table = SupportTable::builtin().unwrap();
    let s = crossprobe::load(&data("snippets/23-keras-conv-nhwc.py")).unwrap();
    let sc = screen(&s, &db, &table);
    let msgs = crossprobe::transfer_prompt(&s, &sc, &db).unwrap();
    let user = &msgs[1].content;
    assert!(user.contains("Step 1: `tf.keras.layers.Conv2D` becomes ONNX `Conv`"));
    assert!(user.contains("kernel_size->kernel_shape"));
    assert!(user.contains("channels_last"), "layout difference");
    assert!(user.contains("filters=4, kernel_size=3, strides=2, padding=\"same\""));
    assert!(msgs[0].content.contains("opset_import: [\"\" : 17]"));
    golden(
        "crossprobe-keras-conv.txt",
        &format!("{}\n-----\n{user}\n", msgs[0].content),
    );

    let s = crossprobe::load(&data("snippets/05-avgpool-count-pad.py")).unwrap();
    let sc = screen(&s, &db, &table);
    let d = crossprobe::distinction(&sc);
    assert!(
        d.contains("count_include_pad defaults to True in torch, 0 in ONNX"),
        "{d}"
    );
    assert!(
        d.contains("Not expressible in ONNX: divisor_override"),
        "{d}"
    );
    golden("crossprobe-avgpool-distinction.txt", &d);

    let r = crossprobe::repair_prompt("Y = Conv(X", "3:7: expected ')'", 2).unwrap();
    assert!(r[1].content.contains("3:7: expected ')'"));
    assert!(r[1].content.contains("attempt 2"));
}

const GRAPH: &str = "<ir_version: 8, opset_import: [\"\" : 17]>\nagraph (float[1,3] X) => (float[1,3] Y) {\n  Y = Softmax <axis = -1> (X)\n}";

#[test]
fn extracts_onnx_text_from_answers() {
    let fenced = format!("Here it is:\n```onnx\n{GRAPH}\n```\nDone.");
    assert_eq!(extract_onnx_text(&fenced).as_deref(), Some(GRAPH));
    let python_first = format!("```python\nprint(1)\n```\n```\n{GRAPH}\n```");
    assert_eq!(extract_onnx_text(&python_first).as_deref(), Some(GRAPH));
    let bare = format!("Sure. {GRAPH}\nThat is all.");
    assert_eq!(extract_onnx_text(&bare).as_deref(), Some(GRAPH));
    let sig_only = "agraph (float[2] X) => (float[2] Y) {\n Y = Relu(X)\n}";
    assert_eq!(
        extract_onnx_text(&format!("text\n{sig_only}")).as_deref(),
        Some(sig_only)
    );
    assert_eq!(extract_onnx_text("I cannot help with that."), None);
    let unclosed = format!("```onnx\n{GRAPH}");
    assert_eq!(extract_onnx_text(&unclosed).as_deref(), Some(GRAPH));
    // A block labelled onnx is the answer even when it is no graph: the parser's error (line
    // and column) then reaches the repair prompt, not "no graph found".
    let not_a_graph = "```onnx\nGraph:\n  nodes: 3\n```";
    assert_eq!(
        extract_onnx_text(not_a_graph).as_deref(),
        Some("Graph:\n  nodes: 3")
    );
    let err = mutagraph_ir::text::parse_model("Graph:\n  nodes: 3").unwrap_err();
    assert!(err.to_string().contains("1:"), "{err}");
}

#[test]
fn functionality_preservation() {
    let db = db();
    let table = SupportTable::builtin().unwrap();
    let s = crossprobe::load(&data("snippets/01-softmax-large.py")).unwrap();
    let sc = screen(&s, &db, &table);
    let ops = |text: &str| -> Vec<String> {
        match mutagraph_ir::text::parse_model(text) {
            Ok(m) => m.graph.nodes().map(|n| n.op_type.clone()).collect(),
            Err(_) => Vec::new(),
        }
    };
    assert!(preserves_functionality(&sc, true, &ops(GRAPH)));
    // The aligned op alone is not enough: the output must be valid.
    assert!(!preserves_functionality(&sc, false, &ops(GRAPH)));
    let relu = GRAPH.replace("Softmax <axis = -1>", "Relu");
    assert!(!preserves_functionality(&sc, true, &ops(&relu)));
    assert!(!preserves_functionality(&sc, true, &ops("not a graph")));
}

#[test]
fn transfer_against_the_stub_server() {
    let server = StubServer::start(vec![StubReply::Answer(format!(
        "Step 1: softmax becomes Softmax.\n```onnx\n{GRAPH}\n```"
    ))])
    .unwrap();
    let config = LlmConfig {
        provider: Provider::Http,
        base_url: server.base_url(),
        model: "test-model".into(),
        timeout_secs: 5.0,
        retries: 0,
        ..LlmConfig::default()
    };
    let llm = HttpLlm::new(&config, None).unwrap();
    let db = db();
    let s = crossprobe::load(&data("snippets/01-softmax-large.py")).unwrap();
    let sc = screen(&s, &db, &SupportTable::builtin().unwrap());
    let answer = llm
        .chat(&ChatRequest::new(
            crossprobe::transfer_prompt(&s, &sc, &db).unwrap(),
        ))
        .unwrap();
    let text = extract_onnx_text(&answer.content).unwrap();
    let model = mutagraph_ir::text::parse_model(&text).unwrap();
    assert_eq!(model.graph.nodes().next().unwrap().op_type, "Softmax");
    let ops: Vec<String> = model.graph.nodes().map(|n| n.op_type.clone()).collect();
    assert!(mutagraph_ir::validate::validate_declared(&model).is_ok());
    assert!(preserves_functionality(&sc, true, &ops));
    let body = &server.requests()[0].body;
    assert!(body.contains("`torch.nn.functional.softmax` becomes ONNX `Softmax`"));
    assert!(body.contains("dim->axis"));
}
