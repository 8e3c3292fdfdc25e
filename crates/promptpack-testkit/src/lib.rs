//! Test support shared by promptpack's own tests and its cargo-fuzz targets
//! (`fuzz/`). Not published; no API promise beyond this repository.
//!
//! - [`corpus`]: the conformance corpus's folder and golden renders, for
//!   the tests that reproduce them (from files, from a catalog);
//! - [`case`]: the case format of `tests/inputs/*.txt`, a whole prompt
//!   folder in one text, which the fuzz targets and the fixture harness read;
//! - [`reference`](mod@reference): a reference evaluator of the template
//!   language, over a template tree, that the renderer is compared against
//!   (by the fuzz targets and by `tests/integration/properties.rs`);
//! - [`checks`]: what must hold of any diagnostic, parse or generated code;
//! - [`targets`]: the body of each fuzz target as a plain function, so that
//!   `fuzz/fuzz_targets/*.rs` are one-liners and `tests/integration/fuzz_regressions.rs`
//!   replays past findings in an ordinary `cargo test`;
//! - [`files`]: writing a tree of files under a folder, the set-up most tests start with;
//! - [`wait`]: waiting for what happens on another thread or process, with a hang guard that
//!   fails naming what never happened (never a timing assertion).
#![warn(missing_docs)]

pub mod case;
pub mod checks;
pub mod corpus;
pub mod files;
pub mod net;
pub mod reference;
pub mod targets;
pub mod wait;

pub use case::{Case, Fixture, expanded_size, parse_case, read_fixture};
pub use checks::{
    check_generated_code, check_location, check_parsed, check_splice_work, is_bidi_control,
};
pub use corpus::{GOLDEN_COUNT, Golden, corpus_dir, first_difference, goldens};
pub use reference::{
    Node, Reference, SnippetTrees, evaluate, evaluate_prompt, snippet_trees, tree,
};
pub use targets::{
    TARGETS, Target, fanout_case, fixed_dev_paths, fuzz_codegen, fuzz_parse, fuzz_resolve_render,
    fuzz_snippet_fanout, target,
};
