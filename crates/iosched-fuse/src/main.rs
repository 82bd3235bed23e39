//! iosched-fuse: real mode's binary (`iosched mount` / `iosched umount` / `iosched calibrate --real`
//! run the same code from the Python package; see cli.rs).

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let exe = std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_else(|_| "iosched-fuse".into());
    ExitCode::from(iosched_fuse::cli::run(&args, &[exe]))
}
