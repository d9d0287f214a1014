//! Disk trouble under the embedded store, on real file systems mounted for the test: a tmpfs
//! that fills during ingest, and an ext4 image that the kernel turns read-only mid-run.
//!
//! They need root (`mount`, a loop device, `/sys/fs/ext4/*/trigger_fs_error`); `scripts/test`
//! and CI run as root. Where one of those is refused the test fails, saying what was refused: a
//! test that passes without running proves nothing. A developer without root opts out by name,
//! `TRIBUTARY_SKIP_TESTS=<test name>[,<test name>...]`, and the test then says it was skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The variable whose comma-separated test names are skipped on purpose.
pub const SKIP_VAR: &str = "TRIBUTARY_SKIP_TESTS";

/// Whether the developer opted out of test `name` (by its full name in `TRIBUTARY_SKIP_TESTS`);
/// says so when they did.
pub fn opted_out(name: &str) -> bool {
    let skip = std::env::var(SKIP_VAR).unwrap_or_default();
    let out = skip.split(',').any(|n| n.trim() == name);
    if out {
        eprintln!("SKIPPED {name}: named in {SKIP_VAR}");
    }
    out
}

/// Fails test `name` because the machine refused what it needs (`why`), with how to opt out.
pub fn cannot(name: &str, why: &str) -> ! {
    panic!(
        "{name} cannot run: {why}. It needs root (scripts/test and CI run as root); \
         to skip it on purpose, set {SKIP_VAR}={name}"
    )
}

/// A file system mounted on a fresh directory, unmounted when dropped.
pub struct Mounted {
    pub dir: PathBuf,
    /// The ext4 image, for `repair`.
    image: Option<PathBuf>,
    _parent: tempfile::TempDir,
}

impl Mounted {
    /// A tmpfs of `size` (as `mount -o size=` reads it); `Err` says why it could not be mounted.
    pub fn tmpfs(size: &str) -> Result<Mounted, String> {
        let parent = tempfile::tempdir().map_err(|e| e.to_string())?;
        let dir = parent.path().join("mnt");
        std::fs::create_dir(&dir).map_err(|e| e.to_string())?;
        run("mount", &["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs", &dir.display().to_string()])?;
        Ok(Mounted { dir, image: None, _parent: parent })
    }

    /// An ext4 image of `mib` MiB on a loop device, mounted with `errors=remount-ro` (so a file
    /// system error makes the kernel turn it read-only under the open files).
    pub fn ext4(mib: u32) -> Result<Mounted, String> {
        let parent = tempfile::tempdir().map_err(|e| e.to_string())?;
        let image = parent.path().join("fs.img");
        let dir = parent.path().join("mnt");
        std::fs::create_dir(&dir).map_err(|e| e.to_string())?;
        std::fs::File::create(&image).and_then(|f| f.set_len(u64::from(mib) << 20)).map_err(|e| e.to_string())?;
        run("mkfs.ext4", &["-q", "-F", &image.display().to_string()])?;
        run("mount", &["-o", "loop,errors=remount-ro", &image.display().to_string(), &dir.display().to_string()])?;
        Ok(Mounted { dir, image: Some(image), _parent: parent })
    }

    /// What an operator does after a disk error: unmount, check the file system, mount again.
    pub fn repair(&self) {
        let image = self.image.as_ref().expect("an ext4 mount").display().to_string();
        let dir = self.dir.display().to_string();
        run("umount", &[&dir]).expect("the failed file system unmounts");
        // e2fsck exits 1 when it fixed something: the error the test caused is recorded in it.
        let fsck = Command::new("e2fsck").args(["-f", "-y", &image]).output().expect("e2fsck runs");
        assert!(fsck.status.code().is_some_and(|c| c <= 1), "e2fsck: {}", String::from_utf8_lossy(&fsck.stdout));
        run("mount", &["-o", "loop,errors=remount-ro", &image, &dir]).expect("the repaired file system mounts");
    }

    /// Makes the whole mount read-only (`mount -o remount,ro`), as an operator or the kernel does.
    pub fn remount_read_only(&self) -> Result<(), String> {
        run("mount", &["-o", "remount,ro", &self.dir.display().to_string()])
    }

    /// Fills the file system with `ballast` until the disk is full.
    pub fn fill(&self) -> PathBuf {
        use std::io::Write;
        let path = self.dir.join("ballast");
        let mut f = std::fs::File::create(&path).expect("the ballast file");
        let chunk = vec![0u8; 64 * 1024];
        while f.write_all(&chunk).and_then(|_| f.flush()).is_ok() {}
        path
    }

    /// Makes the kernel see a file system error on this ext4 mount: with `errors=remount-ro` it
    /// turns the mount read-only at once, open files and all (as after a failing disk).
    pub fn fail_read_only(&self) -> Result<(), String> {
        let source = String::from_utf8_lossy(
            &Command::new("findmnt")
                .args(["-n", "-o", "SOURCE", &self.dir.display().to_string()])
                .output()
                .map_err(|e| e.to_string())?
                .stdout,
        )
        .trim()
        .to_string();
        let device = Path::new(&source).file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        std::fs::write(format!("/sys/fs/ext4/{device}/trigger_fs_error"), "faults test\n")
            .map_err(|e| format!("cannot trigger an ext4 error on {device}: {e}"))
    }

    /// Whether 64 KiB more cannot be written (ENOSPC).
    pub fn is_full(&self) -> bool {
        let path = self.dir.join("probe-full");
        let full = std::fs::write(&path, vec![0u8; 64 * 1024]).is_err_and(|e| e.raw_os_error() == Some(28));
        let _ = std::fs::remove_file(&path);
        full
    }

    /// Whether a new file cannot be written (newer kernels keep `rw` in the options and add
    /// `emergency_ro`, so the options do not say it plainly).
    pub fn is_read_only(&self) -> bool {
        std::fs::write(self.dir.join("probe"), b"x")
            .is_err_and(|e| e.kind() == std::io::ErrorKind::ReadOnlyFilesystem || e.raw_os_error() == Some(30))
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

fn run(program: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(program).args(args).output().map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{program} {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// SQLite's own verdict on the store file.
pub fn integrity(db: &Path) -> String {
    let conn = rusqlite::Connection::open(db).expect("the store file opens");
    // The store's indexes use it: the check evaluates them.
    tributary::store::sqlite::register_unicode_lower(&conn).expect("the store's function registers");
    conn.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0)).expect("integrity_check runs")
}
