//! A resolved template part: snippets spliced in, names numbered, blocks
//! turned into jumps. This is what both renderers (interpreted and
//! generated) are made from.

use crate::error::Location;

/// One step of a [`Program`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Static text: `text[start..end]` of the program.
    Text {
        /// First byte in [`Program::text`].
        start: usize,
        /// One past the last byte.
        end: usize,
    },
    /// A value token; the number indexes the prompt's [`VarInfo`] table.
    Var(usize),
    /// `{{#if}}`: when the condition is false, go to `else_at`
    /// (the first op of the else branch, or the matching [`Op::EndIf`]).
    /// `{{else if}}` is an `Else` whose branch is a block of its own.
    If {
        /// The variable tested, an index into the prompt's [`VarInfo`] table.
        cond: usize,
        /// `None`: the variable's truthiness; `Some(i)`: whether its value is
        /// [`Program::literals`]`[i]`.
        equals: Option<u32>,
        /// Where to go when the condition is falsy.
        else_at: usize,
        /// The index of the matching [`Op::EndIf`].
        end_at: usize,
    },
    /// `{{else}}`, reached at the end of a taken then-branch: go to `end_at`.
    Else {
        /// The index of the matching [`Op::EndIf`].
        end_at: usize,
    },
    /// `{{/if}}`: nothing to do; it marks where a block ends.
    EndIf,
}

/// A template part ready to render: static text in one buffer and the ops
/// that interleave it with values.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Program {
    /// All static text, in op order.
    pub text: String,
    /// The ops.
    pub ops: Vec<Op>,
    /// The values compared with in `{{#if x == "value"}}`.
    pub literals: Vec<Box<str>>,
}

impl Program {
    /// The static text an op covers, for [`Op::Text`].
    pub fn text_of(&self, start: usize, end: usize) -> &str {
        &self.text[start..end]
    }
}

/// How a prompt uses one of its variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarInfo {
    /// The name as written in the templates (`agentName`).
    pub name: String,
    /// Used as `{{name}}` somewhere.
    pub as_value: bool,
    /// Used as `{{#if name}}` somewhere.
    pub as_condition: bool,
    /// The values of its generated enum: the values front matter declares
    /// (`kind: choice`, `values: […]`), in the order declared, or else the
    /// values it is compared with, in order of first use.
    pub choices: Vec<String>,
    /// The values it is compared with (`{{#if name == "value"}}`), in order
    /// of first use: what a contract check asks of a vars struct's enum.
    pub compared: Vec<String>,
    /// Every block that compares it with a value, once each however many
    /// times its file is spliced: which branch each value renders.
    pub blocks: Vec<ChoiceBlock>,
    /// Its first use, for diagnostics.
    pub first_use: Location,
    /// The first `{{name}}`, `{{#if name}}` and `{{#if name == "…"}}`, for
    /// a diagnostic about one way of using it.
    pub uses: VarUses,
    /// The kind front matter declares, which overrides the inferred one.
    pub declared: Option<VarKind>,
}

/// An `{{#if}}` block (with its `{{else if}}` chain) that compares a
/// variable with values: what a value of the variable renders there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChoiceBlock {
    /// The `{{#if …}}` that opens the block.
    pub at: Location,
    /// Each comparison of the variable in the chain, in order: the value,
    /// the tag as written (`{{else if role == "student"}}`) and where.
    pub branches: Vec<(String, String, Location)>,
    /// Whether the chain also tests something else (another variable, or
    /// this one's truth), which a value no comparison matches meets first.
    pub other_tests: bool,
    /// The block's `{{else}}`, when it has one: the tag as written (the
    /// delimiters are the prompt's) and where.
    pub else_tag: Option<(String, Location)>,
}

impl ChoiceBlock {
    /// Where in this block value `value` goes, as a phrase: the branch
    /// that compares with it, else the `{{else}}` (or nothing).
    pub fn renders(&self, value: &str) -> String {
        let at = |l: &Location| format!("{}:{}:{}", l.path(), l.line(), l.column());
        if let Some((_, tag, l)) = self.branches.iter().find(|(v, _, _)| v == value) {
            return format!("the `{tag}` branch ({})", at(l));
        }
        let other = if self.other_tests {
            "the block's other tests, then "
        } else {
            ""
        };
        match &self.else_tag {
            Some((tag, l)) => format!("{other}the `{tag}` branch ({})", at(l)),
            None if self.other_tests => format!(
                "the block's other tests, else nothing of the block ({})",
                at(&self.at)
            ),
            None => format!("nothing of the block ({})", at(&self.at)),
        }
    }
}

impl VarInfo {
    /// What value `value` renders in every block that compares this
    /// variable, as a sentence for docs and warnings (`None` when no block
    /// compares it at all). Lists up to four blocks, then counts the rest.
    pub fn renders(&self, value: &str) -> Option<String> {
        const LISTED: usize = 4;
        let mut phrases: Vec<String> = self
            .blocks
            .iter()
            .take(LISTED)
            .map(|b| b.renders(value))
            .collect();
        if phrases.is_empty() {
            return None;
        }
        if self.blocks.len() > LISTED {
            phrases.push(format!("{} more blocks", self.blocks.len() - LISTED));
        }
        Some(phrases.join("; "))
    }
}

/// Where a variable is first used in each way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VarUses {
    /// The first `{{name}}`.
    pub value: Option<Location>,
    /// The first `{{#if name}}` (or `{{else if name}}`).
    pub condition: Option<Location>,
    /// The first comparison with a value.
    pub compared: Option<Location>,
    /// Where it is placed as a conversation's history, between messages.
    pub history: Option<Location>,
}

/// What a variable is, as the generated vars struct types it: what its uses
/// make it ([`VarInfo::kind`]) or what front matter declares (`kind:`).
///
/// Serialized as `text`, `flag`, `optional`, `choice`, `optional_choice` or
/// `messages`
/// ([`VarKind::as_str`]): the names front matter declares a kind with and
/// those of the contract file, which other builds read, so they never
/// change with the variants' Rust names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VarKind {
    /// `text`, or only `{{x}}`: `&str`.
    Text,
    /// `flag`, or only `{{#if x}}`: `bool`.
    Flag,
    /// `optional`, or both: `Option<&str>`, true when `Some` and not empty.
    Optional,
    /// `choice`, or compared with values (and maybe printed): a generated
    /// enum with one variant per value (declared: per declared `values`).
    Choice,
    /// `optional_choice`, or compared with values and also tested for
    /// truth: `Option` of the generated enum.
    OptionalChoice,
    /// `messages`, placed between a conversation's messages: the history,
    /// messages given as they are (`&[Message]`), never parsed.
    Messages,
}

impl VarKind {
    /// The kind's name in front matter and in the contract file.
    pub fn as_str(self) -> &'static str {
        match self {
            VarKind::Text => "text",
            VarKind::Flag => "flag",
            VarKind::Optional => "optional",
            VarKind::Choice => "choice",
            VarKind::OptionalChoice => "optional_choice",
            VarKind::Messages => "messages",
        }
    }

    /// Whether the kind is a choice: declared, it takes its `values`.
    pub fn is_choice(self) -> bool {
        matches!(self, VarKind::Choice | VarKind::OptionalChoice)
    }

    /// Every kind, for a reader of front matter to look names up in.
    #[cfg(feature = "load")]
    pub(crate) const ALL: [VarKind; 6] = [
        VarKind::Text,
        VarKind::Flag,
        VarKind::Optional,
        VarKind::Choice,
        VarKind::OptionalChoice,
        VarKind::Messages,
    ];

    /// The field type of the generated vars struct, as `list` shows it.
    pub fn rust_type(self) -> &'static str {
        match self {
            VarKind::Text => "&str",
            VarKind::Flag => "bool",
            VarKind::Optional => "Option<&str>",
            VarKind::Choice => "enum",
            VarKind::OptionalChoice => "Option<enum>",
            VarKind::Messages => "&[Message]",
        }
    }
}

impl VarKind {
    /// The field type as the house shows it to people (`list`, contract
    /// diagnostics): the Rust type, and for a compared variable its values
    /// (`enum of "teacher" | "student"`).
    pub fn shown_type(self, values: &[String]) -> String {
        let values = || {
            values
                .iter()
                .map(|v| format!("{v:?}"))
                .collect::<Vec<_>>()
                .join(" | ")
        };
        match self {
            VarKind::Choice => format!("enum of {}", values()),
            VarKind::OptionalChoice => format!("Option<enum of {}>", values()),
            kind => kind.rust_type().to_string(),
        }
    }
}

impl VarInfo {
    /// How the templates use this variable decides its kind, unless front
    /// matter declares one.
    pub fn kind(&self) -> VarKind {
        if let Some(declared) = self.declared {
            return declared;
        }
        if self.uses.history.is_some() {
            return VarKind::Messages;
        }
        if !self.compared.is_empty() {
            return if self.as_condition {
                VarKind::OptionalChoice
            } else {
                VarKind::Choice
            };
        }
        match (self.as_value, self.as_condition) {
            (true, true) => VarKind::Optional,
            (false, true) => VarKind::Flag,
            _ => VarKind::Text,
        }
    }
}

impl VarKind {
    /// The kind as one letter, as generated tables write it: `t` text, `f`
    /// flag, `o` optional, `c` choice, `C` optional choice. Hidden: the
    /// generated code's encoding, not API of the crates that re-export
    /// `VarKind`.
    #[doc(hidden)]
    pub const fn letter(self) -> u8 {
        match self {
            VarKind::Text => b't',
            VarKind::Flag => b'f',
            VarKind::Optional => b'o',
            VarKind::Choice => b'c',
            VarKind::OptionalChoice => b'C',
            VarKind::Messages => b'm',
        }
    }

    /// The kind of a [`VarKind::letter`]; text for any other byte.
    #[doc(hidden)]
    pub const fn from_letter(letter: u8) -> VarKind {
        match letter {
            b'f' => VarKind::Flag,
            b'o' => VarKind::Optional,
            b'c' => VarKind::Choice,
            b'C' => VarKind::OptionalChoice,
            b'm' => VarKind::Messages,
            _ => VarKind::Text,
        }
    }
}

/// A stable 64-bit FNV-1a hash. Stable means the same input gives the same
/// number on every platform, version of Rust and run, so it can be logged
/// and compared across deployments.
#[derive(Debug, Clone, Copy)]
pub struct StableHasher(u64);

impl Default for StableHasher {
    fn default() -> Self {
        StableHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl StableHasher {
    /// Feeds bytes.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// Feeds a length-prefixed string, so that pieces cannot run together.
    pub fn write_str(&mut self, s: &str) {
        self.write(&(s.len() as u64).to_le_bytes());
        self.write(s.as_bytes());
    }

    /// The hash so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// Feeds a program into a hasher in a canonical form: what it renders, not how
/// it was written (which delimiters, which snippets), decides the hash.
pub fn hash_program(hasher: &mut StableHasher, program: &Program, vars: &[VarInfo]) {
    for op in &program.ops {
        match op {
            Op::Text { start, end } => {
                hasher.write(b"t");
                hasher.write_str(program.text_of(*start, *end));
            }
            Op::Var(i) => {
                hasher.write(b"v");
                hasher.write_str(&vars[*i].name);
            }
            Op::If { cond, equals, .. } => {
                hasher.write(b"i");
                hasher.write_str(&vars[*cond].name);
                if let Some(literal) = equals.and_then(|i| program.literals.get(i as usize)) {
                    hasher.write(b"=");
                    hasher.write_str(literal);
                }
            }
            Op::Else { .. } => hasher.write(b"e"),
            Op::EndIf => hasher.write(b"/"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::VarKind;

    /// One kind, one name: front matter's `kind:` (what `as_str` reads and
    /// writes) and the contract file's (serde) name each kind alike, every
    /// kind is in `ALL`, and the letter of generated tables reads back.
    #[test]
    fn a_kind_has_one_name_everywhere() {
        for kind in VarKind::ALL {
            let json = serde_json::to_string(&kind).expect("a kind serializes");
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
            let read: VarKind = serde_json::from_str(&json).expect("a kind deserializes");
            assert_eq!(read, kind);
            assert_eq!(VarKind::from_letter(kind.letter()), kind);
            let in_all = match kind {
                VarKind::Text
                | VarKind::Flag
                | VarKind::Optional
                | VarKind::Choice
                | VarKind::OptionalChoice
                | VarKind::Messages => VarKind::ALL.contains(&kind),
            };
            assert!(in_all);
        }
        let mut names: Vec<&str> = VarKind::ALL.iter().map(|k| k.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 6);
    }
}
