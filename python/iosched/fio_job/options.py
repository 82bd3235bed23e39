"""Which fio options iosched reads, which it accepts without effect, and why it refuses the rest.

Three tables, by the option's canonical name (parse.ALIASES):
- MODELLED: read by convert.py into the scenario (docs/fio.md says how).
- NO_EFFECT: options that do not change the I/O the disk sees (names, reporting, logs, data
  content, CPU placement): accepted, and listed in a note with the reason.
- REFUSED: options that change the I/O in a way iosched does not model, each with the reason;
  some are accepted at the value that leaves the I/O as iosched models it (HARMLESS), e.g.
  `verify=0`. Any other option is refused with a general reason.
"""

from __future__ import annotations

MODELLED = frozenset({
    "rw", "rwmixread", "rwmixwrite", "bs", "ba", "ioengine", "iodepth", "direct", "numjobs", "size", "io_size",
    "filesize", "offset", "offset_increment", "offset_align", "filename", "directory", "nrfiles", "loops",
    "number_ios", "runtime", "time_based", "startdelay", "thinktime", "thinktime_spin", "thinktime_blocks",
    "thinktime_blocks_type", "rate", "rate_iops", "rate_process", "prio", "prioclass", "cgroup", "cgroup_weight",
    "stonewall", "wait_for", "ioscheduler", "kb_base", "sync", "end_fsync", "fsync_on_close", "end_syncfs", "name",
})

_REPORTING = "reporting and logs: iosched reports its own tables"
_DATA = "the data written: the disk model does not see data"
_CPU = "CPU placement and credentials: the simulated processes have no CPU affinity or user"
_SEED = "random offsets come from the scenario's seed (`run.seed`)"
_ERRORS = "errors: simulated I/O does not fail"
_SUBMIT = "submission-side CPU savings of the engine: the disk sees the same requests"

NO_EFFECT = {
    "description": "text shown by fio",
    "group_reporting": _REPORTING, "new_group": _REPORTING, "stats": _REPORTING, "per_job_logs": _REPORTING,
    "unified_rw_reporting": _REPORTING, "write_bw_log": _REPORTING, "write_lat_log": _REPORTING,
    "write_hist_log": _REPORTING, "write_iops_log": _REPORTING, "log_avg_msec": _REPORTING,
    "log_hist_msec": _REPORTING, "log_hist_coarseness": _REPORTING, "log_window_value": _REPORTING,
    "log_offset": _REPORTING, "log_prio": _REPORTING, "log_issue_time": _REPORTING, "log_compression": _REPORTING,
    "log_compression_cpus": _REPORTING, "log_store_compressed": _REPORTING, "log_unix_epoch": _REPORTING,
    "log_alternate_epoch": _REPORTING, "log_alternate_epoch_clock_id": _REPORTING, "log_entries": _REPORTING,
    "block_error_percentiles": _REPORTING, "bwavgtime": _REPORTING, "iopsavgtime": _REPORTING,
    "disk_util": _REPORTING, "disable_lat": _REPORTING, "disable_clat": _REPORTING, "disable_slat": _REPORTING,
    "disable_bw": _REPORTING, "slat_percentiles": _REPORTING, "clat_percentiles": _REPORTING,
    "lat_percentiles": _REPORTING, "percentile_list": _REPORTING, "significant_figures": _REPORTING,
    "unit_base": _REPORTING, "clocksource": _REPORTING, "gtod_reduce": _REPORTING, "gtod_cpu": _REPORTING,
    "job_start_clock_id": _REPORTING, "write_iolog": _REPORTING, "output": _REPORTING,
    "output-format": _REPORTING, "minimal": _REPORTING,
    "thread": "threads and processes look alike to the I/O scheduler (each has its own I/O context)",
    "invalidate": "the page cache is cold when a run starts anyway",
    "randrepeat": _SEED, "allrandrepeat": _SEED, "randseed": _SEED, "random_generator": _SEED,
    "norandommap": "iosched draws random offsets uniformly with replacement, which is what norandommap does",
    "softrandommap": "iosched keeps no random map",
    "zero_buffers": _DATA, "refill_buffers": _DATA, "scramble_buffers": _DATA,
    "buffer_compress_percentage": _DATA, "buffer_compress_chunk": _DATA, "buffer_pattern": _DATA,
    "dedupe_percentage": _DATA, "dedupe_mode": _DATA, "dedupe_working_set_percentage": _DATA,
    "dedupe_global": _DATA,
    "mem": "the I/O buffers' memory", "mem_align": "the I/O buffers' memory",
    "hugepage-size": "the I/O buffers' memory", "lockmem": "the I/O buffers' memory",
    "cpus_allowed": _CPU, "cpus_allowed_policy": _CPU, "cpumask": _CPU, "numa_cpu_nodes": _CPU,
    "numa_mem_policy": _CPU, "nice": _CPU, "comm": _CPU, "uid": _CPU, "gid": _CPU,
    "continue_on_error": _ERRORS, "ignore_error": _ERRORS, "error_dump": _ERRORS, "exitall_on_error": _ERRORS,
    "create_serialize": "files exist before the run starts", "create_on_open": "files exist before the run starts",
    "allow_file_create": "files exist before the run starts", "allow_mounted_write": "a safety check of fio's",
    "fallocate": "files are laid out contiguously anyway", "overwrite": "files exist at full size from the start",
    "unlink": "after the job", "unlink_each_loop": "files are not re-created between loops here",
    "cgroup_nodelete": "after the job", "openfiles": "one file per job", "file_service_type": "one file per job",
    "fadvise_hint": "direct I/O has no page cache to advise; with buffered I/O fio's default advice for "
                    "random jobs (no readahead) matches what Linux's readahead does for random reads",
    "fixedbufs": _SUBMIT, "registerfiles": _SUBMIT, "sqthread_poll": _SUBMIT, "sqthread_poll_cpu": _SUBMIT,
    "nonvectored": _SUBMIT, "hipri": _SUBMIT, "userspace_reap": _SUBMIT, "libaio_vectored": _SUBMIT,
    "rate_cycle": "only used with rate_min, which is refused",
    "do_verify": "without verify, nothing to verify",
}

# Refused options that leave the I/O as iosched models it at these values (lower case).
HARMLESS = {
    "verify": {"0", "none"},
    "rw_sequencer": {"sequential"},
    "zonemode": {"none"},
    "iodepth_batch_submit": {"1"},
    "iodepth_batch_complete_min": {"1"},
    "iodepth_batch_complete_max": {"1"},
    "fsync": {"0"},
    "fdatasync": {"0"},
    "write_barrier": {"0"},
    "ramp_time": {"0"},
    "ramp_size": {"0"},
    "thinktime_iotime": {"0"},
    "thinkcycles": {"0"},
    "rate_ignore_thinktime": {"0"},
    "random_distribution": {"random"},
    "percentage_random": {"100"},
    "io_submit_mode": {"inline"},
    "serialize_overlap": {"0"},
    "exitall": {"0"},
    "pre_read": {"0"},
    "create_only": {"0"},
    "fill_device": {"0"},
    "file_append": {"0"},
    "bs_is_seq_rand": {"0"},
    "filename_format": {"$jobname.$jobnum.$filenum"},
    "unique_filename": {"1"},
    "nowait": {"0"},
    "trim_percentage": {"0"},
}

_SIZES = "a range or mix of block sizes: an iosched process has one request size"
_LOG_REPLAY = ("replaying an I/O log: iosched replays fio iologs directly as a trace workload "
               "(`[workload] kind = \"trace\"`, docs/traces.md)")

REFUSED = {
    "bsrange": _SIZES, "bssplit": _SIZES, "bs_unaligned": _SIZES, "bs_is_seq_rand": _SIZES,
    "random_distribution": "non-uniform random offsets (zipf, pareto, normal, zoned): iosched's random pattern is uniform",
    "percentage_random": "a mix of random and sequential offsets in one job: iosched's pattern is one or the other",
    "random_sequence_stride": "iosched's random pattern is uniform",
    "rw_sequencer": "a sequencer other than sequential: not modelled",
    "verify": "data verification reads back what was written: not modelled",
    "verify_only": "data verification: not modelled", "experimental_verify": "data verification: not modelled",
    "trim_percentage": "trims of verified blocks (verify's trim options): not modelled",
    "ramp_time": "fio leaves the ramp out of its statistics; iosched's summaries cover the whole run (remove it, "
                 "or lengthen runtime and read the per-request records after the ramp)",
    "ramp_size": "fio leaves the ramp out of its statistics; iosched's summaries cover the whole run",
    "thinktime_iotime": "a think time by elapsed I/O time: iosched's processes think after a number of accesses",
    "thinkcycles": "a busy loop of CPU cycles: its time depends on the CPU",
    "rate_ignore_thinktime": "not modelled: a rate-capped process never catches up after thinking",
    "rate_min": "fio ends a job below this rate: not modelled", "rate_iops_min": "fio ends a job below this rate: not modelled",
    "latency_target": "fio's latency-targeted queue depth search: not modelled",
    "latency_window": "fio's latency-targeted queue depth search: not modelled",
    "latency_percentile": "fio's latency-targeted queue depth search: not modelled",
    "latency_run": "fio's latency-targeted queue depth search: not modelled",
    "max_latency": "fio ends a job above this latency: not modelled",
    "iodepth_batch_submit": "batched submission: an iosched process refills each slot as it completes",
    "iodepth_batch_complete_min": "batched completion: an iosched process refills each slot as it completes",
    "iodepth_batch_complete_max": "batched completion: an iosched process refills each slot as it completes",
    "iodepth_low": "a low-water mark: an iosched process refills each slot as it completes",
    "io_submit_mode": "offloaded submission: not modelled",
    "serialize_overlap": "serialized overlapping I/O: not modelled",
    "fsync": "fsync every N writes: not modelled (end_fsync is, for buffered sequential writes)",
    "fdatasync": "fdatasync every N writes: not modelled",
    "sync_file_range": "sync_file_range every N writes: not modelled",
    "write_barrier": "barrier writes: not modelled",
    "exitall": "ending every job when one ends: not modelled",
    "exitall_on_error": _ERRORS,
    "pre_read": "reading the files into the page cache first: not modelled",
    "create_only": "only laying the files out: iosched's files exist before the run",
    "create_fsync": "iosched's files exist before the run",
    "fill_device": "writing until the device is full: give size instead",
    "file_append": "appending past the end of the file: not modelled",
    "zonemode": "zoned block devices: not modelled", "zonerange": "zoned block devices: not modelled",
    "zonesize": "zoned block devices: not modelled", "zonecapacity": "zoned block devices: not modelled",
    "zoneskip": "zoned block devices: not modelled", "max_open_zones": "zoned block devices: not modelled",
    "filename_format": "file names other than fio's default: give filename instead",
    "unique_filename": "file names other than fio's default: give filename instead",
    "opendir": "every file of a directory: a job here has one file",
    "filetype": "iosched decides a file's type by its name (/dev/... is the disk)",
    "lockfile": "file locking between jobs: not modelled",
    "read_iolog": _LOG_REPLAY, "replay_no_stall": _LOG_REPLAY, "replay_time_scale": _LOG_REPLAY,
    "replay_redirect": _LOG_REPLAY, "replay_align": _LOG_REPLAY, "replay_scale": _LOG_REPLAY,
    "replay_skip": _LOG_REPLAY, "read_iolog_chunked": _LOG_REPLAY, "merge_blktrace_file": _LOG_REPLAY,
    "flow": "token-based flow control between jobs: not modelled",
    "flow_id": "token-based flow control between jobs: not modelled",
    "flow_sleep": "token-based flow control between jobs: not modelled",
    "exec_prerun": "running a command: not modelled", "exec_postrun": "running a command: not modelled",
    "cmdprio_percentage": "per-command I/O priorities: iosched gives a process one priority (prio, prioclass)",
    "cmdprio_class": "per-command I/O priorities: iosched gives a process one priority (prio, prioclass)",
    "cmdprio": "per-command I/O priorities: iosched gives a process one priority (prio, prioclass)",
    "cmdprio_bssplit": "per-command I/O priorities: iosched gives a process one priority (prio, prioclass)",
    "cmdprio_hint": "I/O priority hints: not modelled", "priohint": "I/O priority hints: not modelled",
    "nowait": "RWF_NOWAIT submission: not modelled",
    "ss": "fio's steady-state detection: not modelled", "ss_dur": "fio's steady-state detection: not modelled",
    "ss_ramp": "fio's steady-state detection: not modelled", "ss_interval": "fio's steady-state detection: not modelled",
    "profile": "fio's built-in profiles: write the job out",
    "write_hint": "write lifetime hints: not modelled", "fdp": "flexible data placement: not modelled",
    "dataplacement": "flexible data placement: not modelled",
}

GENERAL_REASON = "not an option iosched models (docs/fio.md lists those it reads)"


def classify(option: str, value) -> "tuple[str, str]":
    """("modelled" | "no-effect" | "refused", why) for an option and its value (None: a flag)."""
    if option in MODELLED:
        return "modelled", ""
    if option in NO_EFFECT:
        return "no-effect", NO_EFFECT[option]
    harmless = HARMLESS.get(option)
    if harmless is not None and (value or "").strip().lower() in harmless:
        return "no-effect", f"at {value.strip()}, fio's default, it changes nothing"
    if option in REFUSED:
        return "refused", REFUSED[option]
    return "refused", GENERAL_REASON
