//! The hot reload loop: render a prompt, edit its file, see the new render.
//!
//! ```text
//! cargo run --example hot_reload              # makes a prompt folder; edit the file it names
//! cargo run --example hot_reload -- --demo    # edits the files itself, exits in a few seconds
//! cargo run --example hot_reload -- my/prompts   # watches your own prompt folder
//! ```
//!
//! With a terminal it runs until you press Enter (or ten minutes pass).
//! Without one (CI, a pipe) it exits by itself: after the demo with
//! `--demo`, else after 5 seconds or 3 reloads.

#[cfg(feature = "hot-reload")]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    demo::main()
}

#[cfg(feature = "hot-reload")]
mod demo {
    use promptpack::{Library, ReloadEvent, Style, WatchedLibrary, render_error};
    use std::io::IsTerminal;
    use std::path::{Path, PathBuf};
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    const SYSTEM: &str = "You are {{assistant}}, a helpful assistant.\n\n{{snippet:tone}}\n";
    const TONE: &str = "Be concise and friendly.\n";

    /// The values every prompt is rendered with. Prompts of your own folder
    /// may need others: a missing one stays as `{{name}}` in the output.
    fn vars() -> serde_json::Value {
        serde_json::json!({"assistant": "Ada", "user_name": "Grace", "formal": true})
    }

    enum Mode {
        /// Edits the files itself.
        Demo,
        /// Waits for the user, until Enter.
        Interactive,
        /// No terminal to wait on: a bounded run.
        Unattended,
    }

    pub fn main() -> Result<(), Box<dyn std::error::Error>> {
        let mut demo = false;
        let mut folder = None;
        for arg in std::env::args().skip(1) {
            match arg.as_str() {
                "--demo" => demo = true,
                "-h" | "--help" => {
                    println!("usage: hot_reload [--demo] [PROMPT_FOLDER]");
                    return Ok(());
                }
                _ => folder = Some(PathBuf::from(arg)),
            }
        }
        let mode = if demo {
            Mode::Demo
        } else if std::io::stdin().is_terminal() {
            Mode::Interactive
        } else {
            Mode::Unattended
        };

        // Our own folder lives in a temp dir, removed when `_temp` drops; a
        // folder given on the command line is only read.
        let (_temp, root) = match folder {
            Some(folder) => (None, folder),
            None => {
                let temp = tempfile::tempdir()?;
                let root = temp.path().to_path_buf();
                write(&root.join("templates/greeting/system.md"), SYSTEM)?;
                write(&root.join("snippets/tone.md"), TONE)?;
                (Some(temp), root)
            }
        };

        let watched = match Library::watch(&root) {
            Ok(watched) => watched,
            Err(error) => {
                eprintln!("{}", render_error(&error, Style::Plain));
                return Err(format!("cannot watch {}", root.display()).into());
            }
        };
        let events = watched.subscribe();
        let file = first_template(&watched, &root);
        println!("Watching {}", root.display());
        show(&watched);
        match mode {
            Mode::Interactive => {
                println!(
                    "Edit {} and save: the prompt is rendered again on each reload.",
                    file.display()
                );
                println!("Press Enter to quit.");
            }
            Mode::Unattended => println!(
                "No terminal: watching for 5 seconds or 3 reloads (edit {}; `--demo` edits it for you).",
                file.display()
            ),
            Mode::Demo => println!("Demo: editing {} and its snippet.", file.display()),
        }

        let (quit_tx, quit_rx) = mpsc::channel::<()>();
        let (deadline, max_reloads) = match mode {
            Mode::Interactive => {
                std::thread::spawn(move || {
                    let mut line = String::new();
                    // Enter, end of input or an error all mean "quit".
                    let _ = std::io::stdin().read_line(&mut line);
                    let _ = quit_tx.send(());
                });
                (Duration::from_secs(600), usize::MAX)
            }
            Mode::Unattended => (Duration::from_secs(5), 3),
            Mode::Demo => {
                let root = root.clone();
                std::thread::spawn(move || {
                    if let Err(e) = edit_demo(&root) {
                        eprintln!("demo edit failed: {e}");
                    }
                    let _ = quit_tx.send(());
                });
                (Duration::from_secs(20), usize::MAX)
            }
        };

        let end = Instant::now() + deadline;
        let mut reloads = 0;
        let mut quitting = false;
        while reloads < max_reloads {
            if quit_rx.try_recv().is_ok() {
                // The demo is done editing: show what its last edits brought,
                // then stop.
                quitting = true;
            }
            let wait = if quitting {
                Duration::from_millis(500)
            } else {
                Duration::from_millis(100)
            };
            match events.recv_timeout(wait) {
                Ok(ReloadEvent::Reloaded {
                    generation,
                    paths,
                    took,
                    ..
                }) => {
                    reloads += 1;
                    let changed: Vec<String> = paths.iter().map(|p| shown(p, &root)).collect();
                    println!(
                        "\n--- reload {generation} in {} ms ({})",
                        took.as_millis(),
                        if changed.is_empty() {
                            "explicit".to_string()
                        } else {
                            changed.join(", ")
                        }
                    );
                    show(&watched);
                }
                Ok(ReloadEvent::Failed(error)) => {
                    println!("\n--- the edit does not load; the last good version keeps serving:");
                    println!("{}", render_error(&error, Style::Plain));
                }
                Ok(_) => {}
                Err(mpsc::RecvTimeoutError::Timeout) if quitting => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if Instant::now() > end {
                break;
            }
        }
        println!("\nDone after {reloads} reload(s).");
        Ok(())
    }

    /// The file to tell the user to edit: the first prompt's system.md.
    fn first_template(watched: &WatchedLibrary, root: &Path) -> PathBuf {
        let library = watched.current();
        match library.ids().next() {
            Some(id) => watched.config().templates().join(id).join("system.md"),
            None => root.join("templates"),
        }
    }

    fn show(watched: &WatchedLibrary) {
        let library = watched.current();
        if library.ids().len() == 0 {
            println!("(no prompts yet: create templates/<id>/system.md)");
        }
        for id in library.ids() {
            match library.build_prompt_lenient(id, &vars()) {
                Ok(p) => {
                    println!("[{}] system:\n{}", p.id, indent(&p.system));
                    if let Some(user) = &p.user {
                        println!("[{}] user:\n{}", p.id, indent(user));
                    }
                }
                Err(error) => println!("[{id}] {}", render_error(&error, Style::Plain)),
            }
        }
    }

    fn indent(text: &str) -> String {
        text.lines()
            .map(|l| format!("    {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn shown(path: &Path, root: &Path) -> String {
        // Watchers may report canonical paths (/private/var on macOS).
        let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let path = path.strip_prefix(&root).unwrap_or(path);
        path.display().to_string()
    }

    fn write(path: &Path, text: &str) -> std::io::Result<()> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, text)
    }

    /// What a user would do, one save at a time, with pauses longer than the
    /// debounce time so that each save is its own reload.
    fn edit_demo(root: &Path) -> std::io::Result<()> {
        let system = root.join("templates/greeting/system.md");
        let pause = || std::thread::sleep(Duration::from_millis(400));
        pause();
        write(
            &system,
            "You are {{assistant}}, a helpful assistant.\n\n{{snippet:tone}}\n\n{{#if formal}}Address the user as Ms. {{user_name}}.{{else}}Call the user {{user_name}}.{{/if}}\n",
        )?;
        pause();
        write(
            &root.join("snippets/tone.md"),
            "Be concise, warm and precise.\n",
        )?;
        pause();
        // A mistake: the block is never closed. The last good version serves.
        write(
            &system,
            "You are {{assistant}}.\n\n{{#if formal}}Be formal.\n",
        )?;
        pause();
        write(
            &system,
            "You are {{assistant}}.\n\n{{#if formal}}Be formal.{{/if}}\n{{snippet:tone}}\n",
        )?;
        pause();
        write(
            &root.join("templates/greeting/user.md"),
            "Hello, I am {{user_name}}.\n",
        )?;
        Ok(())
    }
}
