//! One consistent read of a prompt folder, then the rest of the one load
//! pipeline on it: reads are compared as read, and only the read kept is
//! parsed and resolved.

use super::shared::ConfigSource;
use crate::library::Library;
use promptpack_core::error::{Diagnostic, Error, Result};
use promptpack_core::pipeline::compile;
use promptpack_core::sources::Sources;
use promptpack_load::{Config, Stages, read_sources};

/// Reads of the prompt folder compared before giving up on a stable one.
const MAX_READS: usize = 8;

/// Everything one read of the prompt folder saw: the files and the
/// problems of reading them.
#[derive(Debug, PartialEq)]
pub(super) enum Snapshot {
    BadConfig(Error),
    Read {
        config: Box<Config>,
        sources: Box<Sources>,
        read_errors: Vec<Diagnostic>,
    },
}

impl Snapshot {
    pub(super) fn read(source: &ConfigSource) -> Snapshot {
        match source.load_config() {
            Err(error) => Snapshot::BadConfig(error),
            Ok(config) => {
                let (sources, read_errors) = read_sources(&config);
                Snapshot::Read {
                    config: Box::new(config),
                    sources: Box::new(sources),
                    read_errors,
                }
            }
        }
    }

    /// The library this read makes with the front matter's warnings about
    /// it (a declared choice value no branch compares), or every error it
    /// met; and the configuration it was read with.
    pub(super) fn load(self) -> (Option<Config>, Result<(Library, Vec<Diagnostic>)>) {
        match self {
            Snapshot::BadConfig(error) => (None, Err(error)),
            Snapshot::Read {
                config,
                sources,
                read_errors,
            } => {
                let delimiters = config.delimiters().clone();
                let bound = config.max_render_bytes();
                let library = compile(*sources, read_errors, config.settings(), Stages::default())
                    .into_result()
                    .map(|mut compiled| {
                        let warnings = std::mem::take(&mut compiled.warnings);
                        let library = Library::from_compiled(compiled, delimiters)
                            .with_max_render_bytes(bound);
                        (library, warnings)
                    });
                (Some(*config), library)
            }
        }
    }
}

/// Reads the folder until two reads in a row agree.
///
/// Files are read one after another, so a read racing an editor can see
/// `system.md` from before a save and a snippet from after a later one: a
/// set of files that never existed together. When two consecutive reads
/// agree, every file held its content across the moment the first read
/// ended, so the set existed at that moment. Prompt folders are small, so the
/// second read is cheap; if the files keep changing the last read is used,
/// and the events of those changes bring another reload.
pub(super) fn stable_snapshot(source: &ConfigSource) -> Snapshot {
    let mut last = Snapshot::read(source);
    for _ in 1..MAX_READS {
        let next = Snapshot::read(source);
        if next == last {
            return next;
        }
        last = next;
    }
    last
}
