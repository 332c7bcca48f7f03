//! What the server's own work may take, whatever the clients ask: pages
//! computed at once (each reads a result whole: a fleet's is hundreds of
//! MB while it is worked on) and the bytes of answers not yet sent (a
//! client that reads slowly holds its answer in memory). A request that
//! finds either spent waits a little, then is answered 503 with
//! Retry-After; the process's memory stays bounded by these.

use axum::body::Body;
use bytes::Bytes;
use http_body::Frame;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How long a request waits for its turn before 503.
pub(crate) const QUEUE: Duration = Duration::from_secs(10);
/// Answers below this are not counted (a page of the list, an error).
const SMALL: usize = 1 << 20;
/// Bytes of answers in flight, in MiB.
const BODIES_MIB: u32 = 512;
/// Bytes handed to the connection at a time.
const CHUNK: usize = 256 << 10;

pub(crate) struct Budget {
    pages: Arc<Semaphore>,
    bodies: Arc<Semaphore>,
}

impl Budget {
    pub fn new() -> Budget {
        // One page per core at once: a page is CPU and memory, never I/O waits.
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Budget { pages: Arc::new(Semaphore::new(cores)), bodies: Arc::new(Semaphore::new(BODIES_MIB as usize)) }
    }

    /// A turn to compute a page, held until the work ends (even when the
    /// answer has gone as a timeout: the work still runs, so it still counts).
    pub async fn page(&self) -> Option<OwnedSemaphorePermit> {
        tokio::time::timeout(QUEUE, self.pages.clone().acquire_owned()).await.ok()?.ok()
    }

    /// `bytes` as a body that holds its share of the budget until it has
    /// been handed to the connection or dropped; `None` when no share
    /// frees within [`QUEUE`].
    pub async fn body(&self, bytes: Bytes) -> Option<Body> {
        if bytes.len() < SMALL {
            return Some(Body::from(bytes));
        }
        let mib = u32::try_from(bytes.len().div_ceil(1 << 20)).unwrap_or(u32::MAX).min(BODIES_MIB);
        let permit = tokio::time::timeout(QUEUE, self.bodies.clone().acquire_many_owned(mib)).await.ok()?.ok()?;
        Some(Body::new(Held { bytes, permit: Some(permit) }))
    }
}

/// An answer's bytes with their share of the budget.
struct Held {
    bytes: Bytes,
    permit: Option<OwnedSemaphorePermit>,
}

impl http_body::Body for Held {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if self.bytes.is_empty() {
            self.permit.take();
            return Poll::Ready(None);
        }
        let n = self.bytes.len().min(CHUNK);
        let chunk = self.bytes.split_to(n);
        Poll::Ready(Some(Ok(Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.bytes.is_empty()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.bytes.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body::Body as _;

    #[tokio::test]
    async fn a_large_answer_holds_its_share_until_it_is_sent() {
        let b = Budget::new();
        let body = b.body(Bytes::from(vec![7u8; 3 << 20])).await.unwrap();
        assert_eq!(b.bodies.available_permits(), BODIES_MIB as usize - 3);
        assert_eq!(body.size_hint().exact(), Some(3 << 20));
        let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
        assert_eq!(bytes.len(), 3 << 20);
        assert_eq!(b.bodies.available_permits(), BODIES_MIB as usize, "given back once sent");
        let dropped = b.body(Bytes::from(vec![0u8; 2 << 20])).await.unwrap();
        drop(dropped);
        assert_eq!(b.bodies.available_permits(), BODIES_MIB as usize, "given back when the client went");
        let small = b.body(Bytes::from(vec![0u8; 100])).await.unwrap();
        assert_eq!(b.bodies.available_permits(), BODIES_MIB as usize, "small answers are not counted");
        drop(small);
    }
}
