//! The consumer's clock: the programs a live run starts (a consumer command's workers, the
//! ingress service) on a clock sped up by `1 / run.time_scale`, so that an unmodified consumer's
//! sleeps, timeouts and clock reads are in profile time.
//!
//! The mechanism is libfaketime (Debian's `libfaketime` package), preloaded with a speed factor
//! (`FAKETIME="+0 xSPEED"`): it fakes the wall and monotonic clocks, sleeps, poll/epoll/
//! select timeouts, timers and `pthread_cond_timedwait`. Before it goes ackbench's companion
//! library (`harness/native/clockwait.c`, built by `build.rs`, written into the run's scratch
//! folder): the timed waits on a named clock that libfaketime 0.9.10 does not convert
//! (`sem_clockwait`, `pthread_cond_clockwait`: every CPython 3.11 lock timeout).
//!
//! Every program reads one faked timeline, `start + speed * (now - start)`: libfaketime takes
//! its start from the shared memory named in `FAKETIME_SHARED`, which the run creates with its
//! own start written in (the moment the clock was set up, on each of the kernel's clocks), so a
//! worker restarted late, or a program a worker starts, reads the same time as the others. The
//! run removes that memory and its semaphore at the end (the next run removes those of a run
//! whose ackbench was killed by SIGKILL); without them each program would create its own under
//! /dev/shm and leave them behind when it is killed.
//!
//! Statically linked programs (Go's, most of all) do not go through libc: libfaketime cannot
//! reach them, and the run's clock probe ([`super::clock_probe`]) cannot tell.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::profile::{ConsumerClock, Scenario};
use crate::record::ConsumerClockRecord;

/// The companion library, built by `build.rs` (empty when no C compiler was found).
static CLOCKWAIT: &[u8] = include_bytes!(env!("ACKBENCH_CLOCKWAIT_SO"));

/// Where libfaketime is looked for, after `ACKBENCH_LIBFAKETIME`: Debian's and Ubuntu's
/// multiarch folder, then the other usual ones.
fn candidates() -> Vec<PathBuf> {
    let arch = std::env::consts::ARCH;
    [
        format!("/usr/lib/{arch}-linux-gnu/faketime/libfaketime.so.1"),
        "/usr/lib/faketime/libfaketime.so.1".to_string(),
        "/usr/lib64/faketime/libfaketime.so.1".to_string(),
        "/usr/local/lib/faketime/libfaketime.so.1".to_string(),
    ]
    .into_iter()
    .map(PathBuf::from)
    .collect()
}

/// The libfaketime to preload, or why there is none.
pub fn mechanism() -> Result<PathBuf, String> {
    if CLOCKWAIT.is_empty() {
        return Err(
            "this ackbench was built without a C compiler, so without its companion \
                    library to libfaketime (harness/native/clockwait.c)"
                .to_string(),
        );
    }
    if let Some(path) = std::env::var_os("ACKBENCH_LIBFAKETIME") {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "ACKBENCH_LIBFAKETIME names {}, which is not a file",
                path.display()
            ))
        };
    }
    candidates()
        .into_iter()
        .find(|p| p.is_file())
        .ok_or_else(|| {
            "libfaketime is not installed (apt-get install libfaketime; or name its \
         libfaketime.so.1 in ACKBENCH_LIBFAKETIME)"
                .to_string()
        })
}

/// The clock a run gives its programs, and what to tell the user about the choice.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub clock: ConsumerClock,
    pub warning: Option<String>,
}

/// Decides the clock: the profile's `consumer.clock` when it says one (`scaled` needs the
/// mechanism), else scaled when the run is compressed (`time_scale` < 1) and the mechanism is
/// there, else real, with a warning when the run is compressed. Programs only: a built-in target
/// runs on the run's own clock.
pub fn choose(
    asked: Option<ConsumerClock>,
    time_scale: f64,
    programs: bool,
    mechanism: &Result<PathBuf, String>,
) -> Result<Choice, String> {
    let real = |warning| Choice {
        clock: ConsumerClock::Real,
        warning,
    };
    let scaled = Choice {
        clock: ConsumerClock::Scaled,
        warning: None,
    };
    match (asked, mechanism) {
        (_, _) if !programs => Ok(real(None)),
        (Some(ConsumerClock::Real), _) => Ok(real(None)),
        (Some(ConsumerClock::Scaled), Ok(_)) => Ok(scaled),
        (Some(ConsumerClock::Scaled), Err(why)) => Err(format!(
            "consumer.clock: scaled needs libfaketime, and {why}; or set consumer.clock: real \
             (the consumer then scales its own durations by ACKBENCH_TIME_SCALE)"
        )),
        (None, _) if time_scale >= 1.0 => Ok(real(None)),
        (None, Ok(_)) => Ok(scaled),
        (None, Err(why)) => Ok(real(Some(format!(
            "the consumer runs on the real clock, not sped up to the run's time scale ({}), \
             because {why}: its own durations are not compressed unless it scales them by \
             ACKBENCH_TIME_SCALE",
            crate::profile::number_text(time_scale)
        )))),
    }
}

/// The clock of `s`'s programs, set up in `dir` when scaled, and what the run's record says of
/// it (`None` without a consumer command: a built-in target runs on the run's own clock); the
/// choice (and any warning) is printed on stderr.
pub fn for_run(
    s: &Scenario,
    dir: &Path,
) -> Result<(Option<Arc<ScaledClock>>, Option<ConsumerClockRecord>), String> {
    let mechanism = mechanism();
    let real = |note: Option<String>| ConsumerClockRecord {
        clock: "real".to_string(),
        speed: None,
        measured: None,
        note,
    };
    let compressed = s.run.time_scale < 1.0;
    // Only a broker side that reads a scaled consumer's wire durations in profile time can have
    // one (`consumer.clock: scaled` elsewhere is refused with the profile): on any other the
    // consumer runs on the machine's clock and scales its own durations.
    let unsupported = crate::profile::scaled_clock_unsupported(&s.broker);
    let programs = s.consumer.command.is_some() && unsupported.is_none();
    if let (Some(_), Some(why)) = (&s.consumer.command, &unsupported) {
        eprintln!(
            "consumer clock: real, because {why} (the consumer scales its own durations by \
             ACKBENCH_TIME_SCALE)"
        );
        let note = compressed.then(|| format!("{why}; the consumer scales its own durations"));
        return Ok((None, Some(real(note))));
    }
    let choice = choose(s.consumer.clock, s.run.time_scale, programs, &mechanism)?;
    if let Some(w) = &choice.warning {
        eprintln!("warning: {w}");
    }
    let (ConsumerClock::Scaled, Ok(libfaketime)) = (choice.clock, &mechanism) else {
        if !programs {
            return Ok((None, None));
        }
        eprintln!("consumer clock: real");
        return Ok((None, Some(real(choice.warning))));
    };
    let clock = ScaledClock::set_up(libfaketime, dir, s.run.time_scale).map_err(|e| {
        format!(
            "cannot set up the scaled consumer clock in {}: {e}",
            dir.display()
        )
    })?;
    eprintln!(
        "consumer clock: scaled, x{} (libfaketime: {})",
        crate::profile::number_text(clock.speed()),
        libfaketime.display()
    );
    let record = ConsumerClockRecord {
        clock: "scaled".to_string(),
        speed: Some(clock.speed()),
        measured: None,
        note: None,
    };
    Ok((Some(Arc::new(clock)), Some(record)))
}

/// A run's scaled clock, ready to start programs on; removes what it made when dropped.
#[derive(Debug)]
pub struct ScaledClock {
    /// `LD_PRELOAD`: the companion library, then libfaketime.
    preload: String,
    /// Profile seconds per wall second: `1 / time_scale`.
    speed: f64,
    companion: PathBuf,
    shared: Shared,
}

impl ScaledClock {
    /// Writes the companion library into `dir` and creates the shared semaphore and memory;
    /// the faked timeline starts now.
    pub fn set_up(libfaketime: &Path, dir: &Path, time_scale: f64) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let companion = dir.join("libackbench_clockwait.so");
        std::fs::write(&companion, CLOCKWAIT)?;
        let shared = Shared::create()?;
        Ok(ScaledClock {
            preload: format!("{}:{}", companion.display(), libfaketime.display()),
            speed: 1.0 / time_scale,
            companion,
            shared,
        })
    }

    /// Profile seconds per wall second.
    pub fn speed(&self) -> f64 {
        self.speed
    }

    /// Where the faked timeline starts, as Unix milliseconds of the wall clock: a program on
    /// this clock reads `start + speed * (now - start)` for the wall time `now`.
    pub fn start_unix_ms(&self) -> f64 {
        self.shared.start_ms
    }

    /// The environment of a program on this clock, after `env` (the profile's `consumer.env`,
    /// whose `LD_PRELOAD`, if any, is kept after the clock's).
    pub fn env(&self, env: &[(String, String)]) -> Vec<(String, String)> {
        let theirs = env
            .iter()
            .rev()
            .find(|(k, _)| k == "LD_PRELOAD")
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var("LD_PRELOAD").ok())
            .filter(|v| !v.is_empty());
        let preload = match theirs {
            Some(theirs) => format!("{}:{theirs}", self.preload),
            None => self.preload.clone(),
        };
        vec![
            ("LD_PRELOAD".to_string(), preload),
            ("FAKETIME".to_string(), faketime(self.speed)),
            ("FAKETIME_SHARED".to_string(), self.shared.env()),
            // File times stay real: faked ones would move with every run's start (CPython
            // would rewrite its bytecode caches each time).
            ("NO_FAKE_STAT".to_string(), "1".to_string()),
        ]
    }
}

impl Drop for ScaledClock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.companion);
    }
}

/// libfaketime's setting: no offset from the shared start, `speed` times as fast.
pub fn faketime(speed: f64) -> String {
    format!("+0 x{speed}")
}

/// The semaphore and shared memory every program's libfaketime opens instead of creating its
/// own (`FAKETIME_SHARED`); unlinked when dropped.
#[derive(Debug)]
struct Shared {
    sem: CString,
    shm: CString,
    /// The CLOCK_REALTIME start written into the memory, Unix milliseconds.
    start_ms: f64,
}

/// The shared memory's size: a page, more than libfaketime's `struct ft_shared_s`.
const SHARED_BYTES: u64 = 4096;

/// libfaketime's `struct ft_shared_s` (0.9.10, and the same bytes in later versions on 64-bit
/// Linux): two counters (ticks, file index; both 0), then the start on CLOCK_REALTIME,
/// CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW and CLOCK_BOOTTIME, each as 64-bit seconds and
/// nanoseconds. A start whose nanoseconds are -1 would be taken by the first program to start.
fn shared_start() -> Vec<u8> {
    let mut bytes = Vec::with_capacity(80);
    bytes.extend(0u64.to_ne_bytes());
    bytes.extend(0u64.to_ne_bytes());
    for clock in [
        libc::CLOCK_REALTIME,
        libc::CLOCK_MONOTONIC,
        libc::CLOCK_MONOTONIC_RAW,
        libc::CLOCK_BOOTTIME,
    ] {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `t` is a valid timespec to write into; the clock ids exist on Linux.
        unsafe { libc::clock_gettime(clock, &mut t) };
        // 64-bit Linux: both fields are i64, as libfaketime's shared memory has them.
        let (sec, nsec): (i64, i64) = (t.tv_sec, t.tv_nsec);
        bytes.extend(sec.to_ne_bytes());
        bytes.extend(nsec.to_ne_bytes());
    }
    bytes
}

/// The CLOCK_REALTIME start in [`shared_start`]'s bytes, as Unix milliseconds.
fn realtime_start_ms(bytes: &[u8]) -> f64 {
    let word = |i: usize| {
        bytes
            .get(i * 8..i * 8 + 8)
            .and_then(|b| b.try_into().ok())
            .map_or(0, i64::from_ne_bytes)
    };
    word(2) as f64 * 1e3 + word(3) as f64 / 1e6
}

/// Where POSIX shared memory and named semaphores live on Linux.
const DEV_SHM: &str = "/dev/shm";

/// Removes the shared semaphores and memory of earlier runs whose ackbench is gone (killed by
/// SIGKILL, it could not remove them): their names carry its pid.
fn sweep_stale() {
    let Ok(entries) = std::fs::read_dir(DEV_SHM) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = name
            .strip_prefix("sem.ackbench_clock_sem_")
            .or_else(|| name.strip_prefix("ackbench_clock_shm_"))
            .and_then(|rest| rest.split('_').next())
            .and_then(|pid| pid.parse::<u32>().ok());
        if let Some(pid) = pid {
            if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

impl Shared {
    fn create() -> std::io::Result<Shared> {
        sweep_stale();
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = |what: &str| {
            CString::new(format!("/ackbench_clock_{what}_{}_{n}", std::process::id()))
                .expect("no NUL in a name")
        };
        let (sem, shm) = (name("sem"), name("shm"));
        // SAFETY: a NUL-terminated name; the handle is closed at once (the programs open the
        // semaphore by name).
        unsafe {
            let handle = libc::sem_open(
                sem.as_ptr(),
                libc::O_CREAT | libc::O_EXCL,
                0o600 as libc::c_uint,
                1 as libc::c_uint,
            );
            if handle == libc::SEM_FAILED {
                return Err(std::io::Error::last_os_error());
            }
            libc::sem_close(handle);
        }
        // SAFETY: a NUL-terminated name; the descriptor is owned by the File from here on.
        let fd = unsafe {
            libc::shm_open(
                shm.as_ptr(),
                libc::O_CREAT | libc::O_EXCL | libc::O_RDWR,
                0o600,
            )
        };
        let start = shared_start();
        let shared = Shared {
            sem,
            shm,
            start_ms: realtime_start_ms(&start),
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        use std::io::Write;
        use std::os::fd::FromRawFd;
        // SAFETY: `fd` was just opened and nothing else owns it.
        let mut memory = unsafe { std::fs::File::from_raw_fd(fd) };
        memory.set_len(SHARED_BYTES)?;
        memory.write_all(&start)?;
        Ok(shared)
    }

    fn env(&self) -> String {
        format!(
            "{} {}",
            self.sem.to_string_lossy(),
            self.shm.to_string_lossy()
        )
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: NUL-terminated names; unlinking a name that is gone only fails.
        unsafe {
            libc::sem_unlink(self.sem.as_ptr());
            libc::shm_unlink(self.shm.as_ptr());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use super::*;

    const THERE: fn() -> Result<PathBuf, String> = || Ok(PathBuf::from("/lib/libfaketime.so.1"));
    const MISSING: fn() -> Result<PathBuf, String> = || Err("it is missing".to_string());

    #[test]
    fn a_compressed_run_defaults_to_the_scaled_clock_when_it_can() {
        let c = choose(None, 0.05, true, &THERE()).unwrap();
        assert_eq!(c.clock, ConsumerClock::Scaled);
        assert_eq!(c.warning, None);
    }

    #[test]
    fn without_the_mechanism_a_compressed_run_warns_and_runs_real() {
        let c = choose(None, 0.05, true, &MISSING()).unwrap();
        assert_eq!(c.clock, ConsumerClock::Real);
        assert_eq!(
            c.warning.as_deref(),
            Some(
                "the consumer runs on the real clock, not sped up to the run's time scale \
                 (0.05), because it is missing: its own durations are not compressed unless it \
                 scales them by ACKBENCH_TIME_SCALE"
            )
        );
    }

    #[test]
    fn an_uncompressed_run_defaults_to_real_without_a_word() {
        for mechanism in [THERE(), MISSING()] {
            let c = choose(None, 1.0, true, &mechanism).unwrap();
            assert_eq!((c.clock, c.warning), (ConsumerClock::Real, None));
        }
    }

    #[test]
    fn asking_for_scaled_without_the_mechanism_is_an_error() {
        assert_eq!(
            choose(Some(ConsumerClock::Scaled), 0.1, true, &MISSING()).unwrap_err(),
            "consumer.clock: scaled needs libfaketime, and it is missing; or set consumer.clock: \
             real (the consumer then scales its own durations by ACKBENCH_TIME_SCALE)"
        );
        let c = choose(Some(ConsumerClock::Scaled), 1.0, true, &THERE()).unwrap();
        assert_eq!(c.clock, ConsumerClock::Scaled);
    }

    #[test]
    fn real_is_real_and_built_in_targets_are_on_the_runs_clock() {
        let c = choose(Some(ConsumerClock::Real), 0.05, true, &THERE()).unwrap();
        assert_eq!(c.clock, ConsumerClock::Real);
        let c = choose(None, 0.05, false, &THERE()).unwrap();
        assert_eq!((c.clock, c.warning), (ConsumerClock::Real, None));
    }

    #[test]
    fn a_programs_environment_preloads_the_clock_before_its_own_libraries() {
        let dir = tempfile::tempdir().unwrap();
        let lib = Path::new("/usr/lib/faketime/libfaketime.so.1");
        let clock = ScaledClock::set_up(lib, dir.path(), 0.05).unwrap();
        let companion = dir.path().join("libackbench_clockwait.so");
        assert_eq!(std::fs::read(&companion).unwrap(), CLOCKWAIT);
        let env = clock.env(&[("LD_PRELOAD".into(), "/opt/mine.so".into())]);
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!(
            get("LD_PRELOAD"),
            Some(format!(
                "{}:{}:/opt/mine.so",
                companion.display(),
                lib.display()
            ))
        );
        assert_eq!(get("FAKETIME").as_deref(), Some("+0 x20"));
        assert_eq!(get("NO_FAKE_STAT").as_deref(), Some("1"));
        // The shared semaphore and memory exist while the clock does, and go with it.
        let shared = get("FAKETIME_SHARED").unwrap();
        let (sem, shm) = shared.split_once(' ').unwrap();
        let dev = |name: &str| PathBuf::from(format!("{DEV_SHM}{name}"));
        let sem_file = dev(&sem.replacen('/', "/sem.", 1));
        assert!(sem_file.exists() && dev(shm).exists(), "{shared}");
        assert_eq!(std::fs::metadata(dev(shm)).unwrap().len(), SHARED_BYTES);
        drop(clock);
        assert!(!sem_file.exists() && !dev(shm).exists() && !companion.exists());
    }

    #[test]
    fn a_dead_runs_shared_memory_is_swept_and_a_live_ones_kept() {
        // pid 0 is never a process of ours, and /proc/0 does not exist: a dead run's.
        let dead = [
            format!("{DEV_SHM}/sem.ackbench_clock_sem_0_7"),
            format!("{DEV_SHM}/ackbench_clock_shm_0_7"),
        ];
        // pid 1 is alive.
        let alive = format!("{DEV_SHM}/ackbench_clock_shm_1_7");
        for f in dead.iter().chain([&alive]) {
            std::fs::write(f, b"").unwrap();
        }
        sweep_stale();
        assert!(dead.iter().all(|f| !Path::new(f).exists()));
        assert!(Path::new(&alive).exists());
        std::fs::remove_file(&alive).unwrap();
    }

    #[test]
    fn the_speed_is_the_inverse_of_the_time_scale() {
        assert_eq!(faketime(1.0 / 0.05), "+0 x20");
        assert_eq!(faketime(1.0 / 0.3), "+0 x3.3333333333333335");
    }

    #[test]
    fn the_shared_start_is_libfaketimes_layout_with_the_start_in_it() {
        let bytes = shared_start();
        // 2 counters + 4 clocks x (seconds, nanoseconds), 8 bytes each.
        assert_eq!(bytes.len(), 80);
        let word = |i: usize| i64::from_ne_bytes(bytes[i * 8..i * 8 + 8].try_into().unwrap());
        assert_eq!((word(0), word(1)), (0, 0));
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        assert!((word(2) - now).abs() <= 1, "realtime {} vs {now}", word(2));
        // The same start, read back as Unix milliseconds: its whole seconds are word 2's.
        let ms = realtime_start_ms(&bytes);
        assert_eq!((ms / 1e3).floor() as i64, word(2), "{ms}");
        for clock in 0..4 {
            let nanos = word(3 + clock * 2);
            assert!(
                (0..1_000_000_000).contains(&nanos),
                "clock {clock}: {nanos} ns"
            );
        }
    }
}
