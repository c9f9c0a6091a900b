//! The disk budget of a campaign directory, enforced on the corpus (the only part that grows
//! with time: findings are one bundle per root cause, `ours/` keeps a bounded number).
//!
//! The [`Index`] knows every entry's files and sizes and every record's reference count. When
//! the directory passes [`HIGH`] of the budget, [`Index::enforce`] frees space down to [`LOW`]
//! in three steps, each only while the previous one was not enough:
//! 1. **demote**: the models of the oldest entries are deleted; their traces rebuild them
//!    (`mutagraph corpus export`);
//! 2. **cull** (as `afl-cmin` does): for each coverage item the smallest entry holding it is
//!    kept; every other entry (its items all held by kept ones) is deleted, and records no
//!    trace names any more with it;
//! 3. **evict**: the oldest remaining entries, down to the budget itself; their coverage stays
//!    in the campaign's state, only the example is lost (counted, and warned about once).
//!
//! Entries the campaign's pool holds (the committed state names them, a resume reloads them)
//! are never touched. Deletions run after the state is committed, model before trace before
//! records, so a kill at any moment leaves every named file whole: at worst orphan records,
//! which the next [`Index::scan`] deletes.
use super::CorpusError;
use super::store::{self, Trace};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Enforcement starts when the directory passes this share of the budget.
pub const HIGH: f64 = 0.9;
/// Enforcement frees space down to this share of the budget.
pub const LOW: f64 = 0.7;

/// The default `--max-disk`: 500 MB.
pub const DEFAULT_MAX_DISK: u64 = 500_000_000;

/// What the corpus did to stay in its budget, cumulative over the campaign (persisted in
/// `state.json`, shown in `stats.json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pruned {
    /// Models deleted (their entries became trace-only).
    pub demoted: u64,
    /// Entries deleted because others hold all their coverage items.
    pub culled: u64,
    /// Entries deleted although they held an item no other entry held.
    pub evicted: u64,
    /// Record files deleted (no trace named them any more).
    pub records_deleted: u64,
}

/// The corpus's size and shape now, for `stats.json` and the status.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CorpusStats {
    /// Entries (traces).
    pub entries: u64,
    /// Entries whose model is on disk.
    pub with_model: u64,
    /// Record files.
    pub records: u64,
    /// Bytes of the corpus (models, traces, records).
    pub bytes: u64,
    /// Bytes of the rest of the campaign directory, as last measured.
    pub other_bytes: u64,
    /// Of which `seeds/`, which the budget cannot free.
    #[serde(default)]
    pub seeds_bytes: u64,
    /// The budget of the whole directory (`--max-disk`; `None`: unbounded).
    pub max_disk: Option<u64>,
    /// What enforcement did so far.
    #[serde(flatten)]
    pub pruned: Pruned,
}

struct Entry {
    iteration: u64,
    trace_size: u64,
    /// Size of the model file, 0 when the entry is trace-only.
    model_size: u64,
    /// The model's size whether on disk or not (the cull's cost of keeping the entry).
    cost: u64,
    refs: Vec<String>,
    /// Interned coverage items; `None` for a version 0 trace, which names none (never culled).
    items: Option<Vec<u32>>,
}

struct Rec {
    size: u64,
    refs: u32,
}

/// Every entry of a campaign's corpus and what it costs on disk.
pub struct Index {
    dir: PathBuf,
    entries: BTreeMap<String, Entry>,
    records: HashMap<String, Rec>,
    items: HashMap<String, u32>,
    bytes: u64,
}

/// The filesystem block the budget counts files in: a file takes whole blocks, as `du` shows
/// (4 KiB on ext4, XFS and tmpfs). Thousands of small traces and records would otherwise take
/// a tenth more than their lengths say.
pub const BLOCK: u64 = 4096;

/// The disk space a file of `len` bytes takes: whole blocks.
pub fn on_disk(len: u64) -> u64 {
    len.div_ceil(BLOCK) * BLOCK
}

/// The disk space a file takes (0 when it is not there).
fn file_size(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| on_disk(m.len())).unwrap_or(0)
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CorpusError + '_ {
    move |err| CorpusError::Io {
        path: path.to_path_buf(),
        err,
    }
}

/// Deletes a file; one already gone is fine.
fn remove(p: &Path) -> Result<(), CorpusError> {
    match std::fs::remove_file(p) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(p)(e)),
        _ => Ok(()),
    }
}

impl Index {
    /// Reads the corpus directory `dir`: every trace, the models' and records' sizes.
    pub fn scan(dir: &Path) -> Result<Index, CorpusError> {
        let mut ix = Index {
            dir: dir.to_path_buf(),
            entries: BTreeMap::new(),
            records: HashMap::new(),
            items: HashMap::new(),
            bytes: 0,
        };
        let rdir = dir.join(store::RECORDS_DIR);
        std::fs::create_dir_all(&rdir).map_err(io(&rdir))?;
        for e in std::fs::read_dir(&rdir).map_err(io(&rdir))? {
            let e = e.map_err(io(&rdir))?;
            let name = e.file_name();
            let Some(hash) = name.to_str().and_then(|n| n.strip_suffix(".json")) else {
                continue;
            };
            if !store::valid_hash(hash) {
                continue;
            }
            let size = e.metadata().map(|m| on_disk(m.len())).unwrap_or(0);
            ix.records.insert(hash.to_string(), Rec { size, refs: 0 });
            ix.bytes += size;
        }
        for id in store::entry_ids(dir)? {
            // A trace that does not read is left alone: never counted, never deleted (a resume
            // that needs it says why it cannot).
            let t = match store::read_trace(dir, &id) {
                Ok(t) => t,
                Err(e) => {
                    tracing::warn!("corpus: {e}; left as it is");
                    continue;
                }
            };
            let trace_size = file_size(&store::trace_path(dir, &id));
            let model_size = file_size(&store::model_path(dir, &id));
            ix.insert(&id, &t, trace_size, model_size);
        }
        Ok(ix)
    }

    /// Deletes the records no trace names (a kill between writing an entry's records and its
    /// trace leaves them). Only for the campaign holding the directory: while a campaign
    /// runs, records reach the disk before the trace that names them.
    pub fn delete_orphans(&mut self) -> Result<u64, CorpusError> {
        let orphans: Vec<String> = self
            .records
            .iter()
            .filter(|(_, r)| r.refs == 0)
            .map(|(h, _)| h.clone())
            .collect();
        for h in &orphans {
            self.drop_record(h)?;
        }
        Ok(orphans.len() as u64)
    }

    fn insert(&mut self, id: &str, t: &Trace, trace_size: u64, model_size: u64) {
        if self.entries.contains_key(id) {
            self.forget(id);
        }
        for h in &t.refs {
            // A trace naming a record that is not on disk still counts it (its entry cannot be
            // rebuilt, which `corpus export` reports); it costs nothing.
            self.records
                .entry(h.clone())
                .or_insert(Rec { size: 0, refs: 0 })
                .refs += 1;
        }
        let items = (t.version > 0).then(|| {
            t.items
                .iter()
                .map(|k| {
                    let n = self.items.len() as u32;
                    *self.items.entry(k.clone()).or_insert(n)
                })
                .collect()
        });
        self.bytes += trace_size + model_size;
        self.entries.insert(
            id.to_string(),
            Entry {
                iteration: t.iteration,
                trace_size,
                model_size,
                cost: t.model_size.max(model_size),
                refs: t.refs.clone(),
                items,
            },
        );
    }

    /// Removes an entry from the index (not from disk), releasing its records' references.
    fn forget(&mut self, id: &str) -> Option<Entry> {
        let e = self.entries.remove(id)?;
        self.bytes -= e.trace_size + e.model_size;
        for h in &e.refs {
            if let Some(r) = self.records.get_mut(h) {
                r.refs = r.refs.saturating_sub(1);
            }
        }
        Some(e)
    }

    fn drop_record(&mut self, hash: &str) -> Result<(), CorpusError> {
        remove(&store::record_path(&self.dir, hash))?;
        if let Some(r) = self.records.remove(hash) {
            self.bytes -= r.size;
        }
        Ok(())
    }

    /// Whether a record's file is on disk (or queued to be).
    pub fn has_record(&self, hash: &str) -> bool {
        self.records.get(hash).is_some_and(|r| r.size > 0)
    }

    /// Counts a new entry whose files are being written: records not yet on disk with
    /// `new_records` (hash and length), then its trace (`trace_size` bytes long) and model.
    pub fn add(&mut self, id: &str, trace: &Trace, trace_size: u64, new_records: &[(String, u64)]) {
        for (h, size) in new_records {
            let r = self
                .records
                .entry(h.clone())
                .or_insert(Rec { size: 0, refs: 0 });
            if r.size == 0 {
                r.size = on_disk(*size);
                self.bytes += r.size;
            }
        }
        self.insert(id, trace, on_disk(trace_size), on_disk(trace.model_size));
    }

    /// Bytes of the corpus.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The corpus now, with the cumulative `pruned` counters.
    pub fn stats(&self, other: Other, max_disk: Option<u64>, pruned: &Pruned) -> CorpusStats {
        CorpusStats {
            entries: self.entries.len() as u64,
            with_model: self.entries.values().filter(|e| e.model_size > 0).count() as u64,
            records: self.records.values().filter(|r| r.size > 0).count() as u64,
            bytes: self.bytes,
            other_bytes: other.bytes,
            seeds_bytes: other.seeds,
            max_disk,
            pruned: pruned.clone(),
        }
    }

    /// Brings the directory (corpus plus `other` bytes) back under `max_disk` when it passed
    /// [`HIGH`] of it, never touching the entries in `keep`; counts what it did in `pruned`.
    /// Returns true when even evicting every entry it may touch left it over the budget.
    pub fn enforce(
        &mut self,
        max_disk: u64,
        other: u64,
        keep: &BTreeSet<String>,
        pruned: &mut Pruned,
    ) -> Result<bool, CorpusError> {
        let over = |ix: &Index, limit: f64| (ix.bytes + other) as f64 > limit;
        if !over(self, HIGH * max_disk as f64) {
            return Ok(false);
        }
        let low = LOW * max_disk as f64;
        // Oldest first.
        let mut order: Vec<(u64, String)> = self
            .entries
            .iter()
            .filter(|(id, _)| !keep.contains(*id))
            .map(|(id, e)| (e.iteration, id.clone()))
            .collect();
        order.sort();
        // 1. Demote.
        for (_, id) in &order {
            if !over(self, low) {
                return Ok(false);
            }
            let e = self.entries.get_mut(id).expect("indexed");
            if e.model_size > 0 {
                remove(&store::model_path(&self.dir, id))?;
                self.bytes -= e.model_size;
                e.model_size = 0;
                pruned.demoted += 1;
            }
        }
        // 2. Cull what others subsume.
        if over(self, low) {
            let favored = self.favored();
            let subsumed: Vec<&String> = order
                .iter()
                .map(|(_, id)| id)
                .filter(|id| self.entries[*id].items.is_some() && !favored.contains(*id))
                .collect();
            for id in subsumed {
                self.delete_entry(id, pruned)?;
                pruned.culled += 1;
            }
        }
        // 3. Evict, oldest first, down to the budget itself.
        for (_, id) in &order {
            if !over(self, max_disk as f64) {
                return Ok(false);
            }
            if self.entries.contains_key(id) {
                self.delete_entry(id, pruned)?;
                pruned.evicted += 1;
            }
        }
        Ok(over(self, max_disk as f64))
    }

    /// For each coverage item, the entry holding it with the smallest model (the older one on
    /// a tie); version 0 entries count as favored (their items are unknown).
    fn favored(&self) -> BTreeSet<String> {
        let mut best: HashMap<u32, (u64, u64, &str)> = HashMap::new();
        let mut fav = BTreeSet::new();
        for (id, e) in &self.entries {
            let Some(items) = &e.items else {
                fav.insert(id.clone());
                continue;
            };
            for &i in items {
                let cand = (e.cost, e.iteration, id.as_str());
                best.entry(i)
                    .and_modify(|b| {
                        if (cand.0, cand.1) < (b.0, b.1) {
                            *b = cand;
                        }
                    })
                    .or_insert(cand);
            }
        }
        fav.extend(best.values().map(|b| b.2.to_string()));
        fav
    }

    /// Deletes an entry: model, trace, then the records no other trace names.
    fn delete_entry(&mut self, id: &str, pruned: &mut Pruned) -> Result<(), CorpusError> {
        remove(&store::model_path(&self.dir, id))?;
        remove(&store::trace_path(&self.dir, id))?;
        let Some(e) = self.forget(id) else {
            return Ok(());
        };
        for h in &e.refs {
            if self.records.get(h).is_some_and(|r| r.refs == 0) {
                self.drop_record(h)?;
                pruned.records_deleted += 1;
            }
        }
        Ok(())
    }
}

/// What the campaign directory holds besides the corpus, in whole blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Other {
    /// Everything outside `corpus/`.
    pub bytes: u64,
    /// Of which `seeds/` (the admitted seeds and what was derived from them), which the
    /// budget counts but cannot free.
    pub seeds: u64,
}

/// Disk space of the files and directories under `dir` except its `corpus/` (what the campaign
/// writes besides the corpus), in whole blocks; unreadable parts count as empty.
pub fn other_bytes(dir: &Path) -> Other {
    Other {
        bytes: bytes_outside(dir),
        seeds: bytes_outside(&dir.join("seeds")),
    }
}

/// Disk space of everything under `dir` but its `corpus/`.
fn bytes_outside(dir: &Path) -> u64 {
    fn walk(p: &Path, skip: Option<&Path>) -> u64 {
        let Ok(rd) = std::fs::read_dir(p) else {
            return 0;
        };
        rd.filter_map(|e| e.ok())
            .map(|e| {
                let path = e.path();
                if Some(path.as_path()) == skip {
                    return 0;
                }
                let own = e.metadata().map(|m| on_disk(m.len())).unwrap_or(0);
                match e.file_type() {
                    Ok(t) if t.is_dir() => own + walk(&path, None),
                    Ok(t) if t.is_file() => own,
                    _ => 0,
                }
            })
            .sum()
    }
    let corpus = dir.join("corpus");
    walk(dir, Some(&corpus))
}

/// Bytes free for an unprivileged user on the filesystem of `dir` (`None` when unknown).
pub fn free_bytes(dir: &Path) -> Option<u64> {
    let s = rustix::fs::statvfs(dir).ok()?;
    Some(s.f_bavail.saturating_mul(s.f_frsize))
}

#[cfg(test)]
mod tests;
