//! # promptpack
//!
//! Markdown prompt templates for LLM agents, compiled into typed Rust.
//!
//! Prompts live in files: `templates/<id>/system.md`, an optional
//! `templates/<id>/user.md`, and reusable `snippets/<name>.md`. They use a
//! small language: `{{name}}` for a value, `{{snippet:name}}` to include a
//! snippet, `{{#if name}}…{{else}}…{{/if}}` for optional parts.
//!
//! Two ways to render them:
//!
//! - **Typed** (recommended): a build script calls [`build::compile`], which
//!   checks every template and generates a `PromptId` enum and one vars struct
//!   per prompt; [`include_prompts!`] brings them in. A misspelled id, a
//!   missing variable or a missing snippet fails the build.
//! - **Dynamic**: [`Library::load`] reads a prompt folder at run time and
//!   renders by string id with any `serde::Serialize` values.
//!
//! See the README for the language reference.
#![warn(missing_docs)]

mod config;
mod error;
mod library;
mod program;
mod render;
mod resolve;
mod source;
mod source_file;
mod syntax;
mod value;
mod vars;

pub use config::{CONFIG_FILE, Config};
pub use error::{Diagnostic, Error, ErrorCode, Location, Result};
pub use library::{Library, Prompt};
pub use program::{Op, Program, StableHasher, VarInfo};
pub use render::{MissingVars, render_program};
pub use resolve::{ResolvedPrompt, SnippetSource, TemplateSource, resolve};
pub use source::{Sources, read_sources};
pub use source_file::{SourceFile, Span, is_js_whitespace};
pub use syntax::{Delimiters, Item, Name, Parsed, is_snippet_name, is_var_name, parse};
pub use value::{ValueRef, is_truthy, write_js_number, write_value};
pub use vars::{AsValueRef, Vars};
