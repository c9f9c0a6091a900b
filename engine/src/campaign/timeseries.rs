//! `timeseries.csv`: one row per interval, appended, under the header of
//! [`crate::persisted::timeseries`]; a resumed campaign drops the partial last line a kill may
//! have left.
use super::*;
use crate::persisted::timeseries::HEADER as TS_HEADER;

/// Opens `timeseries.csv` for appending; a fresh campaign starts it, a resumed one drops a
/// partial last line left by a kill.
pub(super) fn open_timeseries(path: &Path, fresh: bool) -> Result<std::fs::File> {
    let ctx = || format!("opening {}", path.display());
    if fresh || !path.exists() {
        write_atomic(path, TS_HEADER.as_bytes()).with_context(ctx)?;
    } else {
        let bytes = std::fs::read(path).with_context(ctx)?;
        let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        if keep != bytes.len() {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .with_context(ctx)?;
            f.set_len(keep as u64).with_context(ctx)?;
        }
        if keep == 0 {
            write_atomic(path, TS_HEADER.as_bytes()).with_context(ctx)?;
        }
    }
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .with_context(ctx)
}

impl Campaign {
    pub(super) fn timeseries_row(&self, f: &mut std::fs::File, elapsed: f64) -> Result<()> {
        let c = &self.state.counters;
        let r = self.state.coverage.report();
        let line = format!(
            "{:.3},{},{:.3},{:.3},{:.3},{:.3},{:.3},{},{}\n",
            elapsed,
            c.executions,
            if elapsed > 0.0 {
                c.executions as f64 / elapsed
            } else {
                0.0
            },
            r.op_types.percent,
            r.op_pairs.percent,
            r.params.percent,
            r.inputs.percent,
            c.findings,
            c.illegal()
        );
        f.write_all(line.as_bytes())
            .context("writing timeseries.csv")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn resumed_timeseries_drops_a_partial_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("timeseries.csv");
        let mut f = open_timeseries(&p, true).unwrap();
        f.write_all(b"1.0,1,1.0,1,1,1,1,0,0\n2.0,2,1.").unwrap();
        drop(f);
        let mut f = open_timeseries(&p, false).unwrap();
        f.write_all(b"3.0,3,1.0,1,1,1,1,0,0\n").unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(
            text,
            format!("{TS_HEADER}1.0,1,1.0,1,1,1,1,0,0\n3.0,3,1.0,1,1,1,1,0,0\n")
        );
    }
}
