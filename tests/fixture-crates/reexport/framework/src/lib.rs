//! Stands for a crate that bundles promptpack with the rest of what its
//! users need and re-exports it under a name of its own: its users depend
//! on it alone.

/// The language-model side of the framework.
pub mod llm {
    pub use promptpack as prompts;
}
