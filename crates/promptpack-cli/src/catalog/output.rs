//! The text `promptpack catalog` prints (its `--json` is the model's own
//! serialization).

use promptpack_catalog::{
    Arm, AuditEntry, History, ImportReport, Imported, Page, Pin, SnippetRevision, Version,
};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;

/// A content hash as shown in lists: `sha256:` and its first 12 hex digits.
pub(super) fn short_hash(hash: &str) -> String {
    format!("sha256:{}", hash.get(..12).unwrap_or(hash))
}

/// `tone@2, safety@1`, or `none`.
fn pins(pins: &[Pin]) -> String {
    if pins.is_empty() {
        return "none".to_string();
    }
    pins.iter()
        .map(|pin| format!("{}@{}", pin.snippet, pin.revision))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `-` for an empty field, so that columns stay columns.
fn or_dash(text: &str) -> &str {
    if text.is_empty() { "-" } else { text }
}

/// Each prompt, then each snippet: `new vN` or `unchanged vN`.
pub(super) fn import(report: &ImportReport) -> String {
    let rows: Vec<(&str, &Imported)> = report
        .prompts
        .iter()
        .map(|p| ("prompt", p))
        .chain(report.snippets.iter().map(|s| ("snippet", s)))
        .collect();
    let width = rows.iter().map(|(_, i)| i.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (kind, imported) in rows {
        let state = if imported.written { "new" } else { "unchanged" };
        let _ = writeln!(
            out,
            "{kind:<7}  {:<width$}  {state} v{}",
            imported.name, imported.version
        );
    }
    out
}

/// `published ID vN sha256:…` and the pins, after `created prompt ID`
/// when the publish created it; `unchanged` when the tree held the newest
/// version already and nothing was written.
pub(super) fn published(version: &Version, created: bool, written: bool) -> String {
    let mut out = String::new();
    if created {
        let _ = writeln!(out, "created prompt {}", version.prompt_id);
    }
    let done = if written { "published" } else { "unchanged" };
    let _ = writeln!(
        out,
        "{done} {} v{} {}",
        version.prompt_id,
        version.version,
        short_hash(&version.content_hash)
    );
    let _ = writeln!(out, "pins: {}", pins(&version.pins));
    out
}

/// A version minted by `upgrade`: as a publish, and its message.
pub(super) fn upgraded(version: &Version) -> String {
    let mut out = published(version, false, true);
    let _ = writeln!(out, "message: {}", plain(&version.message));
    out
}

/// `published snippet NAME vN sha256:…`, or `unchanged` when the tree
/// held the newest revision's text.
pub(super) fn snippet(revision: &SnippetRevision, written: bool) -> String {
    let done = if written { "published" } else { "unchanged" };
    format!(
        "{done} snippet {} v{} {}\n",
        revision.name,
        revision.revision,
        short_hash(&revision.content_hash)
    )
}

/// A header, then `system.md` and `user.md` (or a conversation's
/// `messages.md`) verbatim, each after a line naming it.
pub(super) fn version(version: &Version) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "prompt:   {}", version.prompt_id);
    let _ = writeln!(out, "version:  {}", version.version);
    let _ = writeln!(out, "hash:     sha256:{}", version.content_hash);
    let _ = writeln!(out, "author:   {}", plain(&version.author));
    let _ = writeln!(out, "time:     {}", version.created_at);
    let _ = writeln!(out, "message:  {}", or_dash(&plain(&version.message)));
    let _ = writeln!(out, "pins:     {}", pins(&version.pins));
    out.push_str("\n==> system.md <==\n");
    out.push_str(&version.system);
    if let Some(user) = &version.user {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("==> user.md <==\n");
        out.push_str(user);
    }
    if let Some(messages) = &version.messages {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("==> messages.md <==\n");
        out.push_str(messages);
    }
    out
}

/// One line per prompt: id, current version, short hash, description;
/// then the cursor of the next page, when there is one.
pub(super) fn page(page: &Page) -> String {
    let width = page
        .prompts
        .iter()
        .map(|l| l.prompt.id.len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for listed in &page.prompts {
        let hash = listed
            .current
            .as_ref()
            .map_or_else(|| "-".to_string(), |v| short_hash(&v.content_hash));
        let line = format!(
            "{:<width$}  v{:<3}  {:<19}  {}",
            listed.prompt.id,
            listed.prompt.latest_version,
            hash,
            or_dash(&listed.prompt.description)
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    if let Some(cursor) = &page.next_cursor {
        let _ = writeln!(out, "next: --cursor {cursor}");
    }
    out
}

/// Versions (newest first), labels, then the audit history (oldest first).
pub(super) fn history(history: &History) -> String {
    let prompt = &history.prompt;
    let mut out = String::new();
    let deleted = if prompt.deleted { " (deleted)" } else { "" };
    match prompt.description.as_str() {
        "" => {
            let _ = writeln!(out, "{}{deleted}", prompt.id);
        }
        description => {
            let _ = writeln!(out, "{} — {}{deleted}", prompt.id, plain(description));
        }
    }
    out.push_str("versions:\n");
    if history.versions.is_empty() {
        out.push_str("  none\n");
    }
    let authors = history
        .versions
        .iter()
        .map(|v| plain(&v.author).chars().count())
        .max()
        .unwrap_or(0);
    for v in &history.versions {
        let _ = writeln!(
            out,
            "  v{:<3}  {}  {:<authors$}  {}  {}",
            v.version,
            v.created_at,
            plain(&v.author),
            short_hash(&v.content_hash),
            or_dash(&plain(&v.message))
        );
    }
    out.push_str("labels:\n");
    let labels = history
        .labels
        .iter()
        .map(|(l, _)| l.len())
        .max()
        .unwrap_or(0);
    let splits = current_splits(&history.audit);
    for (label, version) in &history.labels {
        let _ = writeln!(
            out,
            "  {label:<labels$}  {}",
            served(*version, splits.get(label.as_str()).copied())
        );
    }
    out.push_str("audit:\n");
    let authors = history
        .audit
        .iter()
        .map(|a| plain(&a.author).chars().count())
        .max()
        .unwrap_or(0);
    // Each label's arms while it is split, for the "from" side of its next
    // move (oldest entry first).
    let mut split: HashMap<&str, &[Arm]> = HashMap::new();
    for entry in &history.audit {
        let label = entry.label.as_deref().unwrap_or("-");
        let before = split.get(label).copied().unwrap_or(&[]);
        let what = match entry.action.as_str() {
            "label" => format!("label {}", label_move(entry, before).trim_end()),
            "split" => format!("split {}", label_move(entry, before).trim_end()),
            action => action.to_string(),
        };
        if matches!(entry.action.as_str(), "label" | "split") {
            split.insert(label, &entry.arms);
        }
        let _ = writeln!(
            out,
            "  {}  {:<authors$}  {what}",
            entry.created_at,
            plain(&entry.author)
        );
    }
    out
}

/// The arms of each label whose last move was a split, from the audit
/// (oldest first): the history's labels name only the heaviest arm, and the
/// audit is read in the same transaction, so the two agree.
fn current_splits(audit: &[AuditEntry]) -> HashMap<&str, &[Arm]> {
    let mut splits = HashMap::new();
    for entry in audit {
        if let ("label" | "split", Some(label)) = (entry.action.as_str(), &entry.label) {
            splits.insert(label.as_str(), entry.arms.as_slice());
        }
    }
    splits
}

/// What a label serves: `v3`, or a split's arms with their weights, `v1 90,
/// v2 10` (heaviest first, as the audit keeps them). Arms whose heaviest is
/// not `version` are not this label's present state and are not shown.
fn served(version: u32, arms: Option<&[Arm]>) -> String {
    match arms {
        Some(arms) if arms.len() > 1 && arms[0].version == version => arms
            .iter()
            .map(|arm| format!("v{} {}", arm.version, arm.weight))
            .collect::<Vec<_>>()
            .join(", "),
        _ => format!("v{version}"),
    }
}

/// `LABEL: vFROM → vTO`, or `LABEL: new → vTO`; a split's arms as
/// `LABEL: v1 → v2 90, v3 10`, on either side (`split_before`: the arms of
/// the label before the move, when it was split).
pub(super) fn label_move(entry: &AuditEntry, split_before: &[Arm]) -> String {
    let arms = |arms: &[Arm]| {
        arms.iter()
            .map(|arm| format!("v{} {}", arm.version, arm.weight))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let from = if split_before.is_empty() {
        entry
            .from_version
            .map_or_else(|| "new".to_string(), |v| format!("v{v}"))
    } else {
        arms(split_before)
    };
    let to = if entry.arms.is_empty() {
        entry
            .to_version
            .map_or_else(|| "-".to_string(), |v| format!("v{v}"))
    } else {
        arms(&entry.arms)
    };
    format!("{}: {from} → {to}\n", entry.label.as_deref().unwrap_or("-"))
}

/// The files written, one a line.
pub(super) fn files(files: &[PathBuf]) -> String {
    files
        .iter()
        .map(|path| format!("{}\n", path.display()))
        .collect()
}

/// Text a person wrote into the catalog (an author, a message, a
/// description), with control characters escaped: a terminal shows what
/// was written instead of obeying it.
fn plain(text: &str) -> std::borrow::Cow<'_, str> {
    promptpack_core::diagnostics::escape_controls(text)
}
