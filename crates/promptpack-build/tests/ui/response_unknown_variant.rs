include!("../../../../target/promptpack-ui/exchange.rs");

fn main() {
    // The values are billing, shipping and "very urgent".
    let _ = TicketResponseCategory::Urgent;
}
