//! The console's cache of what each build's binary would say of a version,
//! shared by every request: a leaf, which the state holds.

use std::collections::HashMap;
use std::sync::Mutex;

/// The verdicts already reached, shared by every request of a console: by
/// a version (append-only: its text never changes) and a contract's hash,
/// which names its text, so that a page view judges a version once, not
/// once per view.
#[derive(Default)]
pub(crate) struct Verdicts {
    known: Mutex<HashMap<(String, String), Option<String>>>,
}

/// Verdicts kept at most: past it they are forgotten and reached again.
const MAX_VERDICTS: usize = 4096;

impl Verdicts {
    pub(crate) fn get(&self, key: &(String, String)) -> Option<Option<String>> {
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        known.get(key).cloned()
    }

    pub(crate) fn put(&self, key: (String, String), verdict: Option<String>) {
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        if known.len() >= MAX_VERDICTS {
            known.clear();
        }
        known.insert(key, verdict);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_kept_by_content_and_forgotten_past_the_bound() {
        let verdicts = Verdicts::default();
        let key = |i: usize| (format!("version-{i}"), "contract".to_string());
        verdicts.put(key(0), Some("refused".to_string()));
        verdicts.put(key(1), None);
        assert_eq!(verdicts.get(&key(0)), Some(Some("refused".to_string())));
        assert_eq!(verdicts.get(&key(1)), Some(None));
        assert_eq!(verdicts.get(&key(2)), None);
        for i in 2..=MAX_VERDICTS {
            verdicts.put(key(i), None);
        }
        // The bound was reached: what was kept before is forgotten.
        assert_eq!(verdicts.get(&key(0)), None);
        assert_eq!(verdicts.get(&key(MAX_VERDICTS)), Some(None));
    }
}
