//! What the campaign does with a judged mutant and with the minimizer's results: a new
//! signature gets a bug bundle, a known one a hit; seed findings, examples of our own failures,
//! bundles merged into one root cause or left unconfirmed, and the documents renewed.
use super::*;

impl Campaign {
    /// Counts a finding that is not filed under its verdict (an example of our own failures
    /// is kept).
    fn count_unfiled(&mut self, job: &Job, t: &Triaged) -> Result<()> {
        let c = &mut self.state.counters;
        match &t.verdict {
            Verdict::Report => {}
            Verdict::Unstable(_) => c.unstable += 1,
            Verdict::Undefined(_) => c.undefined += 1,
            Verdict::Unwitnessed(_) => c.unwitnessed += 1,
            Verdict::Unsupported(_) => c.unsupported += 1,
            Verdict::Unlocalized(_) => c.unlocalized += 1,
            Verdict::Ours(why) => {
                c.ours += 1;
                if why.starts_with("the reference") || why.starts_with("the other backends") {
                    c.reference_failures += 1;
                }
                return self.keep_ours(job, t);
            }
        }
        Ok(())
    }

    /// Counts a triaged finding under its verdict; a reported one is filed under its
    /// signature: a new signature gets a bug bundle (and goes to the minimizer), a known one a
    /// hit.
    pub(super) fn record(&mut self, job: &Job, t: Triaged, runs: &MutantRuns) -> Result<()> {
        let inputs = job.inputs.as_ref().expect("executed");
        if t.verdict != Verdict::Report {
            return self.count_unfiled(job, &t);
        }
        let Triaged {
            finding: f,
            localization,
            intermediates,
            native,
            ground_run,
            blamed_inputs,
            ..
        } = t;
        // Judged by peers: the bundle's expected values are the ground's.
        let peer = ground_run.map(|g| runs.with_ground(&g));
        let runs = peer.as_ref().unwrap_or(runs);
        let c = &mut self.state.counters;
        c.findings += 1;
        *c.findings_by_kind
            .entry(f.kind.name().to_string())
            .or_default() += 1;
        let sig = f.signature();
        let seen = Seen {
            iteration: job.iteration,
            elapsed_s: self.state.elapsed_s,
        };
        // A signature merged into another bundle counts there.
        let filed = self
            .state
            .signatures
            .get(&sig)
            .map(|e| e.alias_of.clone().unwrap_or_else(|| sig.clone()));
        if let Some(filed) = filed
            && let Some(e) = self.state.signatures.get_mut(&filed)
        {
            e.hits += 1;
            e.last_seen = seen;
            e.note(&f);
            self.dirty.insert(filed);
            return Ok(());
        }
        let id = f.signature_id();
        let mut entry = SigEntry::first(id.clone(), &f, seen);
        // In a shared campaign the first instance to claim a signature files it.
        if let (Some(shared), Some(st)) = (&self.shared, &self.state.sync) {
            let claimed = sync::claim(&shared.dir, &st.instance, &sig, &id)
                .with_context(|| format!("claiming a signature in {}", shared.dir.display()))?;
            if let sync::Claim::Theirs { instance, id } = claimed {
                entry.filed_by = Some(format!("{instance}/{id}"));
                self.state.signatures.insert(sig, entry);
                if let Some(st) = &mut self.state.sync {
                    st.filed_elsewhere += 1;
                }
                return Ok(());
            }
        }
        let dir = self.out.join("findings").join(&id);
        let whole = self.whole_model(job);
        let whole_model = whole.as_ref().map(|w| match (w, &self.minimizer) {
            (Err(why), _) => why.clone(),
            (Ok(_), Some(_)) => "to be checked by the minimizer".to_string(),
            (Ok(_), None) => "not checked (--no-minimize)".to_string(),
        });
        let seed = &self.seeds[job.seed];
        let found = bundle::Found {
            finding: &f,
            signature: &sig,
            entry: &entry,
            localization: localization.as_ref(),
            model: &job.mutant,
            inputs,
            input_seed: job.input_seed,
            runs,
            native: native.as_ref(),
            blamed_inputs: blamed_inputs.as_ref(),
            seed: &seed.name,
            seed_file: Some(&seed.file),
            derived_from: seed.origin.as_ref(),
            whole_model,
            iteration: job.iteration,
            trace: &job.records,
            config: serde_json::to_value(&self.config)?,
            tolerance: self.tolerance,
        };
        if let Err(e) = bundle::write_new(&dir, &found) {
            // A value the bundle's formats cannot hold is a failure of ours on this mutant,
            // never the end of the campaign; a failing disk still stops it.
            let content = e
                .chain()
                .filter_map(|c| c.downcast_ref::<mutagraph_oracles::bundle::BundleError>())
                .any(|b| !matches!(b, mutagraph_oracles::bundle::BundleError::Io { .. }));
            if !content {
                return Err(e);
            }
            tracing::error!("a finding's bundle cannot be written (a bug of ours): {e:#}");
            bundle::discard_new(&dir);
            let c = &mut self.state.counters;
            c.findings -= 1;
            if let Some(n) = c.findings_by_kind.get_mut(f.kind.name()) {
                *n -= 1;
            }
            c.ours += 1;
            return Ok(());
        }
        let c = &mut self.state.counters;
        c.unique_findings += 1;
        self.last_find = Some(self.state.elapsed_s);
        self.state.signatures.insert(sig.clone(), entry);
        if let Some(m) = &self.minimizer
            && crate::findings::minimizable(f.kind)
        {
            m.submit(MinimizeJob {
                signature: sig,
                dir,
                finding: f,
                model: job.mutant.bytes().to_vec(),
                inputs: inputs.clone(),
                intermediates,
                input_seed: job.input_seed,
                trace: Some((self.seeds[job.seed].model.to_bytes(), job.records.clone())),
                whole: whole.and_then(Result::ok),
            });
        }
        Ok(())
    }

    /// For a finding on a seed derived from a user's seed (a window, the reduced model): the
    /// same mutations replayed on the user's whole model (as admitted), with its inputs, for
    /// the minimizer to check once there; or why it cannot be. `None` for other seeds.
    fn whole_model(&self, job: &Job) -> Option<Result<WholeModel, String>> {
        let origin = self.seeds[job.seed].origin.as_ref()?;
        let basis = origin.basis.as_ref().unwrap_or(&origin.seed);
        let whole = self.seeds.iter().position(|s| &s.name == basis)?;
        let (m, skipped) = mutagraph_mutators::mutation::replay_trace(
            &self.seeds[whole].model,
            &job.records,
            |_| true,
        );
        if !skipped.is_empty() {
            return Some(Err(format!(
                "not checked: {} of its {} mutations do not apply there",
                skipped.len(),
                job.records.len()
            )));
        }
        Some(
            inputs::generate(&m, job.input_seed, &self.seed_inputs[whole].inputs)
                .map(|inputs| WholeModel {
                    model: m.to_bytes(),
                    inputs,
                })
                .map_err(|e| format!("not checked: its inputs cannot be made: {e}")),
        )
    }

    /// Counts the unmutated seed `seed`'s run (not an execution: those are mutants') and
    /// files what the triage
    /// reported on it (iteration 0, no mutation records): seed findings.
    pub(super) fn file_seed_findings(
        &mut self,
        seed: usize,
        run: admission::SeedRun,
    ) -> Result<()> {
        self.state.counters.seed_runs += 1;
        let job = Job {
            iteration: 0,
            op: 0,
            seed,
            selected: None,
            mutant: run.model,
            timeout: self.seed_inputs[seed].timeout,
            inputs: Some(run.inputs),
            input_seed: run.input_seed,
            records: Vec::new(),
            diverse: false,
            items: Vec::new(),
        };
        for t in run.judged {
            let known = self.state.signatures.contains_key(&t.finding.signature());
            if t.verdict == Verdict::Report && !known {
                self.state.counters.seed_findings += 1;
                eprintln!(
                    "seed {}: {} on the unmutated seed: {}",
                    self.seeds[seed].name,
                    t.finding.backends.join("+"),
                    t.finding.message.lines().next().unwrap_or_default()
                );
            }
            self.record(&job, t, &run.runs)?;
        }
        Ok(())
    }

    /// Keeps the first example of each of mutagraph's own failures (by reason and message)
    /// under `ours/<id>/`: the model, its inputs and `why.txt`, for fixing the reference, the
    /// interpreter or the generator. Never a finding.
    pub(super) fn keep_ours(&mut self, job: &Job, t: &Triaged) -> Result<()> {
        let Verdict::Ours(why) = &t.verdict else {
            return Ok(());
        };
        let key = format!(
            "{}|{}|{}",
            t.finding.backends.join("+"),
            why.split(':').next().unwrap_or_default(),
            mutagraph_oracles::core_message(&t.finding.message)
        );
        if self.state.ours_kept.len() >= OURS_KEPT || self.state.ours_kept.contains(&key) {
            return Ok(());
        }
        let id = format!(
            "{}-{:08x}",
            t.finding.kind,
            mutagraph_oracles::finding::fnv1a(key.as_bytes()) as u32
        );
        let dir = self.out.join("ours").join(&id);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        write_atomic(&dir.join("model.onnx"), job.mutant.bytes())
            .with_context(|| format!("writing {}", dir.display()))?;
        if let Some(inputs) = &job.inputs {
            mutagraph_oracles::bundle::write_npz(
                &dir.join("inputs.npz"),
                &inputs
                    .iter()
                    .filter_map(|(n, v)| Some((n.clone(), v.tensor()?.clone())))
                    .collect::<Vec<_>>(),
            )?;
        }
        let text = format!(
            "{why}\n\nfinding: {} on {}\n{}\n",
            t.finding.kind,
            t.finding.backends.join(", "),
            t.finding.message
        );
        write_atomic(&dir.join("why.txt"), text.as_bytes())
            .with_context(|| format!("writing {}", dir.display()))?;
        self.state.ours_kept.insert(key);
        Ok(())
    }

    /// On resume: bundles whose minimization a stop interrupted go back to the minimizer.
    pub(super) fn requeue_unminimized(&self) {
        let Some(m) = &self.minimizer else { return };
        for (sig, e) in &self.state.signatures {
            if !crate::findings::minimizable(e.kind) || e.alias_of.is_some() {
                continue;
            }
            let dir = self.out.join("findings").join(&e.id);
            let Ok(meta) = bundle::read_meta(&dir) else {
                continue;
            };
            if meta.minimized.is_some() {
                continue;
            }
            let Ok(model) = Model::load(dir.join("original.onnx")) else {
                continue;
            };
            let Ok(inputs) = inputs::read(&model, &dir.join("inputs")) else {
                continue;
            };
            let seed = self.seeds.iter().find(|s| s.name == meta.seed);
            m.submit(MinimizeJob {
                signature: sig.clone(),
                dir,
                finding: meta.finding.clone(),
                model: model.to_bytes(),
                inputs,
                intermediates: None,
                input_seed: meta.input_seed,
                trace: seed.map(|s| (s.model.to_bytes(), meta.trace.clone())),
                whole: None,
            });
        }
    }

    /// Files the bundle of `dup` under the bundle of `primary`, whose root cause minimization
    /// showed it to be (`root`): `primary` takes its hits and every later one, and the bundle
    /// moves, whole, from `findings/` to `merged/`.
    pub(super) fn merge(&mut self, dup: &str, primary: &str, root: &str) -> Result<()> {
        let Some(d) = self.state.signatures.get(dup).cloned() else {
            return Ok(());
        };
        let Some(p) = self.state.signatures.get_mut(primary) else {
            return Ok(());
        };
        p.absorb(&d);
        p.aliases.push(dup.to_string());
        let primary_id = p.id.clone();
        for e in self.state.signatures.values_mut() {
            if e.alias_of.as_deref() == Some(dup) {
                e.alias_of = Some(primary.to_string());
            }
        }
        if let Some(e) = self.state.signatures.get_mut(dup) {
            e.alias_of = Some(primary.to_string());
        }
        let from = self.out.join("findings").join(&d.id);
        bundle::note_merged(&from, &primary_id, root)?;
        self.move_bundle(&d.id, "merged")?;
        self.state.counters.unique_findings = self.state.counters.unique_findings.saturating_sub(1);
        self.state.counters.merged += 1;
        self.dirty.insert(primary.to_string());
        Ok(())
    }

    /// Moves bundle `id`, whole, from `findings/` to `to/` (replacing an older bundle of that
    /// id there).
    pub(super) fn move_bundle(&self, id: &str, to: &str) -> Result<()> {
        let from = self.out.join("findings").join(id);
        let to_dir = self.out.join(to);
        std::fs::create_dir_all(&to_dir)
            .with_context(|| format!("creating {}", to_dir.display()))?;
        let to = to_dir.join(id);
        if to.exists() {
            std::fs::remove_dir_all(&to).with_context(|| format!("removing {}", to.display()))?;
        }
        std::fs::rename(&from, &to)
            .with_context(|| format!("moving {} to {}", from.display(), to.display()))
    }

    /// Withdraws the bundle of a finding that its own model and inputs, run again in fresh
    /// workers, did not show: it moves to `unconfirmed/` with what the second run showed, and
    /// the signature is forgotten, so a later hit files it anew and is checked again.
    pub(super) fn unconfirm(&mut self, n: &NotShown) -> Result<()> {
        let Some(e) = self.state.signatures.get(&n.signature) else {
            return Ok(());
        };
        if e.alias_of.is_some() || !e.aliases.is_empty() {
            return Ok(());
        }
        let id = e.id.clone();
        let from = self.out.join("findings").join(&id);
        if !from.exists() {
            return Ok(());
        }
        bundle::note_not_shown(&from, &n.shown)?;
        self.move_bundle(&id, "unconfirmed")?;
        self.state.signatures.remove(&n.signature);
        self.dirty.remove(&n.signature);
        if let (Some(shared), Some(st)) = (&self.shared, &self.state.sync) {
            sync::release(&shared.dir, &st.instance, &n.signature)
                .with_context(|| format!("releasing a claim in {}", shared.dir.display()))?;
        }
        self.state.counters.unique_findings = self.state.counters.unique_findings.saturating_sub(1);
        self.state.counters.unconfirmed += 1;
        Ok(())
    }

    /// Files the minimizer's results and rewrites the `meta.json` of signatures hit since the
    /// last commit.
    pub(super) fn flush_findings(&mut self) -> Result<()> {
        let results = self
            .minimizer
            .as_ref()
            .map(|m| m.results())
            .unwrap_or_default();
        for finished in results {
            let done = match finished {
                Finished::Minimized(done) => done,
                Finished::NotShown(n) => {
                    self.unconfirm(&n)?;
                    continue;
                }
            };
            bundle::write_minimized(&done.dir, &done)?;
            self.state.counters.minimized += 1;
            let root = done.finding.root_signature();
            match self.state.roots.get(&root).cloned() {
                Some(primary) if primary != done.signature => {
                    self.merge(&done.signature, &primary, &root)?
                }
                _ => {
                    self.state.roots.insert(root, done.signature.clone());
                }
            }
        }
        for sig in std::mem::take(&mut self.dirty) {
            if let Some(e) = self.state.signatures.get(&sig) {
                let dir = self.out.join("findings").join(&e.id);
                // A bundle merged away just before a stop, with the state not yet saved,
                // is under `merged/`: its hits stay counted in the state.
                if dir.exists() {
                    bundle::update_hits(&dir, e)?;
                    self.stale_docs.entry(sig).or_insert_with(Instant::now);
                }
            }
        }
        self.renew_stale_docs(false)
    }

    /// Renders again the documents of bundles hit since they were rendered: those waiting
    /// for [`bundle::DOCS_EVERY`] or more, or all of them (`all`, at the end of a session).
    pub(super) fn renew_stale_docs(&mut self, all: bool) -> Result<()> {
        let due: Vec<String> = self
            .stale_docs
            .iter()
            .filter(|(_, since)| all || since.elapsed() >= bundle::DOCS_EVERY)
            .map(|(s, _)| s.clone())
            .collect();
        for sig in due {
            self.stale_docs.remove(&sig);
            if let Some(e) = self.state.signatures.get(&sig) {
                let dir = self.out.join("findings").join(&e.id);
                if dir.exists() {
                    bundle::renew_docs(&dir)?;
                }
            }
        }
        Ok(())
    }
}
