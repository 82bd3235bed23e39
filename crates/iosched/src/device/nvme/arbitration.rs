//! NVMe command arbitration: which submission queue (SQ) the controller fetches from next.
//! After NVM Express Base Specification 1.4, section 4.13 "Command Arbitration":
//!
//! - **Round robin** (4.13.1): the SQs are served in turn, each visit launching up to the
//!   Arbitration Burst (AB) of commands from that SQ.
//! - **Weighted round robin with urgent priority class** (4.13.2): three strict classes: Admin
//!   (not modelled: no admin commands here), Urgent, then the WRR class, which holds three
//!   weighted sub-classes High, Medium and Low; each SQ is assigned one of the four (QPRIO of
//!   Create I/O Submission Queue). Urgent SQs are served round-robin before any WRR SQ. In each
//!   round the High, Medium and Low classes may launch at most their weight (HPW+1, MPW+1,
//!   LPW+1 in the Arbitration feature's 0's-based fields; here the weights as counts) commands;
//!   SQs inside a class are served round-robin. The spec leaves the interleaving of the classes
//!   inside a round to the controller (its figure draws a weighted round robin of the three);
//!   this model visits High, Medium, Low in turn, each visit launching
//!   min(burst, the class's remaining credit, what the SQ holds), and starts a new round (all
//!   credits refilled) when no class with a non-empty SQ has credit left. With weights 4:2:1
//!   and burst 1 a round is H M L H M H H; with burst 2, HH MM L HH.
//!
//! The arbiter is pure: it is told how many fetchable commands each SQ holds and answers which
//! SQ to take how many from. Written from the specification's text, not from any controller's
//! code.

/// An SQ's priority class (NVMe QPRIO).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum SqClass {
    Urgent,
    High,
    Medium,
    Low,
}

impl SqClass {
    pub const NAMES: [&'static str; 4] = ["urgent", "high", "medium", "low"];
    pub fn parse(s: &str) -> Option<SqClass> {
        match s {
            "urgent" => Some(SqClass::Urgent),
            "high" => Some(SqClass::High),
            "medium" => Some(SqClass::Medium),
            "low" => Some(SqClass::Low),
            _ => None,
        }
    }
    /// Index of a weighted class (High 0, Medium 1, Low 2); None for Urgent.
    fn weighted_index(self) -> Option<usize> {
        match self {
            SqClass::Urgent => None,
            SqClass::High => Some(0),
            SqClass::Medium => Some(1),
            SqClass::Low => Some(2),
        }
    }
}

/// The arbitration mechanism the controller was enabled with (CC.AMS).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Arbitration {
    RoundRobin,
    /// Commands per round of the High, Medium and Low classes (each >= 1).
    WeightedRoundRobin {
        weights: [u32; 3],
    },
}

impl Arbitration {
    pub const NAMES: [&'static str; 2] = ["rr", "wrr"];
}

#[derive(Clone, Debug)]
pub struct Arbiter {
    kind: Arbitration,
    /// Commands launched per visit of an SQ (the Arbitration Burst; u32::MAX: no limit).
    burst: u32,
    classes: Vec<SqClass>,
    /// Round robin: the next SQ to visit (over all SQs for RR, over the urgent ones for WRR).
    cursor: usize,
    /// WRR: the next SQ to visit inside each weighted class.
    class_cursor: [usize; 3],
    /// WRR: the next weighted class to visit (0 High, 1 Medium, 2 Low).
    class_turn: usize,
    /// WRR: commands each weighted class may still launch in this round.
    credits: [u32; 3],
}

impl Arbiter {
    /// `classes[i]` is SQ i's class (ignored by round robin); `burst` 0 means no limit.
    pub fn new(kind: Arbitration, burst: u32, classes: Vec<SqClass>) -> Arbiter {
        let credits = match kind {
            Arbitration::WeightedRoundRobin { weights } => weights,
            Arbitration::RoundRobin => [0; 3],
        };
        Arbiter { kind, burst: if burst == 0 { u32::MAX } else { burst }, classes, cursor: 0, class_cursor: [0; 3], class_turn: 0, credits }
    }

    pub fn queues(&self) -> usize {
        self.classes.len()
    }

    /// The SQ to fetch from and how many commands to launch from it, given the fetchable
    /// commands each SQ holds (`available[i]`); None when every SQ is empty.
    pub fn grant(&mut self, available: &[u32]) -> Option<(usize, u32)> {
        debug_assert_eq!(available.len(), self.classes.len());
        if available.iter().all(|&a| a == 0) {
            return None;
        }
        match self.kind {
            Arbitration::RoundRobin => {
                let n = available.len();
                let sq = (0..n).map(|k| (self.cursor + k) % n).find(|&i| available[i] > 0)?;
                self.cursor = (sq + 1) % n;
                Some((sq, available[sq].min(self.burst)))
            }
            Arbitration::WeightedRoundRobin { weights } => {
                // Urgent: strict priority over the weighted classes, round robin among its SQs.
                if let Some(sq) = self.next_in(|c| c == SqClass::Urgent, self.cursor, available) {
                    self.cursor = (sq + 1) % available.len();
                    return Some((sq, available[sq].min(self.burst)));
                }
                for _refill in 0..2 {
                    for k in 0..3 {
                        let class = (self.class_turn + k) % 3;
                        if self.credits[class] == 0 {
                            continue;
                        }
                        let is_class = |c: SqClass| c.weighted_index() == Some(class);
                        if let Some(sq) = self.next_in(is_class, self.class_cursor[class], available) {
                            let n = available[sq].min(self.burst).min(self.credits[class]);
                            self.credits[class] -= n;
                            self.class_cursor[class] = (sq + 1) % available.len();
                            self.class_turn = (class + 1) % 3;
                            return Some((sq, n));
                        }
                    }
                    // No class with a non-empty SQ has credit left: a new round.
                    self.credits = weights;
                    self.class_turn = 0;
                }
                None
            }
        }
    }

    /// The first SQ from `from` on (cyclically) whose class passes `keep` and which holds
    /// commands.
    fn next_in(&self, keep: impl Fn(SqClass) -> bool, from: usize, available: &[u32]) -> Option<usize> {
        let n = available.len();
        (0..n).map(|k| (from + k) % n).find(|&i| keep(self.classes[i]) && available[i] > 0)
    }
}
