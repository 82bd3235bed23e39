//! B-WF2Q+ against the fluid system it approximates (GPS): on small cases with every entity
//! always backlogged, each budget must complete no later than in the fluid system plus one
//! maximum budget of work (the delay bound), and no entity's service may lead or lag its fluid
//! share by more than the budgets allow (the lag bound), whatever the budgets' sizes.

use super::wf2q::*;

/// Serves budgets in B-WF2Q+ order, each in full, for `slots` slots; checks the bounds at every
/// completion. `entities`: (weight, budgets cycled through).
fn run_backlogged(entities: &[(u64, Vec<u64>)], slots: usize) -> Vec<u64> {
    let mut wf = Wf2q::new();
    let ids: Vec<Eid> = entities.iter().map(|(w, _)| wf.new_queue(ROOT, CLASS_BE, *w)).collect();
    let wsum: u64 = entities.iter().map(|(w, _)| w).sum();
    let bmax = entities.iter().flat_map(|(_, b)| b.iter()).copied().max().unwrap();
    let mut next = vec![0usize; ids.len()];
    let mut served = vec![0u64; ids.len()];
    let mut finished_budgets = vec![0u64; ids.len()];
    for (i, &e) in ids.iter().enumerate() {
        wf.activate(e, entities[i].1[0]);
    }
    let mut total = 0u64;
    for _ in 0..slots {
        let e = wf.select(false).expect("a backlogged entity");
        let i = ids.iter().position(|&x| x == e).unwrap();
        let b = entities[i].1[next[i] % entities[i].1.len()];
        assert_eq!(wf.entities[e].budget, b);
        // Serve the budget in a few chunks, as requests.
        let mut left = b;
        while left > 0 {
            let s = left.min(64);
            wf.served(e, s);
            left -= s;
        }
        total += b;
        served[i] += b;
        finished_budgets[i] += b;
        next[i] += 1;
        // Delay bound: completed no later than the fluid system would (all backlogged: at total
        // work finished_budgets x W / w), plus one maximum budget.
        let fluid_done = finished_budgets[i] as f64 * wsum as f64 / entities[i].0 as f64;
        assert!(
            total as f64 <= fluid_done + bmax as f64 + wsum as f64,
            "entity {i}: budget done at work {total}, fluid {fluid_done:.0}, bound +{bmax}"
        );
        // Lag bound for every entity: within its own budget ahead, one max budget + its budget behind.
        for (j, (w, budgets)) in entities.iter().enumerate() {
            let fluid = total as f64 * *w as f64 / wsum as f64;
            let bj = *budgets.iter().max().unwrap() as f64;
            let lag = fluid - served[j] as f64;
            assert!(lag <= bmax as f64 + bj + wsum as f64, "entity {j} lags {lag:.0} at work {total}");
            assert!(-lag <= bj + bmax as f64, "entity {j} leads {:.0} at work {total}", -lag);
        }
        let nb = entities[i].1[next[i] % entities[i].1.len()];
        wf.expire(e, true, nb);
    }
    served
}

#[test]
fn equal_weights_equal_service_whatever_the_budgets() {
    let served = run_backlogged(&[(100, vec![1024]), (100, vec![8192]), (100, vec![256, 4096, 777])], 3000);
    let total: u64 = served.iter().sum();
    for s in &served {
        let share = *s as f64 / total as f64;
        assert!((share - 1.0 / 3.0).abs() < 0.01, "shares {served:?}");
    }
}

#[test]
fn weights_one_to_two_and_one_one_three() {
    let served = run_backlogged(&[(100, vec![2048]), (200, vec![2048])], 2000);
    let r = served[1] as f64 / served[0] as f64;
    assert!((r - 2.0).abs() < 0.02, "1:2 gave {r}");
    let served = run_backlogged(&[(100, vec![512]), (100, vec![8192]), (300, vec![3000])], 4000);
    let t: u64 = served.iter().sum();
    let shares: Vec<f64> = served.iter().map(|&s| s as f64 / t as f64).collect();
    assert!((shares[0] - 0.2).abs() < 0.01 && (shares[1] - 0.2).abs() < 0.01 && (shares[2] - 0.6).abs() < 0.01, "{shares:?}");
}

/// A fixed little generator (xorshift from `seed`): each call a number below its argument.
fn below(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut x = seed;
    move |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    }
}

#[test]
fn fluid_bounds_hold_on_random_small_cases() {
    // Deterministic cases with 2-6 entities, weights 1-10, budgets 1-4096.
    let mut rnd = below(0x9e3779b97f4a7c15);
    for _case in 0..40 {
        let n = 2 + rnd(5) as usize;
        let ents: Vec<(u64, Vec<u64>)> = (0..n).map(|_| (1 + rnd(10), (0..1 + rnd(3)).map(|_| 1 + rnd(4096)).collect())).collect();
        run_backlogged(&ents, 400);
    }
}

#[test]
fn an_entity_cannot_gain_by_going_idle() {
    // A and B backlogged, weights equal, budgets 1000. A goes idle right after a slot and comes
    // back at once: it restarts at its old finish time (from the idle tree), not at V.
    let mut wf = Wf2q::new();
    let a = wf.new_queue(ROOT, CLASS_BE, 1);
    let b = wf.new_queue(ROOT, CLASS_BE, 1);
    wf.activate(a, 1000);
    wf.activate(b, 1000);
    let first = wf.select(false).unwrap();
    wf.served(first, 1000);
    let other = if first == a { b } else { a };
    wf.expire(first, false, 1000);
    assert_eq!(wf.entities[first].tree, Tree::Idle, "finish ahead of V: on the idle tree");
    let f_old = wf.entities[first].finish;
    wf.activate(first, 1000);
    assert_eq!(wf.entities[first].start, f_old);
    // The other one goes next.
    assert_eq!(wf.select(false), Some(other));
}

#[test]
fn idle_tree_entities_are_forgotten_once_v_passes_them() {
    let mut wf = Wf2q::new();
    let a = wf.new_queue(ROOT, CLASS_BE, 1);
    let b = wf.new_queue(ROOT, CLASS_BE, 1);
    wf.activate(a, 100);
    wf.activate(b, 10_000);
    let e = wf.select(false).unwrap();
    assert_eq!(e, a, "smaller finish first");
    wf.served(a, 100);
    wf.expire(a, false, 100);
    assert_eq!(wf.entities[a].tree, Tree::Idle);
    assert_eq!(wf.tree_of(a).wsum, 2, "an idle-tree entity keeps its weight in wsum");
    let e = wf.select(false).unwrap();
    assert_eq!(e, b);
    wf.served(b, 10_000);
    assert_eq!(wf.entities[a].tree, Tree::None, "V passed a's finish: forgotten");
    assert_eq!(wf.tree_of(b).wsum, 1);
}

#[test]
fn classes_are_strict_and_groups_share_by_weight() {
    let mut wf = Wf2q::new();
    let be = wf.new_queue(ROOT, CLASS_BE, 1000);
    let rt = wf.new_queue(ROOT, CLASS_RT, 1);
    wf.activate(be, 100);
    wf.activate(rt, 100);
    assert_eq!(wf.select(false), Some(rt), "RT before BE whatever the weights");

    // Two groups 1:2; group A one queue, group B three; everything backlogged.
    let mut wf = Wf2q::new();
    let ga = wf.new_group(ROOT, 100);
    let gb = wf.new_group(ROOT, 200);
    let qa = wf.new_queue(ga, CLASS_BE, 40);
    let qb: Vec<Eid> = (0..3).map(|_| wf.new_queue(gb, CLASS_BE, 40)).collect();
    let budgets = [(qa, 4096u64), (qb[0], 1024), (qb[1], 2048), (qb[2], 4096)];
    for &(q, b) in &budgets {
        wf.activate(q, b);
    }
    let mut served = std::collections::HashMap::new();
    for _ in 0..4000 {
        let q = wf.select(false).unwrap();
        let b = budgets.iter().find(|x| x.0 == q).unwrap().1;
        wf.served(q, b);
        *served.entry(q).or_insert(0u64) += b;
        wf.expire(q, true, b);
    }
    let a = served[&qa] as f64;
    let bsum: f64 = qb.iter().map(|q| served[q] as f64).sum();
    assert!((bsum / a - 2.0).abs() < 0.03, "groups 1:2 gave 1:{:.3}", bsum / a);
    for q in &qb {
        let share = served[q] as f64 / bsum;
        assert!((share - 1.0 / 3.0).abs() < 0.02, "queues of group B: {share}");
    }
}

#[test]
fn a_weight_change_applies_at_the_next_activation() {
    let mut wf = Wf2q::new();
    let a = wf.new_queue(ROOT, CLASS_BE, 10);
    let b = wf.new_queue(ROOT, CLASS_BE, 10);
    wf.activate(a, 1000);
    wf.activate(b, 1000);
    wf.set_weight(a, 100);
    assert_eq!(wf.tree_of(a).wsum, 20);
    let e = wf.select(false).unwrap();
    wf.served(e, 1000);
    wf.expire(e, true, 1000);
    if e == a {
        assert_eq!(wf.tree_of(a).wsum, 110);
    }
    let mut count_a = 0;
    for _ in 0..110 {
        let e = wf.select(false).unwrap();
        wf.served(e, 1000);
        wf.expire(e, true, 1000);
        if e == a {
            count_a += 1;
        }
    }
    assert!(count_a >= 95, "weight 100 vs 10 should get about 10/11 of the slots: {count_a}/110");
}

/// Stamps renumbered every few entries into a set change no choice: two hierarchies (queues
/// in the root and in two groups, random budgets, weights, idling and requeueing), one with
/// the default stamp range and one renumbering after every 5 stamps, make the same selections
/// and keep the same virtual times.
#[test]
fn renumbering_the_stamps_changes_no_choice() {
    let mut rnd = below(0x2545f4914f6cdd1d);
    let (mut a, mut b) = (Wf2q::new(), Wf2q::with_stamp_limit(5));
    let mut leaves = Vec::new();
    for wf in [&mut a, &mut b] {
        let g1 = wf.new_group(ROOT, 3);
        let g2 = wf.new_group(ROOT, 1);
        let mut ids = Vec::new();
        for (parent, w) in [(ROOT, 1), (ROOT, 2), (g1, 1), (g1, 4), (g1, 2), (g2, 1), (g2, 3), (ROOT, 5)] {
            ids.push(wf.new_queue(parent, CLASS_BE, w));
        }
        leaves = ids;
    }
    let mut backlogged = vec![false; leaves.len()];
    let mut selections = 0;
    for _ in 0..20_000 {
        // Some idle queues get requests.
        for (i, &e) in leaves.iter().enumerate() {
            if !backlogged[i] && rnd(3) == 0 {
                let budget = 1 + rnd(2048);
                a.activate(e, budget);
                b.activate(e, budget);
                backlogged[i] = true;
            }
        }
        let (sa, sb) = (a.select(false), b.select(false));
        assert_eq!(sa, sb);
        let Some(e) = sa else { continue };
        selections += 1;
        let i = leaves.iter().position(|&l| l == e).expect("a leaf");
        let service = 1 + rnd(a.entities[e].budget);
        a.served(e, service);
        b.served(e, service);
        backlogged[i] = rnd(2) == 0;
        let next = 1 + rnd(2048);
        a.expire(e, backlogged[i], next);
        b.expire(e, backlogged[i], next);
        for &l in &leaves {
            assert_eq!(a.vtime_of(l), b.vtime_of(l));
            assert_eq!(a.entities[l].finish, b.entities[l].finish);
        }
    }
    assert!(selections > 10_000, "{selections} selections");
}
