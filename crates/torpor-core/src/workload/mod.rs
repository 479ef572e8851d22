//! Workloads: fio-like IO jobs, the seven APST workflows of the ebd8a93aa4f5 commit message,
//! and fio iolog replay.
