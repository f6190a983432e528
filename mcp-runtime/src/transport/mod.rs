//! Transports: framing and delivery only. Everything a message means is
//! decided by the dispatcher.

#[cfg(feature = "http")]
pub(crate) mod http;
pub(crate) mod process_stdio;
pub(crate) mod signals;
pub(crate) mod stdio;
