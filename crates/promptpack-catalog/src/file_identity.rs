//! The identity of a SQLite catalog's file: which file a path names, so
//! that an open catalog notices another file moved over the one it opened
//! (a backup restored) or the file removed. The store refuses to go on
//! with the old file; a live handle opens the new one.

use std::path::Path;

/// Which file a path named when it was looked at: on Unix its device and
/// inode, which a rename over the path changes and a write in place does
/// not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIdentity {
    device: u64,
    inode: u64,
}

impl FileIdentity {
    /// The file at `path` now; `None` when there is none (or, off Unix,
    /// always: a file open there cannot be replaced).
    pub fn of(path: &Path) -> Option<FileIdentity> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let metadata = std::fs::metadata(path).ok()?;
            Some(FileIdentity {
                device: metadata.dev(),
                inode: metadata.ino(),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = path;
            None
        }
    }
}
