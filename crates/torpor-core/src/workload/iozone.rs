//! iozone's throughput-mode random read, as the HPB cover letter ran it (seed 003: `iozone -r 4k
//! -+n -i2 -ecI -t 16 -l 16 -u 16 -s $IO_RANGE/16`): `threads` threads, each on its own file of
//! `range / threads` bytes, reading `record`-sized records with O_DIRECT (`-I`) one at a time
//! (synchronous reads: a queue depth of one each), once over the whole file.
//!
//! It expands into `threads` fio-like jobs ([`IozoneSpec::jobs`]): job `i` is `rw = randread`,
//! `bs = record`, `iodepth = 1`, `size = range / threads`, `offset = offset + i x size`,
//! `number_ios = size / record`. The files lie side by side from `offset`, as files written one
//! after the other on an empty filesystem would (ASSUMPTION: a filesystem may place them
//! anywhere; the device sees the same amount of distinct LBA space either way).
//!
//! Only the random-read phase is modelled. `-i2` runs random reads and then random writes over
//! the same files; the seed reports the read throughput, which the writes coming after it do not
//! change. The files hold data written before the reads; where it lies on the NAND is the FTL's
//! assumption (`storage::ufs::ftl`, "Placement").
//!
//! Offsets differ from iozone's in one way. iozone's random-read thread
//! (`thread_ranread_test`) shuffles the record numbers of its file once (Fisher-Yates over its
//! Mersenne-twister stream, when it can allocate the table) and reads each record exactly once
//! in that order; torpor's `randread` draws every offset uniformly and independently (no random
//! map, as fio's `norandommap`), so one pass of `size / record` reads touches about
//! 1 - 1/e = 63% of the records, some more than once. Under reads spread uniformly over the
//! range, a map cache's hit ratio is the same either way (`min(1, coverage / range)`), which is
//! what the seed's curve measures; the order in which HPB regions are first read, and so the
//! HPB map's warm-up, is not exactly iozone's.

use serde::Deserialize;

use super::fio_job::{size_serde, FioJob, JobError, RwMode};

/// `[workload.iozone]`: the random-read phase of iozone's throughput mode.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IozoneSpec {
    /// Bytes read by all threads together (`-s` x `-t`: the seed's "IO range"), fio's size
    /// syntax (`"32g"` = 32 GiB).
    #[serde(with = "size_serde")]
    pub range: u64,
    /// `-t`: threads, each on its own file.
    #[serde(default = "sixteen")]
    pub threads: u32,
    /// `-r`: bytes per read.
    #[serde(default = "four_kib", with = "size_serde")]
    pub record: u64,
    /// Where the first thread's file starts on the device, bytes.
    #[serde(default, with = "size_serde")]
    pub offset: u64,
}

fn sixteen() -> u32 {
    16
}

fn four_kib() -> u64 {
    4096
}

impl IozoneSpec {
    /// The seed's command for an IO range of `range` bytes.
    pub fn seed(range: u64) -> IozoneSpec {
        IozoneSpec {
            range,
            threads: sixteen(),
            record: four_kib(),
            offset: 0,
        }
    }

    /// Checks what serde cannot: each thread reads whole records of a file at least one record
    /// long, and the last file ends within 64 bits.
    pub fn validate(&self) -> Result<(), JobError> {
        let err = |key, message: String| Err(JobError { key, message });
        if self.threads == 0 {
            return err("threads", "expected at least 1 thread".into());
        }
        if self.record == 0 || self.record > u64::from(u32::MAX) {
            return err(
                "record",
                "expected a record size between 1 byte and 4 GiB - 1".into(),
            );
        }
        let file = self.range / u64::from(self.threads);
        let whole =
            self.range.is_multiple_of(u64::from(self.threads)) && file.is_multiple_of(self.record);
        if !whole || file == 0 {
            return err(
                "range",
                format!(
                    "expected {} files of whole {}-byte records: a multiple of threads x record \
                     = {} bytes, got {}",
                    self.threads,
                    self.record,
                    u64::from(self.threads).saturating_mul(self.record),
                    self.range
                ),
            );
        }
        if self.offset.checked_add(self.range).is_none() {
            return err(
                "offset",
                "expected `offset + range` to fit in 64 bits".into(),
            );
        }
        Ok(())
    }

    /// One job per thread (see the module documentation); call after [`IozoneSpec::validate`].
    pub fn jobs(&self) -> Vec<FioJob> {
        let size = self.range / u64::from(self.threads);
        (0..self.threads)
            .map(|i| FioJob {
                bs: self.record,
                iodepth: 1,
                size,
                offset: self.offset + u64::from(i) * size,
                number_ios: Some(size / self.record),
                ..FioJob::new(format!("iozone-{i}"), RwMode::RandRead)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_32_gb_run_is_16_jobs_of_2_gib() {
        // -s 32g/16 = 2 GiB a thread = 2^31 / 4096 = 524,288 records; thread i starts at
        // i x 2^31.
        let jobs = IozoneSpec::seed(32 << 30).jobs();
        assert_eq!(jobs.len(), 16);
        for (i, j) in jobs.iter().enumerate() {
            assert_eq!(j.name, format!("iozone-{i}"));
            assert_eq!(j.rw, RwMode::RandRead);
            assert_eq!((j.bs, j.iodepth), (4096, 1));
            assert_eq!((j.size, j.offset), (1 << 31, i as u64 * (1 << 31)));
            assert_eq!(j.number_ios, Some(524_288));
            assert!(!j.time_based && j.runtime.is_none() && j.rate_iops == [None, None]);
            assert_eq!(j.validate(), Ok(()));
        }
        // The last file ends at the range's end.
        assert_eq!(jobs[15].offset + jobs[15].size, 32 << 30);
    }

    #[test]
    fn an_offset_and_other_shapes_move_every_file() {
        // 3 threads of 12 KiB over 36 KiB from 1 MiB, 8 KiB records: 12288 / 8192 is not
        // whole, so refused; with 4 KiB records, 3 records each at 1 MiB, + 12 KiB, + 24 KiB.
        let s = IozoneSpec {
            range: 36 << 10,
            threads: 3,
            record: 8192,
            offset: 1 << 20,
        };
        assert_eq!(s.validate().unwrap_err().key, "range");
        let s = IozoneSpec { record: 4096, ..s };
        assert_eq!(s.validate(), Ok(()));
        let got: Vec<(u64, u64, Option<u64>)> = s
            .jobs()
            .iter()
            .map(|j| (j.offset, j.size, j.number_ios))
            .collect();
        assert_eq!(
            got,
            [
                (1 << 20, 12288, Some(3)),
                ((1 << 20) + 12288, 12288, Some(3)),
                ((1 << 20) + 24576, 12288, Some(3)),
            ]
        );
    }

    #[test]
    fn bad_shapes_name_their_key() {
        let seed = IozoneSpec::seed(1 << 30);
        let bad = |s: IozoneSpec| s.validate().unwrap_err();
        assert_eq!(
            bad(IozoneSpec {
                threads: 0,
                ..seed.clone()
            })
            .key,
            "threads"
        );
        assert_eq!(
            bad(IozoneSpec {
                record: 0,
                ..seed.clone()
            })
            .key,
            "record"
        );
        // 1 GiB + 4 KiB over 16 threads: not a whole number of bytes each.
        let e = bad(IozoneSpec {
            range: (1 << 30) + 4096,
            ..seed.clone()
        });
        assert_eq!(
            e.message,
            "expected 16 files of whole 4096-byte records: a multiple of threads x record = \
             65536 bytes, got 1073745920"
        );
        // Fewer bytes than one record a thread.
        assert_eq!(
            bad(IozoneSpec {
                range: 0,
                ..seed.clone()
            })
            .key,
            "range"
        );
        assert_eq!(
            bad(IozoneSpec {
                offset: u64::MAX - 10,
                ..seed
            })
            .key,
            "offset"
        );
    }
}
