//! What a run's output should tell the user about a scheduler's own rules: a sentence when a
//! rule switched off the scheduler's defining behaviour, read from its counters at the end of a
//! run, so that a result that looks like another scheduler's is explained where it is shown.

use std::collections::BTreeMap;

/// The notices for a run of scheduler `name` (its registry name) with these counters.
pub fn notices(name: &str, counters: &BTreeMap<String, u64>) -> Vec<String> {
    let c = |k: &str| counters.get(k).copied().unwrap_or(0);
    let mut out = Vec::new();
    if name == "bfq" {
        let (off, waits) = (c("no_idle_raised"), c("idle_waits"));
        // Said when the rule decided at least as often as idling happened: the run is then
        // mostly without BFQ's idling.
        if off > 0 && off >= waits {
            out.push(format!(
                "bfq did not idle {off} times where idling would have kept a sequential queue's next request close \
                 (it idled {waits} times): every busy queue was weight-raised (low_latency), and Linux's BFQ idles for \
                 throughput only when none is; queues then alternate as under noop. low_latency = 0 keeps the idling \
                 (docs/schedulers/bfq.md, \"When BFQ does not idle\")"
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bfq_says_when_raising_switched_idling_off() {
        let mut c = BTreeMap::new();
        c.insert("no_idle_raised".to_string(), 40);
        c.insert("idle_waits".to_string(), 3);
        assert_eq!(notices("bfq", &c).len(), 1);
        c.insert("idle_waits".to_string(), 400);
        assert!(notices("bfq", &c).is_empty());
        assert!(notices("cfq", &c).is_empty());
    }
}
