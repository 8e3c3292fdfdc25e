//! The loader's integration tests in one binary: each module was a
//! `tests/<name>.rs` of its own, each linking the loader again.

mod lints_need_the_feature;
mod special_files;
