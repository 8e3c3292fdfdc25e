//! A prompt's variables found by name: the lookup `Library::build_prompt`
//! makes for each key a `Serialize` impl hands it.

use promptpack_core::program::VarInfo;

/// A prompt's variables by name, found in about one probe whatever order
/// the values come in (a struct's field order, a map's insertion order, a
/// hash map's none). Built once per prompt when a `Library` is made.
///
/// An open-addressing table hashed on a name's length and its first and
/// last eight bytes: variable names are short, so that is nearly all of
/// each, and it costs a few instructions where a general string hasher
/// (foldhash through a `HashMap`) cost 80 per key here, a third of what
/// collecting a value costs. A name is always compared whole, so a
/// collision only costs a probe. The table holds the prompt's own names and
/// never grows: keys from a caller cannot crowd it.
#[derive(Debug, Clone, Default)]
pub(crate) struct NameIndex {
    names: Box<[Box<str>]>,
    /// Each slot the index of a name plus one, or 0 when empty; a power of
    /// two long, at least twice the names.
    slots: Box<[u32]>,
}

impl NameIndex {
    /// The index of a prompt's variables, numbered as they are.
    pub(crate) fn new(vars: &[VarInfo]) -> NameIndex {
        NameIndex::of_names(vars.iter().map(|v| v.name.as_str()))
    }

    fn of_names<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> NameIndex {
        let size = (names.len() * 2).next_power_of_two().max(8);
        let mut slots = vec![0u32; size];
        let mut kept: Vec<Box<str>> = Vec::with_capacity(names.len());
        for (i, name) in names.enumerate() {
            kept.push(name.into());
            let mut at = hash(name.as_bytes()) & (size - 1);
            loop {
                match slots[at] {
                    0 => {
                        // Numbers past u32 cannot occur: a prompt file is
                        // at most a few megabytes.
                        slots[at] = u32::try_from(i + 1).unwrap_or(0);
                        break;
                    }
                    // The first of a name given twice, as a scan finds it.
                    taken if kept[taken as usize - 1] == kept[i] => break,
                    _ => at = (at + 1) & (size - 1),
                }
            }
        }
        NameIndex {
            names: kept.into_boxed_slice(),
            slots: slots.into_boxed_slice(),
        }
    }

    /// How many variables the prompt has: one entry each, a name given
    /// twice included.
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    pub(crate) fn find(&self, key: &str) -> Option<usize> {
        let mask = self.slots.len().checked_sub(1)?;
        let mut at = hash(key.as_bytes()) & mask;
        // The table is at most half full, so an empty slot ends every probe.
        loop {
            let slot = *self.slots.get(at)? as usize;
            let index = slot.checked_sub(1)?;
            if self.names.get(index).is_some_and(|name| **name == *key) {
                return Some(index);
            }
            at = (at + 1) & mask;
        }
    }
}

/// A hash of a short name: its length and its first and last eight bytes,
/// mixed by one multiplication; the high bits, which mix best, come first.
fn hash(key: &[u8]) -> usize {
    let (head, tail) = match (key.first_chunk::<8>(), key.last_chunk::<8>()) {
        (Some(head), Some(tail)) => (u64::from_le_bytes(*head), u64::from_le_bytes(*tail)),
        // Shorter than eight bytes: all of it, a byte at a time.
        _ => {
            let all = key.iter().fold(0u64, |h, &b| (h << 8) | u64::from(b));
            (all, 0)
        }
    };
    let mixed = (head ^ tail.rotate_left(29) ^ key.len() as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(26);
    mixed as usize
}

#[cfg(test)]
mod tests {
    use super::NameIndex;

    /// Names that share their length, head and tail (so their hashes
    /// collide), long ones, non-ASCII ones and a name given twice: each is
    /// found at its own number, and nothing else is found.
    #[test]
    fn the_name_index_finds_every_name_and_nothing_else() {
        let mut names: Vec<String> = (0..40)
            .map(|i| format!("user_{i:02}_____________name"))
            .collect();
        names.extend(["a", "ab", "", "ä", "x".repeat(200).as_str(), "a"].map(String::from));
        let index = NameIndex::of_names(names.iter().map(String::as_str));
        for (i, name) in names.iter().enumerate() {
            let first = names.iter().position(|n| n == name);
            assert_eq!(index.find(name), first, "{name:?} (number {i})");
        }
        for absent in ["user_40_____________name", "b", "aa", "x", "A"] {
            assert_eq!(index.find(absent), None, "{absent:?}");
        }
        assert_eq!(NameIndex::new(&[]).find("a"), None);
    }
}
