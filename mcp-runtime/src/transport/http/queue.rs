//! One HTTP request's notifications, queued for its response to read
//! (as SSE events, or dropped when the client takes JSON only).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::task::Poll;

use bytes::Bytes;
use futures_util::task::AtomicWaker;

use crate::context::Sink;

/// One request's notifications, for its HTTP response to read. Most
/// requests send none, so this is one small allocation where a channel
/// would be several (a cache-aligned state and a block of slots).
#[derive(Debug, Default)]
pub(crate) struct NoteQueue {
    notes: Mutex<VecDeque<Bytes>>,
    reader: AtomicWaker,
}

impl NoteQueue {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Bytes>> {
        self.notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Everything queued so far.
    pub(crate) fn drain(&self) -> Vec<Bytes> {
        self.lock().drain(..).collect()
    }

    /// The next notification, when one is sent.
    pub(crate) async fn next(&self) -> Bytes {
        std::future::poll_fn(|cx| {
            if let Some(note) = self.lock().pop_front() {
                return Poll::Ready(note);
            }
            self.reader.register(cx.waker());
            // Sent between the check and the registration: not missed.
            match self.lock().pop_front() {
                Some(note) => Poll::Ready(note),
                None => Poll::Pending,
            }
        })
        .await
    }
}

impl Sink for NoteQueue {
    fn send(&self, note: Bytes) {
        self.lock().push_back(note);
        self.reader.wake();
    }
}
