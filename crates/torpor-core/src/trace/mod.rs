//! Event streams users already have, parsed as streams (constant memory): fio iologs, block
//! traces (blkparse, DiskSim and MQSim ASCII, the mobile CSV; [`block`] is what they share),
//! ftrace text, trace-cmd's binary trace.dat and Perfetto's protobuf traces ([`source`]: what
//! the analyses read each through). Each parser reports bad input as an
//! [`crate::error::InputError`] naming file and line. Device descriptions are in
//! [`crate::input`]; the one stream written rather than read (a simulated CPU run as ftrace
//! text) is [`crate::view::ftrace_writer`].

pub mod blkparse;
pub mod block;
pub mod disksim;
pub mod fio_iolog;
pub mod ftrace;
pub mod mobile_csv;
pub mod packed_text;
pub mod perfetto;
pub mod source;
pub mod tables;
pub mod trace_dat;
