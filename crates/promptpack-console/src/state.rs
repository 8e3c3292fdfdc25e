//! What every request shares: the catalog's connections, the verdicts
//! reached, and the settings a handler reads. A leaf: it knows nothing of
//! the routes, the pages or the API that read it.

use crate::catalog_pool::CatalogPool;
use crate::verdicts::Verdicts;
use std::sync::Arc;

/// Counts the tokens of a rendered text, for the preview (the CLI gives
/// its tokenizer; without one the preview shows characters only).
pub type TokenCounter = Arc<dyn Fn(&str) -> usize + Send + Sync>;

/// What every request shares.
pub(crate) struct AppState {
    pub(crate) catalog: Arc<CatalogPool>,
    /// The most sessions one user keeps.
    pub(crate) max_sessions_per_user: u32,
    pub(crate) protected_labels: Vec<String>,
    pub(crate) token_counter: Option<TokenCounter>,
    /// Which registered builds refuse which versions, reached once.
    pub(crate) verdicts: Arc<Verdicts>,
    /// [`Settings::max_render_bytes`](crate::Settings::max_render_bytes).
    pub(crate) max_render_bytes: usize,
}

impl AppState {
    /// Whether only admins change `label`: compared without case, so that
    /// `Production` is as protected as `production` (the catalog refuses a
    /// label that differs from another only by case, as it does `LATEST`).
    pub(crate) fn is_protected(&self, label: &str) -> bool {
        self.protected_labels
            .iter()
            .any(|p| p.eq_ignore_ascii_case(label))
    }
}
