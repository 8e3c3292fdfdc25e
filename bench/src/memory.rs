//! The `memory` section: the heap a `Library` of 10,000 synthetic prompts of about 5 KB takes
//! while it loads and once loaded (a counting global allocator), and what the held bytes are.

use crate::harness::measure_memory;
use crate::synthetic::{Scratch, write_synthetic};
use promptpack::Library;
use std::hint::black_box;
use std::time::Instant;

/// Prompts in the synthetic tree.
const SYNTHETIC_PROMPTS: usize = 10_000;

/// Heap bytes a loaded library's prompts hold, by kind, from their public
/// fields (capacities, not lengths; allocator overhead not counted).
struct Breakdown {
    text: usize,
    ops: usize,
    vars: usize,
    other: usize,
}

fn breakdown(library: &Library) -> Breakdown {
    let mut b = Breakdown {
        text: 0,
        ops: 0,
        vars: 0,
        other: 0,
    };
    for p in library.prompts() {
        for program in std::iter::once(&p.system).chain(&p.user) {
            b.text += program.text.capacity();
            b.ops += program.ops.capacity() * std::mem::size_of::<promptpack_core::program::Op>();
        }
        b.vars += p.vars.capacity() * std::mem::size_of::<promptpack_core::program::VarInfo>();
        for v in &p.vars {
            // `first_use` shares its file's text: no bytes of its own.
            b.vars += v.name.capacity();
        }
        b.other += std::mem::size_of_val(p)
            + p.id.capacity()
            + p.system_path.capacity()
            + p.user_path.as_ref().map_or(0, String::capacity)
            + p.snippets.iter().map(|s| s.capacity() + 24).sum::<usize>();
    }
    b
}

/// The section: one load, counted.
pub fn section() -> String {
    let mut out = format!("## Memory: {SYNTHETIC_PROMPTS} synthetic prompts of about 5 KB\n\n");
    let scratch = Scratch::new("memory");
    let root = &scratch.0;
    let result = (|| -> Result<String, String> {
        let bytes = write_synthetic(root, SYNTHETIC_PROMPTS)
            .map_err(|e| format!("writing {}: {e}", root.display()))?;
        let start = Instant::now();
        let (library, peak, live) = measure_memory(|| Library::load(root));
        let took = start.elapsed();
        let library = library.map_err(|e| format!("Library::load: {e}"))?;
        let prompts = library.prompts().len();
        let b = breakdown(&library);
        // Keep the library alive until after the measurement.
        drop(black_box(library));
        let mb = |n: usize| n as f64 / 1e6;
        Ok(format!(
            "| measure | result | notes |\n\
             |---|---:|---|\n\
             | peak live heap during `Library::load` | {:.1} MB | counting global allocator; {prompts} prompts, \
             {:.1} MB of template text on disk |\n\
             | held by the loaded `Library` | {:.1} MB | live bytes after the load returned |\n\
             | of which program text | {:.1} MB | `Program::text`: templates with snippets spliced in |\n\
             | of which ops | {:.1} MB | `Program::ops` ({} bytes per `Op`) |\n\
             | of which variable tables | {:.1} MB | `VarInfo`s and names; `first_use` shares its file's text |\n\
             | of which the rest | {:.1} MB | ids, paths, snippet sets, the structs themselves |\n\
             | `Library::load` time | {:.0} ms | one load, counting allocator on |\n",
            mb(peak),
            bytes as f64 / 1e6,
            mb(live),
            mb(b.text),
            mb(b.ops),
            std::mem::size_of::<promptpack_core::program::Op>(),
            mb(b.vars),
            mb(b.other),
            took.as_secs_f64() * 1e3
        ))
    })();
    match result {
        Ok(table) => out.push_str(&table),
        Err(e) => out.push_str(&format!("FAILED: {e}\n")),
    }
    out
}
