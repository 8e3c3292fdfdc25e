//! Hot reload: a [`Library`](crate::Library) kept current by a file watcher.
//!
//! A [`WatchedLibrary`](crate::WatchedLibrary) watches the templates folder, the snippets folder,
//! `promptpack.toml` and the targets of links under the folders (a change
//! counts when the loader would read it: one ignore rule, `is_ignored_name`),
//! falls back to polling when native events fail to watch (the inotify
//! limit), reloads the whole set after a burst of changes has
//! settled (notify-debouncer-full), and swaps the new library in atomically
//! (`arc_swap`), so a render sees either the old set or the new one, never a
//! mix. An edit that does not load keeps the last good set serving and is
//! reported, with its location, through `log` and
//! [`WatchedLibrary::subscribe`](crate::WatchedLibrary::subscribe).
//!
//! The same machinery backs the dev path of generated code (`dev.rs`): one
//! watcher per prompt folder for the whole process.
//!
//! | file | job |
//! |---|---|
//! | `options.rs`, `event.rs` | the public settings and events |
//! | `handle.rs` | the public handle and its life cycle |
//! | `shared.rs` | state shared with the watcher thread; the reload itself |
//! | `snapshot.rs` | one consistent read through the load pipeline |
//! | `backend.rs` | the notify watcher and its watches |
//! | `paths.rs` | which paths matter |
//! | `worker.rs` | the watcher thread |
//! | `dev.rs` | the dev path of generated code |

mod backend;
mod dev;
mod event;
mod handle;
mod options;
mod paths;
mod shared;
mod snapshot;
mod worker;

pub use dev::NO_RELOAD_ENV;
pub(crate) use dev::{dev_reload_events, dev_render};
pub use event::ReloadEvent;
pub use handle::WatchedLibrary;
pub use options::WatchOptions;
