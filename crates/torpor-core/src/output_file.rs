//! Files torpor writes (an `--ftrace` trace), replaced whole or not at all.
//!
//! The bytes go to a temporary file beside the target (`.NAME.PID.tmp`, so that the final
//! rename stays on one file system and is atomic), which is renamed over the target only once
//! everything is written and flushed. A run that fails, is interrupted or is killed leaves the
//! previous file as it was: never a cut-short file that a later reader takes for whole. A
//! target that is not a regular file (`/dev/null`, a FIFO, a terminal) is written in place, as
//! renaming over it would replace the device.
//!
//! [`Bounded`] caps what a writer may take, so that an output whose size the input decides
//! cannot fill the disk.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// An output file being written: see the module doc. Dropped before [`OutputFile::commit`],
/// it removes its temporary file.
#[derive(Debug)]
pub struct OutputFile {
    file: File,
    /// The temporary file and the target it replaces; `None` when written in place.
    rename: Option<(PathBuf, PathBuf)>,
}

impl OutputFile {
    /// Starts writing `path`.
    pub fn create(path: &Path) -> io::Result<OutputFile> {
        let in_place = std::fs::metadata(path).is_ok_and(|m| !m.is_file());
        if in_place {
            return Ok(OutputFile {
                file: File::create(path)?,
                rename: None,
            });
        }
        // Through a symlink, the file it names is the one replaced.
        let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let name = target
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "expected a file name"))?;
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".{}.tmp", std::process::id()));
        let temp = target.with_file_name(temp_name);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temp)?;
        Ok(OutputFile {
            file,
            rename: Some((temp, target)),
        })
    }

    /// Flushes the file to disk and puts it in place of the target.
    pub fn commit(mut self) -> io::Result<()> {
        self.file.flush()?;
        if let Some((temp, target)) = self.rename.take() {
            self.file.sync_all()?;
            if let Err(e) = std::fs::rename(&temp, &target) {
                let _ = std::fs::remove_file(&temp);
                return Err(e);
            }
        }
        Ok(())
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if let Some((temp, _)) = &self.rename {
            let _ = std::fs::remove_file(temp);
        }
    }
}

/// A writer that takes at most `limit` bytes: the write that would pass it fails, saying so.
#[derive(Debug)]
pub struct Bounded<W> {
    inner: W,
    left: u64,
    limit: u64,
}

impl<W: Write> Bounded<W> {
    pub fn new(inner: W, limit: u64) -> Self {
        Bounded {
            inner,
            left: limit,
            limit,
        }
    }

    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write> Write for Bounded<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.len() as u64 > self.left {
            return Err(io::Error::new(
                io::ErrorKind::FileTooLarge,
                format!("the output reached its limit of {} bytes", self.limit),
            ));
        }
        let n = self.inner.write(buf)?;
        self.left -= n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("torpor-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn entries(d: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn the_target_changes_only_on_commit_and_nothing_is_left_beside_it() {
        let d = dir("commit");
        let path = d.join("t.trace");
        std::fs::write(&path, "old\n").unwrap();
        let mut out = OutputFile::create(&path).unwrap();
        out.write_all(b"new\n").unwrap();
        // Written but not committed: the old file is whole, the new bytes in a hidden one.
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old\n");
        assert_eq!(entries(&d).len(), 2);
        out.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
        assert_eq!(entries(&d), ["t.trace"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn an_output_dropped_before_commit_leaves_the_old_file_and_no_temporary() {
        let d = dir("drop");
        let path = d.join("t.trace");
        std::fs::write(&path, "old\n").unwrap();
        let mut out = OutputFile::create(&path).unwrap();
        out.write_all(b"half a tr").unwrap();
        drop(out);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old\n");
        assert_eq!(entries(&d), ["t.trace"]);
        // Nor is a new file made when none was there.
        drop(OutputFile::create(&d.join("new.trace")).unwrap());
        assert_eq!(entries(&d), ["t.trace"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_device_is_written_in_place() {
        use std::os::unix::fs::FileTypeExt;
        let mut out = OutputFile::create(Path::new("/dev/null")).unwrap();
        out.write_all(b"x").unwrap();
        out.commit().unwrap();
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
    }

    #[test]
    fn a_bounded_writer_refuses_the_write_that_would_pass_its_limit() {
        let mut b = Bounded::new(Vec::new(), 5);
        b.write_all(b"abc").unwrap();
        let e = b.write_all(b"def").unwrap_err();
        assert_eq!(e.to_string(), "the output reached its limit of 5 bytes");
        b.write_all(b"de").unwrap();
        assert_eq!(b.into_inner(), b"abcde");
    }
}
