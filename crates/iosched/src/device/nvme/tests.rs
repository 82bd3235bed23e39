//! Hand cases of NVMe arbitration and the controller's queues.

use super::arbitration::{Arbiter, Arbitration, SqClass};
use super::controller::{NvmeController, Submitted};
use super::pcie::PcieLink;
use crate::device::ArmPath;
use crate::request::{Op, Request};

/// Drains SQs holding `counts` commands through the arbiter, one command at a time (a grant of
/// n is n commands from that SQ), returning the SQ of each fetched command.
fn drain(arbiter: &mut Arbiter, counts: &[u32]) -> Vec<usize> {
    let mut left = counts.to_vec();
    let mut order = Vec::new();
    while let Some((sq, n)) = arbiter.grant(&left) {
        assert!(n >= 1 && n <= left[sq], "grant of {n} from SQ {sq} holding {}", left[sq]);
        left[sq] -= n;
        order.extend(std::iter::repeat_n(sq, n as usize));
    }
    order
}

#[test]
fn round_robin_visits_three_sqs_in_turn() {
    let mut a = Arbiter::new(Arbitration::RoundRobin, 1, vec![SqClass::Medium; 3]);
    assert_eq!(drain(&mut a, &[3, 2, 3]), vec![0, 1, 2, 0, 1, 2, 0, 2]);
    // Burst 2: two at a time from each.
    let mut a = Arbiter::new(Arbitration::RoundRobin, 2, vec![SqClass::Medium; 3]);
    assert_eq!(drain(&mut a, &[3, 2, 3]), vec![0, 0, 1, 1, 2, 2, 0, 2]);
    // No limit: each SQ emptied in its turn.
    let mut a = Arbiter::new(Arbitration::RoundRobin, 0, vec![SqClass::Medium; 3]);
    assert_eq!(drain(&mut a, &[2, 1, 2]), vec![0, 0, 1, 2, 2]);
}

#[test]
fn weighted_round_robin_4_2_1_burst_1() {
    let classes = vec![SqClass::High, SqClass::Medium, SqClass::Low];
    let mut a = Arbiter::new(Arbitration::WeightedRoundRobin { weights: [4, 2, 1] }, 1, classes);
    // Two full rounds: H M L H M H H, twice.
    let order = drain(&mut a, &[8, 4, 2]);
    assert_eq!(order, vec![0, 1, 2, 0, 1, 0, 0, 0, 1, 2, 0, 1, 0, 0]);
}

#[test]
fn weighted_round_robin_4_2_1_burst_2() {
    let classes = vec![SqClass::High, SqClass::Medium, SqClass::Low];
    let mut a = Arbiter::new(Arbitration::WeightedRoundRobin { weights: [4, 2, 1] }, 2, classes);
    let order = drain(&mut a, &[8, 4, 2]);
    assert_eq!(order, vec![0, 0, 1, 1, 2, 0, 0, 0, 0, 1, 1, 2, 0, 0]);
}

#[test]
fn urgent_sq_goes_before_every_weighted_one() {
    let classes = vec![SqClass::High, SqClass::Medium, SqClass::Low, SqClass::Urgent];
    for burst in [1, 2] {
        let mut a = Arbiter::new(Arbitration::WeightedRoundRobin { weights: [4, 2, 1] }, burst, classes.clone());
        let order = drain(&mut a, &[4, 2, 1, 3]);
        assert_eq!(&order[..3], &[3, 3, 3], "burst {burst}: urgent first");
        // Then one round of 4:2:1.
        let expected: &[usize] = if burst == 1 { &[0, 1, 2, 0, 1, 0, 0] } else { &[0, 0, 1, 1, 2, 0, 0] };
        assert_eq!(&order[3..], expected, "burst {burst}");
    }
    // An urgent command arriving mid-round is served at the next grant.
    let mut a = Arbiter::new(Arbitration::WeightedRoundRobin { weights: [4, 2, 1] }, 1, classes);
    assert_eq!(a.grant(&[5, 5, 5, 0]), Some((0, 1)));
    assert_eq!(a.grant(&[4, 5, 5, 1]), Some((3, 1)));
    assert_eq!(a.grant(&[4, 5, 5, 0]), Some((1, 1)));
}

#[test]
fn weighted_class_with_no_commands_does_not_stall_the_others() {
    let classes = vec![SqClass::High, SqClass::Medium, SqClass::Low];
    let mut a = Arbiter::new(Arbitration::WeightedRoundRobin { weights: [4, 2, 1] }, 1, classes);
    // Only Low has commands: each round gives it its weight, then a new round starts.
    assert_eq!(drain(&mut a, &[0, 0, 3]), vec![2, 2, 2]);
}

#[test]
fn two_sqs_of_one_class_share_its_weight_round_robin() {
    let classes = vec![SqClass::High, SqClass::High, SqClass::Low];
    let mut a = Arbiter::new(Arbitration::WeightedRoundRobin { weights: [2, 1, 1] }, 1, classes);
    assert_eq!(drain(&mut a, &[2, 2, 2]), vec![0, 2, 1, 0, 2, 1]);
}

fn cmd(id: u64, ready_ns: u64) -> Submitted {
    Submitted { req: Request::new(id, Op::Read, id * 8, 8, 0), path: ArmPath::Direct, dispatched_ns: 0, ready_ns }
}

#[test]
fn controller_fetches_only_rung_commands_and_respects_its_limit() {
    let mut c = NvmeController::new(Arbiter::new(Arbitration::RoundRobin, 1, vec![SqClass::Medium; 3]), 2);
    c.submit(0, cmd(1, 0));
    c.submit(0, cmd(2, 0));
    c.submit(1, cmd(3, 10));
    c.submit(2, cmd(4, 0));
    assert_eq!(c.outstanding(), 4);
    let a = c.fetch(0).unwrap();
    let b = c.fetch(0).unwrap();
    assert_eq!((a.0, a.1.req.id, b.0, b.1.req.id), (0, 1, 2, 4));
    assert!(c.fetch(0).is_none(), "two commands executing: the limit");
    c.completed(0);
    // SQ 1's command is not rung until 10 ns.
    let d = c.fetch(5).unwrap();
    assert_eq!((d.0, d.1.req.id), (0, 2));
    c.completed(2);
    assert_eq!(c.fetch(10).map(|x| x.1.req.id), Some(3));
    assert_eq!(c.waiting(), 0);
}

#[test]
fn controller_keeps_each_sq_in_doorbell_order() {
    let mut c = NvmeController::new(Arbiter::new(Arbitration::RoundRobin, 0, vec![SqClass::Medium]), 0);
    c.submit(0, cmd(1, 30));
    c.submit(0, cmd(2, 10));
    c.submit(0, cmd(3, 20));
    let ids: Vec<_> = std::iter::from_fn(|| c.fetch(100)).map(|x| x.1.req.id).collect();
    assert_eq!(ids, vec![2, 3, 1]);
}

#[test]
fn pcie_payload_rates() {
    let g3 = PcieLink { generation: 3, lanes: 4, tlp_efficiency: 0.908 };
    assert!((g3.payload_mb_s() - 3576.1).abs() < 0.1, "{}", g3.payload_mb_s());
    let g4 = PcieLink { generation: 4, ..g3 };
    assert!((g4.payload_mb_s() - 2.0 * g3.payload_mb_s()).abs() < 1e-6);
    let g2 = PcieLink { generation: 2, lanes: 1, tlp_efficiency: 1.0 };
    assert!((g2.payload_mb_s() - 500.0).abs() < 1e-9, "5 GT/s x 8/10 / 8 = 500 MB/s");
    assert!(PcieLink { generation: 6, ..g3 }.validate().unwrap_err().contains("`device.nvme.pcie_gen` must be in [1, 5], got 6"));
    assert!(PcieLink { lanes: 3, ..g3 }.validate().unwrap_err().contains("got 3"));
    assert!(PcieLink { tlp_efficiency: 0.0, ..g3 }.validate().unwrap_err().contains("tlp_efficiency"));
}
