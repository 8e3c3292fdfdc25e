//! One way from a stored version to a checked prompt: compiled under the
//! version's own syntax from its files and pinned snippet revisions, its
//! prompt found, the text it renders checked against the content hash the
//! version names, and, when given, checked against the contract of a
//! binary's vars struct. A live handle deciding what it serves, the
//! console's preview and builds panel, `promptpack catalog render` and
//! [`Catalog::verify`](crate::Catalog::verify) all judge through here, so
//! they cannot disagree about a version.

use crate::compile::{CompiledPrompt, compile_prompt};
use crate::finding::resolved_finding;
use crate::model::Version;
use promptpack_core::contract::{PromptContract, check};
use promptpack_core::resolve::ResolvedPrompt;
use promptpack_core::{Error, ErrorCode, Settings, Sources};

/// A stored version that compiled, renders the text its content hash names
/// and, when a contract was given, keeps to it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CheckedPrompt {
    /// The version as the catalog holds it.
    pub version: Version,
    /// Its prompt, compiled from its files and pinned snippet revisions.
    pub prompt: ResolvedPrompt,
    /// The settings of the version's syntax, which `prompt` was parsed in.
    pub settings: Settings,
}

/// What a program does with one stored version.
#[derive(Debug)]
pub enum Verdict {
    /// Serve it: it is what it says it is.
    Serve(Box<CheckedPrompt>),
    /// Never serve it, for what its own content holds: `damaged` (the
    /// store holds it, or a snippet revision it pins, otherwise than
    /// promptpack wrote it), every compile error of its files,
    /// `contract_violation` for the contract it was judged against.
    Refuse(Error),
}

impl Verdict {
    /// Why it is refused, in one line (see [`refusal_line`]), or `None`
    /// when it is served.
    pub fn refusal(&self) -> Option<String> {
        match self {
            Verdict::Serve(_) => None,
            Verdict::Refuse(error) => Some(refusal_line(error)),
        }
    }

    /// The checked prompt to serve, or the error it is refused with: for a
    /// caller that treats a refusal as its own failure.
    ///
    /// # Errors
    /// The refusal's error.
    pub fn into_result(self) -> Result<CheckedPrompt, Error> {
        match self {
            Verdict::Serve(checked) => Ok(*checked),
            Verdict::Refuse(error) => Err(error),
        }
    }
}

/// A refusal in one line: `code: message` of its first diagnostic, as the
/// console's builds panel and `catalog verify` show it.
pub fn refusal_line(error: &Error) -> String {
    match error.diagnostics().first() {
        Some(first) => format!("{}: {}", first.code, first.message),
        None => format!("{}: {error}", error.code()),
    }
}

/// Judges version `version`, read with `sources` (its files and the snippet
/// revisions it pins), against `contract` when given: see [`Verdict`].
pub fn judge(version: Version, sources: Sources, contract: Option<&PromptContract>) -> Verdict {
    match checked(version, sources, contract) {
        Ok(checked) => Verdict::Serve(Box::new(checked)),
        Err(error) => Verdict::Refuse(error),
    }
}

/// Judges a version as the catalog gave it (see
/// [`Catalog::versions_with_sources`](crate::Catalog::versions_with_sources)):
/// a version the store holds damaged is refused like one that does not
/// compile.
///
/// # Errors
/// Why the catalog could not give it (`unavailable`, `not_found` for a
/// version gone meanwhile): that says nothing of the version, so a caller
/// tries again later rather than refuse it.
pub fn judge_fetched(
    fetched: Result<(Version, Sources), Error>,
    contract: Option<&PromptContract>,
) -> Result<Verdict, Error> {
    match fetched {
        Ok((version, sources)) => Ok(judge(version, sources, contract)),
        Err(error) if error.code() == ErrorCode::Damaged => Ok(Verdict::Refuse(error)),
        Err(error) => Err(error),
    }
}

fn checked(
    version: Version,
    sources: Sources,
    contract: Option<&PromptContract>,
) -> Result<CheckedPrompt, Error> {
    let CompiledPrompt {
        prompt,
        settings,
        text,
        ..
    } = compile_prompt(&version.prompt_id, &version.syntax, sources)?;
    // A version whose files or snippets were rewritten under an unchanged
    // resolved text renders other text than it names.
    if text.content_hash != version.content_hash {
        return Err(resolved_finding(
            &version.prompt_id,
            version.version,
            "its files and pinned snippets render other text than its content hash names",
        )
        .into_error());
    }
    if let Some(contract) = contract
        && let Some(error) =
            Error::from_diagnostics(check(&prompt, contract, ErrorCode::ContractViolation))
    {
        return Err(error);
    }
    Ok(CheckedPrompt {
        version,
        prompt,
        settings,
    })
}
