//! How close two names are: the one edit distance behind every "did you
//! mean" of the house (the build's typo warnings, the CLI's value warnings).

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
}
