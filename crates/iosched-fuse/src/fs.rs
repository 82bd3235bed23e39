//! The passthrough file system over the backing directory. Metadata operations are served at
//! once. Reads and writes go to the dispatcher: over the emulated disk they do their backing
//! I/O when they arrive (so data always comes from and goes to the real files) and the
//! dispatcher releases the reply when the scheduler and the disk model say the request
//! completes; over the real backend the dispatcher does the backing I/O itself when the
//! scheduler dispatches the request.
//!
//! Inodes. A FUSE inode stands for one backing file, identified by (st_dev, st_ino), not for a
//! path: two names of a file (hard links) are one inode, and a file keeps its inode across
//! renames. Each inode knows the names it was found under (parent inode, name) and its open
//! handles; an operation on an inode uses the first name that still leads to that backing file,
//! or else one of its open descriptors (through /proc/self/fd), so that fstat, ftruncate,
//! fchmod, futimens, xattrs, reads and writes work on an unlinked open file. The kernel's lookup
//! counts are kept and FORGET drops an inode, so the table holds what the kernel holds.
//!
//! Caching. Entries and attributes are cached by the kernel for 1 s (`TTL`); FUSE_AUTO_INVAL_DATA
//! makes the kernel drop a file's cached pages when it sees the file's size or mtime change; an
//! open keeps the page cache (FOPEN_KEEP_CACHE) only when the backing file's mtime, ctime and
//! size are what they were when the mount last saw it. So a change made to a backing file
//! directly is seen at the next open, and within 1 s by a process that holds the file open.

use crate::backing_io::{errno, read_fully};
use crate::dispatcher::{Backend, Io, Msg, Reply};
use crate::layout::Layout;
use crate::principal::Principals;
use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, InitFlags, KernelConfig, LockOwner, OpenFlags,
    ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, ReplyXattr, Request,
    TimeOrNow, WriteFlags,
};
use iosched::request::{Op, SECTOR_BYTES};
use std::collections::HashMap;
use std::ffi::{CString, OsStr, OsString};
use std::fs::{File, Metadata, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long the kernel may cache entries and attributes.
const TTL: Duration = Duration::from_secs(1);
const ROOT: u64 = 1;

/// A backing file's identity: (st_dev, st_ino).
pub type Key = (u64, u64);

fn key_of(m: &Metadata) -> Key {
    (m.dev(), m.ino())
}

/// What a cached page of the file is valid against: (mtime ns, ctime ns, size).
type Stamp = (i128, i128, u64);

fn stamp_of(m: &Metadata) -> Stamp {
    (m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128, m.ctime() as i128 * 1_000_000_000 + m.ctime_nsec() as i128, m.size())
}

struct Node {
    key: Key,
    kind: FileType,
    /// The names it was found under: (parent inode, name). A directory has one.
    names: Vec<(u64, OsString)>,
    /// The kernel's references (entries replied minus forgotten).
    lookups: u64,
    /// Its open handles.
    open: Vec<u64>,
    /// The backing file's state when its cached pages were last known to be current.
    stamp: Option<Stamp>,
}

#[derive(Default)]
struct Inodes {
    nodes: HashMap<u64, Node>,
    by_key: HashMap<Key, u64>,
    next: u64,
}

impl Inodes {
    fn new(root_key: Key) -> Inodes {
        let mut i = Inodes { next: ROOT + 1, ..Default::default() };
        i.nodes
            .insert(ROOT, Node { key: root_key, kind: FileType::Directory, names: Vec::new(), lookups: 1, open: Vec::new(), stamp: None });
        i.by_key.insert(root_key, ROOT);
        i
    }

    /// The inode of backing file `m` found as `name` in `parent` (created if new); counts a
    /// kernel reference when `lookup`.
    fn found(&mut self, parent: u64, name: &OsStr, m: &Metadata, lookup: bool) -> u64 {
        let key = key_of(m);
        let kind = FileType::from_std(m.file_type()).unwrap_or(FileType::RegularFile);
        let id = match self.by_key.get(&key).copied() {
            // The same backing inode number with another type is a new file (the number was reused).
            Some(id) if self.nodes.get(&id).is_some_and(|n| n.kind == kind) => id,
            _ => {
                let id = self.next;
                self.next += 1;
                self.nodes.insert(id, Node { key, kind, names: Vec::new(), lookups: 0, open: Vec::new(), stamp: None });
                self.by_key.insert(key, id);
                id
            }
        };
        let n = self.nodes.get_mut(&id).unwrap();
        if id != ROOT {
            if kind == FileType::Directory {
                n.names.clear();
            }
            if !n.names.iter().any(|(p, x)| *p == parent && x == name) {
                n.names.push((parent, name.to_os_string()));
            }
        }
        if lookup {
            n.lookups += 1;
        }
        id
    }

    /// Backing paths (relative) that may lead to inode `id`, best first.
    fn candidates(&self, id: u64) -> Vec<PathBuf> {
        if id == ROOT {
            return vec![PathBuf::new()];
        }
        let Some(n) = self.nodes.get(&id) else { return Vec::new() };
        n.names.iter().filter_map(|(p, name)| self.dir_path(*p, 0).map(|d| d.join(name))).collect()
    }

    fn dir_path(&self, id: u64, depth: usize) -> Option<PathBuf> {
        if id == ROOT {
            return Some(PathBuf::new());
        }
        let (p, name) = self.nodes.get(&id)?.names.first()?;
        if depth > 4096 {
            return None;
        }
        Some(self.dir_path(*p, depth + 1)?.join(name))
    }

    fn unname(&mut self, id: u64, parent: u64, name: &OsStr) {
        if let Some(n) = self.nodes.get_mut(&id) {
            n.names.retain(|(p, x)| !(*p == parent && x == name));
        }
        self.drop_if_unused(id);
    }

    /// The backing file of `id` is gone (its last name removed): a new file that gets the same
    /// backing inode number must get a new node id. Reusing it would hand the kernel a live
    /// entry with the id of an inode it still holds as deleted (mkdir of a name just removed
    /// then fails with ESTALE).
    fn detach(&mut self, id: u64) {
        if let Some(key) = self.nodes.get(&id).map(|n| n.key) {
            if self.by_key.get(&key) == Some(&id) {
                self.by_key.remove(&key);
            }
        }
    }

    /// Forgets an inode the kernel no longer references and nothing holds open.
    fn drop_if_unused(&mut self, id: u64) {
        if id == ROOT {
            return;
        }
        if let Some(n) = self.nodes.get(&id) {
            if n.lookups == 0 && n.open.is_empty() {
                let key = n.key;
                self.nodes.remove(&id);
                if self.by_key.get(&key) == Some(&id) {
                    self.by_key.remove(&key);
                }
            }
        }
    }
}

/// Where an operation on an inode reaches its backing file: a path, or an open descriptor's
/// /proc/self/fd link (kept open while in use), which must be followed.
struct Loc {
    path: PathBuf,
    fd: Option<Arc<File>>,
}

impl Loc {
    fn c(&self) -> Result<CString, Errno> {
        CString::new(self.path.as_os_str().as_bytes()).map_err(|_| Errno::EINVAL)
    }

    fn metadata(&self) -> Result<Metadata, Errno> {
        match &self.fd {
            Some(f) => f.metadata().map_err(errno),
            None => std::fs::symlink_metadata(&self.path).map_err(errno),
        }
    }
}

struct Handle {
    file: Arc<File>,
    ino: u64,
    key: Key,
    sync: bool,
}

pub struct RealFs {
    root: PathBuf,
    inodes: Arc<Mutex<Inodes>>,
    handles: Arc<Mutex<HashMap<u64, Handle>>>,
    next_fh: AtomicU64,
    layout: Arc<Mutex<Layout<Key>>>,
    principals: Arc<Mutex<Principals>>,
    tx: Mutex<Sender<Msg>>,
    direct_io: bool,
    backend: Backend,
    addressed: Arc<AddressCounts>,
    /// Whether the kernel let shared mmap coexist with FOPEN_DIRECT_IO (FUSE_DIRECT_IO_ALLOW_MMAP).
    pub direct_io_mmap: Arc<AtomicBool>,
}

/// The tables whose size must not grow with the mount's age: inodes (what the kernel holds),
/// open handles, and the layout's files.
#[derive(Clone)]
pub struct Tables {
    inodes: Arc<Mutex<Inodes>>,
    handles: Arc<Mutex<HashMap<u64, Handle>>>,
    layout: Arc<Mutex<Layout<Key>>>,
}

impl Tables {
    pub fn sizes(&self) -> serde_json::Value {
        let (inodes, names) = {
            let i = self.inodes.lock().unwrap();
            (i.nodes.len(), i.nodes.values().map(|n| n.names.len()).sum::<usize>())
        };
        serde_json::json!({"inodes": inodes, "names": names, "handles": self.handles.lock().unwrap().len(), "laid_out_files": self.layout.lock().unwrap().len()})
    }
}

/// Real backend: requests addressed by FIEMAP, and by the emulated layout (FIEMAP had no
/// answer: a hole, data not yet allocated, a file system without FIEMAP).
#[derive(Default)]
pub struct AddressCounts {
    pub fiemap: AtomicU64,
    pub layout: AtomicU64,
}

fn last_errno() -> Errno {
    errno(std::io::Error::last_os_error())
}

/// A file time as the kernel gives it: seconds (negative before 1970) and nanoseconds.
fn time_of(secs: i64, nsecs: i64) -> SystemTime {
    let ns = Duration::from_nanos(nsecs.clamp(0, 999_999_999) as u64);
    if secs >= 0 {
        UNIX_EPOCH + Duration::from_secs(secs as u64) + ns
    } else {
        UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs()) + ns
    }
}

/// The (seconds, nanoseconds) pair the kernel sent for a time in setattr. fuser 0.18 turns a
/// pair with negative seconds into UNIX_EPOCH - (|seconds|, nanoseconds) (its
/// `system_time_from_time`), so that is undone here: the pair comes back exactly.
fn timespec_of(t: SystemTime) -> libc::timespec {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => libc::timespec { tv_sec: d.as_secs() as libc::time_t, tv_nsec: d.subsec_nanos() as libc::c_long },
        Err(e) => {
            let d = e.duration();
            libc::timespec { tv_sec: -(d.as_secs() as i64) as libc::time_t, tv_nsec: d.subsec_nanos() as libc::c_long }
        }
    }
}

fn attr_of(ino: u64, m: &Metadata) -> FileAttr {
    let ft = m.file_type();
    let kind = FileType::from_std(ft).unwrap_or(FileType::RegularFile);
    FileAttr {
        ino: INodeNo(ino),
        size: m.size(),
        blocks: m.blocks(),
        atime: time_of(m.atime(), m.atime_nsec()),
        mtime: time_of(m.mtime(), m.mtime_nsec()),
        ctime: time_of(m.ctime(), m.ctime_nsec()),
        crtime: time_of(m.ctime(), m.ctime_nsec()),
        kind,
        perm: (m.mode() & 0o7777) as u16,
        nlink: m.nlink() as u32,
        uid: m.uid(),
        gid: m.gid(),
        rdev: m.rdev() as u32,
        blksize: m.blksize() as u32,
        flags: 0,
    }
}

fn cstr(s: &OsStr) -> Result<CString, Errno> {
    CString::new(s.as_bytes()).map_err(|_| Errno::EINVAL)
}

fn check(r: libc::c_int) -> Result<(), Errno> {
    if r < 0 {
        Err(last_errno())
    } else {
        Ok(())
    }
}

/// Answers an xattr query of `size` bytes (0: the size needed) from a call that fills `buf`.
fn xattr_reply(size: u32, reply: ReplyXattr, call: impl Fn(*mut libc::c_void, usize) -> isize) {
    if size == 0 {
        let n = call(std::ptr::null_mut(), 0);
        return if n < 0 { reply.error(last_errno()) } else { reply.size(n as u32) };
    }
    let mut buf = vec![0u8; size as usize];
    let n = call(buf.as_mut_ptr().cast(), buf.len());
    if n < 0 {
        reply.error(last_errno())
    } else {
        reply.data(&buf[..n as usize])
    }
}

impl RealFs {
    pub fn new(
        root: PathBuf,
        layout: Layout<Key>,
        principals: Arc<Mutex<Principals>>,
        tx: Sender<Msg>,
        direct_io: bool,
        backend: Backend,
        addressed: Arc<AddressCounts>,
    ) -> Result<RealFs, String> {
        let m = std::fs::metadata(&root).map_err(|e| format!("backing directory {}: {e}", root.display()))?;
        Ok(RealFs {
            root,
            inodes: Arc::new(Mutex::new(Inodes::new(key_of(&m)))),
            handles: Arc::new(Mutex::new(HashMap::new())),
            next_fh: AtomicU64::new(1),
            layout: Arc::new(Mutex::new(layout)),
            principals,
            tx: Mutex::new(tx),
            direct_io,
            backend,
            addressed,
            direct_io_mmap: Arc::new(AtomicBool::new(false)),
        })
    }

    /// The backing file of inode `ino`: the first of its names that still leads to it, else an
    /// open descriptor of it (an unlinked open file). Names that lead elsewhere are forgotten.
    fn locate(&self, ino: INodeNo) -> Result<(Loc, Metadata), Errno> {
        let (key, candidates, fd) = {
            let inodes = self.inodes.lock().unwrap();
            let n = inodes.nodes.get(&ino.0).ok_or(Errno::ENOENT)?;
            let fd = n.open.first().and_then(|fh| self.handles.lock().unwrap().get(fh).map(|h| h.file.clone()));
            (n.key, inodes.candidates(ino.0), fd)
        };
        let mut stale = false;
        for rel in candidates {
            let path = self.root.join(&rel);
            match std::fs::symlink_metadata(&path) {
                Ok(m) if key_of(&m) == key => return Ok((Loc { path, fd: None }, m)),
                _ => stale = true,
            }
        }
        if stale && ino.0 != ROOT {
            // Drop the names that no longer lead to this file (renamed or removed behind the mount).
            let mut inodes = self.inodes.lock().unwrap();
            let names: Vec<(u64, OsString)> = inodes.nodes.get(&ino.0).map(|n| n.names.clone()).unwrap_or_default();
            let keep: Vec<(u64, OsString)> = names
                .into_iter()
                .filter(|(p, name)| {
                    inodes
                        .dir_path(*p, 0)
                        .is_some_and(|d| std::fs::symlink_metadata(self.root.join(d).join(name)).is_ok_and(|m| key_of(&m) == key))
                })
                .collect();
            if let Some(n) = inodes.nodes.get_mut(&ino.0) {
                n.names = keep;
            }
        }
        match fd {
            Some(f) => {
                let m = f.metadata().map_err(errno)?;
                Ok((Loc { path: PathBuf::from(format!("/proc/self/fd/{}", f.as_raw_fd())), fd: Some(f) }, m))
            }
            None => Err(Errno::ENOENT),
        }
    }

    /// The backing path of directory `parent` joined with `name`.
    fn child(&self, parent: INodeNo, name: &OsStr) -> Result<PathBuf, Errno> {
        let (loc, m) = self.locate(parent)?;
        if !m.is_dir() {
            return Err(Errno::ENOTDIR);
        }
        Ok(loc.path.join(name))
    }

    /// Replies to an operation that made or found `name` in `parent`: the kernel holds a reference.
    fn entry(&self, parent: INodeNo, name: &OsStr, path: &Path) -> Result<FileAttr, Errno> {
        let m = std::fs::symlink_metadata(path).map_err(errno)?;
        let ino = self.inodes.lock().unwrap().found(parent.0, name, &m, true);
        Ok(attr_of(ino, &m))
    }

    fn add_handle(&self, file: File, ino: u64, key: Key, flags: i32, keep_cache: bool) -> (FileHandle, FopenFlags) {
        let fh = self.next_fh.fetch_add(1, Ordering::Relaxed);
        let sync = flags & (libc::O_DIRECT | libc::O_SYNC | libc::O_DSYNC) != 0;
        self.handles.lock().unwrap().insert(fh, Handle { file: Arc::new(file), ino, key, sync });
        if let Some(n) = self.inodes.lock().unwrap().nodes.get_mut(&ino) {
            n.open.push(fh);
        }
        let direct = self.direct_io || flags & libc::O_DIRECT != 0;
        let fl = if direct {
            FopenFlags::FOPEN_DIRECT_IO
        } else if keep_cache {
            FopenFlags::FOPEN_KEEP_CACHE
        } else {
            FopenFlags::empty()
        };
        (FileHandle(fh), fl)
    }

    /// Whether an open may keep the kernel's cached pages of inode `ino` (the backing file is as
    /// the mount last saw it); records the state for the next open.
    fn keep_cache(&self, ino: u64, m: &Metadata) -> bool {
        let mut inodes = self.inodes.lock().unwrap();
        let Some(n) = inodes.nodes.get_mut(&ino) else { return false };
        let now = stamp_of(m);
        let keep = n.stamp == Some(now);
        n.stamp = Some(now);
        keep
    }

    fn handle(&self, fh: FileHandle) -> Option<(Arc<File>, u64, Key, bool)> {
        self.handles.lock().unwrap().get(&fh.0).map(|h| (h.file.clone(), h.ino, h.key, h.sync))
    }

    fn open_options(flags: i32) -> OpenOptions {
        let mut o = OpenOptions::new();
        match flags & libc::O_ACCMODE {
            libc::O_WRONLY => o.write(true),
            libc::O_RDWR => o.read(true).write(true),
            _ => o.read(true),
        };
        // The backing file is accessed through the page cache (O_DIRECT would need aligned buffers).
        o.custom_flags(flags & !(libc::O_ACCMODE | libc::O_CREAT | libc::O_EXCL | libc::O_NOCTTY | libc::O_DIRECT));
        o
    }

    /// A name of backing file `key` is gone: once it has no name and nothing holds it open, its
    /// extents are freed.
    fn maybe_free_extents(&self, key: Key, path_meta_before: &Metadata) {
        if path_meta_before.nlink() <= 1 && path_meta_before.is_file() {
            let open = {
                let inodes = self.inodes.lock().unwrap();
                inodes.by_key.get(&key).and_then(|id| inodes.nodes.get(id)).is_some_and(|n| !n.open.is_empty())
            };
            if !open {
                self.layout.lock().unwrap().remove(&key);
            }
        }
    }

    /// Sends a read or write to the dispatcher.
    #[allow(clippy::too_many_arguments)]
    fn schedule(&self, req: &Request, key: Key, file: &File, op: Op, sync: bool, offset: u64, len: u64, reply: Reply) {
        let arrived = std::time::Instant::now();
        let physical = match self.backend {
            Backend::Real => crate::fiemap::physical_byte(file, offset).map(|b| b / SECTOR_BYTES),
            Backend::Emulated => None,
        };
        let (physical, start_sector, capacity) = {
            let mut l = self.layout.lock().unwrap();
            let capacity = l.capacity_sectors();
            // An address outside the known address space (a file system spanning devices) is
            // not used: the layout gives one instead, and it is counted as such.
            match physical.filter(|&s| s < capacity) {
                Some(s) => (Some(s), s, capacity),
                None => (None, l.sector_of(&key, offset, len), capacity),
            }
        };
        if self.backend == Backend::Real {
            let counter = if physical.is_some() { &self.addressed.fiemap } else { &self.addressed.layout };
            counter.fetch_add(1, Ordering::Relaxed);
        }
        let size_sectors = len.div_ceil(SECTOR_BYTES).clamp(1, u32::MAX as u64) as u32;
        let start_sector = start_sector.min(capacity.saturating_sub(size_sectors as u64));
        let (principal, new) = self.principals.lock().unwrap().resolve(req.pid());
        let tx = self.tx.lock().unwrap();
        if let Some(k) = new {
            let _ = tx.send(Msg::Started { principal, name: k.name });
        }
        // If the dispatcher is gone, the reply is dropped, which answers EIO.
        let _ = tx.send(Msg::Io(Io { principal, op, sync, start_sector, size_sectors, reply, arrived }));
    }

    /// The file system's tables, for their sizes in live statistics and the summary.
    pub fn tables(&self) -> Tables {
        Tables { inodes: self.inodes.clone(), handles: self.handles.clone(), layout: self.layout.clone() }
    }
}

impl Filesystem for RealFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        // Drop a file's cached pages when its size or mtime changes (changes made to the
        // backing files directly); let shared mmap coexist with FOPEN_DIRECT_IO (kernel 6.6+).
        let _ = config.add_capabilities(InitFlags::FUSE_AUTO_INVAL_DATA);
        if config.add_capabilities(InitFlags::FUSE_DIRECT_IO_ALLOW_MMAP).is_ok() {
            self.direct_io_mmap.store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        match self.child(parent, name).and_then(|p| self.entry(parent, name, &p)) {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn forget(&self, _req: &Request, ino: INodeNo, nlookup: u64) {
        let mut inodes = self.inodes.lock().unwrap();
        if let Some(n) = inodes.nodes.get_mut(&ino.0) {
            n.lookups = n.lookups.saturating_sub(nlookup);
        }
        inodes.drop_if_unused(ino.0);
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        let m = match fh.and_then(|fh| self.handle(fh)) {
            Some((f, ..)) => f.metadata().map_err(errno),
            None => self.locate(ino).map(|(_, m)| m),
        };
        match m {
            Ok(m) => reply.attr(&TTL, &attr_of(ino.0, &m)),
            Err(e) => reply.error(e),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let run = || -> Result<FileAttr, Errno> {
            let (loc, _) = self.locate(ino)?;
            let fd = loc.fd.as_ref().map(|f| f.as_raw_fd());
            if let Some(mode) = mode {
                match fd {
                    Some(fd) => check(unsafe { libc::fchmod(fd, (mode & 0o7777) as libc::mode_t) })?,
                    None => std::fs::set_permissions(&loc.path, std::fs::Permissions::from_mode(mode & 0o7777)).map_err(errno)?,
                }
            }
            if uid.is_some() || gid.is_some() {
                match fd {
                    Some(fd) => check(unsafe { libc::fchown(fd, uid.unwrap_or(u32::MAX), gid.unwrap_or(u32::MAX)) })?,
                    None => std::os::unix::fs::lchown(&loc.path, uid, gid).map_err(errno)?,
                }
            }
            if let Some(size) = size {
                match fh.and_then(|fh| self.handle(fh)) {
                    Some((f, ..)) => f.set_len(size).map_err(errno)?,
                    // The path (or an open descriptor's /proc link) is opened for writing.
                    None => OpenOptions::new().write(true).open(&loc.path).and_then(|f| f.set_len(size)).map_err(errno)?,
                }
            }
            if atime.is_some() || mtime.is_some() {
                let ts = |t: Option<TimeOrNow>| match t {
                    None => libc::timespec { tv_sec: 0, tv_nsec: libc::UTIME_OMIT },
                    Some(TimeOrNow::Now) => libc::timespec { tv_sec: 0, tv_nsec: libc::UTIME_NOW },
                    Some(TimeOrNow::SpecificTime(t)) => timespec_of(t),
                };
                let times = [ts(atime), ts(mtime)];
                match fd {
                    Some(fd) => check(unsafe { libc::futimens(fd, times.as_ptr()) })?,
                    None => {
                        check(unsafe { libc::utimensat(libc::AT_FDCWD, loc.c()?.as_ptr(), times.as_ptr(), libc::AT_SYMLINK_NOFOLLOW) })?
                    }
                }
            }
            let m = loc.metadata()?;
            Ok(attr_of(ino.0, &m))
        };
        match run() {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(e),
        }
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        match self.locate(ino).and_then(|(loc, _)| std::fs::read_link(&loc.path).map_err(errno)) {
            Ok(t) => reply.data(t.as_os_str().as_bytes()),
            Err(e) => reply.error(e),
        }
    }

    fn mknod(&self, _req: &Request, parent: INodeNo, name: &OsStr, mode: u32, umask: u32, rdev: u32, reply: ReplyEntry) {
        let run = || -> Result<FileAttr, Errno> {
            let path = self.child(parent, name)?;
            let c = cstr(path.as_os_str())?;
            let perm = mode & 0o7777 & !umask;
            check(unsafe { libc::mknod(c.as_ptr(), ((mode & libc::S_IFMT) | perm) as libc::mode_t, rdev as libc::dev_t) })?;
            self.entry(parent, name, &path)
        };
        match run() {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn mkdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, mode: u32, umask: u32, reply: ReplyEntry) {
        let run = || -> Result<FileAttr, Errno> {
            let path = self.child(parent, name)?;
            std::fs::DirBuilder::new().mode(mode & !umask & 0o7777).create(&path).map_err(errno)?;
            self.entry(parent, name, &path)
        };
        match run() {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn symlink(&self, _req: &Request, parent: INodeNo, link_name: &OsStr, target: &Path, reply: ReplyEntry) {
        let run = || -> Result<FileAttr, Errno> {
            let path = self.child(parent, link_name)?;
            std::os::unix::fs::symlink(target, &path).map_err(errno)?;
            self.entry(parent, link_name, &path)
        };
        match run() {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn link(&self, _req: &Request, ino: INodeNo, newparent: INodeNo, newname: &OsStr, reply: ReplyEntry) {
        let run = || -> Result<FileAttr, Errno> {
            let (loc, _) = self.locate(ino)?;
            let to = self.child(newparent, newname)?;
            let follow = if loc.fd.is_some() { libc::AT_SYMLINK_FOLLOW } else { 0 };
            check(unsafe { libc::linkat(libc::AT_FDCWD, loc.c()?.as_ptr(), libc::AT_FDCWD, cstr(to.as_os_str())?.as_ptr(), follow) })?;
            self.entry(newparent, newname, &to)
        };
        match run() {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let run = || -> Result<(), Errno> {
            let path = self.child(parent, name)?;
            let before = std::fs::symlink_metadata(&path).map_err(errno)?;
            std::fs::remove_file(&path).map_err(errno)?;
            let key = key_of(&before);
            {
                let mut inodes = self.inodes.lock().unwrap();
                if let Some(id) = inodes.by_key.get(&key).copied() {
                    if before.nlink() <= 1 {
                        inodes.detach(id);
                    }
                    inodes.unname(id, parent.0, name);
                }
            }
            self.maybe_free_extents(key, &before);
            Ok(())
        };
        match run() {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let run = || -> Result<(), Errno> {
            let path = self.child(parent, name)?;
            let before = std::fs::symlink_metadata(&path).map_err(errno)?;
            std::fs::remove_dir(&path).map_err(errno)?;
            let mut inodes = self.inodes.lock().unwrap();
            if let Some(id) = inodes.by_key.get(&key_of(&before)).copied() {
                inodes.detach(id);
                inodes.unname(id, parent.0, name);
            }
            Ok(())
        };
        match run() {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: fuser::RenameFlags,
        reply: ReplyEmpty,
    ) {
        let run = || -> Result<(), Errno> {
            let from = self.child(parent, name)?;
            let to = self.child(newparent, newname)?;
            let moved = std::fs::symlink_metadata(&from).map_err(errno)?;
            let replaced = std::fs::symlink_metadata(&to).ok();
            let (f, t) = (cstr(from.as_os_str())?, cstr(to.as_os_str())?);
            // renameat2 passes RENAME_NOREPLACE / RENAME_EXCHANGE through to the backing file system.
            let r = unsafe { libc::syscall(libc::SYS_renameat2, libc::AT_FDCWD, f.as_ptr(), libc::AT_FDCWD, t.as_ptr(), flags.bits()) };
            if r < 0 {
                return Err(last_errno());
            }
            let exchange = flags.bits() & libc::RENAME_EXCHANGE != 0;
            let mut inodes = self.inodes.lock().unwrap();
            let moved_id = inodes.by_key.get(&key_of(&moved)).copied();
            let replaced_id = replaced.as_ref().and_then(|m| inodes.by_key.get(&key_of(m)).copied());
            if let Some(id) = moved_id {
                inodes.unname(id, parent.0, name);
            }
            if let Some(id) = replaced_id.filter(|&r| Some(r) != moved_id) {
                let gone = replaced.as_ref().is_some_and(|m| m.is_dir() || m.nlink() <= 1);
                if gone && !exchange {
                    inodes.detach(id);
                }
                inodes.unname(id, newparent.0, newname);
                if exchange {
                    inodes.found(parent.0, name, replaced.as_ref().unwrap(), false);
                }
            }
            inodes.found(newparent.0, newname, &moved, false);
            drop(inodes);
            if let Some(r) = replaced.filter(|r| !exchange && key_of(r) != key_of(&moved)) {
                self.maybe_free_extents(key_of(&r), &r);
            }
            Ok(())
        };
        match run() {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let run = || -> Result<(FileHandle, FopenFlags), Errno> {
            let (loc, _) = self.locate(ino)?;
            let f = Self::open_options(flags.0).open(&loc.path).map_err(errno)?;
            let m = f.metadata().map_err(errno)?;
            let keep = self.keep_cache(ino.0, &m);
            Ok(self.add_handle(f, ino.0, key_of(&m), flags.0, keep))
        };
        match run() {
            Ok((fh, fl)) => reply.opened(fh, fl),
            Err(e) => reply.error(e),
        }
    }

    fn create(&self, _req: &Request, parent: INodeNo, name: &OsStr, mode: u32, umask: u32, flags: i32, reply: ReplyCreate) {
        let run = || -> Result<(FileAttr, FileHandle, FopenFlags), Errno> {
            let path = self.child(parent, name)?;
            let mut o = Self::open_options(flags);
            o.create(true).mode(mode & !umask & 0o7777);
            if flags & libc::O_EXCL != 0 {
                o.create_new(true);
            }
            if flags & libc::O_ACCMODE == libc::O_RDONLY {
                o.write(true); // creating needs write access on the backing side
            }
            let f = o.open(&path).map_err(errno)?;
            let m = f.metadata().map_err(errno)?;
            let ino = self.inodes.lock().unwrap().found(parent.0, name, &m, true);
            let keep = self.keep_cache(ino, &m);
            let (fh, fl) = self.add_handle(f, ino, key_of(&m), flags, keep);
            Ok((attr_of(ino, &m), fh, fl))
        };
        match run() {
            Ok((a, fh, fl)) => reply.created(&TTL, &a, Generation(0), fh, fl),
            Err(e) => reply.error(e),
        }
    }

    fn read(
        &self,
        req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let Some((file, _, key, _)) = self.handle(fh) else { return reply.error(Errno::EBADF) };
        if self.backend == Backend::Real {
            // The dispatcher reads when it dispatches; the request's length is what lies
            // before the end of the file now.
            let len = match file.metadata() {
                Ok(m) => m.len().saturating_sub(offset).min(size as u64),
                Err(e) => return reply.error(errno(e)),
            };
            if len == 0 {
                return reply.data(&[]); // end of file: no disk access
            }
            let io = Reply::ReadAt { reply, file: file.clone(), offset, size };
            return self.schedule(req, key, &file, Op::Read, true, offset, len, io);
        }
        let buf = match read_fully(&file, offset, size as usize) {
            Ok(b) => b,
            Err(e) => return reply.error(errno(e)),
        };
        if buf.is_empty() {
            return reply.data(&buf); // end of file: no disk access
        }
        let n = buf.len() as u64;
        self.schedule(req, key, &file, Op::Read, true, offset, n, Reply::Read(reply, buf));
    }

    fn write(
        &self,
        req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let Some((file, _, key, sync)) = self.handle(fh) else { return reply.error(Errno::EBADF) };
        let n = data.len() as u64;
        if self.backend == Backend::Real {
            let io = Reply::WriteAt { reply, file: file.clone(), offset, data: data.to_vec() };
            return self.schedule(req, key, &file, Op::Write, sync, offset, n, io);
        }
        if let Err(e) = file.write_all_at(data, offset) {
            return reply.error(errno(e));
        }
        self.schedule(req, key, &file, Op::Write, sync, offset, n, Reply::Write(reply, n as u32));
    }

    fn flush(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _lock_owner: LockOwner, reply: ReplyEmpty) {
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        let Some(h) = self.handles.lock().unwrap().remove(&fh.0) else { return reply.ok() };
        let m = h.file.metadata().ok();
        let last = {
            let mut inodes = self.inodes.lock().unwrap();
            let last = match inodes.nodes.get_mut(&h.ino) {
                Some(n) => {
                    n.open.retain(|&x| x != fh.0);
                    // What this handle wrote is in the kernel's cache already: the next open
                    // may keep it unless the file changes behind the mount.
                    if let Some(m) = &m {
                        n.stamp = Some(stamp_of(m));
                    }
                    n.open.is_empty()
                }
                None => true,
            };
            inodes.drop_if_unused(h.ino);
            last
        };
        // The last descriptor of an unlinked file: its extents are free.
        if last && m.as_ref().is_some_and(|m| m.nlink() == 0) {
            self.layout.lock().unwrap().remove(&h.key);
        }
        reply.ok();
    }

    fn fsync(&self, _req: &Request, _ino: INodeNo, fh: FileHandle, datasync: bool, reply: ReplyEmpty) {
        let Some((file, ..)) = self.handle(fh) else { return reply.error(Errno::EBADF) };
        match if datasync { file.sync_data() } else { file.sync_all() } {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn fallocate(&self, _req: &Request, _ino: INodeNo, fh: FileHandle, offset: u64, length: u64, mode: i32, reply: ReplyEmpty) {
        let Some((file, ..)) = self.handle(fh) else { return reply.error(Errno::EBADF) };
        match check(unsafe { libc::fallocate(file.as_raw_fd(), mode, offset as libc::off_t, length as libc::off_t) }) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.locate(ino) {
            Ok((_, m)) if m.is_dir() => reply.opened(FileHandle(0), FopenFlags::empty()),
            Ok(_) => reply.error(Errno::ENOTDIR),
            Err(e) => reply.error(e),
        }
    }

    fn readdir(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, offset: u64, mut reply: ReplyDirectory) {
        let run = || -> Result<Vec<(u64, FileType, OsString)>, Errno> {
            let (loc, _) = self.locate(ino)?;
            let mut names: Vec<(OsString, FileType)> = std::fs::read_dir(&loc.path)
                .map_err(errno)?
                .filter_map(|e| e.ok())
                .map(|e| {
                    let kind = e.file_type().ok().and_then(FileType::from_std).unwrap_or(FileType::RegularFile);
                    (e.file_name(), kind)
                })
                .collect();
            names.sort_by(|a, b| a.0.cmp(&b.0));
            let mut out = vec![(ino.0, FileType::Directory, ".".into()), (ino.0, FileType::Directory, "..".into())];
            let inodes = self.inodes.lock().unwrap();
            for (name, kind) in names {
                // The inode number the mount has given this file, or else its backing inode
                // number with the top bit set (never one of the mount's): directory listings do
                // not create inodes (the kernel looks a name up before using it).
                let m = std::fs::symlink_metadata(loc.path.join(&name)).ok();
                let known = m.as_ref().and_then(|m| inodes.by_key.get(&key_of(m)).copied());
                out.push((known.unwrap_or_else(|| m.map_or(0, |m| m.ino()) | 1 << 63), kind, name));
            }
            Ok(out)
        };
        match run() {
            Ok(entries) => {
                for (i, (ino, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
                    if reply.add(INodeNo(ino), i as u64 + 1, kind, name) {
                        break;
                    }
                }
                reply.ok()
            }
            Err(e) => reply.error(e),
        }
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let c = CString::new(self.root.as_os_str().as_bytes()).unwrap_or_default();
        let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
            return reply.error(last_errno());
        }
        reply.statfs(s.f_blocks, s.f_bfree, s.f_bavail, s.f_files, s.f_ffree, s.f_bsize as u32, s.f_namemax as u32, s.f_frsize as u32);
    }

    fn setxattr(&self, _req: &Request, ino: INodeNo, name: &OsStr, value: &[u8], flags: i32, _position: u32, reply: ReplyEmpty) {
        let run = || -> Result<(), Errno> {
            let (loc, _) = self.locate(ino)?;
            let n = cstr(name)?;
            let (v, len) = (value.as_ptr().cast(), value.len());
            check(match &loc.fd {
                Some(f) => unsafe { libc::fsetxattr(f.as_raw_fd(), n.as_ptr(), v, len, flags) },
                None => unsafe { libc::lsetxattr(loc.c()?.as_ptr(), n.as_ptr(), v, len, flags) },
            })
        };
        match run() {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn getxattr(&self, _req: &Request, ino: INodeNo, name: &OsStr, size: u32, reply: ReplyXattr) {
        let (loc, n) = match self.locate(ino).and_then(|(l, _)| Ok((l, cstr(name)?))) {
            Ok(x) => x,
            Err(e) => return reply.error(e),
        };
        let Ok(path) = loc.c() else { return reply.error(Errno::EINVAL) };
        xattr_reply(size, reply, |buf, len| match &loc.fd {
            Some(f) => unsafe { libc::fgetxattr(f.as_raw_fd(), n.as_ptr(), buf, len) },
            None => unsafe { libc::lgetxattr(path.as_ptr(), n.as_ptr(), buf, len) },
        });
    }

    fn listxattr(&self, _req: &Request, ino: INodeNo, size: u32, reply: ReplyXattr) {
        let loc = match self.locate(ino) {
            Ok((l, _)) => l,
            Err(e) => return reply.error(e),
        };
        let Ok(path) = loc.c() else { return reply.error(Errno::EINVAL) };
        xattr_reply(size, reply, |buf, len| match &loc.fd {
            Some(f) => unsafe { libc::flistxattr(f.as_raw_fd(), buf.cast(), len) },
            None => unsafe { libc::llistxattr(path.as_ptr(), buf.cast(), len) },
        });
    }

    fn removexattr(&self, _req: &Request, ino: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let run = || -> Result<(), Errno> {
            let (loc, _) = self.locate(ino)?;
            let n = cstr(name)?;
            check(match &loc.fd {
                Some(f) => unsafe { libc::fremovexattr(f.as_raw_fd(), n.as_ptr()) },
                None => unsafe { libc::lremovexattr(loc.c()?.as_ptr(), n.as_ptr()) },
            })
        };
        match run() {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn access(&self, _req: &Request, ino: INodeNo, _mask: fuser::AccessFlags, reply: ReplyEmpty) {
        match self.locate(ino) {
            Ok(_) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }
}
