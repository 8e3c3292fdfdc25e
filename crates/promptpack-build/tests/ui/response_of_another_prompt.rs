include!("../../../../target/promptpack-ui/exchange.rs");

fn reply_of(response: TicketResponse) -> String {
    response.reply
}

fn main() {
    let summary = SummaryResponse { text: "short".into() };
    let _ = reply_of(summary);
}
