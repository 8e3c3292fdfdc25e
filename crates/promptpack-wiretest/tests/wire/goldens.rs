//! One harness over the fixture prompts × the crates: the JSON each crate
//! puts on the wire for each prompt, held byte for byte to
//! `tests/goldens/<crate>/<prompt>.json`.

use crate::support::{Crate, bounded, check_golden, fixtures, golden_path};
use promptpack_wiretest::server::{Script, Server, pairing_problem};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_crate_sends_the_golden_request_of_every_prompt() {
    let server = bounded("the server starts", Server::start(Script::answer_only()))
        .await
        .unwrap_or_else(|e| panic!("the server: {e}"));
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, prompt) in fixtures() {
        for krate in Crate::ALL {
            let body = krate.body(&prompt, &server).await;
            // Whatever the golden says, the body is JSON.
            if let Err(e) = serde_json::from_str::<serde_json::Value>(&body) {
                failures.push(format!(
                    "{krate:?} sent a body for `{name}` that is not JSON: {e}"
                ));
            }
            // Every body pairs each tool result with its call, as OpenAI's
            // API demands.
            if let Ok(parsed) = serde_json::from_str::<serde_json::Value>(&body)
                && let Some(problem) = pairing_problem(&parsed)
            {
                failures.push(format!("{krate:?} sent `{name}` unpaired: {problem}"));
            }
            if let Err(failure) = check_golden(krate, name, &body) {
                failures.push(failure);
            }
            checked += 1;
        }
    }
    bounded("the server stops", server.stop())
        .await
        .unwrap_or_else(|e| panic!("the server: {e}"));
    assert_eq!(checked, 15, "5 prompts × 3 crates");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The goldens the round trips of `clients` hold their second request to.
const ROUND_TRIP_GOLDENS: [&str; 1] = ["orders-tool-results"];

#[test]
fn every_golden_file_is_checked_by_a_test() {
    // A golden no test compares (a prompt renamed, a crate dropped) would
    // sit in the tree looking like a checked contract.
    let mut stale = Vec::new();
    for krate in Crate::ALL {
        let mut names: Vec<String> = fixtures()
            .iter()
            .map(|(name, _)| name.to_string())
            .collect();
        names.extend(ROUND_TRIP_GOLDENS.map(String::from));
        let expected: Vec<_> = names.iter().map(|name| golden_path(krate, name)).collect();
        let Some(folder) = expected.first().and_then(|path| path.parent()) else {
            continue;
        };
        let Ok(entries) = std::fs::read_dir(folder) else {
            // Missing goldens are the other test's failure.
            continue;
        };
        for entry in entries.flatten() {
            if !expected.contains(&entry.path()) {
                stale.push(entry.path().display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "goldens no test checks (delete them): {stale:?}"
    );
}
