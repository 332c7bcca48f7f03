//! The accept loop: HTTP/1.1 on each connection with a deadline for the
//! request head (a client that sends a byte a minute holds nothing for
//! long), at most [`MAX_CONNECTIONS`] at a time, and on SIGTERM or SIGINT
//! no new connection while those in flight finish (at most
//! [`DRAIN`]).

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::ServiceExt;

/// The request head must arrive within this.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once; more wait in the listen queue.
const MAX_CONNECTIONS: usize = 512;
/// How long requests in flight may take to finish after SIGTERM.
const DRAIN: Duration = Duration::from_secs(10);

pub(crate) async fn run(listener: TcpListener, router: Router) -> std::io::Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut int = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
    let graceful = GracefulShutdown::new();
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let permit = tokio::select! {
            p = slots.clone().acquire_owned() => p.map_err(std::io::Error::other)?,
            _ = term.recv() => break,
            _ = int.recv() => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                // Out of descriptors or a connection reset before it was taken: go on.
                Err(_) => { tokio::time::sleep(Duration::from_millis(50)).await; continue }
            },
            _ = term.recv() => break,
            _ = int.recv() => break,
        };
        let service = TowerToHyperService::new(router.clone().map_request(
            move |mut r: hyper::Request<hyper::body::Incoming>| {
                r.extensions_mut().insert(crate::log::Peer(peer));
                r
            },
        ));
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(HEAD_TIMEOUT)
            .serve_connection(TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _ = conn.await;
            drop(permit);
        });
    }
    drop(listener);
    tokio::select! {
        _ = graceful.shutdown() => {}
        _ = tokio::time::sleep(DRAIN) => {}
    }
    Ok(())
}
