//! Free loopback ports.

use std::collections::HashSet;
use std::net::TcpListener;
use std::sync::Mutex;

/// A loopback port that was free a moment ago: bound on 127.0.0.1:0, then released for the
/// process under test to bind. The same port is never handed out twice by one test binary, so
/// concurrent tests cannot be given each other's ports (another program could still take it
/// in between, which is unlikely enough on a test machine).
pub fn free_port() -> u16 {
    static HANDED_OUT: Mutex<Option<HashSet<u16>>> = Mutex::new(None);
    let mut handed_out = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
    let handed_out = handed_out.get_or_insert_with(HashSet::new);
    for _ in 0..100 {
        let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap_or_else(|e| {
            panic!("cannot bind a loopback port (is 127.0.0.1 configured?): {e}")
        });
        let port = listener
            .local_addr()
            .expect("a bound listener has an address")
            .port();
        if handed_out.insert(port) {
            return port;
        }
    }
    panic!("could not find a loopback port not handed out before after 100 tries");
}
