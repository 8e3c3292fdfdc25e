//! The bench's inputs, read in place: the workload (`PROMPTPACK_BENCH_WORKLOAD`; its folder,
//! template and snippets through `translate.rs`, which `build.rs` shares), its expected output,
//! the values of the timed case, and where the conformance corpus is
//! (`PROMPTPACK_CONFORMANCE_DIR`).

use crate::translate::{self, Workload};
use promptpack::ValueRef;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// What the render and live sections time: the workload, its
/// `expected-output.md` and the timed values.
pub struct Inputs {
    /// The template and snippets, trimmed as promptpack reads them; `dir` is the folder.
    pub workload: Workload,
    /// `expected-output.md`: every contender's output must equal it.
    pub expected: String,
    /// The values of the timed case.
    pub values: Values,
}

impl Inputs {
    /// Reads the workload folder; the error says which folder and how to choose another.
    pub fn read() -> Result<Inputs, String> {
        let dir = translate::workload_dir();
        let read = || -> Result<_, String> {
            let workload = Workload::read(&dir)?;
            let expected_path = dir.join("expected-output.md");
            let expected = std::fs::read_to_string(&expected_path)
                .map_err(|e| format!("{}: {e}", expected_path.display()))?;
            let values = Values::timed(&dir)?;
            Ok(Inputs {
                workload,
                expected,
                values,
            })
        };
        read().map_err(|e| {
            format!(
                "cannot read the workload at {} (set PROMPTPACK_BENCH_WORKLOAD): {e}",
                dir.display()
            )
        })
    }
}

/// The conformance corpus: `PROMPTPACK_CONFORMANCE_DIR`, or `shared/conformance/openmaic`
/// beside the repository.
pub fn corpus_dir() -> PathBuf {
    match std::env::var_os("PROMPTPACK_CONFORMANCE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/conformance/openmaic"
        )),
    }
}

/// The values of the timed case (the workload README's table).
pub struct Values {
    /// Text values by name.
    pub texts: Vec<(&'static str, String)>,
    /// Flag values by name.
    pub flags: Vec<(&'static str, bool)>,
}

impl Values {
    fn timed(workload: &Path) -> Result<Values, String> {
        let state = workload.join("state_context.md");
        let state =
            std::fs::read_to_string(&state).map_err(|e| format!("{}: {e}", state.display()))?;
        let texts = [
            ("agentName", "Atlas"),
            ("userName", "Dana Whitfield"),
            ("projectName", "orbit-api"),
            ("workspaceRoot", "/home/dana/src/orbit-api"),
            ("primaryLanguage", "TypeScript"),
            ("currentDate", "2025-03-14"),
            ("responseLanguage", "English (US)"),
        ];
        let mut texts: Vec<(&'static str, String)> =
            texts.iter().map(|&(k, v)| (k, v.to_owned())).collect();
        texts.push(("stateContext", state));
        Ok(Values {
            texts,
            flags: vec![("hasTools", true), ("isTeacher", false)],
        })
    }

    /// The text value `name` (empty when there is none).
    pub fn text(&self, name: &str) -> &str {
        self.texts
            .iter()
            .find(|(n, _)| *n == name)
            .map_or("", |(_, v)| v)
    }

    /// The flag `name`, or whether the text `name` is non-empty.
    pub fn flag(&self, name: &str) -> bool {
        match self.flags.iter().find(|(n, _)| *n == name) {
            Some(&(_, b)) => b,
            None => !self.text(name).is_empty(),
        }
    }

    /// The values as a JSON object.
    pub fn json(&self) -> Map<String, Value> {
        let mut map = Map::new();
        for (k, v) in &self.texts {
            map.insert((*k).to_owned(), Value::String(v.clone()));
        }
        for &(k, b) in &self.flags {
            map.insert(k.to_owned(), Value::Bool(b));
        }
        map
    }

    /// The values as promptpack's `&[(&str, ValueRef)]` `Vars`.
    pub fn value_refs(&self) -> Vec<(&str, ValueRef<'_>)> {
        let texts = self.texts.iter().map(|(k, v)| (*k, ValueRef::Str(v)));
        texts
            .chain(self.flags.iter().map(|&(k, b)| (k, ValueRef::Bool(b))))
            .collect()
    }
}
