//! Instances of one campaign that share a sync directory (the `-M`/`-S` model of AFL++):
//! `campaign --sync-dir SYNC --instance NAME` writes into `SYNC/NAME`, and every
//! [`SYNC_EVERY`] (`--sync-every`), at a commit, imports what the other instances found:
//!
//! * **corpus entries**: each other instance's own entries (not those it imported) it has not
//!   looked at yet, in iteration order. An entry whose coverage items (listed in its trace) add
//!   nothing here is passed over without rebuilding it; one that adds something is rebuilt from
//!   its seed and records (when this instance has the same seed, byte for byte), replaces the
//!   pool's model of that seed (as a diverse mutant of this instance's own would) and becomes
//!   an entry of this corpus (`x<iteration>-<instance>-<id>`, its trace marked `imported_from`).
//!   Imported models are not run again: their runs were the other instance's;
//! * **finding signatures**: a new signature is claimed in `SYNC/.signatures/` before its
//!   bundle is written (a file created with a hard link, which fails when it exists, so two
//!   instances racing for one signature get one winner on any POSIX filesystem, NFS included).
//!   An instance that finds a signature another one claimed counts its hits under that
//!   instance's bundle (`filed_by`) and writes none; a bundle withdrawn as unconfirmed gives
//!   its claim back.
//!
//! Imports happen only at commits, so the committed state names only entries on disk and a
//! killed instance resumes consistently; the search of a shared campaign depends on what the
//! other instances found when, so it is not reproducible from `--seed` alone (one instance's
//! is). What an instance looked at and imported is in `state.json` (`sync`).
use super::*;
use crate::corpus::{self, store};
use std::collections::HashMap;

/// How often an instance imports from the others (`--sync-every`).
pub const SYNC_EVERY: Duration = Duration::from_secs(30);

/// The directory of signature claims inside the sync directory.
pub const CLAIMS_DIR: &str = ".signatures";

/// What an instance of a shared campaign persists (`state.json` `sync`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SyncState {
    /// This instance's name.
    pub instance: String,
    /// Per other instance, the highest iteration of its entries looked at.
    pub seen: BTreeMap<String, u64>,
    /// Entries imported (they added coverage here).
    pub imported: u64,
    /// Entries looked at that added nothing here.
    pub passed_over: u64,
    /// Entries that could not be imported (deleted meanwhile by their instance's disk budget,
    /// a seed this instance does not have, a trace that does not rebuild).
    pub failed: u64,
    /// Findings whose signature another instance had filed (hits counted under its bundle).
    pub filed_elsewhere: u64,
}

/// A valid instance name: letters, digits, `-`, `_`, `.` (not starting with `.`), at most 64.
pub fn valid_instance(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The instances of a sync directory: its subdirectories holding a `campaign.toml`, by name.
pub fn instances(sync: &Path) -> Vec<(String, PathBuf)> {
    let Ok(rd) = std::fs::read_dir(sync) else {
        return Vec::new();
    };
    let mut v: Vec<(String, PathBuf)> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let p = e.path();
            (valid_instance(&name) && p.join("campaign.toml").is_file()).then_some((name, p))
        })
        .collect();
    v.sort();
    v
}

/// Who filed a signature.
#[derive(Clone, Debug, PartialEq)]
pub enum Claim {
    /// This instance: write the bundle.
    Mine,
    /// Another instance, with its bundle's id.
    Theirs {
        /// The instance.
        instance: String,
        /// Its bundle's directory name.
        id: String,
    },
}

#[derive(Serialize, Deserialize)]
struct ClaimFile {
    instance: String,
    id: String,
    signature: String,
}

fn claim_path(sync: &Path, signature: &str) -> PathBuf {
    sync.join(CLAIMS_DIR).join(format!(
        "{}.json",
        &store::sha256_hex(signature.as_bytes())[..32]
    ))
}

/// Claims `signature` for `instance` (bundle `id`), or says who has it. The claim file is
/// written whole under a temporary name and hard-linked into place, which fails when a claim
/// exists: exactly one instance wins a race. A claim that cannot be read counts as ours (a
/// duplicate bundle is better than a lost finding).
pub fn claim(sync: &Path, instance: &str, signature: &str, id: &str) -> std::io::Result<Claim> {
    let dir = sync.join(CLAIMS_DIR);
    std::fs::create_dir_all(&dir)?;
    let path = claim_path(sync, signature);
    let body = serde_json::to_vec(&ClaimFile {
        instance: instance.to_string(),
        id: id.to_string(),
        signature: signature.to_string(),
    })
    .map_err(std::io::Error::other)?;
    let tmp = dir.join(format!(".{instance}.{}.tmp", std::process::id()));
    let linked = (|| {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&body)?;
        f.sync_all()?;
        match std::fs::hard_link(&tmp, &path) {
            // A filesystem without hard links: exclusive creation, which is atomic as well
            // (a reader racing the write may see an empty claim, which counts as its own).
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                tracing::debug!(
                    "hard link in {}: {e}; exclusive creation instead",
                    dir.display()
                );
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&path)?;
                f.write_all(&body)?;
                f.sync_all()
            }
            r => r,
        }
    })();
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(Claim::Mine),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let held = std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice::<ClaimFile>(&b).ok());
            Ok(match held {
                Some(c) if c.instance != instance && c.signature == signature => Claim::Theirs {
                    instance: c.instance,
                    id: c.id,
                },
                _ => Claim::Mine,
            })
        }
        Err(e) => Err(e),
    }
}

/// Gives back this instance's claim of `signature` (its bundle was withdrawn).
pub fn release(sync: &Path, instance: &str, signature: &str) -> std::io::Result<()> {
    let path = claim_path(sync, signature);
    let mine = std::fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice::<ClaimFile>(&b).ok())
        .is_some_and(|c| c.instance == instance);
    if mine {
        std::fs::remove_file(&path)?;
    }
    Ok(())
}

/// The iteration of an instance's own entry from its id (`m00000123`); imported entries
/// (`x...`) have none.
fn own_iteration(id: &str) -> Option<u64> {
    id.strip_prefix('m')?.parse().ok()
}

/// The sync directory of a campaign, and what the instance remembers of the seeds it compared.
pub(super) struct Shared {
    /// The sync directory (the parent of the campaign's directory).
    pub(super) dir: PathBuf,
    /// When this instance last imported.
    pub(super) last: Instant,
    /// How often it imports.
    pub(super) every: Duration,
    /// Per (other instance, seed file): whether its seed is byte-identical to ours.
    pub(super) same_seed: HashMap<(String, String), bool>,
}

impl Campaign {
    /// Imports the other instances' new coverage-adding entries when the sync interval has
    /// passed (called just before a commit, with nothing generated ahead).
    pub(super) fn sync_import(&mut self) -> Result<()> {
        let Some(shared) = &self.shared else {
            return Ok(());
        };
        if shared.last.elapsed() < shared.every {
            return Ok(());
        }
        let t = Instant::now();
        let me = self.state.sync.as_ref().map(|s| s.instance.clone());
        let others: Vec<(String, PathBuf)> = instances(&shared.dir)
            .into_iter()
            .filter(|(n, _)| Some(n) != me.as_ref())
            .collect();
        for (name, dir) in others {
            let seen = self
                .state
                .sync
                .as_ref()
                .and_then(|s| s.seen.get(&name).copied());
            let corpus_dir = dir.join("corpus");
            let Ok(ids) = store::entry_ids(&corpus_dir) else {
                continue;
            };
            let mut todo: Vec<(u64, String)> = ids
                .into_iter()
                .filter_map(|id| Some((own_iteration(&id)?, id)))
                .filter(|(it, _)| seen.is_none_or(|s| *it > s))
                .collect();
            todo.sort();
            for (it, id) in todo {
                let outcome = self.import_one(&name, &dir, &id);
                let s = self.state.sync.get_or_insert_with(Default::default);
                let m = s.seen.entry(name.clone()).or_insert(it);
                *m = (*m).max(it);
                match outcome {
                    Some(true) => s.imported += 1,
                    Some(false) => s.passed_over += 1,
                    None => s.failed += 1,
                }
            }
        }
        if let Some(shared) = &mut self.shared {
            shared.last = Instant::now();
        }
        self.state.timings.io += t.elapsed().as_secs_f64();
        Ok(())
    }

    /// Imports entry `id` of instance `name` (directory `dir`): `Some(true)` imported,
    /// `Some(false)` nothing new here (or not one of its own), `None` could not.
    fn import_one(&mut self, name: &str, dir: &Path, id: &str) -> Option<bool> {
        let corpus_dir = dir.join("corpus");
        let t = store::read_trace(&corpus_dir, id).ok()?;
        if t.imported_from.is_some() || t.version == 0 {
            return Some(false);
        }
        if !self.state.coverage.novelty_of_keys(&t.items).is_diverse() {
            return Some(false);
        }
        let seed = self
            .seeds
            .iter()
            .position(|s| format!("seeds/{}", s.file) == t.seed_file)?;
        if !self.same_seed(name, dir, &t.seed_file) {
            return None;
        }
        let bytes = store::model_bytes(dir, id).ok()?;
        let records = corpus::records(&corpus_dir, id, &t).ok()?;
        let mut model = Model::from_bytes(&bytes).ok()?;
        typed(&mut model);
        let delta = self.state.coverage.add_model(&model);
        if !delta.is_diverse() {
            return Some(false);
        }
        let mut own = Coverage::new(self.state.coverage.universe().clone());
        own.add_model(&model);
        let my_id = format!("x{:08}-{name}-{id}", self.state.iteration);
        let mut entry = corpus::NewEntry::new(
            &t.seed,
            &t.seed_file,
            self.state.iteration,
            &records,
            bytes,
            own.item_keys(),
        )
        .ok()?;
        entry.trace.imported_from = Some(format!("{name}/{id}"));
        if self.write_entry(&my_id, entry).is_err() {
            return None;
        }
        // The pool's slot of that seed takes it, as a diverse mutant of this instance would.
        let slot = self.state.pool.iter().position(|s| s.seed == seed)?;
        self.models[slot] = (model, records);
        self.state.pool[slot].corpus = Some(my_id);
        self.state.counters.diverse += 1;
        Some(true)
    }

    fn same_seed(&mut self, name: &str, dir: &Path, seed_file: &str) -> bool {
        let key = (name.to_string(), seed_file.to_string());
        let Some(shared) = &mut self.shared else {
            return false;
        };
        if let Some(&b) = shared.same_seed.get(&key) {
            return b;
        }
        let mine = std::fs::read(self.out.join(seed_file)).ok();
        let theirs = std::fs::read(dir.join(seed_file)).ok();
        let same = mine.is_some() && mine == theirs;
        shared.same_seed.insert(key, same);
        same
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_claim_per_signature_across_instances() {
        let tmp = tempfile::tempdir().unwrap();
        let sync = tmp.path();
        assert_eq!(claim(sync, "a", "sig1", "crash-1").unwrap(), Claim::Mine);
        // Claiming again (a resumed instance redoing its iterations) is still ours.
        assert_eq!(claim(sync, "a", "sig1", "crash-1").unwrap(), Claim::Mine);
        assert_eq!(
            claim(sync, "b", "sig1", "crash-9").unwrap(),
            Claim::Theirs {
                instance: "a".into(),
                id: "crash-1".into()
            }
        );
        assert_eq!(claim(sync, "b", "sig2", "nan-2").unwrap(), Claim::Mine);
        // Only the holder gives a claim back.
        release(sync, "b", "sig1").unwrap();
        assert!(matches!(
            claim(sync, "b", "sig1", "x").unwrap(),
            Claim::Theirs { .. }
        ));
        release(sync, "a", "sig1").unwrap();
        assert_eq!(claim(sync, "b", "sig1", "x").unwrap(), Claim::Mine);
        // No temporary file is left behind.
        let left: Vec<_> = std::fs::read_dir(sync.join(CLAIMS_DIR))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn racing_instances_get_one_winner() {
        let tmp = tempfile::tempdir().unwrap();
        let sync = tmp.path().to_path_buf();
        let winners: Vec<Claim> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|i| {
                    let sync = sync.clone();
                    s.spawn(move || claim(&sync, &format!("i{i}"), "sig", "id").unwrap())
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(winners.iter().filter(|c| **c == Claim::Mine).count(), 1);
    }

    #[test]
    fn instance_names_and_ids() {
        assert!(valid_instance("main-1"));
        assert!(!valid_instance(".signatures"));
        assert!(!valid_instance("a/b"));
        assert!(!valid_instance(""));
        assert_eq!(own_iteration("m00000123"), Some(123));
        assert_eq!(own_iteration("x00000123-a-m00000001"), None);
    }
}
