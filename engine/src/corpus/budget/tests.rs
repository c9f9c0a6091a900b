use super::*;
use crate::corpus::store::{NewEntry, model_path, record_path, trace_path};
use mutagraph_mutators::mutation::Record;

fn record(n: usize, payload: usize) -> Record {
    Record {
        operator: "NLA".into(),
        summary: format!("record {n} {}", "x".repeat(payload)),
        edits: Vec::new(),
    }
}

/// Writes an entry as the campaign does and counts it in the index.
fn put(ix: &mut Index, dir: &Path, it: u64, recs: &[Record], model: usize, items: &[&str]) {
    let id = format!("m{it:08}");
    let e = NewEntry::new(
        "s",
        "seeds/s.onnx",
        it,
        recs,
        vec![7u8; model],
        items.iter().map(|s| s.to_string()).collect(),
    )
    .unwrap();
    let mut new = Vec::new();
    for (h, json) in &e.records {
        if !ix.has_record(h) && !new.iter().any(|(n, _): &(String, u64)| n == h) {
            std::fs::write(record_path(dir, h), json).unwrap();
            new.push((h.clone(), json.len() as u64));
        }
    }
    let t = e.trace_bytes().unwrap();
    std::fs::write(trace_path(dir, &id), &t).unwrap();
    std::fs::write(model_path(dir, &id), &e.model).unwrap();
    ix.add(&id, &e.trace, t.len() as u64, &new);
}

fn disk_bytes(dir: &Path) -> u64 {
    let mut n = 0;
    for d in [dir.to_path_buf(), dir.join(store::RECORDS_DIR)] {
        for e in std::fs::read_dir(d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() {
                n += on_disk(e.metadata().unwrap().len());
            }
        }
    }
    n
}

fn setup() -> (tempfile::TempDir, PathBuf, Index) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("corpus");
    std::fs::create_dir_all(&dir).unwrap();
    let ix = Index::scan(&dir).unwrap();
    (tmp, dir, ix)
}

#[test]
fn shared_records_are_stored_once_and_the_index_matches_the_disk() {
    let (_t, dir, mut ix) = setup();
    let chain: Vec<Record> = (0..5).map(|i| record(i, 1000)).collect();
    for k in 1..=5 {
        put(&mut ix, &dir, k as u64, &chain[..k], 100, &["A"]);
    }
    // Five traces over five distinct records (each child adds one to its parent's).
    assert_eq!(std::fs::read_dir(dir.join("records")).unwrap().count(), 5);
    assert_eq!(ix.bytes(), disk_bytes(&dir));
    let again = Index::scan(&dir).unwrap();
    assert_eq!(again.bytes(), ix.bytes());
    assert_eq!(
        again
            .stats(Default::default(), None, &Pruned::default())
            .entries,
        5
    );
}

#[test]
fn under_the_high_mark_nothing_is_deleted() {
    let (_t, dir, mut ix) = setup();
    for k in 0..4u64 {
        put(&mut ix, &dir, k, &[record(k as usize, 10)], 1000, &["A"]);
    }
    let total = ix.bytes();
    let mut p = Pruned::default();
    let budget = (total as f64 / HIGH) as u64 + 10;
    assert!(!ix.enforce(budget, 0, &BTreeSet::new(), &mut p).unwrap());
    assert_eq!(p, Pruned::default());
    assert_eq!(ix.bytes(), total);
}

#[test]
fn demotion_deletes_the_oldest_models_first_and_keeps_the_pool() {
    let (_t, dir, mut ix) = setup();
    for k in 0..10u64 {
        put(&mut ix, &dir, k, &[record(k as usize, 10)], 10_000, &["A"]);
    }
    let keep: BTreeSet<String> = ["m00000000".to_string()].into();
    let mut p = Pruned::default();
    // A budget that demoting about half the models satisfies.
    let budget = (ix.bytes() as f64 * 0.75) as u64;
    assert!(!ix.enforce(budget, 0, &keep, &mut p).unwrap());
    assert!(p.demoted > 0 && p.culled == 0 && p.evicted == 0, "{p:?}");
    assert!(
        model_path(&dir, "m00000000").exists(),
        "the pool's model was deleted"
    );
    assert!(
        !model_path(&dir, "m00000001").exists(),
        "the oldest other model is kept"
    );
    assert!(
        model_path(&dir, "m00000009").exists(),
        "the newest model was deleted"
    );
    for k in 0..10 {
        assert!(trace_path(&dir, &format!("m{k:08}")).exists());
    }
    assert!((ix.bytes() as f64) <= LOW * budget as f64);
    assert_eq!(ix.bytes(), disk_bytes(&dir));
}

#[test]
fn culling_keeps_the_smallest_holder_of_each_item_and_deletes_unnamed_records() {
    let (_t, dir, mut ix) = setup();
    // m0 holds A and B (big model); m1 holds A (small); m2 holds B (small); m3 holds C only.
    put(&mut ix, &dir, 0, &[record(0, 5000)], 9000, &["A", "B"]);
    put(&mut ix, &dir, 1, &[record(1, 5000)], 100, &["A"]);
    put(&mut ix, &dir, 2, &[record(2, 5000)], 100, &["B"]);
    put(&mut ix, &dir, 3, &[record(3, 5000)], 100, &["C"]);
    let mut p = Pruned::default();
    // Records dominate: demoting every model is not enough, culling m0 is.
    let budget = ((ix.bytes() - 9400) as f64 * 0.9) as u64;
    ix.enforce(budget, 0, &BTreeSet::new(), &mut p).unwrap();
    assert_eq!(p.culled, 1, "{p:?}");
    assert_eq!(p.evicted, 0, "{p:?}");
    assert!(!trace_path(&dir, "m00000000").exists());
    for k in 1..4 {
        assert!(trace_path(&dir, &format!("m{k:08}")).exists());
    }
    assert_eq!(p.records_deleted, 1);
    assert_eq!(std::fs::read_dir(dir.join("records")).unwrap().count(), 3);
    assert_eq!(ix.bytes(), disk_bytes(&dir));
}

#[test]
fn a_record_shared_with_a_kept_entry_survives_its_culled_child() {
    let (_t, dir, mut ix) = setup();
    let parent = record(0, 4000);
    put(&mut ix, &dir, 0, std::slice::from_ref(&parent), 100, &["A"]);
    put(
        &mut ix,
        &dir,
        1,
        &[parent.clone(), record(1, 4000)],
        900,
        &["A"],
    );
    let mut p = Pruned::default();
    // Files take whole 4 KiB blocks: the parent alone (record, trace) takes 8 KiB.
    ix.enforce(10_000, 0, &BTreeSet::new(), &mut p).unwrap();
    assert_eq!((p.culled, p.evicted), (1, 0), "{p:?}");
    assert!(!trace_path(&dir, "m00000001").exists());
    let t = store::read_trace(&dir, "m00000000").unwrap();
    // The parent's record is still there for the parent's trace.
    assert_eq!(store::records(&dir, "m00000000", &t).unwrap(), vec![parent]);
}

#[test]
fn eviction_goes_down_to_the_budget_and_reports_when_the_pool_alone_is_over() {
    let (_t, dir, mut ix) = setup();
    for k in 0..6u64 {
        let item = format!("I{k}");
        put(
            &mut ix,
            &dir,
            k,
            &[record(k as usize, 3000)],
            10,
            &[item.as_str()],
        );
    }
    let keep: BTreeSet<String> = ["m00000005".to_string()].into();
    let mut p = Pruned::default();
    // Each entry takes three 4 KiB blocks (record, trace, model): one fits 13 000 bytes.
    let over = ix.enforce(13_000, 0, &keep, &mut p).unwrap();
    assert!(p.evicted > 0);
    assert!(trace_path(&dir, "m00000005").exists());
    assert!(!over, "the pool's one entry fits");
    assert!(ix.bytes() <= 13_000);
    // The rest of the directory alone over the budget: everything that may go has gone.
    let over = ix.enforce(13_000, 10_000, &keep, &mut p).unwrap();
    assert!(over);
    assert!(trace_path(&dir, "m00000005").exists());
}

#[test]
fn orphan_records_are_deleted_by_the_campaign_not_by_a_scan() {
    let (_t, dir, mut ix) = setup();
    put(&mut ix, &dir, 0, &[record(0, 10)], 10, &["A"]);
    std::fs::write(record_path(&dir, "0123456789abcdef0123456789abcdef"), b"{}").unwrap();
    let mut ix = Index::scan(&dir).unwrap();
    assert_eq!(std::fs::read_dir(dir.join("records")).unwrap().count(), 2);
    assert_eq!(ix.delete_orphans().unwrap(), 1);
    assert_eq!(std::fs::read_dir(dir.join("records")).unwrap().count(), 1);
    assert_eq!(ix.bytes(), disk_bytes(&dir));
}

#[test]
fn a_trace_naming_paths_instead_of_hashes_is_never_followed() {
    let (_t, dir, mut ix) = setup();
    put(&mut ix, &dir, 0, &[record(0, 10)], 10, &["A"]);
    let outside = dir.parent().unwrap().join("precious.json");
    std::fs::write(&outside, b"{}").unwrap();
    std::fs::write(
        trace_path(&dir, "m00000001"),
        br#"{"version":1,"seed":"s","seed_file":"seeds/s.onnx","iteration":1,"refs":["../../precious"],"items":["A"]}"#,
    )
    .unwrap();
    let e = store::read_trace(&dir, "m00000001").unwrap_err();
    assert!(e.to_string().contains("not a record hash"), "{e}");
    let mut ix = Index::scan(&dir).unwrap();
    ix.delete_orphans().unwrap();
    let mut p = Pruned::default();
    ix.enforce(1, 0, &BTreeSet::new(), &mut p).unwrap();
    assert!(outside.exists(), "a file outside the corpus was deleted");
    assert!(
        trace_path(&dir, "m00000001").exists(),
        "an unreadable trace was deleted"
    );
}
