//! The one rule for which entries of a prompt root are never read, shared by
//! the loader and the watcher so that what one ignores the other does too.

/// Whether an entry named `name` (one path component) is skipped, together
/// with everything under it: hidden entries (`.git`, `.hid/`, `.x.md.swp`)
/// and editor backups (`system.md~`, `#system.md#`).
///
/// The loader reads nothing a skipped component leads to, and the watcher
/// ignores changes there, so an edit is never loaded by one and lost by the
/// other.
pub fn is_ignored_name(name: &str) -> bool {
    name.starts_with('.')
        || name.ends_with('~')
        || (name.len() > 1 && name.starts_with('#') && name.ends_with('#'))
}

#[cfg(test)]
mod tests {
    use super::is_ignored_name;

    #[test]
    fn hidden_entries_and_editor_backups_are_ignored() {
        for name in [".hid", ".git", ".x.md.swp", "system.md~", "#system.md#"] {
            assert!(is_ignored_name(name), "{name}");
        }
        for name in ["system.md", "v1.2", "sub", "#", "a#b"] {
            assert!(!is_ignored_name(name), "{name}");
        }
    }
}
