//! The trait every generated vars struct implements.

use crate::prompt::Prompt;
use promptpack_core::error::Result;
use promptpack_core::vars::Vars;

/// A generated vars struct: the variables of one prompt, checked by the
/// compiler.
///
/// [`TypedVars::build`] renders the prompt the struct belongs to; the
/// generated `build_prompt(PromptId::X, vars)` does the same after checking
/// that `vars` belongs to `X`.
pub trait TypedVars: Vars {
    /// The generated `PromptId` enum.
    type Id: Copy + Eq + std::fmt::Debug + std::fmt::Display + 'static;

    /// The prompt these variables belong to.
    const ID: Self::Id;

    /// Renders the prompt: from the generated code in release builds, from
    /// the files on disk in dev builds with hot reload.
    fn build(&self) -> Result<Prompt<Self::Id>>;
}
