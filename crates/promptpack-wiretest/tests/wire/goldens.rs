//! One harness over the fixture prompts × the crates: the JSON each crate
//! puts on the wire for each prompt, held byte for byte to
//! `tests/goldens/<crate>/<prompt>.json`.

use crate::support::{Crate, bounded, check_golden, fixtures};
use promptpack_wiretest::server::{Script, Server};

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
            if let Err(failure) = check_golden(krate, name, &body) {
                failures.push(failure);
            }
            checked += 1;
        }
    }
    bounded("the server stops", server.stop())
        .await
        .unwrap_or_else(|e| panic!("the server: {e}"));
    assert_eq!(checked, 12, "4 prompts × 3 crates");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
