//! Nodes and what moves between them: events, output ports and their queue discipline,
//! links, switches, and hosts (NIC and the transports of their flows).

pub(crate) mod completion;
pub mod event;
pub(crate) mod host;
pub(crate) mod link;
pub(crate) mod nic;
pub(crate) mod port;
pub(crate) mod pull_queue;
pub(crate) mod qdisc;
mod rlb_commit;
pub(crate) mod rotorlb;
pub(crate) mod sent_flows;
pub(crate) mod switch;
pub(crate) mod triggers;

pub use host::Host;
pub use port::Port;
pub use switch::Switch;
