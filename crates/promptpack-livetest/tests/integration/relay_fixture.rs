//! A real relay (`promptpack_console::relay`, as `promptpack relay` runs
//! it) over a test's catalog, reached through a loopback proxy that the
//! test can stall: the relay is the one a fleet runs, and only the network
//! between it and the handle is the test's. Stopping the relay and
//! starting a new one (a new epoch: the handle's event id is of no use)
//! is a restart; the proxy keeps the address the handle was given.

use promptpack_catalog::{Catalog, Role, token_hash};
use promptpack_console::relay::{Relay, RelaySettings, RunningRelay, Upstream};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// How often the relay sends a comment on its streams: short, so that a
/// handle with a short stall bound (1 s) hears several within it.
const HEARTBEAT: Duration = Duration::from_millis(200);

/// A relay of `url`'s catalog behind a proxy.
pub struct TestRelay {
    catalog_url: String,
    /// The relay serving now; `None` while it is down.
    relay: Mutex<Option<RunningRelay>>,
    proxy: Arc<Proxy>,
    url: String,
    /// A viewer's token of the catalog.
    pub token: String,
}

/// What the proxy's threads share.
struct Proxy {
    /// Where the relay listens now; `None` while it is down (connections
    /// are then closed at once).
    upstream: Mutex<Option<SocketAddr>>,
    /// Bytes are held, in both directions, while set: the relay looks
    /// stalled (not even a ping arrives).
    stalled: AtomicBool,
    /// Every connection through it, to cut them when the relay goes down.
    open: Mutex<Vec<TcpStream>>,
}

impl TestRelay {
    /// A relay of the catalog at `catalog_url`, with a viewer added to it.
    pub fn start(catalog_url: &str) -> TestRelay {
        let token = promptpack_console::new_token();
        Catalog::open(catalog_url)
            .expect("the catalog opens")
            .with_author("test")
            .add_user("fleet", Role::Viewer, &token_hash(&token))
            .expect("a viewer");
        let relay = spawn(catalog_url);
        let proxy = Arc::new(Proxy {
            upstream: Mutex::new(Some(relay.local_addr())),
            stalled: AtomicBool::new(false),
            open: Mutex::new(Vec::new()),
        });
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("an address"));
        let accepting = Arc::clone(&proxy);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                accepting.pass(client);
            }
        });
        TestRelay {
            catalog_url: catalog_url.to_string(),
            relay: Mutex::new(Some(relay)),
            proxy,
            url,
            token,
        }
    }

    /// The URL a handle follows: the proxy's.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Stops the relay: its streams end, and connections are refused
    /// until [`TestRelay::come_back`].
    pub fn go_down(&self) {
        *lock(&self.proxy.upstream) = None;
        if let Some(relay) = lock(&self.relay).take() {
            relay.stop();
        }
        for stream in lock(&self.proxy.open).drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    /// Starts a new relay over the same catalog (a new epoch), behind the
    /// same address.
    pub fn come_back(&self) {
        let relay = spawn(&self.catalog_url);
        *lock(&self.proxy.upstream) = Some(relay.local_addr());
        *lock(&self.relay) = Some(relay);
    }

    /// Holds every byte between the relay and its followers.
    pub fn stall(&self) {
        self.proxy.stalled.store(true, Ordering::SeqCst);
    }

    /// Lets bytes through again.
    pub fn resume(&self) {
        self.proxy.stalled.store(false, Ordering::SeqCst);
    }
}

impl Drop for TestRelay {
    fn drop(&mut self) {
        self.go_down();
    }
}

impl Proxy {
    /// Connects `client` to the relay, a thread pumping each way; closes
    /// it at once while the relay is down.
    fn pass(self: &Arc<Proxy>, client: TcpStream) {
        let Some(addr) = *lock(&self.upstream) else {
            let _ = client.shutdown(Shutdown::Both);
            return;
        };
        let Ok(server) = TcpStream::connect(addr) else {
            let _ = client.shutdown(Shutdown::Both);
            return;
        };
        let (Ok(client_reader), Ok(server_reader)) = (client.try_clone(), server.try_clone())
        else {
            return;
        };
        {
            let mut open = lock(&self.open);
            open.extend(client.try_clone().ok());
            open.extend(server.try_clone().ok());
        }
        let up = Arc::clone(self);
        std::thread::spawn(move || up.pump(client_reader, server));
        let down = Arc::clone(self);
        std::thread::spawn(move || down.pump(server_reader, client));
    }

    /// Copies `from` to `to` until either ends, holding bytes while
    /// stalled (read, then kept until the stall ends, so nothing is lost
    /// or reordered).
    fn pump(&self, mut from: TcpStream, mut to: TcpStream) {
        let mut buffer = [0u8; 16 * 1024];
        loop {
            let read = match from.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(read) => read,
            };
            while self.stalled.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(20));
            }
            if to.write_all(&buffer[..read]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Both);
        let _ = from.shutdown(Shutdown::Both);
    }
}

/// A relay over `catalog_url` on a port the system picks.
fn spawn(catalog_url: &str) -> RunningRelay {
    let settings = RelaySettings::new(Upstream::Catalog(catalog_url.to_string()))
        .listen("127.0.0.1:0".parse().expect("an address"))
        .heartbeat(HEARTBEAT)
        .poll(Duration::from_millis(100));
    Relay::bind(settings)
        .expect("the relay binds")
        .spawn()
        .expect("the relay serves")
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
