//! blk-mq's CPU map, tags per hardware queue and the CPU cost clock.

use super::cpu_cost::{CpuClock, SchedCost};
use super::*;
use crate::request::{IoPrio, Op, Principal};

#[test]
fn cpus_map_onto_hardware_queues_in_consecutive_groups() {
    assert_eq!(map_cpus(8, 3), vec![0, 0, 0, 1, 1, 1, 2, 2]);
    assert_eq!(map_cpus(4, 4), vec![0, 1, 2, 3]);
    assert_eq!(map_cpus(5, 2), vec![0, 0, 0, 1, 1]);
    assert_eq!(map_cpus(4, 1), vec![0, 0, 0, 0]);
    // More hardware queues than CPUs: one per CPU (the rest unused).
    assert_eq!(map_cpus(2, 8), vec![0, 1]);
    for (cpus, h) in [(1, 1), (7, 3), (16, 5), (64, 64), (12, 8)] {
        let m = map_cpus(cpus, h);
        assert_eq!(m.len(), cpus as usize);
        let sizes: Vec<usize> = (0..h).map(|q| m.iter().filter(|&&x| x == q).count()).collect();
        let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
        assert!(hi - lo <= 1, "{cpus} CPUs on {h} queues: {sizes:?}");
        assert!(m.windows(2).all(|w| w[0] <= w[1]), "consecutive groups");
    }
}

fn mq(cpus: u32, hw: u32, tags: u32) -> BlkMq {
    BlkMq::new(MqConfig {
        cpus,
        nr_hw_queues: hw,
        tags_per_hw_queue: tags,
        cost: SchedCost::NONE,
        sq_select: SqSelect::Cpu,
        per_hw_queue_lists: false,
        null_dispatch_rerun_ns: 0,
        budget_before_elevator: false,
        sq_classes: vec![SqClass::Medium; hw as usize],
    })
}

fn req(pid: u32) -> Request {
    Request { principal: Principal { pid, group: 0 }, ..Request::new(pid as u64, Op::Read, 0, 8, 0) }
}

#[test]
fn a_request_goes_to_its_cpus_hardware_queue() {
    let m = mq(4, 2, 8);
    let queues: Vec<usize> = (0..8).map(|pid| m.hwq_of(&req(pid))).collect();
    assert_eq!(queues, vec![0, 0, 1, 1, 0, 0, 1, 1]);
}

#[test]
fn tags_per_hardware_queue_limit_its_requests_in_flight() {
    let mut m = mq(2, 2, 3);
    for _ in 0..3 {
        assert!(m.has_tag(0));
        m.take_tag(0);
    }
    assert!(!m.has_tag(0), "three tags taken");
    assert!(m.can_ask(), "the elevator is asked with no tag free: its request will wait for one");
    assert!(m.can_take(0));
    m.park(req(0), ArmPath::Direct);
    assert!(!m.can_ask(), "a request waits for queue 0's tag: the scheduler is not asked");
    assert!(!m.can_take(0) && m.can_take(1));
    assert!(m.unpark().is_none());
    m.release_tag(0);
    assert_eq!(m.unpark().map(|(r, _)| r.principal.pid), Some(0));
    assert_eq!(m.in_flight_on(0), 2);
}

#[test]
fn ioprio_selects_the_sq_class() {
    let mut m = mq(2, 4, 8);
    m.map.sq_select = SqSelect::IoPrio;
    m.map.sq_classes = vec![SqClass::Urgent, SqClass::High, SqClass::Medium, SqClass::Low];
    let with = |class, level| Request { prio: IoPrio { class, level }, ..req(1) };
    assert_eq!(m.hwq_of(&with(PrioClass::RealTime, 0)), 0);
    assert_eq!(m.hwq_of(&with(PrioClass::BestEffort, 2)), 1);
    assert_eq!(m.hwq_of(&with(PrioClass::BestEffort, 4)), 2);
    assert_eq!(m.hwq_of(&with(PrioClass::None, 4)), 2);
    assert_eq!(m.hwq_of(&with(PrioClass::Idle, 7)), 3);
}

#[test]
fn cpu_cost_serialises_on_a_cpu_and_under_a_lock() {
    let per_cpu = SchedCost { per_request_ns: 1000, serialized: false };
    let mut c = CpuClock::new(2, per_cpu);
    assert_eq!((c.charge(0, 0), c.charge(0, 0), c.charge(1, 0)), (1000, 2000, 1000));
    let locked = SchedCost { per_request_ns: 1000, serialized: true };
    let mut c = CpuClock::new(2, locked);
    assert_eq!((c.charge(0, 0), c.charge(1, 0), c.charge(0, 5000)), (1000, 2000, 6000));
    assert_eq!(c.busy_ns, 3000);
    assert_eq!(c.wait_ns, 1000);
    let mut free = CpuClock::new(1, SchedCost::NONE);
    assert_eq!(free.charge(0, 77), 77);
}

#[test]
fn linux_costs_are_the_documented_ones() {
    assert_eq!(SchedCost::linux("bfq"), SchedCost { per_request_ns: 1900, serialized: true });
    assert_eq!(SchedCost::linux("mq-deadline"), SchedCost { per_request_ns: 700, serialized: true });
    assert_eq!(SchedCost::linux("kyber"), SchedCost { per_request_ns: 830, serialized: false });
    assert_eq!(SchedCost::linux("noop"), SchedCost::NONE);
}

#[test]
fn one_hardware_queue_hands_commands_on_in_order() {
    // Two CPUs share one hardware queue; CPU 1's request, dispatched later, would finish its
    // CPU work earlier: it still leaves after CPU 0's (the queue's submission is serialised).
    let mut m = BlkMq::new(MqConfig {
        cpus: 2,
        nr_hw_queues: 1,
        tags_per_hw_queue: 8,
        cost: SchedCost { per_request_ns: 1000, serialized: false },
        sq_select: SqSelect::Cpu,
        per_hw_queue_lists: false,
        null_dispatch_rerun_ns: 0,
        budget_before_elevator: false,
        sq_classes: vec![],
    });
    assert_eq!(m.charge(&req(0), 0, 0), 1000);
    assert_eq!(m.charge(&req(0), 0, 0), 2000, "CPU 0 busy until 1000");
    assert_eq!(m.charge(&req(1), 0, 100), 2000, "CPU 1 done at 1100, after the queue's last at 2000");
}

/// With lists per hardware queue (kyber, none) a queue whose dispatch list is empty is asked
/// even without a free tag (Linux takes the request first, then its driver tag); a queue with a
/// request waiting there is not, and the others still are.
#[test]
fn per_queue_lists_ask_every_queue_without_a_waiting_request() {
    let mut m = mq(2, 2, 1);
    m.cfg.per_hw_queue_lists = true;
    m.take_tag(0);
    m.take_tag(1);
    assert!(m.can_ask() && m.can_take(0) && m.can_take(1), "no tag free, no request waiting");
    m.park(req(0), ArmPath::Direct);
    assert!(m.can_ask() && !m.can_take(0) && m.can_take(1));
    m.park(req(1), ArmPath::Direct);
    assert!(!m.can_ask());
}

/// Linux's request pool per hardware queue when unset: `blk_mq_default_nr_requests` with an
/// elevator, the driver tags without one.
#[test]
fn default_request_pools_are_linuxs() {
    use super::default_nr_requests;
    assert_eq!(default_nr_requests(32, "mq-deadline"), 64);
    assert_eq!(default_nr_requests(1023, "kyber"), 256);
    assert_eq!(default_nr_requests(32, "none"), 32);
    assert_eq!(default_nr_requests(1023, "noop"), 1023);
}

/// The delayed re-run after an empty dispatch is the elevators' (3 ms); `none` (and its alias
/// `noop`) has no elevator to ask.
#[test]
fn only_an_elevator_has_the_delayed_rerun() {
    use crate::block::mq::{linux_null_dispatch_rerun_ns, BLK_MQ_BUDGET_DELAY_NS};
    assert_eq!(BLK_MQ_BUDGET_DELAY_NS, 3_000_000);
    for name in ["none", "noop"] {
        assert_eq!(linux_null_dispatch_rerun_ns(name), 0, "{name}");
    }
    for name in ["mq-deadline", "kyber", "bfq"] {
        assert_eq!(linux_null_dispatch_rerun_ns(name), BLK_MQ_BUDGET_DELAY_NS, "{name}");
    }
}

/// SCSI and ATA take a budget (the device's queue depth: the lane's tags) before the elevator
/// is asked: with every tag taken it is not asked; with one free it is.
#[test]
fn with_a_budget_before_the_elevator_a_full_queue_is_not_asked() {
    let mut m = BlkMq::new(MqConfig { budget_before_elevator: true, ..mq(1, 1, 2).config().clone() });
    m.take_tag(0);
    assert!(m.can_ask(), "one tag free");
    m.take_tag(0);
    assert!(!m.can_ask(), "every tag taken: the budget stops blk-mq before the elevator");
    m.release_tag(0);
    assert!(m.can_ask());
}
