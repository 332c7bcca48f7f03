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

/// Bytes of pages kept.
const MAX_BYTES: usize = 32 << 20;
/// Pages larger than this are made each time.
const MAX_PAGE: usize = 4 << 20;

type Key = (i64, String, Want);

#[derive(Default)]
pub(crate) struct Cache(Mutex<Inner>);

#[derive(Default)]
struct Inner {
    pages: HashMap<Key, (StatusCode, Bytes)>,
    order: VecDeque<Key>,
    bytes: usize,
    generation: i64,
}

impl Cache {
    pub fn get(&self, generation: i64, url: &str, want: Want) -> Option<(StatusCode, Bytes)> {
        let inner = self.0.lock().unwrap_or_else(|p| p.into_inner());
        inner.pages.get(&(generation, url.to_string(), want)).cloned()
    }

    pub fn put(&self, generation: i64, url: &str, want: Want, status: StatusCode, body: &Bytes) {
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
        if inner.pages.insert(key.clone(), (status, body.clone())).is_some() {
            return;
        }
        inner.order.push_back(key);
        inner.bytes += body.len();
        while inner.bytes > MAX_BYTES {
            let Some(old) = inner.order.pop_front() else { break };
            if let Some((_, b)) = inner.pages.remove(&old) {
                inner.bytes -= b.len();
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
        c.put(1, "/results", Want::Html, StatusCode::OK, &page);
        assert!(c.get(1, "/results", Want::Html).is_some());
        assert!(c.get(1, "/results", Want::Json).is_none());
        assert!(c.get(2, "/results", Want::Html).is_none(), "a newer index: made again");
        for i in 0..70 {
            c.put(2, &format!("/results?page={i}"), Want::Html, StatusCode::OK, &page);
        }
        assert!(c.get(1, "/results", Want::Html).is_none(), "pages of an older index are dropped");
        assert!(c.get(2, "/results?page=0", Want::Html).is_none(), "the oldest went past 32 MiB");
        assert!(c.get(2, "/results?page=69", Want::Html).is_some());
        c.put(3, "/big", Want::Json, StatusCode::OK, &Bytes::from(vec![0u8; 5 << 20]));
        assert!(c.get(3, "/big", Want::Json).is_none(), "pages over 4 MiB are not kept");
    }
}
