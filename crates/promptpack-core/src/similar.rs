//! How close two names are: the one edit distance behind every "did you
//! mean" of the house (the build's typo warnings, the CLI's value warnings,
//! an unknown prompt id).

/// The optimal-string-alignment (restricted Damerau–Levenshtein) distance
/// of two strings, in characters: insertions, deletions, substitutions and
/// swaps of two neighbours (`Nmae` → `Name`) cost one each.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut last: Vec<usize> = (0..=b.len()).collect();
    let mut row: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i;
        for j in 1..=b.len() {
            let substitution = last[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            let mut d = substitution.min(last[j] + 1).min(row[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(before[j - 2] + 1);
            }
            row[j] = d;
        }
        std::mem::swap(&mut before, &mut last);
        std::mem::swap(&mut last, &mut row);
    }
    last[b.len()]
}

/// Names longer than this get no suggestion: a typo search costs the
/// product of the two lengths per candidate, and a name this long is rarely
/// a typo of another.
pub const SEARCHED_LEN: usize = 64;

/// The candidates that read as a typo of `name`, ignoring case: at most a
/// third of the longer name's characters apart (at least one), nearest
/// first, at most `max` of them (among equals, the first given).
///
/// Linear in the candidates, whatever their number, and bounded per
/// candidate whatever the lengths: a candidate whose length alone puts it
/// out of reach costs no distance, and a `name` longer than
/// [`SEARCHED_LEN`] characters has no suggestion. That is what lets a wrong
/// id among 100,000 prompts name the few near it.
///
/// ```
/// use promptpack_core::similar::nearest;
/// let ids = ["greet", "review", "summarize", "great"];
/// assert_eq!(nearest("gret", ids, 3), ["greet", "great"]);
/// assert_eq!(nearest("Review", ids, 3), ["review"]);
/// assert!(nearest("translate", ids, 3).is_empty());
/// ```
pub fn nearest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    max: usize,
) -> Vec<&'a str> {
    let candidates: Vec<&'a str> = candidates.into_iter().collect();
    nearest_in(name, &candidates, max)
}

/// [`nearest`] once the candidates are collected: not generic, since its
/// callers pass a dozen iterator types, in this crate and the ones above
/// it, and each would otherwise compile the search again (it only runs
/// when a name was not found, so the list it collects costs nothing that
/// matters).
pub(crate) fn nearest_in<'a>(name: &str, candidates: &[&'a str], max: usize) -> Vec<&'a str> {
    let name_len = name.chars().count();
    if name_len > SEARCHED_LEN || max == 0 {
        return Vec::new();
    }
    let wanted = name.to_lowercase();
    let wanted_len = wanted.chars().count();
    // (distance, candidate), nearest first; a stable insert keeps the
    // first given among equals.
    let mut best: Vec<(usize, &str)> = Vec::with_capacity(max + 1);
    for &candidate in candidates {
        let lower = candidate.to_lowercase();
        let lower_len = lower.chars().count();
        let limit = (name_len.max(candidate.chars().count()) / 3).max(1);
        // No better than the worst kept, when the list is full.
        let bar = match best.last() {
            Some((worst, _)) if best.len() == max => limit.min(worst.saturating_sub(1)),
            _ => limit,
        };
        // The distance is at least the difference in length.
        if wanted_len.abs_diff(lower_len) > bar {
            continue;
        }
        let distance = edit_distance(&wanted, &lower);
        if distance > bar {
            continue;
        }
        let at = best.partition_point(|(d, _)| *d <= distance);
        best.insert(at, (distance, candidate));
        best.truncate(max);
    }
    best.into_iter().map(|(_, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(
            edit_distance("agentName", "agentNmae"),
            1,
            "a swap is one edit"
        );
        assert_eq!(edit_distance("agentName", "agentNam"), 1);
        assert_eq!(edit_distance("agentName", "agentNaame"), 1);
        assert_eq!(edit_distance("agentName", "agentNeme"), 1);
        assert_eq!(edit_distance("agentName", "agentname"), 1);
        assert_eq!(edit_distance("userName", "usrNme"), 2);
        assert_eq!(
            edit_distance("ca", "abc"),
            3,
            "restricted: no edit of a swapped pair"
        );
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("même", "meme"), 1, "characters, not bytes");
        assert_eq!(edit_distance("same", "same"), 0);
        assert_eq!(edit_distance("bulets", "bullets"), 1);
    }

    #[test]
    fn nearest_keeps_the_few_closest_in_order() {
        let ids: Vec<String> = (0..1000).map(|i| format!("prompt-{i}")).collect();
        let found = nearest("prompt-42x", ids.iter().map(String::as_str), 3);
        assert_eq!(found, ["prompt-42", "prompt-420", "prompt-421"]);
        assert!(nearest("x", ["abc"], 3).is_empty());
        assert_eq!(nearest("ab", ["xb", "ax", "ab"], 2), ["ab", "xb"]);
        assert!(nearest("ab", ["ab"], 0).is_empty());
        assert_eq!(nearest("BULETS", ["bullets", "notes"], 1), ["bullets"]);
    }

    /// An unknown id's error is bounded in size whatever the number of
    /// prompts and the id's length, and names the nearest ids.
    #[test]
    fn unknown_prompt_help_is_bounded() {
        let ids: Vec<String> = (0..100_000).map(|i| format!("p{i:05}")).collect();
        let ids = || ids.iter().map(String::as_str);
        let help = |e: &crate::Error| e.diagnostics()[0].help.clone().unwrap_or_default();
        let error = crate::Error::unknown_prompt("p0004", ids());
        assert_eq!(
            help(&error),
            "did you mean `p00004`, `p00014`, `p00024`? (100000 prompts; `promptpack list` shows them)"
        );
        let error = crate::Error::unknown_prompt("translate", ids());
        assert_eq!(help(&error), "100000 prompts; `promptpack list` shows them");
        assert!(nearest(&"p".repeat(SEARCHED_LEN + 1), ["p"], 3).is_empty());
        let long = "p".repeat(1_000_000);
        let error = crate::Error::unknown_prompt(&long, ids());
        assert!(error.to_string().len() < 300, "{}", error.to_string().len());
        let few = crate::Error::unknown_prompt("nope", ["greet", "review"]);
        assert_eq!(help(&few), "the prompts are: greet, review");
        let near_few = crate::Error::unknown_prompt("tutr", ["greet", "tutor"]);
        assert_eq!(
            help(&near_few),
            "did you mean `tutor`? The prompts are: greet, tutor"
        );
        let none = crate::Error::unknown_prompt("nope", []);
        assert_eq!(help(&none), "there are no prompts");
    }
}
