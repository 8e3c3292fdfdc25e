//! The conformance corpus: the original loader's real prompts and its 97
//! golden renders (`../shared/conformance/openmaic`, AGPL data read in
//! place, never copied into this repository), for every test that renders
//! them, from files or from a catalog.

use promptpack::{Library, Prompt, Result};
use std::path::{Path, PathBuf};

/// The corpus README promises this many golden renders.
pub const GOLDEN_COUNT: usize = 97;

/// The corpus folder: `PROMPTPACK_CONFORMANCE_DIR`, else `shared/` beside
/// the repository. Panics, failing the test, when it is not there.
pub fn corpus_dir() -> PathBuf {
    let dir = match std::env::var_os("PROMPTPACK_CONFORMANCE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/openmaic")
        }
    };
    assert!(
        dir.join("golden").is_dir(),
        "the conformance corpus is not at {}: set PROMPTPACK_CONFORMANCE_DIR to the folder \
         holding OpenMAIC's templates/, snippets/ and golden/",
        dir.display()
    );
    dir
}

/// One golden render: a prompt, its values and the original's output.
#[derive(Debug, Clone)]
pub struct Golden {
    /// The file's stem, as failures name it.
    pub name: String,
    /// The prompt rendered.
    pub prompt_id: String,
    /// The values, as JSON.
    pub variables: serde_json::Value,
    /// The expected system part.
    pub system: String,
    /// The expected user part (`""` for none).
    pub user: String,
}

impl Golden {
    /// Renders this golden's prompt from `library`: strict, except the
    /// `--partial` sets, which leave variables out on purpose (every other
    /// set rendering strictly proves strictness costs nothing on complete
    /// input).
    pub fn render(&self, library: &Library) -> Result<Prompt> {
        if self.name.ends_with("--partial") {
            library.build_prompt_lenient(&self.prompt_id, &self.variables)
        } else {
            library.build_prompt(&self.prompt_id, &self.variables)
        }
    }

    /// What differs between `rendered` and the golden: `None` when it
    /// matches byte for byte, else a failure line naming the golden, `how`
    /// it was rendered and the first difference.
    pub fn compare(&self, rendered: Result<Prompt>, how: &str) -> Option<String> {
        let prompt = match rendered {
            Ok(prompt) => prompt,
            Err(e) => return Some(format!("{} ({how}): {e}", self.name)),
        };
        let user = prompt.user.as_deref().unwrap_or("");
        let mut failures = Vec::new();
        for (part, got, want) in [
            ("system", prompt.system.as_str(), self.system.as_str()),
            ("user", user, self.user.as_str()),
        ] {
            if got != want {
                failures.push(format!(
                    "{} ({how}): {part} differs\n{}",
                    self.name,
                    first_difference(got, want)
                ));
            }
        }
        (!failures.is_empty()).then(|| failures.join("\n"))
    }
}

/// Every golden of the corpus at `dir`, by file name; panics unless there
/// are [`GOLDEN_COUNT`].
pub fn goldens(dir: &Path) -> Vec<Golden> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir.join("golden"))
        .expect("golden folder")
        .map(|e| e.expect("golden entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    assert_eq!(paths.len(), GOLDEN_COUNT, "the golden folder is incomplete");
    paths
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).expect("golden file");
            let golden: serde_json::Value = serde_json::from_str(&text).expect("golden JSON");
            let text_at = |pointer: &str| {
                golden
                    .pointer(pointer)
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_else(|| panic!("{}: no {pointer}", path.display()))
                    .to_string()
            };
            Golden {
                name: path
                    .file_stem()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
                prompt_id: text_at("/promptId"),
                variables: golden["variables"].clone(),
                system: text_at("/output/system"),
                user: text_at("/output/user"),
            }
        })
        .collect()
}

/// Where `got` and `want` part, with 40 bytes of context around it.
pub fn first_difference(got: &str, want: &str) -> String {
    let at = got
        .bytes()
        .zip(want.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let context = |s: &str| {
        let start = s.floor_char_boundary(at.saturating_sub(40));
        let end = s.ceil_char_boundary((at + 40).min(s.len()));
        format!("{:?}", &s[start..end])
    };
    format!(
        "  at byte {at}\n  got:  {}\n  want: {}",
        context(got),
        context(want)
    )
}
