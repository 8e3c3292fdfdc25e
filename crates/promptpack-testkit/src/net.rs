//! Network peers for the tests of bounded waits.

use std::net::TcpListener;

/// A TCP server on 127.0.0.1 that accepts every connection and never
/// answers, for as long as the test process runs; its URL as a PostgreSQL
/// URL with a password (`postgres://ada:black-hole-pw@127.0.0.1:PORT/x`),
/// so that a test can also check the password is never shown.
pub fn black_hole() -> String {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("a free port");
    let port = listener.local_addr().expect("its address").port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    format!("postgres://ada:black-hole-pw@127.0.0.1:{port}/x")
}
