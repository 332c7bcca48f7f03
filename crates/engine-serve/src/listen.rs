//! The accept loop: HTTP/1.1 on each connection with deadlines — the
//! request head within [`HEAD_TIMEOUT`], no write that makes no progress
//! for [`WRITE_STALL`] nor read for [`READ_STALL`] (a client that stops
//! reading its answer, or sends its upload a byte a minute, loses its
//! connection) — at
//! most [`MAX_CONNECTIONS`] connections and [`PER_PEER`] from one client
//! (an IPv4 address, an IPv6 /64), and a shorter head deadline when more
//! than half are taken.
//! On SIGTERM or SIGINT no new connection is taken while those in flight
//! finish, for at most [`DRAIN`]; a second signal ends the wait.

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::Semaphore;
use tokio_io_timeout::TimeoutStream;
use tower::ServiceExt;

/// The request head must arrive within this.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// A read that makes no progress for this long ends the connection
/// (longer than a page may take to compute: the client waits for it
/// without sending).
const READ_STALL: Duration = Duration::from_secs(90);
/// A write that makes no progress for this long ends the connection.
const WRITE_STALL: Duration = Duration::from_secs(30);
/// Connections served at once; more wait in the listen queue. An idle one
/// costs a descriptor and a few KiB.
const MAX_CONNECTIONS: usize = 4096;
/// Connections one address (an IPv6 /64) may hold (a proxy in front is one
/// address: its keep-alive pool stays below this).
const PER_PEER: usize = 64;
/// When more than half the connections are taken, a new one must send its
/// request head within this.
const HEAD_TIMEOUT_BUSY: Duration = Duration::from_secs(2);
/// How long requests in flight may take to finish after SIGTERM.
const DRAIN: Duration = Duration::from_secs(10);

/// The connections each address holds now.
#[derive(Default, Clone)]
struct Peers(Arc<Mutex<HashMap<IpAddr, usize>>>);

/// What counts as one client: an IPv4 address, an IPv6 /64 (one host's
/// share of addresses).
fn client_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
        v4 => v4,
    }
}

/// One connection of one address, counted until dropped.
struct Held(Peers, IpAddr);

impl Peers {
    fn take(&self, ip: IpAddr) -> Option<Held> {
        let mut m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let n = m.entry(ip).or_default();
        if *n >= PER_PEER {
            return None;
        }
        *n += 1;
        Some(Held(self.clone(), ip))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut m = self.0.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = m.get_mut(&self.1) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.1);
            }
        }
    }
}

/// SIGTERM or SIGINT, whichever comes.
async fn signalled(term: &mut Signal, int: &mut Signal) {
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}

pub(crate) async fn run(listener: TcpListener, router: Router) -> std::io::Result<()> {
    // A descriptor per connection, and some for the pages' files.
    engine_sys::process::raise_open_files(MAX_CONNECTIONS as u64 + 256);
    let (mut term, mut int) = (signal(SignalKind::terminate())?, signal(SignalKind::interrupt())?);
    let graceful = GracefulShutdown::new();
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let peers = Peers::default();
    loop {
        let permit = tokio::select! {
            p = slots.clone().acquire_owned() => p.map_err(std::io::Error::other)?,
            _ = signalled(&mut term, &mut int) => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                // Out of descriptors or a connection reset before it was taken: go on.
                Err(_) => { tokio::time::sleep(Duration::from_millis(50)).await; continue }
            },
            _ = signalled(&mut term, &mut int) => break,
        };
        // Over its share: closed at once, the slot free for others.
        let Some(held) = peers.take(client_of(peer.ip())) else { continue };
        let busy = slots.available_permits() < MAX_CONNECTIONS / 2;
        let mut stream = TimeoutStream::new(stream);
        stream.set_read_timeout(Some(READ_STALL));
        stream.set_write_timeout(Some(WRITE_STALL));
        let service = TowerToHyperService::new(router.clone().map_request(
            move |mut r: hyper::Request<hyper::body::Incoming>| {
                r.extensions_mut().insert(crate::log::Peer(peer));
                r
            },
        ));
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(if busy { HEAD_TIMEOUT_BUSY } else { HEAD_TIMEOUT })
            .serve_connection(TokioIo::new(Box::pin(stream)), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _ = conn.await;
            drop((permit, held));
        });
    }
    drop(listener);
    tokio::select! {
        _ = graceful.shutdown() => {}
        _ = tokio::time::sleep(DRAIN) => {}
        _ = signalled(&mut term, &mut int) => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_client_is_an_ipv4_address_or_an_ipv6_64() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        assert_eq!(client_of(a), client_of(b));
        assert_ne!(client_of(a), client_of("2001:db8:1:3::1".parse().unwrap()));
        assert_eq!(client_of("::ffff:10.0.0.1".parse().unwrap()), "10.0.0.1".parse::<IpAddr>().unwrap());
        let peers = Peers::default();
        let held: Vec<_> = (0..PER_PEER).map(|_| peers.take(client_of(a)).unwrap()).collect();
        assert!(peers.take(client_of(b)).is_none(), "the /64's share is taken");
        drop(held);
        assert!(peers.take(client_of(b)).is_some(), "and given back");
    }
}
