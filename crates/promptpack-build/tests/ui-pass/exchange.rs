include!("../../../../target/promptpack-ui/exchange.rs");

fn main() {
    let response = TicketResponse {
        reply: "Your parcel left today.".into(),
        priority: 2,
        confidence: 0.5,
        resolved: false,
        category: TicketResponseCategory::VeryUrgent,
        steps: vec!["wait".into()],
        refund: TicketResponseRefund {
            amount: 12.5,
            currency: TicketResponseRefundCurrency::Usd,
        },
        lines: vec![TicketResponseLines { sku: "A-1".into(), quantity: 3 }],
        order_id: None,
        note: Some("kind".into()),
        attempts: None,
        score: Some(0.25),
        urgent: None,
        channel: Some(TicketResponseChannel::Email),
        labels: None,
        follow_up: Some(TicketResponseFollowUp { in_days: 7 }),
        history: Some(vec![TicketResponseHistory { at: "9".into(), said: "hi".into() }]),
    };
    let text = serde_json::to_string(&response).expect("serializes");
    assert_eq!(TicketResponse::parse(&text).as_ref(), Ok(&response));
    assert!(text.contains("\"orderId\":null"), "{text}");

    let call = TicketTool::parse("lookup-order", r#"{"orderId": "O-1", "verbose": true, "type": "order", "self": null}"#);
    assert_eq!(
        call.as_ref().map(TicketTool::name),
        Ok("lookup-order")
    );
    assert!(matches!(
        call,
        Ok(TicketTool::LookupOrder(TicketLookupOrderArgs {
            verbose: Some(true),
            r#type: TicketLookupOrderArgsType::Order,
            self_: None,
            ..
        }))
    ));
    assert_eq!(
        PromptId::Ticket.response_format().map(promptpack::RequestJson::as_str),
        Some(TicketResponse::FORMAT.as_str())
    );
    assert!(PromptId::Summary.tools().is_none());
}
