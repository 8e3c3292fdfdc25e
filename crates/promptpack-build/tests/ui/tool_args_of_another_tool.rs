include!("../../../../target/promptpack-ui/exchange.rs");

fn main() {
    let _ = TicketTool::LookupOrder(TicketEscalateArgs {});
}
