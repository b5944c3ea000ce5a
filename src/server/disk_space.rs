//! Free and total bytes of the filesystem holding a directory (statvfs): the doctor's `disk`
//! check and the `kraftd_metadata_dir_*_bytes` gauges.

use std::path::Path;

/// A filesystem's size and what an unprivileged writer can still allocate on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiskSpace {
    pub free_bytes: u64,
    pub total_bytes: u64,
}

impl DiskSpace {
    /// The free share, in percent (100 for an empty filesystem of no size).
    pub fn free_percent(&self) -> f64 {
        if self.total_bytes == 0 {
            return 100.0;
        }
        self.free_bytes as f64 * 100.0 / self.total_bytes as f64
    }
}

/// The space of the filesystem holding `path`.
pub fn disk_space(path: &Path) -> std::io::Result<DiskSpace> {
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    // SAFETY: statvfs writes into the zeroed struct we own; the path is NUL-terminated.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statvfs(c_path.as_ptr(), &mut stat) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let unit = stat.f_frsize as u64;
    Ok(DiskSpace {
        free_bytes: stat.f_bavail as u64 * unit,
        total_bytes: stat.f_blocks as u64 * unit,
    })
}
