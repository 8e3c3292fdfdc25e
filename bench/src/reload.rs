//! The `reload` section, hot reload: a file written → the change visible through
//! `WatchedLibrary::current()`.

use crate::harness::{Mode, err, escape_cell};
use crate::synthetic::{Scratch, write_synthetic};
use promptpack::Library;
use std::time::{Duration, Instant};

/// The section: edits on 10 and on 1,000 prompts.
pub fn section(mode: &Mode) -> String {
    let mut out = String::from(
        "## Hot reload: file write → change visible through `WatchedLibrary::current()`\n\n\
         `Library::watch` with its default options (native events, 50 ms debounce). Each edit \
         rewrites one `system.md` with new text; the clock runs from just before the write \
         until `current()` returns a library whose prompt has the new content hash \
         (checked every 0.2 ms).\n\n\
         | prompts in the folder | edits | p50 ms | p95 ms | max ms |\n\
         |---:|---:|---:|---:|---:|\n",
    );
    let edits = if mode.quick { 10 } else { 30 };
    for prompts in [10, 1_000] {
        let scratch = Scratch::new(&format!("reload-{prompts}"));
        let result = (|| -> Result<String, String> {
            write_synthetic(&scratch.0, prompts)
                .map_err(|e| format!("writing {}: {e}", scratch.0.display()))?;
            let watched = Library::watch(&scratch.0).map_err(err)?;
            let id = "prompt-00000";
            let file = scratch.0.join("templates").join(id).join("system.md");
            let hash_now = || watched.current().hash(id);
            let mut ms = Vec::with_capacity(edits);
            for edit in 0..edits {
                let before = hash_now();
                let text =
                    format!("# Edit {edit} for {{{{agentName}}}}\n\nHello {{{{userName}}}}.\n");
                let start = Instant::now();
                std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))?;
                loop {
                    if hash_now() != before {
                        break;
                    }
                    if start.elapsed() > Duration::from_secs(10) {
                        return Err(format!("edit {edit} not seen after 10 s"));
                    }
                    std::thread::sleep(Duration::from_micros(200));
                }
                ms.push(start.elapsed().as_secs_f64() * 1e3);
                // Let the watcher settle so that edits do not merge.
                std::thread::sleep(Duration::from_millis(100));
            }
            ms.sort_by(f64::total_cmp);
            let pct = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
            Ok(format!(
                "| {prompts} | {edits} | {:.1} | {:.1} | {:.1} |\n",
                pct(0.5),
                pct(0.95),
                ms[ms.len() - 1]
            ))
        })();
        match result {
            Ok(row) => out.push_str(&row),
            Err(e) => out.push_str(&format!(
                "| {prompts} | FAILED | – | – | {} |\n",
                escape_cell(&e)
            )),
        }
    }
    out
}
