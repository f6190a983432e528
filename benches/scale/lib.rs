//! A shard of the 10,000-tool benchmark server (see `README.md`).

include!(concat!(env!("OUT_DIR"), "/tools.rs"));
