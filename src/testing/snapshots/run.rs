//! Running a snapshot suite: [`SnapshotRun`] checks each case for
//! survivors, compares it with its stored snapshot, writes what insta would
//! and fails once at the end with a summary.

#[allow(unused_imports)]
use crate::testing::prelude::*;

impl Snapshots {
    /// Starts a run: resolves the survivor check's delimiters (from
    /// `promptpack.toml` in `manifest_dir` unless [`Snapshots::survivors`]
    /// or [`Snapshots::default_delimiters`] gave them), reads the
    /// prompt files there (`templates/`, `snippets/`, or the folders
    /// `promptpack.toml` names) to say where a survivor comes from, reads
    /// insta's environment (`INSTA_UPDATE`, `CI`, `INSTA_FORCE_PASS`,
    /// `INSTA_PENDING_DIR`, `INSTA_WORKSPACE_ROOT`) and collects failures
    /// until [`SnapshotRun::finish`].
    ///
    /// # Panics
    ///
    /// When `promptpack.toml` exists and cannot be read or is not valid, or
    /// `INSTA_UPDATE` has a value insta does not know.
    #[track_caller]
    pub fn start(self, manifest_dir: &str) -> SnapshotRun {
        let config = Config::load(manifest_dir);
        let chosen = (self.survivors.chose_delimiters)
            .then(|| self.survivors.delimiters.clone())
            .or_else(|| self.compiled_with.clone());
        let delimiters = match (chosen, &config) {
            (Some(d), _) => d,
            (None, Ok(config)) => config.delimiters().clone(),
            (None, Err(e)) => panic!(
                "promptpack snapshots: cannot read the delimiters from {manifest_dir}/{}: {e}",
                promptpack_load::CONFIG_FILE
            ),
        };
        let config = config.unwrap_or_else(|_| Config::new(manifest_dir));
        let compiled_with = self
            .compiled_with
            .clone()
            .unwrap_or_else(|| config.delimiters().clone());
        let files = PromptFiles::read(&config, compiled_with);
        let store = match Store::from_env(manifest_dir) {
            Ok(store) => store,
            Err(e) => panic!("promptpack snapshots: {e}"),
        };
        let survivors = Survivors {
            allowances: self.survivors.allowances.clone(),
            ..Survivors::with_delimiters(&delimiters)
        };
        SnapshotRun {
            options: self,
            survivors,
            files,
            store,
            cases: 0,
            problems: Vec::new(),
            accepted: Vec::new(),
            removed: 0,
        }
    }
}

/// A snapshot suite in progress: checks each case for survivors, compares it
/// with its stored snapshot, writes new and changed ones where insta would,
/// and fails at the end, once, with every failure.
///
/// [`snapshot_prompts!`](crate::snapshot_prompts) expands to this; write it
/// out to choose the prompts or the options case by case:
///
/// ```ignore
/// let prompts = PromptTable::new(&PromptId::ALL, PromptId::as_str, PromptId::variables,
///     PromptId::conditions, PromptId::render_generated);
/// let mut run = Snapshots::new().start(env!("CARGO_MANIFEST_DIR"));
/// for case in run.cases(&prompts) {
///     run.check(&case, module_path!());
/// }
/// run.finish();
/// ```
///
/// Nothing is printed while the run goes on: [`SnapshotRun::finish`] prints
/// one summary.
#[derive(Debug)]
pub struct SnapshotRun {
    pub(in crate::testing) options: Snapshots,
    pub(in crate::testing) survivors: Survivors,
    pub(in crate::testing) files: PromptFiles,
    pub(in crate::testing) store: Store,
    pub(in crate::testing) cases: usize,
    pub(in crate::testing) problems: Vec<Problem>,
    /// Snapshots written as accepted `.snap` files.
    pub(in crate::testing) accepted: Vec<PathBuf>,
    /// Pending `.snap.new` files removed.
    pub(in crate::testing) removed: usize,
}

/// One entry of a run's summary.
#[derive(Debug)]
pub(in crate::testing) enum Problem {
    /// About one case: `name: what happened`, maybe with detail lines.
    Case(String),
    /// The same survivors in one part of a prompt, in one case or more.
    Survivors {
        /// `system.md`, `user.md` or `message N: role`.
        part: String,
        key: (&'static str, Vec<String>),
        /// The first case's report, with its rendered positions.
        report: SurvivorReport,
        cases: Vec<String>,
    },
}

/// How many other cases a grouped survivor entry names before `and N more`.
pub(in crate::testing) const MAX_NAMED_CASES: usize = 6;

impl Problem {
    pub(in crate::testing) fn text(&self) -> String {
        match self {
            Problem::Case(text) => text.clone(),
            Problem::Survivors {
                part,
                report,
                cases,
                ..
            } => {
                let (first, others) = cases.split_first().map_or(("", &[][..]), |(f, o)| (f, o));
                let mut label = format!("{first}, {part}");
                if !others.is_empty() {
                    let named: Vec<&str> = others
                        .iter()
                        .take(MAX_NAMED_CASES)
                        .map(String::as_str)
                        .collect();
                    label.push_str(&format!(" (also in {}", named.join(", ")));
                    if others.len() > MAX_NAMED_CASES {
                        label.push_str(&format!(
                            " and {} more cases",
                            others.len() - MAX_NAMED_CASES
                        ));
                    }
                    label.push(')');
                }
                let mut text = String::new();
                // Writing to a String cannot fail.
                let _ = report.clone().labelled(label).write_list(&mut text);
                text
            }
        }
    }
}

impl SnapshotRun {
    /// Every case of every prompt (see [`Snapshots::cases`]), with the
    /// combinations that render the same text as an earlier one of the same
    /// prompt folded into it ([`Case::covers`]): each distinct text is
    /// snapshotted once, named by the first combination that produced it.
    pub fn cases<Id: Copy + 'static>(&self, prompts: &PromptTable<Id>) -> Vec<Case<Id>> {
        fold_identical(self.options.cases(prompts))
    }

    /// The survivor check of this run.
    pub fn survivors(&self) -> &Survivors {
        &self.survivors
    }

    /// Checks `case`: first for survivors (a case with survivors is reported
    /// and not snapshotted, so that no run accepts one), then against its
    /// stored snapshot, as `insta::assert_snapshot!(case.name, case.snapshot())`
    /// with the case's [`description`](Case::description) would in the
    /// calling file and module (`module_path!()`), but without printing or
    /// panicking: a difference is recorded for [`SnapshotRun::finish`].
    ///
    /// The file is insta's, where insta puts it (next to the calling file,
    /// in `snapshots/` or the `snapshot_path` of the bound
    /// `insta::Settings`, named `<module>__<case>.snap`), and what is written
    /// follows `INSTA_UPDATE` as insta does: a `.snap.new` to review with
    /// `cargo insta review` by default, nothing on CI or with `no`, the
    /// `.snap` itself with `always` or `force` (or `unseen` for a new one),
    /// removing the case's leftover `.snap.new`. A passing case's leftover
    /// `.snap.new`, and those of the combinations it [covers](Case::covers),
    /// are removed as well.
    #[track_caller]
    pub fn check<Id>(&mut self, case: &Case<Id>, module_path: &str) {
        let caller = std::panic::Location::caller();
        let (file, line) = (caller.file(), caller.line());
        self.cases += 1;
        for covered in &case.covers {
            let target = self.store.target(covered, file, module_path);
            self.remove_pending(&target.pending);
        }
        let target = self.store.target(&case.name, file, module_path);
        if self.record_survivors(case) {
            self.remove_pending(&target.pending);
            return;
        }
        self.store.remember(&target.snap);
        let new = normalized(&case.snapshot());
        let (old, unreadable) = match stored_snapshot(&target.snap) {
            Ok(old) => (old, None),
            Err(e) => (None, Some(e)),
        };
        let description = case.description();
        if old.as_deref() == Some(new.as_str()) {
            self.remove_pending(&target.pending);
            if self.store.update == Update::Force {
                let text = snap_file(&target.source, None, &description, &new);
                if let Err(e) = write_file(&target.snap, &text) {
                    let shown = self.store.shown(&target.snap, &target.workspace);
                    self.problems.push(Problem::Case(format!(
                        "{}: cannot write {shown}: {e}",
                        case.name
                    )));
                }
            }
            return;
        }
        let (what, detail) = match (&old, unreadable) {
            (Some(old), _) => changed(old, &new),
            (None, Some(e)) => (format!("stored snapshot unreadable ({e})"), String::new()),
            (None, None) => ("new snapshot".to_string(), String::new()),
        };
        let fail = |text: String| (!self.store.force_pass).then_some(Problem::Case(text));
        let problem = match self.store.update.on_difference(old.is_some()) {
            Write::Accepted => {
                let text = snap_file(&target.source, None, &description, &new);
                match write_file(&target.snap, &text) {
                    Ok(()) => {
                        self.remove_pending(&target.pending);
                        self.accepted.push(target.snap.clone());
                        None
                    }
                    Err(e) => {
                        let shown = self.store.shown(&target.snap, &target.workspace);
                        Some(Problem::Case(format!(
                            "{}: {what}, cannot write {shown}: {e}",
                            case.name
                        )))
                    }
                }
            }
            Write::Pending => {
                let text = snap_file(&target.source, Some(line), &description, &new);
                let shown = self.store.shown(&target.pending, &target.workspace);
                match write_file(&target.pending, &text) {
                    Ok(()) => fail(format!(
                        "{}: {what}, pending review in {shown}{detail}",
                        case.name
                    )),
                    Err(e) => Some(Problem::Case(format!(
                        "{}: {what}, cannot write {shown}: {e}",
                        case.name
                    ))),
                }
            }
            Write::Nothing(why) => fail(format!(
                "{}: {what}, not written ({why}){detail}",
                case.name
            )),
        };
        self.problems.extend(problem);
    }

    /// Runs `assert` on `case` with insta settings that describe the case
    /// (and omit the expression), after the survivor check: a case with
    /// survivors is reported and `assert` is not called. A panic in `assert`
    /// (a snapshot that does not match) is recorded, not propagated, so that
    /// every case runs, and its message is kept for the summary instead of
    /// being printed: a quiet panic hook stands in for the current one on
    /// this thread while `assert` runs.
    ///
    /// Use it for a snapshot of your own making; for the prompt text itself
    /// [`SnapshotRun::check`] is quieter still: what insta's own macro prints
    /// when a snapshot differs (a diff, "Stopped on the first failure") it
    /// prints from inside `assert`, where it cannot be silenced.
    pub fn snapshot<Id>(&mut self, case: &Case<Id>, assert: impl FnOnce(&Case<Id>)) {
        self.cases += 1;
        if self.record_survivors(case) {
            return;
        }
        let mut settings = insta::Settings::clone_current();
        settings.set_description(case.description());
        settings.set_omit_expression(true);
        let outcome = {
            let _quiet = QuietPanics::enter();
            catch_unwind(AssertUnwindSafe(|| settings.bind(|| assert(case))))
        };
        if let Err(payload) = outcome {
            let message = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("the assertion panicked");
            self.problems
                .push(Problem::Case(format!("{}: {message}", case.name)));
        }
    }

    /// Records the survivors of both parts of `case` (or of its system
    /// message and each message of a conversation), with where their text
    /// comes from; `true` when there were any.
    pub(in crate::testing) fn record_survivors<Id>(&mut self, case: &Case<Id>) -> bool {
        let mut found = false;
        for (part, text) in case.parts() {
            let Err(mut report) = self.survivors.check(text) else {
                continue;
            };
            found = true;
            let file = match part {
                Part::System => FilePart::System,
                Part::User => FilePart::User,
                Part::Message(_) => FilePart::Messages,
            };
            report.origins = self
                .files
                .origins(case.prompt, file, text, &report.findings);
            let part = part.label().to_string();
            let key = (case.prompt, report.key());
            let same = self.problems.iter_mut().find_map(|p| match p {
                Problem::Survivors {
                    part: p,
                    key: k,
                    cases,
                    ..
                } if *p == part && *k == key => Some(cases),
                _ => None,
            });
            match same {
                Some(cases) => cases.push(case.name.clone()),
                None => self.problems.push(Problem::Survivors {
                    part,
                    key,
                    report,
                    cases: vec![case.name.clone()],
                }),
            }
        }
        found
    }

    pub(in crate::testing) fn remove_pending(&mut self, path: &Path) {
        if std::fs::remove_file(path).is_ok() {
            self.removed += 1;
        }
    }

    /// Passes quietly when every case passed (saying on stderr what it
    /// accepted or cleaned up, if anything); otherwise prints one summary on
    /// stderr, each failed case and each survivor once, and fails the test
    /// with it, without a second message or a backtrace.
    ///
    /// # Panics
    ///
    /// When a snapshot did not match, a case has a survivor that is not
    /// allowed, or there were no cases at all. The panic payload is the
    /// summary.
    #[track_caller]
    pub fn finish(self) {
        if self.cases == 0 {
            panic!("promptpack snapshots: no prompts to snapshot (is `PromptId::ALL` empty?)");
        }
        let mut notes = Vec::new();
        if !self.accepted.is_empty() {
            let n = self.accepted.len();
            notes.push(format!(
                "Accepted {n} snapshot{} ({}).",
                if n == 1 { "" } else { "s" },
                self.store.update.why_accepted()
            ));
        }
        if self.removed > 0 {
            let n = self.removed;
            notes.push(format!(
                "Removed {n} leftover .snap.new file{}.",
                if n == 1 { "" } else { "s" }
            ));
        }
        if self.problems.is_empty() {
            if !notes.is_empty() {
                eprintln!("promptpack snapshots: {}", notes.join(" "));
            }
            return;
        }
        let n = self.problems.len();
        let mut message = format!(
            "promptpack snapshots: {n} problem{} in {} case{}:",
            if n == 1 { "" } else { "s" },
            self.cases,
            if self.cases == 1 { "" } else { "s" },
        );
        for problem in &self.problems {
            message.push_str("\n- ");
            message.push_str(&problem.text().replace('\n', "\n  "));
        }
        if self.problems.iter().any(|p| matches!(p, Problem::Case(_))) {
            message.push_str(
                "\nReview new and changed snapshots with `cargo insta review` (or accept them all \
                 with INSTA_UPDATE=always).",
            );
        }
        if self
            .problems
            .iter()
            .any(|p| matches!(p, Problem::Survivors { .. }))
        {
            message.push_str(
                "\nA case with survivors is not snapshotted. Allow deliberate survivors with \
                 Snapshots::survivors(Survivors::new().allow(\"exact text\")), or allow_kind(..) \
                 or allow_fenced_code() of Survivors.",
            );
        }
        for note in notes {
            message.push('\n');
            message.push_str(&note);
        }
        eprintln!("{message}");
        // Not `panic!`: the panic hook would print the summary a second
        // time, with a backtrace of this function.
        std::panic::resume_unwind(Box::new(message));
    }
}

/// What a difference was, for the summary: `changed at line N` and the two
/// lines, or `new snapshot`.
pub(in crate::testing) fn changed(old: &str, new: &str) -> (String, String) {
    let (mut old_lines, mut new_lines) = (old.lines(), new.lines());
    let mut line = 1;
    loop {
        match (old_lines.next(), new_lines.next()) {
            (Some(a), Some(b)) if a == b => line += 1,
            (a, b) => {
                let side = |l: Option<&str>| l.map_or("(nothing)".to_string(), |l| clip(l, 100));
                return (
                    format!("changed at line {line}"),
                    format!("\n  - {}\n  + {}", side(a), side(b)),
                );
            }
        }
    }
}
