include!("../../../../target/promptpack-ui/exchange.rs");

fn main() {
    // `inDays` is required, not nullable: an `i64`, not an `Option`.
    let _ = TicketResponseFollowUp { in_days: None };
}
