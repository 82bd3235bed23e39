//! The passthrough file system over the backing directory. Metadata operations are served at
//! once. Reads and writes go to the dispatcher: over the emulated disk they do their backing
//! I/O when they arrive (so data always comes from and goes to the real files) and the
//! dispatcher releases the reply when the scheduler and the disk model say the request
//! completes; over the real backend the dispatcher does the backing I/O itself when the
//! scheduler dispatches the request.

use crate::dispatcher::{Backend, Io, Msg, Reply};
use crate::layout::Layout;
use crate::principal::Principals;
use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, LockOwner, OpenFlags, ReplyAttr, ReplyCreate,
    ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow, WriteFlags,
};
use iosched::request::{Op, SECTOR_BYTES};
use std::collections::HashMap;
use std::ffi::{CString, OsStr};
use std::fs::{File, Metadata, OpenOptions};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const TTL: Duration = Duration::from_secs(1);

#[derive(Default)]
struct Inodes {
    path_of: HashMap<u64, PathBuf>,
    ino_of: HashMap<PathBuf, u64>,
    next: u64,
}

impl Inodes {
    fn new() -> Inodes {
        let mut i = Inodes { next: 2, ..Default::default() };
        i.path_of.insert(1, PathBuf::new());
        i.ino_of.insert(PathBuf::new(), 1);
        i
    }

    fn get_or_insert(&mut self, rel: &Path) -> u64 {
        if let Some(&i) = self.ino_of.get(rel) {
            return i;
        }
        let i = self.next;
        self.next += 1;
        self.path_of.insert(i, rel.to_path_buf());
        self.ino_of.insert(rel.to_path_buf(), i);
        i
    }

    fn rename(&mut self, from: &Path, to: &Path) {
        // Whatever was at the destination is replaced.
        let gone: Vec<PathBuf> = self.ino_of.keys().filter(|p| p.starts_with(to)).cloned().collect();
        for p in gone {
            if let Some(i) = self.ino_of.remove(&p) {
                self.path_of.remove(&i);
            }
        }
        let moved: Vec<PathBuf> = self.ino_of.keys().filter(|p| p.starts_with(from)).cloned().collect();
        for p in moved {
            let i = self.ino_of.remove(&p).unwrap();
            let rest = p.strip_prefix(from).unwrap();
            let dest = if rest.as_os_str().is_empty() { to.to_path_buf() } else { to.join(rest) };
            self.path_of.insert(i, dest.clone());
            self.ino_of.insert(dest, i);
        }
    }

    fn remove(&mut self, rel: &Path) {
        if let Some(i) = self.ino_of.remove(rel) {
            self.path_of.remove(&i);
        }
    }
}

struct Handle {
    file: Arc<File>,
    ino: u64,
    sync: bool,
}

pub struct RealFs {
    root: PathBuf,
    inodes: Mutex<Inodes>,
    handles: Mutex<HashMap<u64, Handle>>,
    next_fh: AtomicU64,
    layout: Mutex<Layout>,
    principals: Arc<Mutex<Principals>>,
    tx: Mutex<Sender<Msg>>,
    direct_io: bool,
    backend: Backend,
    addressed: Arc<AddressCounts>,
}

/// Real backend: requests addressed by FIEMAP, and by the emulated layout (FIEMAP had no
/// answer: a hole, data not yet allocated, a file system without FIEMAP).
#[derive(Default)]
pub struct AddressCounts {
    pub fiemap: AtomicU64,
    pub layout: AtomicU64,
}

pub fn errno(e: std::io::Error) -> Errno {
    Errno::from_i32(e.raw_os_error().unwrap_or(libc::EIO))
}

fn time_of(secs: i64, nsecs: i64) -> SystemTime {
    if secs >= 0 {
        UNIX_EPOCH + Duration::new(secs as u64, nsecs as u32)
    } else {
        UNIX_EPOCH - Duration::from_secs((-secs) as u64)
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

impl RealFs {
    pub fn new(
        root: PathBuf,
        layout: Layout,
        principals: Arc<Mutex<Principals>>,
        tx: Sender<Msg>,
        direct_io: bool,
        backend: Backend,
        addressed: Arc<AddressCounts>,
    ) -> RealFs {
        RealFs {
            root,
            inodes: Mutex::new(Inodes::new()),
            handles: Mutex::new(HashMap::new()),
            next_fh: AtomicU64::new(1),
            layout: Mutex::new(layout),
            principals,
            tx: Mutex::new(tx),
            direct_io,
            backend,
            addressed,
        }
    }

    fn rel(&self, ino: INodeNo) -> Result<PathBuf, Errno> {
        self.inodes.lock().unwrap().path_of.get(&ino.0).cloned().ok_or(Errno::ENOENT)
    }

    fn child(&self, parent: INodeNo, name: &OsStr) -> Result<PathBuf, Errno> {
        Ok(self.rel(parent)?.join(name))
    }

    fn entry(&self, rel: &Path) -> Result<FileAttr, Errno> {
        let m = std::fs::symlink_metadata(self.root.join(rel)).map_err(errno)?;
        let ino = self.inodes.lock().unwrap().get_or_insert(rel);
        Ok(attr_of(ino, &m))
    }

    fn add_handle(&self, file: File, ino: u64, flags: i32) -> (FileHandle, FopenFlags) {
        let fh = self.next_fh.fetch_add(1, Ordering::Relaxed);
        let sync = flags & (libc::O_DIRECT | libc::O_SYNC | libc::O_DSYNC) != 0;
        self.handles.lock().unwrap().insert(fh, Handle { file: Arc::new(file), ino, sync });
        let direct = self.direct_io || flags & libc::O_DIRECT != 0;
        (FileHandle(fh), if direct { FopenFlags::FOPEN_DIRECT_IO } else { FopenFlags::FOPEN_KEEP_CACHE })
    }

    fn handle(&self, fh: FileHandle) -> Option<(Arc<File>, u64, bool)> {
        self.handles.lock().unwrap().get(&fh.0).map(|h| (h.file.clone(), h.ino, h.sync))
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

    /// Sends a read or write to the dispatcher.
    #[allow(clippy::too_many_arguments)]
    fn schedule(&self, req: &Request, ino: u64, file: &File, op: Op, sync: bool, offset: u64, len: u64, reply: Reply) {
        let arrived = std::time::Instant::now();
        let rel = self.inodes.lock().unwrap().path_of.get(&ino).cloned().unwrap_or_default();
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
                None => (None, l.sector_of(&rel, offset, len), capacity),
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
}

/// Reads up to `size` bytes at `offset` (fewer only at the end of the file).
pub fn read_fully(file: &File, offset: u64, size: usize) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; size];
    let mut n = 0;
    while n < buf.len() {
        match file.read_at(&mut buf[n..], offset + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(n);
    Ok(buf)
}

impl Filesystem for RealFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        match self.child(parent, name).and_then(|p| self.entry(&p)) {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        let m = match fh.and_then(|fh| self.handle(fh)) {
            Some((f, _, _)) => f.metadata().map_err(errno),
            None => self.rel(ino).and_then(|p| std::fs::symlink_metadata(self.root.join(p)).map_err(errno)),
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
            let rel = self.rel(ino)?;
            let path = self.root.join(&rel);
            if let Some(mode) = mode {
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode & 0o7777)).map_err(errno)?;
            }
            if uid.is_some() || gid.is_some() {
                std::os::unix::fs::lchown(&path, uid, gid).map_err(errno)?;
            }
            if let Some(size) = size {
                match fh.and_then(|fh| self.handle(fh)) {
                    Some((f, _, _)) => f.set_len(size).map_err(errno)?,
                    None => OpenOptions::new().write(true).open(&path).and_then(|f| f.set_len(size)).map_err(errno)?,
                }
            }
            if atime.is_some() || mtime.is_some() {
                let ts = |t: Option<TimeOrNow>| match t {
                    None => libc::timespec { tv_sec: 0, tv_nsec: libc::UTIME_OMIT },
                    Some(TimeOrNow::Now) => libc::timespec { tv_sec: 0, tv_nsec: libc::UTIME_NOW },
                    Some(TimeOrNow::SpecificTime(t)) => {
                        let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
                        libc::timespec { tv_sec: d.as_secs() as libc::time_t, tv_nsec: d.subsec_nanos() as libc::c_long }
                    }
                };
                let times = [ts(atime), ts(mtime)];
                let c = CString::new(path.as_os_str().as_bytes()).map_err(|_| Errno::EINVAL)?;
                if unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), times.as_ptr(), libc::AT_SYMLINK_NOFOLLOW) } != 0 {
                    return Err(errno(std::io::Error::last_os_error()));
                }
            }
            let m = std::fs::symlink_metadata(&path).map_err(errno)?;
            Ok(attr_of(ino.0, &m))
        };
        match run() {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(e),
        }
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        match self.rel(ino).and_then(|p| std::fs::read_link(self.root.join(p)).map_err(errno)) {
            Ok(t) => reply.data(t.as_os_str().as_bytes()),
            Err(e) => reply.error(e),
        }
    }

    fn mkdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, mode: u32, umask: u32, reply: ReplyEntry) {
        let run = || -> Result<FileAttr, Errno> {
            let rel = self.child(parent, name)?;
            std::fs::DirBuilder::new().mode(mode & !umask & 0o7777).create(self.root.join(&rel)).map_err(errno)?;
            self.entry(&rel)
        };
        match run() {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn symlink(&self, _req: &Request, parent: INodeNo, link_name: &OsStr, target: &Path, reply: ReplyEntry) {
        let run = || -> Result<FileAttr, Errno> {
            let rel = self.child(parent, link_name)?;
            std::os::unix::fs::symlink(target, self.root.join(&rel)).map_err(errno)?;
            self.entry(&rel)
        };
        match run() {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let run = || -> Result<(), Errno> {
            let rel = self.child(parent, name)?;
            std::fs::remove_file(self.root.join(&rel)).map_err(errno)?;
            self.inodes.lock().unwrap().remove(&rel);
            self.layout.lock().unwrap().remove(&rel);
            Ok(())
        };
        match run() {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let run = || -> Result<(), Errno> {
            let rel = self.child(parent, name)?;
            std::fs::remove_dir(self.root.join(&rel)).map_err(errno)?;
            self.inodes.lock().unwrap().remove(&rel);
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
            if flags.bits() != 0 {
                return Err(Errno::EINVAL); // RENAME_NOREPLACE / EXCHANGE are not supported
            }
            let from = self.child(parent, name)?;
            let to = self.child(newparent, newname)?;
            std::fs::rename(self.root.join(&from), self.root.join(&to)).map_err(errno)?;
            self.inodes.lock().unwrap().rename(&from, &to);
            let mut l = self.layout.lock().unwrap();
            l.remove(&to);
            l.rename(&from, &to);
            Ok(())
        };
        match run() {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let run = || -> Result<(FileHandle, FopenFlags), Errno> {
            let rel = self.rel(ino)?;
            let f = Self::open_options(flags.0).open(self.root.join(rel)).map_err(errno)?;
            Ok(self.add_handle(f, ino.0, flags.0))
        };
        match run() {
            Ok((fh, fl)) => reply.opened(fh, fl),
            Err(e) => reply.error(e),
        }
    }

    fn create(&self, _req: &Request, parent: INodeNo, name: &OsStr, mode: u32, umask: u32, flags: i32, reply: ReplyCreate) {
        let run = || -> Result<(FileAttr, FileHandle, FopenFlags), Errno> {
            let rel = self.child(parent, name)?;
            let mut o = Self::open_options(flags);
            o.create(true).mode(mode & !umask & 0o7777);
            if flags & libc::O_EXCL != 0 {
                o.create_new(true);
            }
            if flags & libc::O_ACCMODE == libc::O_RDONLY {
                o.write(true); // creating needs write access on the backing side
            }
            let f = o.open(self.root.join(&rel)).map_err(errno)?;
            let attr = self.entry(&rel)?;
            let (fh, fl) = self.add_handle(f, attr.ino.0, flags);
            Ok((attr, fh, fl))
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
        let Some((file, ino, _)) = self.handle(fh) else { return reply.error(Errno::EBADF) };
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
            return self.schedule(req, ino, &file, Op::Read, true, offset, len, io);
        }
        let buf = match read_fully(&file, offset, size as usize) {
            Ok(b) => b,
            Err(e) => return reply.error(errno(e)),
        };
        if buf.is_empty() {
            return reply.data(&buf); // end of file: no disk access
        }
        let n = buf.len() as u64;
        self.schedule(req, ino, &file, Op::Read, true, offset, n, Reply::Read(reply, buf));
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
        let Some((file, ino, sync)) = self.handle(fh) else { return reply.error(Errno::EBADF) };
        let n = data.len() as u64;
        if self.backend == Backend::Real {
            let io = Reply::WriteAt { reply, file: file.clone(), offset, data: data.to_vec() };
            return self.schedule(req, ino, &file, Op::Write, sync, offset, n, io);
        }
        if let Err(e) = file.write_all_at(data, offset) {
            return reply.error(errno(e));
        }
        self.schedule(req, ino, &file, Op::Write, sync, offset, n, Reply::Write(reply, n as u32));
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
        self.handles.lock().unwrap().remove(&fh.0);
        reply.ok();
    }

    fn fsync(&self, _req: &Request, _ino: INodeNo, fh: FileHandle, datasync: bool, reply: ReplyEmpty) {
        let Some((file, _, _)) = self.handle(fh) else { return reply.error(Errno::EBADF) };
        match if datasync { file.sync_data() } else { file.sync_all() } {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.rel(ino) {
            Ok(_) => reply.opened(FileHandle(0), FopenFlags::empty()),
            Err(e) => reply.error(e),
        }
    }

    fn readdir(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, offset: u64, mut reply: ReplyDirectory) {
        let run = || -> Result<Vec<(u64, FileType, std::ffi::OsString)>, Errno> {
            let rel = self.rel(ino)?;
            let mut names: Vec<_> = std::fs::read_dir(self.root.join(&rel))
                .map_err(errno)?
                .filter_map(|e| e.ok())
                .map(|e| {
                    let kind = e.file_type().ok().and_then(FileType::from_std).unwrap_or(FileType::RegularFile);
                    (e.file_name(), kind)
                })
                .collect();
            names.sort_by(|a, b| a.0.cmp(&b.0));
            let mut out = vec![(ino.0, FileType::Directory, ".".into()), (ino.0, FileType::Directory, "..".into())];
            let mut inodes = self.inodes.lock().unwrap();
            for (name, kind) in names {
                let i = inodes.get_or_insert(&rel.join(&name));
                out.push((i, kind, name));
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
            return reply.error(errno(std::io::Error::last_os_error()));
        }
        reply.statfs(s.f_blocks, s.f_bfree, s.f_bavail, s.f_files, s.f_ffree, s.f_bsize as u32, s.f_namemax as u32, s.f_frsize as u32);
    }

    fn access(&self, _req: &Request, ino: INodeNo, _mask: fuser::AccessFlags, reply: ReplyEmpty) {
        match self.rel(ino) {
            Ok(_) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }
}
