//! Test helpers (feature `testing`): the survivor check, and snapshots of
//! every prompt of a crate in one line.
//!
//! # Survivors
//!
//! A *survivor* is template syntax left in a rendered text: a token a render
//! should have replaced (`{{name}}`, `{{snippet:x}}`, `{{#if x}}`, …), or a
//! near-miss that was never a token and so reaches the model verbatim
//! (`{{ name }}`, `{{#each x}}`, `{{snippet: x}}`, `{{next-agent}}`, an
//! unmatched `{{`). [`assert_no_survivors`] checks any `&str`, rendered by
//! promptpack or not, and panics with one line per survivor:
//!
//! ```
//! use promptpack::testing::assert_no_survivors;
//! assert_no_survivors("Hello Ada. Answer with {\"type\": \"text\"}.");
//!
//! let result = std::panic::catch_unwind(|| assert_no_survivors("Hello {{name}}."));
//! let message = result.err().and_then(|p| p.downcast::<String>().ok()).unwrap_or_default();
//! assert!(message.contains("1:7  {{name}}  (variable token)"), "{message}");
//! ```
//!
//! The check follows the delimiters: with `<<` and `>>`, `<<name>>` is a
//! survivor and `{{name}}` is plain text ([`assert_no_survivors_with`]).
//! Closing delimiters with nothing to close (`}}` in `{"a": {"b": 1}}`) are
//! never reported: they are everywhere in JSON.
//!
//! ## Deliberate survivors
//!
//! Everything is reported by default, including brace syntax that a prompt
//! shows on purpose, such as a fenced JSON example holding `{{`. A
//! [`Survivors`] checker says what is allowed:
//!
//! ```
//! use promptpack::testing::Survivors;
//! let prompt = "Reply as JSON:\n```json\n{\"template\": \"Hi {{user}}\"}\n```";
//! assert!(Survivors::new().check(prompt).is_err()); // reported by default
//!
//! Survivors::new().allow("{{user}}").assert_none(prompt); // this exact text
//! Survivors::new().allow_fenced_code().assert_none(prompt); // anything in ``` or ~~~ fences
//! ```
//!
//! [`Survivors::allow_kind`] allows a whole [`FindingKind`]. A snapshot
//! suite takes such a checker ([`Snapshots::survivors`]).
//!
//! # Snapshots of every prompt
//!
//! [`snapshot_prompts!`](crate::snapshot_prompts) takes the `PromptId` that
//! [`include_prompts!`](crate::include_prompts) generated and writes one
//! [insta](https://insta.rs) snapshot per prompt and combination of its
//! conditions (once for combinations that render the same text), each first
//! run through the survivor check, and prints one summary when something
//! differs:
//!
//! ```ignore
//! // tests/prompts.rs
//! use my_agent::PromptId;
//!
//! #[test]
//! fn prompts() {
//!     promptpack::snapshot_prompts!(PromptId);
//! }
//! ```
//!
//! See the macro for what it renders, how the snapshots are named and how to
//! review them.

mod files;
mod origin;
mod quiet;
mod snapshots;
mod survivors;

/// What the rooms of this module share.
#[allow(unused_imports)]
mod prelude {
    pub(super) use super::files::*;
    pub(super) use super::origin::*;
    pub(super) use super::quiet::*;
    pub(super) use super::snapshots::*;
    pub(super) use super::survivors::*;
    pub(super) use super::{DEFAULT_MAX_COMBINATIONS, MAX_NAME_LEN, MAX_SHOWN_CHARS};
    pub(super) use crate::prompt::Prompt;
    pub(super) use promptpack_core::message::Message;
    pub(super) use promptpack_core::program::StableHasher;
    pub(super) use promptpack_core::scan::{Finding, FindingKind, find_tokens};
    pub(super) use promptpack_core::source_file::{SourceFile, Span};
    pub(super) use promptpack_core::syntax::Delimiters;
    pub(super) use promptpack_load::Config;
    pub(super) use std::cell::Cell;
    pub(super) use std::collections::{BTreeMap, BTreeSet};
    pub(super) use std::fmt;
    pub(super) use std::panic::{AssertUnwindSafe, catch_unwind};
    pub(super) use std::path::{Path, PathBuf};
    pub(super) use std::sync::{Arc, Mutex, PoisonError};
}

#[doc(hidden)]
pub use insta as __insta;
pub use promptpack_core::scan::{Finding, FindingKind};
pub use promptpack_core::source_file::Span;
pub use snapshots::*;
pub use survivors::*;

/// The default bound on the condition combinations rendered per prompt; see
/// [`Snapshots::max_combinations`].
pub const DEFAULT_MAX_COMBINATIONS: usize = 64;

/// Longest snapshot name, in bytes, before the condition list is replaced by
/// a hash: file names stay well under the usual 255-byte limit.
const MAX_NAME_LEN: usize = 160;

/// Longest survivor text shown in a report, in characters.
const MAX_SHOWN_CHARS: usize = 40;

/// Snapshots every prompt of a crate, in one line of a test.
///
/// ```ignore
/// // tests/prompts.rs
/// use my_agent::PromptId; // or `promptpack::include_prompts!();` here
///
/// #[test]
/// fn prompts() {
///     promptpack::snapshot_prompts!(PromptId);
/// }
/// ```
///
/// `PromptId` is the enum [`include_prompts!`](crate::include_prompts)
/// generates. Each prompt is rendered through the generated code (never from
/// disk) with every variable set to a placeholder, `‹agentName›`, under every
/// combination of its conditions (all of them up to 64 per prompt; beyond,
/// every condition off, every one on and each one alone). Each case is one
/// named [insta](https://insta.rs) snapshot, next to the test in
/// `snapshots/`: `prompts__agent-system.snap` with every condition off,
/// `prompts__agent-system@hasTools+memory.snap` with those two on.
/// Combinations that render the same text (a condition nested in one that
/// is off) share the snapshot of the first of them, whose description names
/// the others ([`Case::covers`]).
///
/// Each case is first checked for template tokens that survived the render
/// ([`Survivors`]), written with the delimiters the prompts were compiled
/// with (`PromptId::DELIMITERS`). A survivor is reported with the file,
/// line and column its text comes from (`templates/agent-system/system.md:3:11`,
/// or `from a value`) and its place in the rendered text; a case with
/// survivors is not snapshotted, so that no run accepts one. A conversation
/// (`messages.md`) is checked message by message, a survivor naming its
/// message (`support-chat, message 5: user`), and snapshotted with each
/// message under its role ([`Case::snapshot`]).
///
/// Every case runs even when some fail, and nothing is printed while they
/// do; the test then fails once, with one summary listing each new or
/// changed snapshot and each survivor. To accept new or changed snapshots,
/// run `cargo insta review` (from `cargo install cargo-insta`) after the
/// test, or `cargo insta test --review`, or set `INSTA_UPDATE=always`, which
/// also removes the `.snap.new` files an earlier run left. When the `CI`
/// environment variable is set, nothing is written and a new or changed
/// snapshot fails the test, so the snapshots in the repository are the
/// contract. See [`SnapshotRun::check`] for the files and the `INSTA_*`
/// variables it follows.
///
/// A second argument, a [`Snapshots`], changes the options:
///
/// ```ignore
/// use promptpack::testing::{Snapshots, Survivors};
/// promptpack::snapshot_prompts!(
///     PromptId,
///     Snapshots::new()
///         .value("toolList", "- search")
///         .survivors(Survivors::new().allow_fenced_code())
/// );
/// ```
///
/// The test crate needs promptpack with the `testing` feature (usually
/// as a dev-dependency); the snapshot files are insta's, so `cargo insta`
/// reviews them, but the test crate needs no insta of its own.
///
/// It is a macro so that the snapshot files are named and placed by the
/// calling file and module, as insta's own macros do.
///
/// ```no_run
/// # #[derive(Clone, Copy)] enum PromptId { Greet }
/// # impl PromptId {
/// #     const ALL: [PromptId; 1] = [PromptId::Greet];
/// #     const DELIMITERS: (&'static str, &'static str) = ("{{", "}}");
/// #     fn as_str(self) -> &'static str { "greet" }
/// #     fn variables(self) -> &'static [&'static str] { &["name"] }
/// #     fn conditions(self) -> &'static [&'static str] { &[] }
/// #     fn choices(self) -> &'static [(&'static str, &'static [&'static str])] { &[] }
/// #     fn example(self) -> &'static [(&'static str, &'static str)] { &[("name", "Ada")] }
/// #     fn tools(self) -> Option<promptpack::RequestJson> { None }
/// #     fn response_format(self) -> Option<promptpack::RequestJson> { None }
/// #     fn render_generated(self, v: &dyn Fn(&str) -> Option<String>) -> promptpack::Prompt<PromptId> {
/// #         let system = format!("Hi {}.", v("name").unwrap_or_default());
/// #         promptpack::Prompt { id: self, system, user: None, messages: Vec::new(), hash: Default::default(), provenance: Default::default(), exchange: promptpack::Exchange::NONE }
/// #     }
/// # }
/// promptpack::snapshot_prompts!(PromptId);
/// promptpack::snapshot_prompts!(PromptId, promptpack::testing::Snapshots::new().max_combinations(8));
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
#[macro_export]
macro_rules! snapshot_prompts {
    ($id:ty $(,)?) => {
        $crate::snapshot_prompts!($id, $crate::testing::Snapshots::new())
    };
    ($id:ty, $options:expr $(,)?) => {{
        let prompts = $crate::testing::PromptTable::<$id>::new(
            &<$id>::ALL,
            <$id>::as_str,
            <$id>::variables,
            <$id>::conditions,
            <$id>::render_generated,
        )
        .with_choices(<$id>::choices)
        .with_examples(<$id>::example)
        .with_request(<$id>::tools, <$id>::response_format);
        let options: $crate::testing::Snapshots = $options;
        let (open, close) = <$id>::DELIMITERS;
        let mut run = options
            .default_delimiters(open, close)
            .start(::core::env!("CARGO_MANIFEST_DIR"));
        for case in run.cases(&prompts) {
            run.check(&case, ::core::module_path!());
        }
        run.finish();
    }};
}

#[cfg(test)]
mod tests {
    use super::prelude::*;

    #[test]
    fn combinations_enumerate_up_to_the_bound() {
        assert_eq!(
            condition_combinations(2, 64),
            [
                vec![false, false],
                vec![true, false],
                vec![false, true],
                vec![true, true]
            ]
        );
        assert_eq!(condition_combinations(6, 64).len(), 64);
        let beyond = condition_combinations(7, 64);
        assert_eq!(beyond.len(), 9);
        assert_eq!(beyond[0], vec![false; 7]);
        assert_eq!(beyond[8], vec![true; 7]);
        assert_eq!(beyond[3].iter().filter(|b| **b).count(), 1);
        // A tiny bound never duplicates a case.
        assert_eq!(condition_combinations(1, 1), [vec![false], vec![true]]);
        assert_eq!(condition_combinations(200, 64).len(), 202);
    }

    #[test]
    fn case_names() {
        assert_eq!(case_name("agent-system", &[]), "agent-system");
        assert_eq!(
            case_name("agent-system", &["hasTools", "memory"]),
            "agent-system@hasTools+memory"
        );
        let long: Vec<&str> = vec!["aVeryLongConditionNameIndeed"; 8];
        let name = case_name("p", &long);
        assert!(name.starts_with("p@8-on-"), "{name}");
        assert_eq!(name.len(), "p@8-on-".len() + 16);
        assert_eq!(name, case_name("p", &long));
    }

    #[test]
    fn fences() {
        let text = "a\n```json\n{{x}}\n```\nb {{y}}\n  ~~~~\n{{z}}\n~~~\n````\nopen";
        let blocks = fenced_code_blocks(text);
        let shown: Vec<&str> = blocks.iter().map(|s| &text[s.start..s.end]).collect();
        assert_eq!(
            shown,
            ["```json\n{{x}}\n```\n", "  ~~~~\n{{z}}\n~~~\n````\nopen"]
        );
        // A closing fence must be as long as the opening one and bare.
        let text = "````\n```\n{{x}}\n```` \nafter";
        let blocks = fenced_code_blocks(text);
        assert_eq!(blocks.len(), 1);
        assert_eq!(&text[blocks[0].end..], "after");
        // Four spaces of indent is no fence; backticks in a backtick info string neither.
        assert!(fenced_code_blocks("    ```\n{{x}}").is_empty());
        assert!(fenced_code_blocks("``` a`b\n{{x}}").is_empty());
    }

    /// Fences as CommonMark reads them, where a line-by-line scan of fence
    /// lines goes wrong.
    #[test]
    fn fences_in_lists_and_quotes() {
        let fenced = |text: &str| -> Vec<String> {
            fenced_code_blocks(text)
                .iter()
                .map(|s| text[s.start..s.end].to_string())
                .collect()
        };
        // Inside a list item a fence may be indented four spaces or more.
        let text = "1. Reply as:\n\n    ```json\n    {\"a\": {{x}}}\n    ```\n{{y}}";
        assert_eq!(fenced(text), ["    ```json\n    {\"a\": {{x}}}\n    ```\n"]);
        // An unclosed fence in a list item or block quote ends with it, not
        // with the text.
        let text = "- ```\n  {{x}}\nplain {{y}}";
        assert_eq!(fenced(text), ["- ```\n  {{x}}\n"]);
        let text = "> ```\n> {{x}}\n\n{{y}}";
        assert_eq!(fenced(text), ["> ```\n> {{x}}\n"]);
        // A fence line indented past a list item's content is code, not a
        // closing fence.
        let text = "```\n{{x}}\n    ```\n{{y}}\n```\nafter";
        assert_eq!(fenced(text).len(), 1);
        assert!(fenced(text)[0].ends_with("{{y}}\n```\n"));
        let check = Survivors::new().allow_fenced_code();
        let left = |text: &str| -> Vec<String> {
            check
                .find(text)
                .iter()
                .map(|f| f.text(text).to_string())
                .collect()
        };
        assert_eq!(left("- ```\n  {{x}}\nplain {{y}}"), ["{{y}}"]);
        assert_eq!(left("> ~~~\n> {{x}}\n\n{{y}}"), ["{{y}}"]);
        assert_eq!(
            left("1. a\n\n    ```\n    {{x}}\n    ```\n{{y}}"),
            ["{{y}}"]
        );
    }

    #[test]
    fn yaml_strings_as_insta_writes_them() {
        assert_eq!(yaml_string("tests/angle.rs"), "tests/angle.rs");
        assert_eq!(yaml_string("‹name› placeholders"), "‹name› placeholders");
        assert_eq!(yaml_string("a; values: b"), "\"a; values: b\"");
        assert_eq!(yaml_string("say \"hi\"\tnow"), "\"say \\\"hi\\\"\\tnow\"");
        assert_eq!(yaml_string("a\u{1}b"), "\"a\\u0001b\"");
        for quoted in ["", "true", "off", "12", "1.5", "-x", "@x", ".x", "x "] {
            assert_eq!(yaml_string(quoted), format!("\"{quoted}\""), "{quoted:?}");
        }
    }

    #[test]
    fn a_difference_names_its_first_line() {
        assert_eq!(
            changed("a\nb\nc", "a\nB\nc"),
            (
                "changed at line 2".to_string(),
                "\n  - b\n  + B".to_string()
            )
        );
        assert_eq!(
            changed("a", "a\nb"),
            (
                "changed at line 2".to_string(),
                "\n  - (nothing)\n  + b".to_string()
            )
        );
    }

    #[test]
    fn context_counts_what_surrounds_the_text_on_its_line() {
        let rendered = "Hi.\nTalk with {{ x }} now";
        let span = Span { start: 14, end: 21 };
        assert_eq!(&rendered[span.start..span.end], "{{ x }}");
        let file = "Talk with {{ x }} later\nOr {{ x }}";
        assert_eq!(shared_context(rendered, span, file, 10, 17), 11);
        assert_eq!(shared_context(rendered, span, file, 27, 34), 1);
    }

    #[test]
    fn snapshot_files_are_where_insta_puts_them() {
        let root = env!("CARGO_MANIFEST_DIR");
        let mut store = Store::from_env(root).expect("a valid environment");
        store.workspace_root = None;
        store.pending_dir = None;
        let target = store.target("greet@a/b", "src/testing.rs", "promptpack::testing::tests");
        let folder = Path::new(root).join("src").join("snapshots");
        assert_eq!(target.workspace, Path::new(root));
        assert_eq!(
            target.snap,
            folder.join("promptpack__testing__tests__greet@a__b.snap")
        );
        assert_eq!(
            target.pending,
            folder.join("promptpack__testing__tests__greet@a__b.snap.new")
        );
        assert_eq!(target.source, "src/testing.rs");
        store.pending_dir = Some(PathBuf::from("/pending"));
        let target = store.target("greet", "src/testing.rs", "m");
        assert_eq!(
            target.pending,
            Path::new("/pending/src/snapshots/m__greet.snap.new")
        );
    }

    #[test]
    fn shown_text_is_short_and_escaped() {
        assert_eq!(shown("{{a\tb}}"), "{{a\\tb}}");
        let long = format!("{{{{{}}}}}", "x".repeat(60));
        assert_eq!(shown(&long).chars().count(), MAX_SHOWN_CHARS + 1);
        assert!(shown(&long).ends_with('…'));
    }
}
