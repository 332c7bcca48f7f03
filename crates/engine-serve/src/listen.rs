//! The accept loop: HTTP/1.1 on each connection with deadlines — the
//! request head within [`HEAD_TIMEOUT`], no write that makes no progress
//! for [`WRITE_STALL`] nor read for [`READ_STALL`] (a client that stops
//! reading its answer, or sends its upload a byte a minute, loses its
//! connection) — at
//! most [`MAX_CONNECTIONS`] connections and [`PER_PEER`] from one address.
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
/// Connections served at once; more wait in the listen queue.
const MAX_CONNECTIONS: usize = 512;
/// Connections one address may hold (a proxy in front is one address:
/// its keep-alive pool stays below this).
const PER_PEER: usize = 64;
/// How long requests in flight may take to finish after SIGTERM.
const DRAIN: Duration = Duration::from_secs(10);

/// The connections each address holds now.
#[derive(Default, Clone)]
struct Peers(Arc<Mutex<HashMap<IpAddr, usize>>>);

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
        let Some(held) = peers.take(peer.ip()) else { continue };
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
            .header_read_timeout(HEAD_TIMEOUT)
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
