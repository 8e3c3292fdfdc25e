//! What the build crate's tests share. Not the test kit: trybuild compiles
//! every dev-dependency of this crate for its cases, so this crate keeps
//! them few.

use std::path::Path;

/// Writes `text` to `path` under `root`, making its folders.
pub fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}
