//! Snapshot files, as insta reads and writes them.

#[allow(unused_imports)]
use super::prelude::*;

/// insta's `INSTA_UPDATE` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Update {
    Auto,
    Always,
    New,
    Unseen,
    No,
    Force,
}

/// Where a new or changed snapshot goes.
pub(super) enum Write {
    /// The `.snap` itself.
    Accepted,
    /// A `.snap.new` beside it, for review.
    Pending,
    /// Nowhere, and why.
    Nothing(&'static str),
}

impl Update {
    pub(super) fn on_difference(self, exists: bool) -> Write {
        match self {
            Update::Auto if is_ci() => Write::Nothing("CI is set"),
            Update::Auto | Update::New => Write::Pending,
            Update::Unseen if exists => Write::Pending,
            Update::Always | Update::Force | Update::Unseen => Write::Accepted,
            Update::No => Write::Nothing("INSTA_UPDATE=no"),
        }
    }

    pub(super) fn why_accepted(self) -> &'static str {
        match self {
            Update::Force => "INSTA_UPDATE=force",
            Update::Unseen => "new ones, INSTA_UPDATE=unseen",
            _ => "INSTA_UPDATE=always",
        }
    }
}

/// Whether insta takes this for a CI run: it then writes nothing by default.
pub(super) fn is_ci() -> bool {
    match std::env::var("CI").ok().as_deref() {
        Some("false" | "0" | "") => false,
        None => std::env::var_os("TF_BUILD").is_some(),
        Some(_) => true,
    }
}

/// What a run reads from insta's environment.
#[derive(Debug)]
pub(super) struct Store {
    pub(super) manifest_dir: PathBuf,
    pub(super) update: Update,
    pub(super) force_pass: bool,
    pub(super) pending_dir: Option<PathBuf>,
    pub(super) workspace_root: Option<PathBuf>,
    pub(super) references: Option<PathBuf>,
}

/// Where one case's snapshot lives.
pub(super) struct Target {
    pub(super) workspace: PathBuf,
    pub(super) snap: PathBuf,
    pub(super) pending: PathBuf,
    /// The calling file, as the snapshot's `source`.
    pub(super) source: String,
}

impl Store {
    pub(super) fn from_env(manifest_dir: &str) -> Result<Store, String> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let update = match var("INSTA_UPDATE").as_deref() {
            None | Some("auto") => Update::Auto,
            Some("always" | "1") => Update::Always,
            Some("new") => Update::New,
            Some("unseen") => Update::Unseen,
            Some("no") => Update::No,
            Some("force") => Update::Force,
            Some(other) => {
                return Err(format!(
                    "INSTA_UPDATE={other} is not one of auto, always, new, unseen, no, force"
                ));
            }
        };
        Ok(Store {
            manifest_dir: PathBuf::from(manifest_dir),
            update,
            force_pass: var("INSTA_FORCE_PASS").is_some_and(|v| v != "0"),
            pending_dir: var("INSTA_PENDING_DIR").map(PathBuf::from),
            workspace_root: var("INSTA_WORKSPACE_ROOT").map(PathBuf::from),
            references: var("INSTA_SNAPSHOT_REFERENCES_FILE").map(PathBuf::from),
        })
    }

    /// The folder `file!()` paths are relative to: the cargo workspace,
    /// found as the nearest folder at or above the crate's in which `file`
    /// exists.
    pub(super) fn workspace(&self, file: &str) -> PathBuf {
        if let Some(root) = &self.workspace_root {
            return root.clone();
        }
        self.manifest_dir
            .ancestors()
            .find(|dir| dir.join(file).is_file())
            .unwrap_or(&self.manifest_dir)
            .to_path_buf()
    }

    /// Where insta keeps the snapshot `name` asserted in `file`, module
    /// `module_path`, with the insta settings bound now.
    pub(super) fn target(&self, name: &str, file: &str, module_path: &str) -> Target {
        let workspace = self.workspace(file);
        let settings = insta::Settings::clone_current();
        let mut file_name = String::new();
        if settings.prepend_module_to_snapshot() {
            file_name.push_str(&module_path.replace("::", "__"));
            file_name.push_str("__");
        }
        let name = match settings.snapshot_suffix() {
            Some(suffix) => format!("{name}@{suffix}"),
            None => name.to_string(),
        };
        file_name.push_str(&name.replace(['/', '\\'], "__"));
        file_name.push_str(".snap");
        let folder = Path::new(file).parent().unwrap_or(Path::new(""));
        let snap = workspace
            .join(folder)
            .join(settings.snapshot_path())
            .join(file_name);
        let pending_snap = match &self.pending_dir {
            Some(dir) => snap
                .strip_prefix(&workspace)
                .map_or_else(|_| snap.clone(), |relative| dir.join(relative)),
            None => snap.clone(),
        };
        let mut pending = pending_snap.into_os_string();
        pending.push(".new");
        Target {
            source: file.replace('\\', "/"),
            workspace,
            snap,
            pending: PathBuf::from(pending),
        }
    }

    /// Tells `cargo insta test --unreferenced` that the snapshot is in use,
    /// as insta's own assertion does.
    pub(super) fn remember(&self, snap: &Path) {
        if let Some(references) = &self.references {
            let line = format!("{}\n", snap.display());
            let file = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(references);
            if let Ok(mut file) = file {
                // Best effort, as in insta.
                let _ = std::io::Write::write_all(&mut file, line.as_bytes());
            }
        }
    }

    /// `path` for the summary: relative to the workspace where it is inside.
    pub(super) fn shown(&self, path: &Path, workspace: &Path) -> String {
        path.strip_prefix(workspace)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/")
    }
}

/// Snapshot text as insta compares and stores it: trailing whitespace
/// trimmed, line endings `\n`.
pub(super) fn normalized(text: &str) -> String {
    text.trim_end().replace("\r\n", "\n")
}

/// The stored snapshot's text, normalized; `None` when there is none.
pub(super) fn stored_snapshot(path: &Path) -> Result<Option<String>, String> {
    if !path.is_file() {
        return Ok(None);
    }
    let snapshot = insta::Snapshot::from_file(path).map_err(|e| e.to_string())?;
    Ok(snapshot.as_text().map(|text| normalized(&text.to_string())))
}

/// A snapshot file as insta writes it: the metadata (`assertion_line` only
/// in a pending `.snap.new`), `---`, the text.
pub(super) fn snap_file(source: &str, line: Option<u32>, description: &str, text: &str) -> String {
    let mut out = format!("---\nsource: {}\n", yaml_string(source));
    if let Some(line) = line {
        out.push_str(&format!("assertion_line: {line}\n"));
    }
    out.push_str(&format!("description: {}\n---\n", yaml_string(description)));
    out.push_str(text);
    out.push('\n');
    out
}

pub(super) fn write_file(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)?;
    }
    std::fs::write(path, text)
}

/// A YAML scalar as insta's emitter writes it: plain when that reads back
/// as the same string, else double-quoted with escapes.
pub(super) fn yaml_string(value: &str) -> String {
    let special_start = value
        .starts_with(['&', '*', '?', '|', '-', '<', '>', '=', '!', '%', '@', '.'])
        || value.starts_with(' ')
        || value.starts_with("0x");
    let special_char = value.contains(|c: char| {
        matches!(
            c,
            ':' | '{'
                | '}'
                | '['
                | ']'
                | ','
                | '#'
                | '`'
                | '"'
                | '\''
                | '\\'
                | '\0'..='\x06'
                | '\t'
                | '\n'
                | '\r'
                | '\x0e'..='\x1a'
                | '\x1c'..='\x1f'
        )
    });
    let keyword = [
        "yes", "Yes", "YES", "no", "No", "NO", "True", "TRUE", "true", "False", "FALSE", "false",
        "on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL", "~",
    ]
    .contains(&value);
    let number = value.parse::<i64>().is_ok() || value.parse::<f64>().is_ok();
    if !(value.is_empty()
        || value.ends_with(' ')
        || special_start
        || special_char
        || keyword
        || number)
    {
        return value.to_string();
    }
    let mut out = String::from("\"");
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x08' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\x0c' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '\0'..='\x1f' | '\x7f' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
