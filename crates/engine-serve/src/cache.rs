//! Pages already made, by the index's generation and the URL: a page is
//! made from the result files, and every change to them changes the
//! generation (engine's own saves as they write, other changes at the next
//! refresh), so a page of the current generation is still right. Bounded
//! in bytes; the oldest go first.

use crate::reply::Want;
use axum::http::StatusCode;
use bytes::Bytes;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// Bytes of pages kept, their URLs counted too.
const MAX_BYTES: usize = 32 << 20;
/// Pages kept.
const MAX_PAGES: usize = 4096;
/// Pages larger than this are made each time.
const MAX_PAGE: usize = 4 << 20;

type Key = (i64, String, Want);

#[derive(Default)]
pub(crate) struct Cache(Mutex<Inner>);

#[derive(Default)]
struct Inner {
    pages: HashMap<Key, (StatusCode, Want, Bytes)>,
    order: VecDeque<Key>,
    bytes: usize,
    generation: i64,
}

impl Cache {
    /// The page kept for this URL and representation asked for: its status,
    /// what it is (a result named `x.json` is an HTML page) and its bytes.
    pub fn get(&self, generation: i64, url: &str, want: Want) -> Option<(StatusCode, Want, Bytes)> {
        let inner = self.0.lock().unwrap_or_else(|p| p.into_inner());
        inner.pages.get(&(generation, url.to_string(), want)).cloned()
    }

    pub fn put(&self, generation: i64, url: &str, want: Want, page: (StatusCode, Want), body: &Bytes) {
        if body.len() > MAX_PAGE {
            return;
        }
        let mut inner = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if generation < inner.generation {
            return;
        }
        if generation > inner.generation {
            // Every page kept is of an older index.
            *inner = Inner { generation, ..Inner::default() };
        }
        let key = (generation, url.to_string(), want);
        if inner.pages.insert(key.clone(), (page.0, page.1, body.clone())).is_some() {
            return;
        }
        // The URL is kept twice (the map's key and the order).
        inner.bytes += body.len() + 2 * url.len();
        inner.order.push_back(key);
        while inner.bytes > MAX_BYTES || inner.order.len() > MAX_PAGES {
            let Some(old) = inner.order.pop_front() else { break };
            if let Some((_, _, b)) = inner.pages.remove(&old) {
                inner.bytes -= b.len() + 2 * old.1.len();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_kept_for_its_generation_only_and_the_oldest_go_first() {
        let c = Cache::default();
        let page = Bytes::from(vec![1u8; 1 << 20]);
        let ok = (StatusCode::OK, Want::Html);
        c.put(1, "/results", Want::Html, ok, &page);
        assert!(c.get(1, "/results", Want::Html).is_some());
        assert!(c.get(1, "/results", Want::Json).is_none());
        assert!(c.get(2, "/results", Want::Html).is_none(), "a newer index: made again");
        for i in 0..70 {
            c.put(2, &format!("/results?page={i}"), Want::Html, ok, &page);
        }
        assert!(c.get(1, "/results", Want::Html).is_none(), "pages of an older index are dropped");
        assert!(c.get(2, "/results?page=0", Want::Html).is_none(), "the oldest went past 32 MiB");
        assert!(c.get(2, "/results?page=69", Want::Html).is_some());
        c.put(3, "/big", Want::Json, ok, &Bytes::from(vec![0u8; 5 << 20]));
        assert!(c.get(3, "/big", Want::Json).is_none(), "pages over 4 MiB are not kept");
        // Long URLs of tiny pages count: at most 32 MiB and 4096 pages, whatever they hold.
        let tiny = Bytes::from_static(b"{}");
        let long = "x".repeat(60_000);
        for i in 0..2000 {
            c.put(4, &format!("/results.json?q={long}{i}"), Want::Json, ok, &tiny);
        }
        let inner = c.0.lock().unwrap();
        assert!(
            inner.bytes <= MAX_BYTES && inner.pages.len() < 300,
            "{} pages, {} bytes",
            inner.pages.len(),
            inner.bytes
        );
        drop(inner);
        for i in 0..5000 {
            c.put(5, &format!("/r{i}"), Want::Json, ok, &tiny);
        }
        assert_eq!(c.0.lock().unwrap().pages.len(), MAX_PAGES);
        // A page keeps what it is.
        c.put(6, "/results/x.json", Want::Json, (StatusCode::OK, Want::Html), &tiny);
        assert_eq!(c.get(6, "/results/x.json", Want::Json).unwrap().1, Want::Html);
    }
}
