//! The graph: ops as nodes of a petgraph `StableDiGraph`, values on the edges.
use crate::attr::{AttrLookup, AttrValue, Attribute};
use crate::error::{Error, Result};
use crate::pb;
use crate::tensor::Tensor;
use crate::types::ValueType;
use indexmap::IndexMap;
use petgraph::stable_graph::{NodeIndex, StableDiGraph};
use petgraph::visit::{EdgeRef, IntoEdgeReferences};
use std::collections::{BTreeSet, BinaryHeap, HashMap, HashSet};
use std::fmt;

/// A stable node id: unique within its graph for the graph's whole life, never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct NodeId(pub u32);

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "n{}", self.0)
    }
}

/// An op.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Stable id (assigned by the graph; ignored when comparing graphs).
    pub id: NodeId,
    /// Node name as written in the file.
    pub name: Option<String>,
    /// Operator type (`Conv`, `Relu`, ...).
    pub op_type: String,
    /// Operator domain as written (`None` or `""` or `ai.onnx` for the default domain).
    pub domain: Option<String>,
    /// Function overload.
    pub overload: Option<String>,
    /// Input value names; `""` marks an absent optional input.
    pub inputs: Vec<String>,
    /// Output value names; `""` marks an absent optional output.
    pub outputs: Vec<String>,
    /// Attributes in file order.
    pub attributes: Vec<Attribute>,
    /// Documentation.
    pub doc_string: Option<String>,
    /// Metadata, kept verbatim.
    pub metadata_props: Vec<pb::StringStringEntryProto>,
    /// Device configurations, kept verbatim.
    pub device_configurations: Vec<pb::NodeDeviceConfigurationProto>,
}

impl Node {
    /// A new node of the default domain (its id is assigned when it is added to a graph).
    pub fn new(op_type: &str, inputs: &[&str], outputs: &[&str]) -> Node {
        Node {
            id: NodeId(u32::MAX),
            name: None,
            op_type: op_type.to_string(),
            domain: None,
            overload: None,
            inputs: inputs.iter().map(|s| s.to_string()).collect(),
            outputs: outputs.iter().map(|s| s.to_string()).collect(),
            attributes: Vec::new(),
            doc_string: None,
            metadata_props: Vec::new(),
            device_configurations: Vec::new(),
        }
    }

    /// Adds an attribute (builder style).
    pub fn with_attr(mut self, name: &str, value: AttrValue) -> Node {
        self.attributes.retain(|a| a.name != name);
        self.attributes.push(Attribute::new(name, value));
        self
    }

    /// The op key: the op type in the default domain, `domain::Op` outside it
    /// ([`crate::registry::op_key`]), as findings, coverage and capabilities name ops.
    pub fn key(&self) -> String {
        crate::registry::op_key(self.domain(), &self.op_type)
    }

    /// The domain with the default domain normalized to `""`.
    pub fn domain(&self) -> &str {
        match self.domain.as_deref() {
            None | Some("ai.onnx") => "",
            Some(d) => d,
        }
    }

    /// A printable label: the name if any, else op type and id.
    pub fn label(&self) -> String {
        match self.name.as_deref() {
            Some(n) if !n.is_empty() => format!("{} ({})", n, self.op_type),
            _ => format!("{}#{}", self.op_type, self.id.0),
        }
    }

    /// Present (non-empty) inputs.
    pub fn present_inputs(&self) -> impl Iterator<Item = &str> {
        self.inputs
            .iter()
            .map(String::as_str)
            .filter(|s| !s.is_empty())
    }

    /// Subgraphs held in attributes.
    pub fn subgraphs(&self) -> impl Iterator<Item = (&str, &Graph)> {
        self.subgraphs_at().map(|(_, _, name, g)| (name, g))
    }

    /// Subgraphs held in attributes, each with its attribute's position, its index within
    /// that attribute (0 for a `GRAPH`, the list index for `GRAPHS`) and the attribute's name:
    /// the key inference results of subgraphs are stored under.
    pub fn subgraphs_at(&self) -> impl Iterator<Item = (usize, usize, &str, &Graph)> {
        self.attributes.iter().enumerate().flat_map(|(pos, a)| {
            let v: Vec<&Graph> = match &a.value {
                AttrValue::Graph(g) => vec![g.as_ref()],
                AttrValue::Graphs(gs) => gs.iter().collect(),
                _ => vec![],
            };
            v.into_iter()
                .enumerate()
                .map(move |(idx, g)| (pos, idx, a.name.as_str(), g))
        })
    }
}

impl AttrLookup for Node {
    fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.attributes.attr(name)
    }
}

/// A value flowing from one op to another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    /// Name of the value.
    pub value: String,
    /// Output slot of the producer.
    pub src_slot: usize,
    /// Input slot of the consumer; `None` when a subgraph of the consumer captures the value.
    pub dst_slot: Option<usize>,
}

/// A graph (the main graph of a model, or a subgraph held by an attribute).
#[derive(Clone, Debug, Default)]
pub struct Graph {
    /// Graph name.
    pub name: Option<String>,
    /// Documentation.
    pub doc_string: Option<String>,
    pub(crate) dag: StableDiGraph<Node, Edge>,
    /// Where each node lives in `dag`, by id (ids are dense: `0..next_id`, never reused, so a
    /// vector indexed by id finds a node and lists them in id order without hashing or
    /// sorting).
    pub(crate) index: Vec<Option<NodeIndex>>,
    pub(crate) next_id: u32,
    /// Graph inputs, verbatim.
    pub inputs: Vec<pb::ValueInfoProto>,
    /// Graph outputs, verbatim.
    pub outputs: Vec<pb::ValueInfoProto>,
    /// Declared types of intermediate values, verbatim.
    pub value_info: Vec<pb::ValueInfoProto>,
    /// Initializers, stored once, by name, in file order.
    pub initializers: IndexMap<String, Tensor>,
    /// Sparse initializers, verbatim.
    pub sparse_initializers: Vec<pb::SparseTensorProto>,
    /// Quantization annotations, verbatim.
    pub quantization_annotation: Vec<pb::TensorAnnotation>,
    /// Metadata, verbatim.
    pub metadata_props: Vec<pb::StringStringEntryProto>,
    /// Types found by shape inference ([`crate::infer`]), by value name. Not exported.
    pub types: HashMap<String, ValueType>,
    /// Node outputs whose contents inference computed before any run ([`crate::infer`]): the
    /// shape computations of a graph with static shapes (`Shape → Gather → Concat → Reshape`),
    /// arithmetic on constants. Not exported.
    pub folded: std::collections::HashSet<String>,
}

impl PartialEq for Graph {
    fn eq(&self, other: &Graph) -> bool {
        fn strip(n: &Node) -> Node {
            Node {
                id: NodeId(0),
                ..n.clone()
            }
        }
        let (Ok(a), Ok(b)) = (self.topo_order(), other.topo_order()) else {
            return false;
        };
        self.name == other.name
            && self.doc_string == other.doc_string
            && a.len() == b.len()
            && a.iter()
                .zip(&b)
                .all(|(x, y)| strip(self.node(*x).unwrap()) == strip(other.node(*y).unwrap()))
            && self.inputs == other.inputs
            && self.outputs == other.outputs
            && self.value_info == other.value_info
            && self.initializers == other.initializers
            && self.sparse_initializers == other.sparse_initializers
            && self.quantization_annotation == other.quantization_annotation
            && self.metadata_props == other.metadata_props
    }
}

impl Graph {
    /// An empty graph.
    pub fn new(name: &str) -> Graph {
        Graph {
            name: Some(name.to_string()),
            ..Default::default()
        }
    }

    /// Number of ops.
    pub fn node_count(&self) -> usize {
        self.dag.node_count()
    }

    /// The underlying petgraph (read only).
    pub fn dag(&self) -> &StableDiGraph<Node, Edge> {
        &self.dag
    }

    /// Where the node with this id lives in `dag`.
    fn ix(&self, id: NodeId) -> Option<NodeIndex> {
        self.index.get(id.0 as usize).copied().flatten()
    }

    /// The node with this id.
    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.ix(id).map(|ix| &self.dag[ix])
    }

    /// Mutable access to a node's attributes and names. Changing inputs or outputs through this
    /// leaves the edges stale: use [`crate::patch::Patch`] for that.
    pub(crate) fn node_mut(&mut self, id: NodeId) -> Option<&mut Node> {
        let ix = self.ix(id)?;
        Some(&mut self.dag[ix])
    }

    /// All nodes, in id order.
    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.index.iter().flatten().map(move |&ix| &self.dag[ix])
    }

    /// Ids of all nodes, in id order.
    pub fn node_ids(&self) -> Vec<NodeId> {
        self.nodes().map(|n| n.id).collect()
    }

    /// Adds a node, assigning it a fresh id. Edges are not updated until [`Graph::rebuild_edges`].
    pub(crate) fn push_node(&mut self, mut node: Node) -> NodeId {
        let id = NodeId(self.next_id);
        self.next_id += 1;
        node.id = id;
        let ix = self.dag.add_node(node);
        let slot = id.0 as usize;
        if self.index.len() <= slot {
            self.index.resize(slot + 1, None);
        }
        self.index[slot] = Some(ix);
        id
    }

    /// Removes a node. Edges are not updated until [`Graph::rebuild_edges`].
    pub(crate) fn remove_node_raw(&mut self, id: NodeId) -> Option<Node> {
        let ix = self.index.get_mut(id.0 as usize)?.take()?;
        self.dag.remove_node(ix)
    }

    /// Replaces a node's content, keeping its id.
    pub(crate) fn replace_node_raw(&mut self, id: NodeId, mut node: Node) -> bool {
        match self.ix(id) {
            Some(ix) => {
                node.id = id;
                self.dag[ix] = node;
                true
            }
            None => false,
        }
    }

    /// Map from value name to (producer, output slot).
    pub fn producers(&self) -> HashMap<&str, (NodeId, usize)> {
        let mut m = HashMap::with_capacity(self.node_count());
        for n in self.nodes() {
            for (slot, o) in n.outputs.iter().enumerate() {
                if !o.is_empty() {
                    m.entry(o.as_str()).or_insert((n.id, slot));
                }
            }
        }
        m
    }

    /// The constants of this graph by value name: initializers and the outputs of `Constant`
    /// nodes holding a tensor (`value`).
    pub fn constants(&self) -> HashMap<&str, &Tensor> {
        let mut out: HashMap<&str, &Tensor> = self
            .initializers
            .iter()
            .map(|(k, t)| (k.as_str(), t))
            .collect();
        for n in self.nodes() {
            if n.op_type == "Constant"
                && let Some(a) = n.attributes.iter().find(|a| a.name == "value")
                && let AttrValue::Tensor(t) = &a.value
                && let Some(o) = n.outputs.first()
            {
                out.insert(o.as_str(), t);
            }
        }
        out
    }

    /// The node producing `value`, if an op produces it.
    pub fn producer(&self, value: &str) -> Option<NodeId> {
        self.nodes()
            .find(|n| n.outputs.iter().any(|o| o == value))
            .map(|n| n.id)
    }

    /// Ids of nodes that read `value` (directly, or through a subgraph).
    pub fn consumers(&self, value: &str) -> Vec<NodeId> {
        self.nodes()
            .filter(|n| {
                n.inputs.iter().any(|i| i == value)
                    || n.subgraphs()
                        .any(|(_, g)| g.captured_names().contains(value))
            })
            .map(|n| n.id)
            .collect()
    }

    /// Recomputes every edge from the nodes' input and output names.
    pub fn rebuild_edges(&mut self) {
        let new_edges = {
            let producers = self.producers();
            let mut new_edges = Vec::with_capacity(self.node_count());
            for n in self.nodes() {
                let Some(ib) = self.ix(n.id) else { continue };
                for (slot, i) in n.inputs.iter().enumerate() {
                    if let Some(&(p, ps)) = producers.get(i.as_str())
                        && let Some(ia) = self.ix(p)
                    {
                        new_edges.push((
                            ia,
                            ib,
                            Edge {
                                value: i.clone(),
                                src_slot: ps,
                                dst_slot: Some(slot),
                            },
                        ));
                    }
                }
                if n.subgraphs().next().is_none() {
                    continue;
                }
                let captured: BTreeSet<String> = n
                    .subgraphs()
                    .flat_map(|(_, g)| g.captured_names())
                    .collect();
                for c in captured {
                    if let Some(&(p, ps)) = producers.get(c.as_str())
                        && let Some(ia) = self.ix(p)
                    {
                        new_edges.push((
                            ia,
                            ib,
                            Edge {
                                value: c,
                                src_slot: ps,
                                dst_slot: None,
                            },
                        ));
                    }
                }
            }
            new_edges
        };
        self.dag.clear_edges();
        for (ia, ib, e) in new_edges {
            self.dag.add_edge(ia, ib, e);
        }
    }

    /// Names this graph reads but does not define (values captured from enclosing graphs).
    pub fn captured_names(&self) -> BTreeSet<String> {
        let mut defined: HashSet<&str> = HashSet::new();
        for v in &self.inputs {
            defined.insert(v.name.as_deref().unwrap_or(""));
        }
        for k in self.initializers.keys() {
            defined.insert(k);
        }
        for s in &self.sparse_initializers {
            if let Some(n) = s.values.as_ref().and_then(|v| v.name.as_deref()) {
                defined.insert(n);
            }
        }
        for n in self.nodes() {
            for o in &n.outputs {
                defined.insert(o);
            }
        }
        let mut out = BTreeSet::new();
        for n in self.nodes() {
            for i in n.present_inputs() {
                if !defined.contains(i) {
                    out.insert(i.to_string());
                }
            }
            for (_, g) in n.subgraphs() {
                for c in g.captured_names() {
                    if !defined.contains(c.as_str()) {
                        out.insert(c);
                    }
                }
            }
        }
        for o in &self.outputs {
            let name = o.name.as_deref().unwrap_or("");
            if !name.is_empty() && !defined.contains(name) {
                out.insert(name.to_string());
            }
        }
        out
    }

    /// A deterministic topological order (Kahn's algorithm, smallest id first among ready
    /// nodes, so a graph imported in topological order keeps its order).
    pub fn topo_order(&self) -> Result<Vec<NodeId>> {
        // In-degrees by petgraph index (a vector: no hashing per edge).
        let mut indeg: Vec<usize> = vec![0; petgraph::visit::NodeIndexable::node_bound(&self.dag)];
        for e in self.dag.edge_references() {
            if e.source() != e.target() {
                indeg[e.target().index()] += 1;
            }
        }
        let mut ready: BinaryHeap<std::cmp::Reverse<(NodeId, NodeIndex)>> = self
            .dag
            .node_indices()
            .filter(|ix| indeg[ix.index()] == 0)
            .map(|ix| std::cmp::Reverse((self.dag[ix].id, ix)))
            .collect();
        let mut order = Vec::with_capacity(self.dag.node_count());
        while let Some(std::cmp::Reverse((id, ix))) = ready.pop() {
            order.push(id);
            for e in self.dag.edges(ix) {
                if e.target() == ix {
                    continue;
                }
                let d = &mut indeg[e.target().index()];
                *d -= 1;
                if *d == 0 {
                    ready.push(std::cmp::Reverse((self.dag[e.target()].id, e.target())));
                }
            }
        }
        let self_loop = self
            .dag
            .edge_references()
            .find(|e| e.source() == e.target());
        if order.len() != self.dag.node_count() || self_loop.is_some() {
            let done: HashSet<NodeId> = order.iter().copied().collect();
            let stuck: Vec<String> = self
                .nodes()
                .filter(|n| {
                    !done.contains(&n.id)
                        || self_loop.is_some_and(|e| self.dag[e.source()].id == n.id)
                })
                .take(5)
                .map(|n| n.label())
                .collect();
            return Err(Error::Invalid(format!(
                "graph '{}' has a cycle through {}",
                self.name.as_deref().unwrap_or(""),
                stuck.join(", ")
            )));
        }
        Ok(order)
    }

    /// Names of the graph inputs that are not also initializers (the model's real inputs).
    pub fn real_inputs(&self) -> Vec<&pb::ValueInfoProto> {
        self.inputs
            .iter()
            .filter(|v| {
                !self
                    .initializers
                    .contains_key(v.name.as_deref().unwrap_or(""))
            })
            .collect()
    }

    /// The type of a value: inferred if known, else declared, else from an initializer.
    pub fn value_type(&self, name: &str) -> ValueType {
        if let Some(t) = self.types.get(name)
            && *t != ValueType::Unknown
        {
            return t.clone();
        }
        if let Some(t) = self.initializers.get(name) {
            use crate::tensor::TensorExt;
            return ValueType::Tensor(t.tensor_type());
        }
        self.declared_type(name).unwrap_or(ValueType::Unknown)
    }

    /// [`Graph::value_type`] for many values: the declarations are indexed once (asking the
    /// graph itself scans inputs, outputs and value_info for each value).
    pub fn type_view(&self) -> TypeView<'_> {
        let mut declared: HashMap<&str, &pb::ValueInfoProto> =
            HashMap::with_capacity(self.inputs.len() + self.outputs.len() + self.value_info.len());
        for v in self
            .inputs
            .iter()
            .chain(&self.outputs)
            .chain(&self.value_info)
        {
            declared.entry(v.name.as_deref().unwrap_or("")).or_insert(v);
        }
        TypeView { g: self, declared }
    }

    /// The symbolic sizes (`batch`, `seq_len`) that the declared types of inputs, outputs and
    /// value_info name.
    pub fn declared_symbols(&self) -> std::collections::BTreeSet<String> {
        self.inputs
            .iter()
            .chain(&self.outputs)
            .chain(&self.value_info)
            .filter_map(|v| match v.r#type.as_ref().map(ValueType::from_proto) {
                Some(ValueType::Tensor(t)) => t.shape,
                _ => None,
            })
            .flatten()
            .filter_map(|d| match d {
                crate::types::Dim::Param(p) => Some(p),
                _ => None,
            })
            .collect()
    }

    /// The type declared for a value in inputs, outputs or value_info.
    pub fn declared_type(&self, name: &str) -> Option<ValueType> {
        self.inputs
            .iter()
            .chain(&self.outputs)
            .chain(&self.value_info)
            .find(|v| v.name.as_deref() == Some(name))
            .and_then(|v| v.r#type.as_ref())
            .map(ValueType::from_proto)
    }

    /// Names of every value defined in this graph (inputs, initializers, node outputs).
    pub fn defined_values(&self) -> Vec<String> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        let mut push = |s: &str| {
            if !s.is_empty() && seen.insert(s.to_string()) {
                out.push(s.to_string());
            }
        };
        for v in &self.inputs {
            push(v.name.as_deref().unwrap_or(""));
        }
        for k in self.initializers.keys() {
            push(k);
        }
        if let Ok(order) = self.topo_order() {
            for id in order {
                for o in &self.node(id).unwrap().outputs {
                    push(o);
                }
            }
        }
        out
    }
}

/// A graph with its declared types indexed by name ([`Graph::type_view`]).
pub struct TypeView<'a> {
    g: &'a Graph,
    declared: HashMap<&'a str, &'a pb::ValueInfoProto>,
}

impl TypeView<'_> {
    /// [`Graph::value_type`].
    pub fn value_type(&self, name: &str) -> ValueType {
        self.value_type_ref(name).into_owned()
    }

    /// [`Graph::value_type`], borrowed where the graph holds it.
    pub fn value_type_ref(&self, name: &str) -> std::borrow::Cow<'_, ValueType> {
        use std::borrow::Cow;
        if let Some(t) = self.g.types.get(name)
            && *t != ValueType::Unknown
        {
            return Cow::Borrowed(t);
        }
        if let Some(t) = self.g.initializers.get(name) {
            use crate::tensor::TensorExt;
            return Cow::Owned(ValueType::Tensor(t.tensor_type()));
        }
        Cow::Owned(self.declared_type(name).unwrap_or(ValueType::Unknown))
    }

    /// [`Graph::declared_type`].
    pub fn declared_type(&self, name: &str) -> Option<ValueType> {
        self.declared
            .get(name)
            .and_then(|v| v.r#type.as_ref())
            .map(ValueType::from_proto)
    }
}
