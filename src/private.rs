//! Items the generated code calls. Not a public API: names and signatures
//! may change in any release.

use crate::library::Prompt;
use promptpack_core::error::{Error, ErrorCode, Result};
use promptpack_core::vars::Vars;

/// Where the crate that generated the code keeps its prompts, fixed at build
/// time, for the dev path to read them from disk.
#[derive(Debug)]
pub struct DevSource {
    /// The prompt root (the crate's manifest folder by default).
    pub root: &'static str,
    /// The templates folder.
    pub templates: &'static str,
    /// The snippets folder.
    pub snippets: &'static str,
    /// The opening delimiter.
    pub open: &'static str,
    /// The closing delimiter.
    pub close: &'static str,
    /// Whether lines holding only a block tag are removed.
    pub standalone_tags: bool,
    /// Each prompt as compiled: the dev path checks an edit on disk against
    /// its contract, and an edit that leaves it is `stale_build`, not a
    /// render the struct cannot express.
    pub prompts: &'static [PromptInfo],
}

/// One prompt as the generated code describes it: the table behind
/// `PromptId`'s methods, and the contract of its compiled vars struct.
#[derive(Debug)]
pub struct PromptInfo {
    /// The prompt id.
    pub id: &'static str,
    /// Stable content hash of the resolved template.
    pub hash: u64,
    /// Every variable, in order of first use.
    pub variables: &'static [&'static str],
    /// The variables tested with `#if`.
    pub conditions: &'static [&'static str],
    /// The compared variables, each with its values.
    pub choices: &'static [(&'static str, &'static [&'static str])],
    /// The struct's fields.
    pub vars: &'static [DevVar],
}

/// A prompt with a contract and nothing else, for tests of the dev path.
pub const fn contract(id: &'static str, vars: &'static [DevVar]) -> PromptInfo {
    PromptInfo {
        id,
        hash: 0,
        variables: &[],
        conditions: &[],
        choices: &[],
        vars,
    }
}

/// One field of a compiled vars struct.
#[derive(Debug)]
pub struct DevVar {
    /// The variable's name in the templates.
    pub name: &'static str,
    /// How the struct types it.
    pub kind: VarKind,
    /// For a choice, the values of its generated enum.
    pub values: &'static [&'static str],
}

/// A `&str` field.
pub const fn text(name: &'static str) -> DevVar {
    DevVar {
        name,
        kind: VarKind::Text,
        values: &[],
    }
}

/// A `bool` field.
pub const fn flag(name: &'static str) -> DevVar {
    DevVar {
        name,
        kind: VarKind::Flag,
        values: &[],
    }
}

/// An `Option<&str>` field.
pub const fn optional(name: &'static str) -> DevVar {
    DevVar {
        name,
        kind: VarKind::Optional,
        values: &[],
    }
}

/// A choice enum field with these values.
pub const fn choice(name: &'static str, values: &'static [&'static str]) -> DevVar {
    DevVar {
        name,
        kind: VarKind::Choice,
        values,
    }
}

/// An `Option` of a choice enum with these values.
pub const fn optional_choice(name: &'static str, values: &'static [&'static str]) -> DevVar {
    DevVar {
        name,
        kind: VarKind::OptionalChoice,
        values,
    }
}

pub use promptpack_core::program::VarKind;

/// Renders prompt `id` from the files on disk, kept current by a watcher.
/// `None` means "render from the embedded code instead": hot reload is not
/// compiled in, is turned off, or the folder is gone.
pub fn dev_render(source: &DevSource, id: &str, vars: &dyn Vars) -> Option<Result<Prompt>> {
    #[cfg(feature = "hot-reload")]
    {
        crate::reload::dev_render(source, id, vars)
    }
    #[cfg(not(feature = "hot-reload"))]
    {
        let _ = (source, id, vars);
        None
    }
}

/// The dev path of a generated `build()`: [`dev_render`] when `enabled`
/// (the generated code passes `cfg!(debug_assertions)` of the crate that
/// includes it), `None` at once otherwise, so a release build never reads
/// the disk.
#[inline]
pub fn dev_build<Id>(
    enabled: bool,
    source: &DevSource,
    id: Id,
    name: &str,
    vars: &dyn Vars,
) -> Option<Result<Prompt<Id>>> {
    if !enabled {
        return None;
    }
    let rendered = dev_render(source, name, vars)?;
    Some(rendered.map(|p| Prompt {
        id,
        system: p.system,
        user: p.user,
        hash: p.hash,
    }))
}

/// The index of prompt `id` in `prompts` (sorted by id, as generated), or
/// the error of an unknown id.
pub fn prompt_index(prompts: &[PromptInfo], id: &str) -> Result<usize> {
    prompts
        .binary_search_by(|p| p.id.cmp(id))
        .or_else(|_| prompts.iter().position(|p| p.id == id).ok_or(()))
        .map_err(|()| Error::unknown_prompt(id, prompts.iter().map(|p| p.id)))
}

/// The values of text fields, by name, for `render_generated`: `""` for a
/// missing one.
pub fn text_values(values: &dyn Fn(&str) -> Option<String>, names: &[&str]) -> Vec<String> {
    names
        .iter()
        .map(|n| values(n).unwrap_or_default())
        .collect()
}

/// The values of optional fields, by name, for `render_generated`.
pub fn optional_values(
    values: &dyn Fn(&str) -> Option<String>,
    names: &[&str],
) -> Vec<Option<String>> {
    names.iter().map(|n| values(n)).collect()
}

/// A condition for `render_generated`: true when given a non-empty string.
pub fn flag_value(values: &dyn Fn(&str) -> Option<String>, name: &str) -> bool {
    values(name).is_some_and(|v| !v.is_empty())
}

/// A compared variable for `render_generated`: the value given, when it is
/// one of the enum's.
pub fn choice_value<E: std::str::FromStr>(
    values: &dyn Fn(&str) -> Option<String>,
    name: &str,
) -> Option<E> {
    values(name).and_then(|v| v.parse().ok())
}

/// `Serialize` and `Deserialize` for a generated `PromptId`, when promptpack's
/// `serde` feature is on; nothing otherwise. A macro, so that the feature of
/// the promptpack the user's crate links decides, not the build script's.
#[cfg(feature = "serde")]
#[macro_export]
#[doc(hidden)]
macro_rules! __impl_serde_for_prompt_id {
    ($ty:ident) => {
        impl $crate::__private::serde::Serialize for $ty {
            fn serialize<S: $crate::__private::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::core::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }
        impl<'de> $crate::__private::serde::Deserialize<'de> for $ty {
            fn deserialize<D: $crate::__private::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::core::result::Result<Self, D::Error> {
                let s =
                    <::std::string::String as $crate::__private::serde::Deserialize>::deserialize(
                        deserializer,
                    )?;
                s.parse()
                    .map_err(<D::Error as $crate::__private::serde::de::Error>::custom)
            }
        }
    };
}

/// Without the `serde` feature a generated `PromptId` gets no serde impls.
#[cfg(not(feature = "serde"))]
#[macro_export]
#[doc(hidden)]
macro_rules! __impl_serde_for_prompt_id {
    ($ty:ident) => {};
}

pub use serde;

/// The error of a generated `build_prompt` given another prompt's vars.
pub fn wrong_vars(requested: &str, vars_of: &str) -> Error {
    Error::new(
        ErrorCode::WrongVars,
        format!("build_prompt({requested}) was given the variables of `{vars_of}`"),
    )
}

/// The error of a generated choice enum's `from_str` given a value the
/// prompt does not compare with.
pub fn unknown_choice(var: &str, value: &str, known: &[&str]) -> Error {
    Error::from(
        promptpack_core::error::Diagnostic::new(
            ErrorCode::InvalidChoice,
            format!("`{value}` is not a value of `{var}`"),
        )
        .with_help(format!("the values are: {}", known.join(", "))),
    )
}

/// The error of a generated `PromptId::from_str` given an unknown id.
pub fn unknown_prompt(id: &str, known: &[&str]) -> Error {
    Error::unknown_prompt(id, known.iter().copied())
}
