//! Event streams users already have, parsed as streams (constant memory): fio iologs and
//! ftrace text today, blkparse next. Each parser reports bad input as an
//! [`crate::error::InputError`] naming file and line. Device descriptions are in
//! [`crate::input`].

pub mod fio_iolog;
pub mod ftrace;
