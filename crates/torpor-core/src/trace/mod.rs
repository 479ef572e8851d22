//! Event streams users already have, parsed as streams (constant memory): fio iologs and
//! ftrace text today, blkparse next. Each parser reports bad input as an
//! [`crate::error::InputError`] naming file and line. Device descriptions are in
//! [`crate::input`]. One stream is written rather than read: a simulated CPU run as ftrace
//! text (`ftrace_writer`), for the same tools that read a real machine's trace.

pub mod fio_iolog;
pub mod ftrace;
pub mod ftrace_writer;
