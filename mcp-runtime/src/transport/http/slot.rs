//! A slot of one of the endpoint's pools (requests in flight, streams),
//! held until the request, or its stream, ends.

use tokio::sync::OwnedSemaphorePermit;

use crate::security::clients::ClientStream;

/// A slot, with a stream's count on its client.
#[derive(Debug)]
pub(crate) struct Slot {
    _permit: OwnedSemaphorePermit,
    _stream: Option<ClientStream>,
}

impl Slot {
    pub(crate) fn new(permit: OwnedSemaphorePermit, stream: Option<ClientStream>) -> Slot {
        Slot {
            _permit: permit,
            _stream: stream,
        }
    }
}
