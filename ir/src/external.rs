//! Tensors whose bytes live outside the model file (`data_location = EXTERNAL`, with
//! `external_data` entries `location`, `offset`, `length`, `checksum`), as every model over
//! protobuf's 2 GiB limit stores its weights.
//!
//! Loading a model from its file ([`load`], [`crate::Model::load`]) reads every such tensor's
//! bytes into the tensor (`raw_data`), so the model in memory, and every byte string exported
//! from it, is self-contained: backends receive one buffer and never look for side files.
//! A location must name a file inside the model's directory: absolute paths, `..` that leads
//! out of it and symbolic links that resolve outside it are refused, as are missing files,
//! ranges past the end of the file and byte counts that do not fit the tensor's type and dims.
//! `checksum` is not verified.
//!
//! [`save`] writes a model back with chosen tensors in one data file beside it
//! ([`data_file_for`]: `<file name>.data`).
use crate::attr::AttrValue;
use crate::error::{Error, Result};
use crate::graph::Graph;
use crate::model::{Model, write_atomic};
use crate::pb;
use crate::tensor::TensorExt;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};

/// Where a tensor sits in a model, in the order [`resolve`] and [`split`] walk tensors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// Position in the walk: initializers, sparse initializers and node attributes of the main
    /// graph (nodes in id order, subgraphs where their attribute is), then model-local
    /// functions, then training info. Stable for one model as long as it is not edited.
    pub ordinal: usize,
    /// What holds the tensor (`initializer`, `node c (Constant) attribute 'value'`, with the
    /// path of the subgraph or function around it).
    pub holder: String,
    /// True for an initializer of a graph (the only external tensors the text syntax writes).
    pub initializer: bool,
}

/// One tensor read from a side file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExternalRef {
    /// Where the tensor sits.
    pub place: Place,
    /// The tensor's name (may be empty for attribute tensors).
    pub tensor: String,
    /// The `location` entry, as the file wrote it.
    pub location: String,
    /// Byte offset in that file.
    pub offset: u64,
    /// Bytes read.
    pub length: u64,
}

/// Why an external tensor's data cannot be used ([`Error::ExternalData`] names the tensor and
/// its location).
#[derive(Debug, thiserror::Error)]
pub enum ExternalProblem {
    /// The model was decoded from bytes, with no directory to find side files in.
    #[error(
        "the model was read from bytes, without the directory its external data lies in; \
         load it from its file"
    )]
    FromBytes,
    /// The tensor names no file.
    #[error("the tensor has no location")]
    NoLocation,
    /// The location is an absolute path.
    #[error(
        "an absolute path; a location is relative to the model's directory and stays inside it"
    )]
    Absolute,
    /// The location climbs out of the model's directory through `..`.
    #[error("'..' leads out of the model's directory; a location stays inside it")]
    LeavesDirectory,
    /// An `offset` or `length` entry is not a number.
    #[error("{key} '{value}' is not a non-negative integer")]
    BadNumber {
        /// The entry's key.
        key: &'static str,
        /// The entry's value.
        value: String,
    },
    /// A string tensor, whose elements have no fixed width.
    #[error("a string tensor cannot keep its data in an external file")]
    StringTensor,
    /// The model's directory cannot be made canonical.
    #[error("cannot resolve the model's directory {}: {err}", .dir.display())]
    Directory {
        /// The directory.
        dir: PathBuf,
        /// What the OS said.
        err: std::io::Error,
    },
    /// The file does not exist.
    #[error("{} does not exist", .0.display())]
    NotFound(PathBuf),
    /// The file cannot be opened.
    #[error("cannot open {}: {err}", .path.display())]
    Open {
        /// The file, as the location names it.
        path: PathBuf,
        /// What the OS said.
        err: std::io::Error,
    },
    /// The file resolves (through symbolic links) to a path outside the model's directory.
    #[error(
        "{} resolves to {}, outside the model's directory {}; a location stays inside it",
        .path.display(),
        .resolved.display(),
        .dir.display()
    )]
    Outside {
        /// The file, as the location names it.
        path: PathBuf,
        /// Where it resolves to.
        resolved: PathBuf,
        /// The model's directory, canonical.
        dir: PathBuf,
    },
    /// The file's metadata cannot be read.
    #[error("cannot read {}: {err}", .path.display())]
    Metadata {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        err: std::io::Error,
    },
    /// The location is a directory or another non-regular file.
    #[error("{} is not a regular file", .0.display())]
    NotAFile(PathBuf),
    /// The offset lies past the end of the file (and no length is given).
    #[error("offset {offset} is beyond the end of {} ({size} bytes)", .path.display())]
    OffsetPastEnd {
        /// The offset.
        offset: u64,
        /// The file.
        path: PathBuf,
        /// The file's size, bytes.
        size: u64,
    },
    /// The range `offset + length` ends past the end of the file.
    #[error(
        "offset {offset} + length {length} is beyond the end of {} ({size} bytes)",
        .path.display()
    )]
    RangePastEnd {
        /// The offset.
        offset: u64,
        /// The length.
        length: u64,
        /// The file.
        path: PathBuf,
        /// The file's size, bytes.
        size: u64,
    },
    /// The byte count does not fit the tensor's element type and dims.
    #[error("{length} bytes, but a {dtype} tensor of dims {dims:?} holds {need}")]
    SizeMismatch {
        /// Bytes the entries give.
        length: u64,
        /// The tensor's element type.
        dtype: crate::DType,
        /// The tensor's dims.
        dims: Vec<i64>,
        /// Bytes the tensor holds.
        need: u128,
    },
    /// Reading the bytes failed.
    #[error("reading {}: {err}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        err: std::io::Error,
    },
}

type Visit<'a> = dyn FnMut(&Place, &mut pb::TensorProto) -> Result<()> + 'a;

struct Walker<'a, 'b> {
    next: usize,
    /// Visit external tensors only (the others are counted, never described).
    only_external: bool,
    visit: &'a mut Visit<'b>,
}

/// Whether an attribute value holds tensors or graphs (which may hold tensors).
fn holds_tensors(v: &AttrValue) -> bool {
    matches!(
        v,
        AttrValue::Tensor(_)
            | AttrValue::Tensors(_)
            | AttrValue::SparseTensor(_)
            | AttrValue::SparseTensors(_)
            | AttrValue::Graph(_)
            | AttrValue::Graphs(_)
    )
}

impl Walker<'_, '_> {
    /// One tensor; `holder` is only called for a tensor that is visited (the walk runs on
    /// every decode, where almost nothing is external).
    fn tensor(
        &mut self,
        holder: impl FnOnce() -> String,
        initializer: bool,
        t: &mut pb::TensorProto,
    ) -> Result<()> {
        let ordinal = self.next;
        self.next += 1;
        if self.only_external && !t.is_external() {
            return Ok(());
        }
        let place = Place {
            ordinal,
            holder: holder(),
            initializer,
        };
        (self.visit)(&place, t)
    }

    fn sparse(&mut self, holder: &dyn Fn() -> String, s: &mut pb::SparseTensorProto) -> Result<()> {
        if let Some(v) = s.values.as_mut() {
            self.tensor(|| format!("{} values", holder()), false, v)?;
        }
        if let Some(i) = s.indices.as_mut() {
            self.tensor(|| format!("{} indices", holder()), false, i)?;
        }
        Ok(())
    }

    fn graph(&mut self, g: &mut Graph, prefix: &str) -> Result<()> {
        for t in g.initializers.values_mut() {
            self.tensor(|| format!("{prefix}initializer"), true, t)?;
        }
        for (i, s) in g.sparse_initializers.iter_mut().enumerate() {
            self.sparse(&|| format!("{prefix}sparse initializer #{i}"), s)?;
        }
        for id in g.node_ids() {
            let node = g.node_mut(id).expect("a listed node exists");
            if !node.attributes.iter().any(|a| holds_tensors(&a.value)) {
                continue;
            }
            let label = node.label();
            for a in node.attributes.iter_mut() {
                let name = &a.name;
                let holder = || format!("{prefix}node {label} attribute '{name}'");
                match &mut a.value {
                    AttrValue::Tensor(t) => self.tensor(holder, false, t)?,
                    AttrValue::Tensors(ts) => {
                        for (i, t) in ts.iter_mut().enumerate() {
                            self.tensor(|| format!("{} #{i}", holder()), false, t)?;
                        }
                    }
                    AttrValue::SparseTensor(s) => self.sparse(&holder, s)?,
                    AttrValue::SparseTensors(ss) => {
                        for (i, s) in ss.iter_mut().enumerate() {
                            self.sparse(&|| format!("{} #{i}", holder()), s)?;
                        }
                    }
                    AttrValue::Graph(sub) => self.graph(sub, &format!("{}: ", holder()))?,
                    AttrValue::Graphs(subs) => {
                        for (i, sub) in subs.iter_mut().enumerate() {
                            self.graph(sub, &format!("{} #{i}: ", holder()))?;
                        }
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Graphs the IR keeps verbatim (function bodies, training info).
    fn pb_graph(&mut self, g: &mut pb::GraphProto, prefix: &str) -> Result<()> {
        for t in g.initializer.iter_mut() {
            self.tensor(|| format!("{prefix}initializer"), true, t)?;
        }
        for (i, s) in g.sparse_initializer.iter_mut().enumerate() {
            self.sparse(&|| format!("{prefix}sparse initializer #{i}"), s)?;
        }
        for (i, n) in g.node.iter_mut().enumerate() {
            self.pb_node(n, &|| format!("{prefix}node #{i}"))?;
        }
        Ok(())
    }

    fn pb_node(&mut self, n: &mut pb::NodeProto, label: &dyn Fn() -> String) -> Result<()> {
        let name = n
            .name
            .as_deref()
            .filter(|s| !s.is_empty())
            .map(String::from);
        let label = || match &name {
            Some(name) => format!("{} '{name}'", label()),
            None => label(),
        };
        for a in n.attribute.iter_mut() {
            let attr = a.name.as_deref().unwrap_or_default();
            let holder = || format!("{} attribute '{attr}'", label());
            if let Some(t) = a.t.as_mut() {
                self.tensor(holder, false, t)?;
            }
            for (i, t) in a.tensors.iter_mut().enumerate() {
                self.tensor(|| format!("{} #{i}", holder()), false, t)?;
            }
            if let Some(s) = a.sparse_tensor.as_mut() {
                self.sparse(&holder, s)?;
            }
            for (i, s) in a.sparse_tensors.iter_mut().enumerate() {
                self.sparse(&|| format!("{} #{i}", holder()), s)?;
            }
            if let Some(g) = a.g.as_mut() {
                self.pb_graph(g, &format!("{}: ", holder()))?;
            }
            for (i, g) in a.graphs.iter_mut().enumerate() {
                self.pb_graph(g, &format!("{} #{i}: ", holder()))?;
            }
        }
        Ok(())
    }
}

/// Calls `visit` on every tensor of `m` that can hold data (see [`Place::ordinal`] for the
/// order); the first error stops the walk.
pub fn for_each_tensor(
    m: &mut Model,
    visit: &mut dyn FnMut(&Place, &mut pb::TensorProto) -> Result<()>,
) -> Result<()> {
    walk(m, false, visit)
}

fn walk(m: &mut Model, only_external: bool, visit: &mut Visit) -> Result<()> {
    let mut w = Walker {
        next: 0,
        only_external,
        visit,
    };
    w.graph(&mut m.graph, "")?;
    for f in m.functions.iter_mut() {
        let fname = f.name.as_deref().unwrap_or_default();
        for (i, n) in f.node.iter_mut().enumerate() {
            w.pb_node(n, &|| format!("function '{fname}' node #{i}"))?;
        }
    }
    for (i, ti) in m.training_info.iter_mut().enumerate() {
        if let Some(g) = ti.initialization.as_mut() {
            w.pb_graph(g, &format!("training info #{i} initialization: "))?;
        }
        if let Some(g) = ti.algorithm.as_mut() {
            w.pb_graph(g, &format!("training info #{i} algorithm: "))?;
        }
    }
    Ok(())
}

fn entry<'a>(t: &'a pb::TensorProto, key: &str) -> Option<&'a str> {
    t.external_data
        .iter()
        .find(|e| e.key.as_deref() == Some(key))
        .map(|e| e.value.as_deref().unwrap_or_default())
}

fn problem(place: &Place, t: &pb::TensorProto, problem: ExternalProblem) -> Error {
    Error::ExternalData {
        tensor: t.name.clone().unwrap_or_default(),
        holder: place.holder.clone(),
        location: entry(t, "location").unwrap_or_default().to_string(),
        problem: Box::new(problem),
    }
}

/// Refuses a model that keeps tensor data in side files: it was read from bytes alone, with
/// no directory to find them in (used by [`crate::Model::from_bytes`]).
pub fn refuse(m: &mut Model) -> Result<()> {
    walk(m, true, &mut |place, t| {
        Err(problem(place, t, ExternalProblem::FromBytes))
    })
}

/// The directory a model file's relative locations start from.
pub fn model_dir(model_path: &Path) -> PathBuf {
    match model_path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Checks a location without touching the file system: relative, and not leaving its
/// directory through `..`. Returns the path relative to the directory.
fn relative_location(location: &str) -> std::result::Result<PathBuf, ExternalProblem> {
    if location.is_empty() {
        return Err(ExternalProblem::NoLocation);
    }
    let p = Path::new(location);
    let mut depth = 0usize;
    for c in p.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => return Err(ExternalProblem::Absolute),
            Component::CurDir => {}
            Component::ParentDir => {
                depth = depth
                    .checked_sub(1)
                    .ok_or(ExternalProblem::LeavesDirectory)?;
            }
            Component::Normal(_) => depth += 1,
        }
    }
    Ok(p.to_path_buf())
}

fn parse_u64(
    key: &'static str,
    v: Option<&str>,
) -> std::result::Result<Option<u64>, ExternalProblem> {
    v.map(|s| {
        s.trim()
            .parse::<u64>()
            .map_err(|_| ExternalProblem::BadNumber {
                key,
                value: s.to_string(),
            })
    })
    .transpose()
}

/// Bytes a tensor of this type and dims holds as raw data, when its element type has a fixed
/// width.
fn raw_size(t: &pb::TensorProto) -> Option<u128> {
    let bits = t.dtype().bits()? as u128;
    let mut n: u128 = 1;
    for &d in &t.dims {
        n = n.checked_mul(u128::try_from(d).ok()?)?;
    }
    Some((n * bits).div_ceil(8))
}

/// Reads one external tensor's bytes. `canon_dir` is the canonical model directory, found on
/// the first call.
fn read_one(
    t: &pb::TensorProto,
    dir: &Path,
    canon_dir: &mut Option<PathBuf>,
) -> std::result::Result<(u64, Vec<u8>), ExternalProblem> {
    if t.dtype() == crate::DType::String {
        return Err(ExternalProblem::StringTensor);
    }
    let rel = relative_location(entry(t, "location").unwrap_or_default())?;
    let offset = parse_u64("offset", entry(t, "offset"))?.unwrap_or(0);
    let length = parse_u64("length", entry(t, "length"))?;
    let canon_dir = match canon_dir {
        Some(d) => d.clone(),
        None => {
            let d = dir
                .canonicalize()
                .map_err(|err| ExternalProblem::Directory {
                    dir: dir.to_path_buf(),
                    err,
                })?;
            *canon_dir = Some(d.clone());
            d
        }
    };
    let full = dir.join(&rel);
    let canon = full.canonicalize().map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => ExternalProblem::NotFound(full.clone()),
        _ => ExternalProblem::Open {
            path: full.clone(),
            err,
        },
    })?;
    if !canon.starts_with(&canon_dir) {
        return Err(ExternalProblem::Outside {
            path: full,
            resolved: canon,
            dir: canon_dir,
        });
    }
    let mut file = std::fs::File::open(&canon).map_err(|err| ExternalProblem::Open {
        path: full.clone(),
        err,
    })?;
    let meta = file.metadata().map_err(|err| ExternalProblem::Metadata {
        path: full.clone(),
        err,
    })?;
    if !meta.is_file() {
        return Err(ExternalProblem::NotAFile(full));
    }
    let size = meta.len();
    let length = match length {
        Some(l) => l,
        None => size
            .checked_sub(offset)
            .ok_or_else(|| ExternalProblem::OffsetPastEnd {
                offset,
                path: full.clone(),
                size,
            })?,
    };
    let end = offset.checked_add(length).filter(|&e| e <= size);
    if end.is_none() {
        return Err(ExternalProblem::RangePastEnd {
            offset,
            length,
            path: full,
            size,
        });
    }
    if let Some(need) = raw_size(t)
        && need != length as u128
    {
        return Err(ExternalProblem::SizeMismatch {
            length,
            dtype: t.dtype(),
            dims: t.dims.clone(),
            need,
        });
    }
    let mut bytes = vec![0u8; length as usize];
    file.seek(SeekFrom::Start(offset))
        .and_then(|_| file.read_exact(&mut bytes))
        .map_err(|err| ExternalProblem::Read { path: full, err })?;
    Ok((offset, bytes))
}

/// Reads every external tensor of `m` from the files beside `model_path` into the tensor
/// (`raw_data`; `data_location` and `external_data` are cleared). Errors name the model file,
/// the tensor and the location. Returns what was read, in walk order.
pub fn resolve(m: &mut Model, model_path: &Path) -> Result<Vec<ExternalRef>> {
    let dir = model_dir(model_path);
    let mut canon_dir = None;
    let mut out = Vec::new();
    walk(m, true, &mut |place, t| {
        let (offset, bytes) =
            read_one(t, &dir, &mut canon_dir).map_err(|p| problem(place, t, p))?;
        out.push(ExternalRef {
            place: place.clone(),
            tensor: t.name.clone().unwrap_or_default(),
            location: entry(t, "location").unwrap_or_default().to_string(),
            offset,
            length: bytes.len() as u64,
        });
        t.raw_data = Some(bytes.into());
        t.data_location = None;
        t.external_data.clear();
        Ok(())
    })
    .map_err(|e| e.in_file(model_path))?;
    Ok(out)
}

/// Decodes and imports a model read from `model_path`, resolving its external data there.
pub fn decode_at(bytes: &[u8], model_path: &Path) -> Result<(Model, Vec<ExternalRef>)> {
    decode_buf(bytes, model_path)
}

/// [`decode_at`] from any buffer: from [`prost::bytes::Bytes`], the weights (`raw_data`)
/// share the buffer instead of being copied out of it.
fn decode_buf(
    bytes: impl prost::bytes::Buf,
    model_path: &Path,
) -> Result<(Model, Vec<ExternalRef>)> {
    use prost::Message;
    let proto = pb::ModelProto::decode(bytes).map_err(|e| Error::from(e).in_file(model_path))?;
    let mut m = crate::import::model_from_proto(proto).map_err(|e| e.in_file(model_path))?;
    let refs = resolve(&mut m, model_path)?;
    Ok((m, refs))
}

/// Reads a model file and its external data; also says which tensors came from side files.
/// A file whose name ends in `.onnxtxt` is read in ONNX's textual syntax, any other as
/// protobuf. The file is read up to [`crate::limits::max_model_bytes`] (a device or a pipe
/// given as a model is never read without end).
pub fn load(path: &Path) -> Result<(Model, Vec<ExternalRef>)> {
    let bytes = read_bounded(path)?;
    if crate::text::is_text_path(path) {
        let src = String::from_utf8(bytes).map_err(|e| {
            Error::Text(crate::text::TextError {
                line: 1,
                col: 1,
                message: format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
            })
            .in_file(path)
        })?;
        let mut m = crate::text::parse_model(&src).map_err(|e| Error::Text(e).in_file(path))?;
        let refs = resolve(&mut m, path)?;
        return Ok((m, refs));
    }
    decode_buf(prost::bytes::Bytes::from(bytes), path)
}

/// The bytes of a model file, at most [`crate::limits::max_model_bytes`] of them: a larger
/// file (or an endless device) is refused after reading one byte past the limit.
pub fn read_bounded(path: &Path) -> Result<Vec<u8>> {
    read_at_most(path, crate::limits::max_model_bytes())
}

/// [`read_bounded`] with the limit given.
fn read_at_most(path: &Path, limit: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let io = |err| Error::Io {
        path: path.to_path_buf(),
        err,
    };
    let f = open_for_reading(path).map_err(io)?;
    let meta = f.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(Error::Io {
            path: path.to_path_buf(),
            err: std::io::Error::other("is a directory, not a model file"),
        });
    }
    if meta.is_file() && meta.len() > limit {
        return Err(Error::TooLarge { limit }.in_file(path));
    }
    let mut bytes = Vec::with_capacity(if meta.is_file() {
        meta.len() as usize
    } else {
        0
    });
    f.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(Error::TooLarge { limit }.in_file(path));
    }
    Ok(bytes)
}

/// Opens a file for reading without blocking on a named pipe that has no writer (opening one
/// waits for a writer; reading one without a writer ends at once): such a pipe reads as an
/// empty file, while one that has a writer is read as usual.
fn open_for_reading(path: &Path) -> std::io::Result<std::fs::File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) {
            use rustix::fs::OFlags;
            let f = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(OFlags::NONBLOCK.bits() as i32)
                .open(path)?;
            rustix::fs::fcntl_setfl(&f, OFlags::empty())?;
            return Ok(f);
        }
    }
    std::fs::File::open(path)
}

/// The data file [`save`] writes beside `model_path`: the model's file name with `.data`
/// appended (`model.onnx` → `model.onnx.data`), so that two models in one directory, whatever
/// their extensions, never share one.
pub fn data_file_for(model_path: &Path) -> PathBuf {
    let mut name = model_path.file_name().unwrap_or_default().to_os_string();
    name.push(".data");
    model_path.with_file_name(name)
}

/// Moves the raw data of the tensors `select` picks into one byte string, in walk order,
/// each tensor pointing at its range of `location` (tensors without `raw_data` stay inline).
/// Returns the model, the data and how many tensors moved.
pub fn split(
    mut m: Model,
    select: &dyn Fn(&Place) -> bool,
    location: &str,
) -> (Model, Vec<u8>, usize) {
    let mut data = Vec::new();
    let mut moved = 0;
    let entry = |k: &str, v: String| pb::StringStringEntryProto {
        key: Some(k.into()),
        value: Some(v),
    };
    let _ = for_each_tensor(&mut m, &mut |place, t| {
        if t.is_external() || !select(place) {
            return Ok(());
        }
        let Some(raw) = t.raw_data.take() else {
            return Ok(());
        };
        let offset = data.len();
        data.extend_from_slice(&raw);
        t.data_location = Some(pb::tensor_proto::DataLocation::External as i32);
        t.external_data = vec![
            entry("location", location.to_string()),
            entry("offset", offset.to_string()),
            entry("length", raw.len().to_string()),
        ];
        moved += 1;
        Ok(())
    });
    (m, data, moved)
}

/// Writes `m` to `path` (bytes from `encode`) with the tensors `select` picks in
/// [`data_file_for`]`(path)`; both files are written atomically, the data first, so the model
/// never points at a file that is not there. Returns the data file when a tensor moved there
/// (else only the model is written).
pub fn save(
    m: Model,
    path: &Path,
    select: &dyn Fn(&Place) -> bool,
    encode: &dyn Fn(&Model) -> Vec<u8>,
) -> Result<Option<PathBuf>> {
    let data_path = data_file_for(path);
    let location = data_path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| Error::Io {
            path: data_path.clone(),
            err: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the data file's name is not UTF-8, which a location must be",
            ),
        })?
        .to_string();
    let (m, data, moved) = split(m, select, &location);
    if moved == 0 {
        write_atomic(path, &encode(&m))?;
        return Ok(None);
    }
    write_atomic(&data_path, &data)?;
    write_atomic(path, &encode(&m))?;
    Ok(Some(data_path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_a_model_is_bounded_and_never_blocks_on_a_pipe_without_writer() {
        let d = tempfile::tempdir().unwrap();
        // A named pipe nobody writes to reads as empty at once (opening it would block).
        let fifo = d.path().join("m.onnx");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::RWXU).unwrap();
        assert_eq!(read_bounded(&fifo).unwrap(), Vec::<u8>::new());
        // An endless device stops one byte past the limit, with the limit in the message.
        let e = read_at_most(Path::new("/dev/zero"), 1 << 16)
            .unwrap_err()
            .to_string();
        assert!(e.contains("/dev/zero") && e.contains("65536"), "{e}");
        let e = read_bounded(d.path()).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
    }
}
