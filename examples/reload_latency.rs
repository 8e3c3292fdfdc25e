//! How long a saved edit takes to reach `WatchedLibrary::current()`.
//!
//! ```text
//! cargo run --release --example reload_latency                 # native events
//! cargo run --release --example reload_latency -- --poll 100   # polling every 100 ms
//! cargo run --release --example reload_latency -- --edits 200
//! ```
//!
//! Each edit writes the template, then polls `current()` every 0.5 ms until
//! the new text renders. Edits are spaced well beyond the debounce time so
//! that each is its own burst.

#[cfg(feature = "hot-reload")]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    use promptpack::{WatchOptions, WatchedLibrary};
    use std::time::{Duration, Instant};

    let mut edits = 50usize;
    let mut options = WatchOptions::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| -> Result<u64, Box<dyn std::error::Error>> {
            let text = args
                .next()
                .ok_or_else(|| format!("{name} needs a number"))?;
            Ok(text.parse().map_err(|e| format!("{name} {text}: {e}"))?)
        };
        match arg.as_str() {
            "--edits" => edits = usize::try_from(value("--edits")?)?.max(1),
            "--poll" => options = options.poll(Duration::from_millis(value("--poll")?)),
            "--debounce" => options = options.debounce(Duration::from_millis(value("--debounce")?)),
            other => {
                return Err(format!(
                    "unknown argument {other}; use --edits N, --poll MS, --debounce MS"
                )
                .into());
            }
        }
    }

    let dir = tempfile::tempdir()?;
    let file = dir.path().join("templates/bench/system.md");
    std::fs::create_dir_all(file.parent().ok_or("no parent")?)?;
    std::fs::write(&file, "version 0")?;
    let watched = WatchedLibrary::new(dir.path(), options.clone())?;
    let none = serde_json::json!({});

    let mut samples = Vec::with_capacity(edits);
    for i in 1..=edits {
        let expected = format!("version {i}");
        let start = Instant::now();
        std::fs::write(&file, &expected)?;
        loop {
            if watched.current().build_prompt("bench", &none)?.system == expected {
                break;
            }
            if start.elapsed() > Duration::from_secs(10) {
                return Err(format!("edit {i} not visible after 10 s").into());
            }
            std::thread::sleep(Duration::from_micros(500));
        }
        samples.push(start.elapsed());
        // Quiet time between edits, varied so that edits do not line up with
        // the debouncer's ticks.
        std::thread::sleep(Duration::from_millis(120 + (i as u64 * 37) % 80));
    }

    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let mode = match options.poll {
        Some(interval) => format!("polling every {} ms", interval.as_millis()),
        None => "native events".to_string(),
    };
    println!(
        "reload latency over {} edits ({mode}, debounce {} ms): p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms, mean {:.1} ms",
        samples.len(),
        options.debounce.as_millis(),
        ms(at(0.50)),
        ms(at(0.95)),
        ms(at(1.0)),
        ms(mean),
    );
    println!("reloads: {}", watched.generation() - 1);

    // A burst: 100 saves as fast as they go. The debouncer should make one
    // or a few reloads of it; how few depends on the machine, so it is
    // measured here rather than asserted in a test.
    let before = watched.generation();
    for i in 1..=100 {
        std::fs::write(&file, format!("burst {i}"))?;
    }
    let start = Instant::now();
    while watched.current().build_prompt("bench", &none)?.system != "burst 100" {
        if start.elapsed() > Duration::from_secs(10) {
            return Err("the burst's last save not visible after 10 s".into());
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    // Late batches of the burst, if any.
    std::thread::sleep(options.debounce * 10);
    println!(
        "a burst of 100 saves: {} reload(s)",
        watched.generation() - before
    );
    Ok(())
}
