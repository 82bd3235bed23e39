//! iosched-fuzz: a seeded mutation fuzzer on stable Rust for iosched's input readers.
//!
//! ```text
//! cargo run -p iosched-fuzz --profile fuzz -- --target disksim --seconds 60 --seed 1
//! cargo run -p iosched-fuzz --profile fuzz -- --all --seconds 45
//! cargo run -p iosched-fuzz --profile fuzz -- --target trace --reproduce crash.txt
//! ```
//!
//! Every seed of `corpus/<target>/` (and the generated deep-nesting seeds, and the files of
//! ../shared when present) runs first, unmutated; then mutants of the corpus run until the time
//! is up. Each input runs under `catch_unwind`: a panic (an overflow in this overflow-checked
//! build, an index out of bounds, an unwrap) is a failure, as is an error message that does not
//! describe the problem or name the file, and an input that runs longer than the hang limit. A
//! stack overflow cannot be caught: the process dies, which is a failure too; the input being
//! run is always in `<crashes>/<target>.last`. The exit status is 1 after any failure.
//! Details: docs/reliability.md.

mod mutate;
mod targets;

use mutate::Rng;
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use targets::{Env, Outcome, TARGETS};

const USAGE: &str = "usage: iosched-fuzz (--target NAME[,NAME...] | --all) [--seconds N] [--runs N] [--seed N]
                    [--corpus DIR] [--crashes DIR] [--shared DIR | --no-shared] [--hang-seconds N]
                    [--reproduce FILE] [--list]
targets: scenario, disksim, seek, trace, calibration, trace-readers, mqsim";

struct Options {
    targets: Vec<String>,
    seconds: f64,
    runs: Option<u64>,
    seed: u64,
    corpus: PathBuf,
    crashes: PathBuf,
    shared: Option<PathBuf>,
    hang_seconds: u64,
    reproduce: Option<PathBuf>,
}

fn parse_args() -> Result<Options, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut o = Options {
        targets: Vec::new(),
        seconds: 10.0,
        runs: None,
        seed: 1,
        corpus: root.join("corpus"),
        crashes: root.join("../../target/fuzz-crashes"),
        shared: Some(root.join("../../../shared")),
        hang_seconds: 20,
        reproduce: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value\n{USAGE}"));
        let number = |name: &str, v: String| {
            v.parse::<f64>().ok().filter(|x| x.is_finite() && *x >= 0.0).ok_or(format!("{name}: not a number: {v}"))
        };
        match a.as_str() {
            "--target" => o.targets.extend(value("--target")?.split(',').map(str::to_string)),
            "--all" => o.targets = TARGETS.iter().map(|t| t.to_string()).collect(),
            "--seconds" => o.seconds = number("--seconds", value("--seconds")?)?,
            "--runs" => o.runs = Some(number("--runs", value("--runs")?)? as u64),
            "--seed" => o.seed = value("--seed")?.parse().map_err(|_| "--seed: expected an integer".to_string())?,
            "--corpus" => o.corpus = value("--corpus")?.into(),
            "--crashes" => o.crashes = value("--crashes")?.into(),
            "--shared" => o.shared = Some(value("--shared")?.into()),
            "--no-shared" => o.shared = None,
            "--hang-seconds" => o.hang_seconds = number("--hang-seconds", value("--hang-seconds")?)?.max(1.0) as u64,
            "--reproduce" => o.reproduce = Some(value("--reproduce")?.into()),
            "--list" => {
                println!("{}", TARGETS.join("\n"));
                std::process::exit(0);
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(format!("unknown argument `{a}`\n{USAGE}")),
        }
    }
    if o.targets.is_empty() {
        return Err(format!("give --target NAME or --all\n{USAGE}"));
    }
    if let Some(t) = o.targets.iter().find(|t| !TARGETS.contains(&t.as_str())) {
        return Err(format!("unknown target `{t}` (known: {})", TARGETS.join(", ")));
    }
    Ok(o)
}

thread_local! {
    /// The message and place of the last panic on this thread (the hook stores it; the default
    /// hook's output would be noise for every caught panic).
    static LAST_PANIC: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
            s.to_string()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            "(non-string panic)".to_string()
        };
        let at = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
        LAST_PANIC.with(|p| *p.borrow_mut() = format!("panicked at {at}: {msg}"));
    }));
}

/// How an input is shown in a report: escaped, and cut in the middle when long.
fn show(input: &[u8]) -> String {
    let text: String = String::from_utf8_lossy(input).chars().flat_map(|c| c.escape_debug()).collect();
    if text.len() <= 3000 {
        text
    } else {
        let head: String = text.chars().take(1500).collect();
        let tail: String = text.chars().rev().take(500).collect::<Vec<_>>().into_iter().rev().collect();
        format!("{head} ... [{} bytes in all] ... {tail}", input.len())
    }
}

struct Failure {
    target: String,
    what: String,
    saved: PathBuf,
}

/// The running execution, for the watchdog: (target index, execution number, start in ms since
/// the run began); `u64::MAX` start: idle.
struct Current {
    exec: AtomicU64,
    started_ms: AtomicU64,
}

fn save(dir: &Path, name: &str, input: &[u8]) -> PathBuf {
    let _ = std::fs::create_dir_all(dir);
    let p = dir.join(name);
    let _ = std::fs::write(&p, input);
    p
}

fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// A coarse class of an outcome (digits and quoted values dropped), so that an input reaching a
/// new kind of error or success joins the corpus.
fn signature(o: &Outcome, dir: &str) -> String {
    let s = match o {
        Outcome::Ok(s) => format!("ok:{s}"),
        Outcome::Err(e) => format!("err:{}", e.replace(dir, "")),
    };
    // The message without the quoted input, the values and the numbers: what kind of error.
    let mut out = String::new();
    let (mut quoted, mut paren) = (false, 0usize);
    for c in s.chars() {
        match c {
            '`' => quoted = !quoted,
            '(' => paren += 1,
            ')' => paren = paren.saturating_sub(1),
            _ if quoted || paren > 0 || c.is_ascii_digit() || c.is_control() => {}
            _ => out.push(c),
        }
    }
    out.chars().take(80).collect()
}

struct Stats {
    execs: u64,
    /// Executions the reader accepted (and the target went on to build, serve, replay or run).
    accepted: u64,
    seeds: usize,
    corpus: usize,
    classes: usize,
    seconds: f64,
}

/// One input under catch_unwind, with `.last` written first (a stack overflow kills the process
/// and leaves it there).
fn execute(target: &str, input: &[u8], env: &Env, last: &Path, current: &Current, exec: u64, t0: Instant) -> Result<Outcome, String> {
    let _ = std::fs::write(last, input);
    current.exec.store(exec, Ordering::SeqCst);
    current.started_ms.store(t0.elapsed().as_millis() as u64, Ordering::SeqCst);
    let r = catch_unwind(AssertUnwindSafe(|| targets::run(target, input, env)));
    current.started_ms.store(u64::MAX, Ordering::SeqCst);
    match r {
        Ok(r) => r,
        Err(_) => Err(LAST_PANIC.with(|p| p.borrow().clone())),
    }
}

fn fuzz_target(target: &str, o: &Options, env: &Env, current: &Current, t0: Instant) -> Result<Stats, Failure> {
    let last = o.crashes.join(format!("{target}.last"));
    let _ = std::fs::create_dir_all(&o.crashes);
    // Seeds: the corpus files, the generated ones, ../shared's.
    let mut seeds: Vec<(String, Vec<u8>)> = Vec::new();
    let dir = o.corpus.join(target);
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(&dir).map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
    if let Some(shared) = &o.shared {
        let mut extra = targets::extra_seed_files(target, shared);
        files.append(&mut extra);
    }
    files.sort();
    for f in files {
        if f.is_file() {
            if let Ok(b) = std::fs::read(&f) {
                seeds.push((f.display().to_string(), b));
            }
        }
    }
    seeds.extend(targets::generated_seeds(target));
    let fail = |what: String, input: &[u8]| Failure {
        target: target.to_string(),
        what,
        saved: save(&o.crashes, &format!("{target}-{:016x}.input", fnv(input)), input),
    };
    let start = Instant::now();
    let mut execs = 0u64;
    let mut accepted = 0u64;
    let mut classes: HashSet<String> = HashSet::new();
    let mut corpus: Vec<Vec<u8>> = Vec::new();
    // Inputs the reader accepted: mutated more often (their mutants get past the parser).
    let mut accepted_pool: Vec<Vec<u8>> = Vec::new();
    let dir_name = env.dir.display().to_string();
    // Every seed, unmutated.
    for (name, s) in &seeds {
        match execute(target, s, env, &last, current, execs, t0) {
            Err(e) => return Err(fail(format!("seed {name}: {e}"), s)),
            Ok(out) => {
                accepted += matches!(out, Outcome::Ok(_)) as u64;
                classes.insert(signature(&out, &dir_name));
            }
        }
        execs += 1;
        if s.len() <= 1 << 20 {
            corpus.push(s.clone());
        }
    }
    let n_seeds = corpus.len();
    drop(seeds);
    let mut rng = Rng::new(o.seed ^ fnv(target.as_bytes()));
    let deadline = Duration::from_secs_f64(o.seconds);
    let max_len = 1 << 20;
    while start.elapsed() < deadline && o.runs.is_none_or(|r| execs < r) {
        // The base: a seed (40%), an accepted input (30%) or anything in the corpus.
        let base = match rng.below(10) {
            0..=3 => &corpus[rng.below(n_seeds.max(1))],
            4..=6 if !accepted_pool.is_empty() => &accepted_pool[rng.below(accepted_pool.len())],
            _ => &corpus[rng.below(corpus.len())],
        };
        let others: Vec<&[u8]> = (0..3).map(|_| corpus[rng.below(corpus.len())].as_slice()).collect();
        let input = mutate::mutant(base, &others, &mut rng, max_len);
        match execute(target, &input, env, &last, current, execs, t0) {
            Err(e) => return Err(fail(format!("execution {execs} (seed {}): {e}", o.seed), &input)),
            Ok(out) => {
                let ok = matches!(out, Outcome::Ok(_));
                accepted += ok as u64;
                // Inputs reaching a new class of outcome join the corpus (bounded).
                if classes.insert(signature(&out, &dir_name)) {
                    if ok && accepted_pool.len() < 1000 {
                        accepted_pool.push(input.clone());
                    }
                    if corpus.len() < 2000 {
                        corpus.push(input);
                    }
                }
            }
        }
        execs += 1;
    }
    let _ = std::fs::remove_file(&last);
    Ok(Stats { execs, accepted, seeds: n_seeds, corpus: corpus.len(), classes: classes.len(), seconds: start.elapsed().as_secs_f64() })
}

fn main() {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("iosched-fuzz: {e}");
            std::process::exit(2);
        }
    };
    install_panic_hook();
    let env = match Env::new(&o.corpus) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("iosched-fuzz: cannot set up the targets' files: {e}");
            std::process::exit(2);
        }
    };
    let current = Arc::new(Current { exec: AtomicU64::new(0), started_ms: AtomicU64::new(u64::MAX) });
    let t0 = Instant::now();
    let target_now = Arc::new(Mutex::new(String::new()));
    // The watchdog: an input running longer than the hang limit is a failure (a hang cannot be
    // interrupted in-process, so the process exits; the input is in `<target>.last`).
    {
        let (current, target_now, crashes, limit) = (current.clone(), target_now.clone(), o.crashes.clone(), o.hang_seconds);
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(250));
            let s = current.started_ms.load(Ordering::SeqCst);
            if s != u64::MAX && (t0.elapsed().as_millis() as u64).saturating_sub(s) > limit * 1000 {
                let t = target_now.lock().unwrap().clone();
                eprintln!(
                    "FAIL {t}: HANG: execution {} has run for more than {limit} s; the input is in {}",
                    current.exec.load(Ordering::SeqCst),
                    crashes.join(format!("{t}.last")).display()
                );
                std::process::exit(1);
            }
        });
    }
    if let Some(file) = &o.reproduce {
        let input = std::fs::read(file).unwrap_or_else(|e| {
            eprintln!("iosched-fuzz: {}: {e}", file.display());
            std::process::exit(2);
        });
        let mut failed = false;
        for t in &o.targets {
            *target_now.lock().unwrap() = t.clone();
            let last = o.crashes.join(format!("{t}.last"));
            let _ = std::fs::create_dir_all(&o.crashes);
            match execute(t, &input, &env, &last, &current, 0, t0) {
                Ok(Outcome::Ok(s)) => println!("{t}: ok ({s})"),
                Ok(Outcome::Err(e)) => println!("{t}: rejected: {e}"),
                Err(e) => {
                    println!("{t}: FAIL: {e}");
                    failed = true;
                }
            }
            let _ = std::fs::remove_file(&last);
        }
        drop(env); // `exit` runs no destructors: remove the working directory first
        std::process::exit(failed as i32);
    }
    let mut failures = Vec::new();
    let mut total = 0;
    for t in &o.targets {
        *target_now.lock().unwrap() = t.clone();
        eprintln!("fuzzing {t} for {} s (seed {})", o.seconds, o.seed);
        match fuzz_target(t, &o, &env, &current, t0) {
            Ok(s) => {
                total += s.execs;
                println!(
                    "{t:<12} {:>9} executions ({} accepted) in {:>6.1} s ({:>6.0}/s), {} seeds, corpus {}, {} outcome classes: no failure",
                    s.execs,
                    s.accepted,
                    s.seconds,
                    s.execs as f64 / s.seconds.max(1e-9),
                    s.seeds,
                    s.corpus,
                    s.classes
                );
            }
            Err(f) => {
                let input = std::fs::read(&f.saved).unwrap_or_default();
                println!(
                    "FAIL {}: {}\ninput ({} bytes, saved in {}):\n{}\n",
                    f.target,
                    f.what,
                    input.len(),
                    f.saved.display(),
                    show(&input)
                );
                failures.push(f);
            }
        }
    }
    println!("{} executions; {} failing target(s)", total, failures.len());
    drop(env);
    std::process::exit(if failures.is_empty() { 0 } else { 1 });
}
