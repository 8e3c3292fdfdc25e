//! Which catalog a command uses: `--db`, else the SQLite file under the
//! prompt root. `catalog` and `console` take the same two options.

use crate::Folders;
use clap::Args;
use promptpack_catalog::DEFAULT_SQLITE_PATH;
use std::path::{Path, PathBuf};

/// `--db` and `--root`, as `catalog` and `console` take them.
#[derive(Debug, Clone, Args)]
pub(crate) struct StoreArgs {
    /// The catalog: `sqlite:PATH` or `postgres://user@host/db`, made by
    /// `catalog init` [default: sqlite:ROOT/.promptpack/catalog.db].
    #[arg(
        long,
        global = true,
        env = "PROMPTPACK_DB",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub(crate) db: Option<String>,
    /// The prompt root: where the default catalog is (and, for `catalog`,
    /// the tree import, publish and snippet read unless given --from)
    /// [default: found as for the other commands].
    #[arg(long, global = true, value_name = "ROOT")]
    root: Option<PathBuf>,
}

impl StoreArgs {
    /// The prompt root's options, as the other commands take them: `root`
    /// (`from`, else `--root`), found when not given.
    pub(crate) fn folders(&self, from: Option<&Path>) -> Folders {
        Folders {
            root: from.map(Path::to_path_buf).or_else(|| self.root.clone()),
            templates: None,
            snippets: None,
            delimiters: None,
            max_render_bytes: None,
        }
    }

    /// `--db`, `$PROMPTPACK_DB`, else the SQLite file under the root.
    pub(crate) fn url(&self) -> String {
        match &self.db {
            Some(url) => url.clone(),
            None => {
                let root = self.folders(None).root();
                format!("sqlite:{}", root.join(DEFAULT_SQLITE_PATH).display())
            }
        }
    }
}
