//! What the reader does with entries that are not plain files of the tree:
//! special files (FIFOs, devices) are refused without ever blocking or
//! reading them, a link swapped while loading never lets a file outside the
//! root in, and ignored names are skipped wherever they appear.
#![cfg(unix)]

use promptpack_load::{Config, Stages, load, read_sources};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

/// A hang guard, not a measure: far longer than a load takes on a loaded
/// machine, so it fails only a read that blocks for good.
const HANG_GUARD: Duration = Duration::from_secs(300);

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("create folders");
    std::fs::write(path, text).expect("write a file");
}

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("create folders");
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("no NUL");
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
    let made = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
    assert_eq!(made, 0, "mkfifo {}", path.display());
}

/// Runs `f` on another thread and fails the test if it never returns.
fn guarded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(HANG_GUARD)
        .unwrap_or_else(|_| panic!("{what}: the read blocks or panics"))
}

/// `(code, path, message)` of every read error.
fn read_errors(root: &Path) -> Vec<(String, String, String)> {
    let config = Config::new(root);
    let (_, errors) = read_sources(&config);
    errors
        .iter()
        .map(|d| {
            let path = d.location.as_ref().map(|l| l.path().to_string());
            (
                d.code.as_str().to_string(),
                path.unwrap_or_default(),
                d.message.clone(),
            )
        })
        .collect()
}

#[test]
fn special_files_are_coded_errors_and_never_block() {
    // (the special file, what it is called in the message); a fine
    // template and snippet beside it in every case.
    let cases = [
        ("templates/greet/system.md", "a FIFO"),
        ("templates/greet/user.md", "a FIFO"),
        ("snippets/piped.md", "a FIFO"),
        ("snippets/sub/piped.md", "a FIFO"),
    ];
    for (special, kind) in cases {
        let dir = tempfile::tempdir().expect("a scratch folder");
        let root = dir.path().to_path_buf();
        write(&root.join("templates/greet/system.md"), "Hi");
        write(
            &root.join("templates/fine/system.md"),
            "Fine {{snippet:ok}}",
        );
        write(&root.join("snippets/ok.md"), "ok");
        let path = root.join(special);
        let _ = std::fs::remove_file(&path);
        mkfifo(&path);
        let errors = guarded(special, move || read_errors(&root));
        assert_eq!(errors.len(), 1, "{special}: {errors:?}");
        let (code, at, message) = &errors[0];
        assert_eq!((code.as_str(), at.as_str()), ("io", special), "{message}");
        assert!(
            message.contains(&format!("is {kind}, not a regular file")),
            "{special}: {message}"
        );
    }
}

#[test]
fn a_config_file_that_is_not_a_regular_file_is_refused() {
    // A FIFO would block `Config::load` for good; a link to a device would
    // read without end.
    let fifo = |root: &Path| mkfifo(&root.join("promptpack.toml"));
    let device = |root: &Path| {
        std::os::unix::fs::symlink("/dev/zero", root.join("promptpack.toml")).expect("a link")
    };
    for (what, make) in [("fifo", &fifo as &dyn Fn(&Path)), ("/dev/zero", &device)] {
        let dir = tempfile::tempdir().expect("a scratch folder");
        let root = dir.path().to_path_buf();
        make(&root);
        let error = guarded(what, move || Config::load(&root).err());
        let error = error.unwrap_or_else(|| panic!("{what}: loaded"));
        let d = &error.diagnostics()[0];
        assert_eq!(d.code.as_str(), "io", "{what}: {error}");
        assert!(d.message.contains("not a regular file"), "{what}: {error}");
    }
}

#[test]
fn a_link_swapped_while_loading_never_lets_an_outside_file_in() {
    let dir = tempfile::tempdir().expect("a scratch folder");
    let root = dir.path().join("root");
    let secret = dir.path().join("outside/secret.md");
    write(&secret, "SECRET");
    write(&root.join("templates/greet/system.md"), "Hi {{snippet:s}}");
    let inside = root.join("snippets/inside.md");
    write(&inside, "inside");
    let link = root.join("snippets/s.md");
    std::os::unix::fs::symlink(&inside, &link).expect("a link");

    // Swap the link between the inside file and the secret, atomically
    // (rename over it), as fast as the machine allows.
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = Arc::clone(&stop);
        let (link, tmp) = (link.clone(), root.join("snippets/.tmp-link"));
        std::thread::spawn(move || {
            let mut outside = false;
            while !stop.load(Ordering::Relaxed) {
                outside = !outside;
                let target = if outside { &secret } else { &inside };
                let _ = std::fs::remove_file(&tmp);
                std::os::unix::fs::symlink(target, &tmp).expect("a link");
                std::fs::rename(&tmp, &link).expect("swap the link");
            }
        })
    };
    let config = Config::new(&root);
    let mut leaks = 0;
    for _ in 0..3000 {
        let (sources, _) = read_sources(&config);
        leaks += sources
            .snippets
            .iter()
            .filter(|s| s.file.text().contains("SECRET"))
            .count();
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().expect("the swapper ends");
    assert_eq!(leaks, 0, "the outside file was read {leaks} times");
}

#[test]
fn ignored_names_are_skipped_at_every_depth() {
    let dir = tempfile::tempdir().expect("a scratch folder");
    let root = dir.path();
    write(&root.join("templates/greet/system.md"), "Hi {{snippet:y}}");
    write(&root.join("snippets/sub/y.md"), "y");
    // Each of these would be a duplicate `y`, an invalid name or a stray
    // file if it were read.
    for ignored in [
        "snippets/.hid/y.md",
        "snippets/sub~/y.md",
        "snippets/#sub#/y.md",
        "snippets/y.md~",
        "snippets/#y.md#",
        "snippets/.y.md",
        "templates/.hidden/system.md",
        "templates/old~/system.md",
        "templates/greet/system.md~",
        "templates/greet/#system.md#",
        "templates/greet/.system.md.swp",
    ] {
        write(&root.join(ignored), "ignored");
    }
    let compiled = load(&Config::new(root), Stages::default());
    assert_eq!(compiled.errors, [], "{:?}", compiled.errors);
    assert_eq!(compiled.sources.stray_files, Vec::<String>::new());
    let snippets: Vec<_> = compiled
        .sources
        .snippets
        .iter()
        .map(|s| s.file.path())
        .collect();
    assert_eq!(snippets, ["snippets/sub/y.md"]);
    let ids: Vec<_> = compiled.prompts.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["greet"]);
}

#[test]
fn an_unreadable_template_folder_says_why() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("a scratch folder");
    let root = dir.path().to_path_buf();
    let folder = root.join("templates/locked");
    write(&folder.join("system.md"), "Hi");
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    // Root (a container's CI user) reads any folder: nothing to check there.
    let binds = std::fs::read_dir(&folder).is_err();
    let errors = read_errors(&root);
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    if binds {
        assert_eq!(errors.len(), 1, "{errors:?}");
        let (code, at, message) = &errors[0];
        assert_eq!((code.as_str(), at.as_str()), ("io", "templates/locked"));
        assert!(message.contains("ermission denied"), "{message}");
    }
}

#[test]
fn a_snippets_file_where_the_folder_should_be_is_an_error() {
    let dir = tempfile::tempdir().expect("a scratch folder");
    let root = dir.path().to_path_buf();
    write(&root.join("templates/greet/system.md"), "Hi");
    write(&root.join("snippets"), "not a folder");
    let errors = read_errors(&root);
    let found: Vec<_> = errors
        .iter()
        .map(|(c, at, _)| (c.as_str(), at.as_str()))
        .collect();
    assert_eq!(found, [("io", "snippets")], "{errors:?}");
}
