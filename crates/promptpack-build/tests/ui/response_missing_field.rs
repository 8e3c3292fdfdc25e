include!("../../../../target/promptpack-ui/exchange.rs");

fn main() {
    // `currency` is a field of the refund, required.
    let _ = TicketResponseRefund { amount: 12.5 };
}
