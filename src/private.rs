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
    /// The contract of each prompt's compiled vars struct: an edit on disk
    /// that leaves it is `stale_build`, not a render the struct cannot
    /// express.
    pub prompts: &'static [DevPrompt],
}

/// One prompt's compiled vars struct, as the dev path checks the files on
/// disk against it.
#[derive(Debug)]
pub struct DevPrompt {
    /// The prompt id.
    pub id: &'static str,
    /// Its fields.
    pub vars: &'static [DevVar],
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
