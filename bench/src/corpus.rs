//! The `corpus` section: `Library::load` of the conformance corpus (`PROMPTPACK_CONFORMANCE_DIR`)
//! and the throughput of rendering every golden, each golden's output checked first.

use crate::harness::{Mode, calibrate, escape_cell, first_difference, measure_memory, median};
use crate::workload::corpus_dir;
use promptpack::{Library, MissingVars};
use serde_json::{Map, Value};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

struct Golden {
    name: String,
    id: String,
    vars: Map<String, Value>,
    mode: MissingVars,
    system: String,
    user: String,
}

fn read_goldens(dir: &Path) -> Result<Vec<Golden>, String> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir.join("golden"))
        .map_err(|e| format!("{}: {e}", dir.join("golden").display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let mut json: Value =
                serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            let name = path
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let field = |json: &Value, ptr: &str| {
                json.pointer(ptr)
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| format!("{name}: no {ptr}"))
            };
            let id = field(&json, "/promptId")?;
            let system = field(&json, "/output/system")?;
            let user = field(&json, "/output/user")?;
            let vars = match json.get_mut("variables").map(Value::take) {
                Some(Value::Object(map)) => map,
                _ => return Err(format!("{name}: variables is not an object")),
            };
            let mode = if name.ends_with("--partial") {
                MissingVars::KeepToken
            } else {
                MissingVars::Error
            };
            Ok(Golden {
                name,
                id,
                vars,
                mode,
                system,
                user,
            })
        })
        .collect()
}

fn render_golden(library: &Library, g: &Golden) -> Result<usize, String> {
    let p = library
        .render(&g.id, &g.vars, g.mode)
        .map_err(|e| format!("{}: {e}", g.name))?;
    Ok(black_box(&p.system).len() + black_box(&p.user).as_ref().map_or(0, String::len))
}

fn render_golden_serde(library: &Library, g: &Golden) -> Result<usize, String> {
    let p = if g.mode == MissingVars::KeepToken {
        library.build_prompt_lenient(&g.id, &g.vars)
    } else {
        library.build_prompt(&g.id, &g.vars)
    }
    .map_err(|e| format!("{}: {e}", g.name))?;
    Ok(black_box(&p.system).len() + black_box(&p.user).as_ref().map_or(0, String::len))
}

/// The section: the load, then every golden rendered and checked, then timed.
pub fn section(mode: &Mode) -> String {
    let dir = corpus_dir();
    let mut out = format!("## Conformance corpus (`{}`)\n\n", dir.display());
    if !dir.is_dir() {
        out.push_str("skipped: corpus folder not found (set PROMPTPACK_CONFORMANCE_DIR)\n");
        return out;
    }
    // Loading.
    let (library, peak, live) = measure_memory(|| Library::load(&dir));
    let library = match library {
        Ok(l) => l,
        Err(e) => {
            out.push_str(&format!("FAILED: Library::load: {e}\n"));
            return out;
        }
    };
    let mut load_ms: Vec<f64> = (0..mode.load_samples)
        .map(|_| {
            let start = Instant::now();
            black_box(Library::load(&dir).expect("loaded once already"));
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let load_median = median(&mut load_ms);

    out.push_str(
        "| measure | result | notes |\n\
         |---|---:|---|\n",
    );
    out.push_str(&format!(
        "| `Library::load` (read + validate) | {load_median:.2} ms | median of {} loads; {} prompts; \
         peak {:.2} MB allocated, {:.2} MB held after |\n",
        mode.load_samples,
        library.prompts().len(),
        peak as f64 / 1e6,
        live as f64 / 1e6
    ));

    // Rendering every golden.
    let goldens = match read_goldens(&dir) {
        Ok(g) => g,
        Err(e) => {
            out.push_str(&format!(
                "| render goldens | FAILED | {} |\n",
                escape_cell(&e)
            ));
            return out;
        }
    };
    let mut failures = Vec::new();
    for g in &goldens {
        match library.render(&g.id, &g.vars, g.mode) {
            Ok(p) if p.system == g.system && p.user.as_deref().unwrap_or("") == g.user => {}
            Ok(p) => failures.push(format!(
                "{}: {}",
                g.name,
                if p.system != g.system {
                    first_difference(&p.system, &g.system)
                } else {
                    first_difference(p.user.as_deref().unwrap_or(""), &g.user)
                }
            )),
            Err(e) => failures.push(format!("{}: {e}", g.name)),
        }
    }
    if !failures.is_empty() {
        out.push_str(&format!(
            "| render goldens | FAILED | {} of {} differ: {} |\n",
            failures.len(),
            goldens.len(),
            escape_cell(&failures.join("; "))
        ));
        return out;
    }
    let passes = |render: fn(&Library, &Golden) -> Result<usize, String>| {
        let mut run = |n: u64| {
            let mut bytes = 0;
            for _ in 0..n {
                for g in &goldens {
                    bytes += render(&library, g).expect("checked before timing");
                }
            }
            bytes
        };
        let bytes_per_pass = run(1);
        let batch = calibrate(&mut run, mode.batch_target);
        let mut ns: Vec<f64> = (0..mode.rounds)
            .map(|_| {
                let start = Instant::now();
                black_box(run(batch));
                start.elapsed().as_nanos() as f64 / batch as f64
            })
            .collect();
        let per_pass = median(&mut ns);
        (bytes_per_pass, per_pass)
    };
    for (label, render) in [
        (
            "`Library::render` with the golden's `serde_json::Map` as `Vars`",
            render_golden as fn(&_, &_) -> _,
        ),
        (
            "`Library::build_prompt` / `build_prompt_lenient` (serde conversion)",
            render_golden_serde,
        ),
    ] {
        let (bytes, ns) = passes(render);
        out.push_str(&format!(
            "| render all {} goldens | {:.2} GB/s | {label}; {:.1} µs per pass over {} bytes of output; \
             `--partial` ones lenient |\n",
            goldens.len(),
            bytes as f64 / ns,
            ns / 1e3,
            bytes
        ));
    }
    out
}
