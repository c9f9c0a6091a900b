//! Which models a consistency run covers: `zoo` (the built-in seed zoo, as `mutagraph zoo`
//! writes it: unreduced), model files (`.onnx`, `.onnxtxt`), directories of them (walked
//! recursively, sorted by path; symbolic links to directories are not followed) and campaign
//! output directories (recognised by their `campaign.toml`: their seeds and corpus,
//! [`campaign_models`]). A directory inside a walked one that is a campaign directory is read
//! as one.
use super::Error;
use mutagraph_ir::Model;
use mutagraph_mutators::zoo;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The file that marks a campaign output directory.
pub const CAMPAIGN_MARK: &str = "campaign.toml";

/// Where a model comes from.
#[derive(Clone, Debug)]
pub enum Origin {
    /// A model of the built-in zoo, by name.
    Zoo(&'static str),
    /// A model file (read when its turn comes).
    File(PathBuf),
    /// Protobuf bytes already at hand (a campaign's seeds and corpus).
    Bytes(Vec<u8>),
    /// The model could not be had; why.
    Unavailable(String),
}

/// One model to run.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The name it is reported under: a zoo name or a path.
    pub name: String,
    /// Where it comes from.
    pub origin: Origin,
}

impl Entry {
    /// Reads the model (not yet validated); `Err` is the reason, naming the file.
    pub fn load(&self) -> Result<Model, String> {
        match &self.origin {
            Origin::Zoo(n) => zoo::build(n).ok_or_else(|| format!("no zoo model '{n}'")),
            Origin::File(p) => Model::load(p).map_err(|e| e.to_string()),
            Origin::Bytes(b) => Model::from_bytes(b).map_err(|e| format!("{}: {e}", self.name)),
            Origin::Unavailable(why) => Err(why.clone()),
        }
    }
}

/// The models `specs` name, in order (a model named twice is kept once). A path that does not
/// exist, or a directory without any model, is an error naming it; what a model file contains
/// is not looked at here.
pub fn collect(specs: &[String]) -> Result<Vec<Entry>, Error> {
    let mut out = Vec::new();
    for s in specs {
        if s == "zoo" {
            out.extend(zoo::names().into_iter().map(|n| Entry {
                name: n.to_string(),
                origin: Origin::Zoo(n),
            }));
            continue;
        }
        let p = Path::new(s);
        let meta = std::fs::metadata(p).map_err(|e| Error::Input {
            path: p.to_path_buf(),
            problem: e.to_string(),
        })?;
        if meta.is_dir() {
            let before = out.len();
            walk(p, &mut out)?;
            if out.len() == before {
                return Err(Error::Input {
                    path: p.to_path_buf(),
                    problem: "no .onnx or .onnxtxt file in it".into(),
                });
            }
        } else {
            out.push(Entry {
                name: s.clone(),
                origin: Origin::File(p.to_path_buf()),
            });
        }
    }
    let mut seen = BTreeSet::new();
    out.retain(|e| seen.insert(e.name.clone()));
    Ok(out)
}

/// Whether a file is a model by its name (`.onnx`, or `.onnxtxt` text).
fn is_model_file(f: &Path) -> bool {
    f.extension().is_some_and(|x| x == "onnx") || mutagraph_ir::text::is_text_path(f)
}

/// The models under `dir`: a campaign's own, or every model file below it.
fn walk(dir: &Path, out: &mut Vec<Entry>) -> Result<(), Error> {
    if dir.join(CAMPAIGN_MARK).is_file() {
        out.extend(
            campaign_models(dir)?
                .into_iter()
                .map(|(name, bytes)| Entry {
                    name,
                    origin: match bytes {
                        Ok(b) => Origin::Bytes(b),
                        Err(why) => Origin::Unavailable(why),
                    },
                }),
        );
        return Ok(());
    }
    for p in sorted_dir(dir)? {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            walk(&p, out)?;
        } else if is_model_file(&p) && !p.is_dir() {
            out.push(Entry {
                name: p.display().to_string(),
                origin: Origin::File(p),
            });
        }
    }
    Ok(())
}

/// The entries of a directory, sorted by path.
fn sorted_dir(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let rd = std::fs::read_dir(dir).map_err(|e| Error::Input {
        path: dir.to_path_buf(),
        problem: e.to_string(),
    })?;
    let mut v: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    v.sort();
    Ok(v)
}

/// One model of a campaign directory: its name (its path) and its protobuf bytes, or why they
/// could not be had.
pub type CampaignModel = (String, Result<Vec<u8>, String>);

/// The models of a campaign output directory: `seeds/*.onnx`, then the corpus,
/// `corpus/<id>.onnx`, in name order.
///
/// A corpus entry may be a trace alone (`<id>.trace.json` without `<id>.onnx`; a campaign
/// killed between the two writes leaves one, and the corpus is to keep only traces): its model
/// is rebuilt from the seed the trace names by replaying its records
/// ([`crate::corpus::model_bytes`]), which gives the bytes the campaign ran. This is the one place that
/// lists a campaign's models; a change of the corpus layout goes here.
pub fn campaign_models(dir: &Path) -> Result<Vec<CampaignModel>, Error> {
    let mut out = Vec::new();
    let read = |p: &Path| mutagraph_ir::external::read_bounded(p).map_err(|e| e.to_string());
    let seeds = dir.join("seeds");
    if seeds.is_dir() {
        for p in sorted_dir(&seeds)? {
            if p.extension().is_some_and(|x| x == "onnx") {
                out.push((p.display().to_string(), read(&p)));
            }
        }
    }
    let corpus = dir.join("corpus");
    if corpus.is_dir() {
        let files = sorted_dir(&corpus)?;
        let mut ids: BTreeSet<String> = BTreeSet::new();
        for p in &files {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            if let Some(id) = name
                .strip_suffix(".onnx")
                .or_else(|| name.strip_suffix(".trace.json"))
            {
                ids.insert(id.to_string());
            }
        }
        for id in ids {
            let model = corpus.join(format!("{id}.onnx"));
            if model.is_file() {
                out.push((model.display().to_string(), read(&model)));
            } else {
                let trace = corpus.join(format!("{id}.trace.json"));
                let name = format!("{} (replayed)", trace.display());
                let bytes = crate::corpus::model_bytes(dir, &id).map_err(|e| e.to_string());
                out.push((name, bytes));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relu() -> Model {
        mutagraph_ir::text::parse_model(
            "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[4] x) => (float[4] y) { y = Relu (x) }",
        )
        .unwrap()
    }

    /// Seeds, corpus models and a trace without its model (rebuilt from its seed); a trace
    /// whose seed lies outside the directory is named with the reason.
    #[test]
    fn a_campaign_directory_lists_its_seeds_and_corpus() {
        let dir = tempfile::tempdir().unwrap();
        let d = &dir.path().join("campaign");
        for sub in ["seeds", "corpus", "findings/x"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        std::fs::write(d.join(CAMPAIGN_MARK), "").unwrap();
        let seed = relu();
        seed.save(d.join("seeds/relu.onnx")).unwrap();
        seed.save(d.join("corpus/m00000002.onnx")).unwrap();
        seed.save(d.join("findings/x/original.onnx")).unwrap();
        let trace = |seed_file: &str| {
            serde_json::to_vec(&serde_json::json!({
                "version": 1, "seed": "relu", "seed_file": seed_file, "iteration": 1,
            }))
            .unwrap()
        };
        std::fs::write(
            d.join("corpus/m00000001.trace.json"),
            trace("seeds/relu.onnx"),
        )
        .unwrap();
        std::fs::write(
            d.join("corpus/m00000002.trace.json"),
            trace("seeds/relu.onnx"),
        )
        .unwrap();
        std::fs::write(d.join("corpus/m00000003.trace.json"), trace("../relu.onnx")).unwrap();
        let got = campaign_models(d).unwrap();
        let names: Vec<String> = got
            .iter()
            .map(|(n, _)| {
                n.strip_prefix(&d.display().to_string())
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(
            names,
            [
                "/seeds/relu.onnx",
                "/corpus/m00000001.trace.json (replayed)",
                "/corpus/m00000002.onnx",
                "/corpus/m00000003.trace.json (replayed)",
            ]
        );
        assert_eq!(got[1].1.as_ref().unwrap(), &seed.to_bytes(), "replayed");
        assert!(got[3].1.as_ref().unwrap_err().contains("not a path inside"));
        // Walking a directory that holds the campaign reads it as one (no bundles).
        let entries = collect(&[dir.path().display().to_string()]).unwrap();
        let mine: Vec<&Entry> = entries
            .iter()
            .filter(|e| e.name.contains("findings"))
            .collect();
        assert!(mine.is_empty(), "{entries:?}");
        let e = collect(&[d.display().to_string()]).unwrap();
        assert_eq!(e.len(), 4);
        assert!(e[0].load().is_ok() && e[1].load().is_ok());
        assert!(e[3].load().is_err());
    }

    #[test]
    fn missing_paths_and_empty_directories_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let e = collect(&[dir.path().join("nope.onnx").display().to_string()]).unwrap_err();
        assert!(e.to_string().contains("nope.onnx"), "{e}");
        let e = collect(&[dir.path().display().to_string()]).unwrap_err();
        assert!(e.to_string().contains("no .onnx"), "{e}");
        let z = collect(&["zoo".into(), "zoo".into()]).unwrap();
        assert_eq!(z.len(), zoo::names().len(), "named twice, kept once");
    }
}
