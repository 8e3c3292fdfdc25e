//! Unified diffs of two versions' resolved texts, with `similar`.

use crate::model::Version;
use similar::TextDiff;

/// The diff from `a` to `b`: `system.md`, then `user.md` when either has
/// one, then `messages.md` when either is a conversation (its resolved
/// text: a message changed, added or dropped shows as the lines of its
/// role block); empty when both render the same text.
/// How long the line search of one file's diff may take before it settles
/// for a less minimal diff.
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

pub(crate) fn unified_diff(a: &Version, b: &Version) -> String {
    let mut out = String::new();
    let part =
        |version: &Version, file: &str| format!("{}@{}/{file}", version.prompt_id, version.version);
    out.push_str(&file_diff(
        &a.resolved_system,
        &b.resolved_system,
        &part(a, "system.md"),
        &part(b, "system.md"),
    ));
    if a.resolved_user.is_some() || b.resolved_user.is_some() {
        out.push_str(&file_diff(
            a.resolved_user.as_deref().unwrap_or(""),
            b.resolved_user.as_deref().unwrap_or(""),
            &part(a, "user.md"),
            &part(b, "user.md"),
        ));
    }
    if a.resolved_messages.is_some() || b.resolved_messages.is_some() {
        out.push_str(&file_diff(
            a.resolved_messages.as_deref().unwrap_or(""),
            b.resolved_messages.as_deref().unwrap_or(""),
            &part(a, "messages.md"),
            &part(b, "messages.md"),
        ));
    }
    out
}

fn file_diff(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    if old == new {
        return String::new();
    }
    // The line search is bounded by a deadline: past it similar gives a
    // correct but less minimal diff, so two long, wholly different texts
    // (60,000 distinct lines) cannot hold a request for minutes.
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    let mut text = diff
        .unified_diff()
        .context_radius(3)
        // Resolved texts are trimmed: nearly every one ends without a
        // newline, and saying so on every diff is noise.
        .missing_newline_hint(false)
        .header(&format!("a/{old_name}"), &format!("b/{new_name}"))
        .to_string();
    // A file that does not end in a newline leaves the diff's last line
    // open; the next file's header must start on a line of its own.
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}
