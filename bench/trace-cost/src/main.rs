//! What promptpack's `tracing` feature costs a typed render: the bench's
//! conversation prompt (`../conversation`) rendered with `build()`, median
//! nanoseconds per render over rounds. `run.sh` builds this crate twice,
//! without and with the `traced` feature (promptpack's `tracing`), runs the
//! two builds round after round and prints their ratios.
//!
//! ```text
//! promptpack-trace-cost [RENDERS]    # one line per row: "<row>\t<ns per render>"
//! ```
//!
//! Rows: `off` (built without the feature), or `on, no subscriber` and
//! `on, a subscriber that discards` (a `tracing_subscriber` registry with no
//! layer: spans are made and dropped, nothing is written).

use promptpack::{Message, Role};
use std::hint::black_box;
use std::time::Instant;

promptpack::include_prompts!();

/// Rounds per row; the median is reported.
const ROUNDS: usize = 31;

fn history() -> Vec<Message> {
    let turns = [
        (Role::User, "Our nightly backup failed with \"disk quota exceeded\"."),
        (Role::Assistant, "The backup of `orders-prod` stopped at 02:14 UTC: the quota is full."),
        (Role::User, "Can you raise the quota for this month?"),
        (Role::Assistant, "Done: 500 GB until the 1st. Shall I open a ticket for a plan change?"),
        (Role::User, "Yes please."),
        (Role::Assistant, "Ticket SUP-4471 is open; sales will write to you today."),
    ];
    turns
        .iter()
        .cycle()
        .take(20)
        .map(|&(role, content)| Message::new(role, content))
        .collect()
}

/// Median nanoseconds per render of `renders` typed renders, over [`ROUNDS`].
fn time_renders(renders: usize) -> f64 {
    let history = history();
    let vars = ConversationBenchVars {
        agent_name: "Juniper",
        product_name: "Acme Cloud",
        language: "English",
        show_examples: true,
        history: &history,
        customer_name: "Dana Whitfield",
        plan: "Team",
        question: "I was charged twice for November. Can you refund one of the two charges?",
    };
    // The render must succeed before it is timed.
    if let Err(e) = vars.build() {
        eprintln!("the conversation does not render: {e}");
        std::process::exit(1);
    }
    let mut per_render: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..renders {
                let prompt = black_box(&vars).build();
                black_box(prompt.is_ok());
            }
            start.elapsed().as_nanos() as f64 / renders as f64
        })
        .collect();
    per_render.sort_by(f64::total_cmp);
    per_render[ROUNDS / 2]
}

fn main() {
    let renders = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000);
    #[cfg(not(feature = "traced"))]
    println!("off\t{:.1}", time_renders(renders));
    #[cfg(feature = "traced")]
    {
        println!("on, no subscriber\t{:.1}", time_renders(renders));
        let discarding = tracing_subscriber::registry();
        tracing::subscriber::with_default(discarding, || {
            println!("on, a subscriber that discards\t{:.1}", time_renders(renders));
        });
    }
}
