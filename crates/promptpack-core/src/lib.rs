//! The prompt template language of [promptpack](https://docs.rs/promptpack):
//! syntax, snippet resolution, programs, the render pass, JavaScript values,
//! diagnostics and the one error type. Pure: it knows no file system, no
//! code generator and no watcher.
//!
//! **Internal crate.** Its API serves promptpack's own crates and has no
//! semver guarantee of its own; applications use `promptpack`, build scripts
//! `promptpack-build`. Tools that need the internals can reach them through
//! promptpack's `unstable-machinery` feature.
#![warn(missing_docs)]

pub mod answer;
pub mod contract;
pub mod conversation;
pub mod diagnostics;
pub mod error;
#[cfg(feature = "contract-check")]
pub mod field;
pub mod front_matter;
#[cfg(feature = "json")]
pub mod json;
pub mod keywords;
#[cfg(feature = "lint")]
pub mod lint;
pub mod message;
#[cfg(feature = "load")]
pub mod pipeline;
#[cfg(feature = "print")]
pub mod print;
pub mod program;
pub mod render;
#[cfg(feature = "load")]
pub mod resolve;
#[cfg(feature = "scan")]
pub mod scan;
pub mod schema;
pub mod sections;
pub mod settings;
pub mod similar;
pub mod source_file;
pub mod sources;
pub mod syntax;
pub mod table;
pub mod value;
pub mod vars;

pub use diagnostics::{Severity, Style, render_diagnostic, render_error};
pub use error::{Diagnostic, Error, ErrorCode, Location, Result};
pub use front_matter::FrontMatter;
pub use settings::Settings;
pub use source_file::{SourceFile, Span};
pub use sources::{SnippetSource, Sources, TemplateSource};
pub use syntax::Delimiters;
