//! Work spread over threads: `parallel` workers each take the next item as
//! they finish one, and the results come back in the items' order (what
//! one worker would have given), so that `--jobs` changes the time a
//! stage takes, not what it reports.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// `f` of every item, `parallel` at a time, in the items' order. Once a
/// result satisfies `stop`, no further item is started: those are `None`.
pub fn map_in_order<T, R>(
    items: &[T],
    parallel: usize,
    stop: impl Fn(&R) -> bool + Sync,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<Option<R>>
where
    T: Sync,
    R: Send,
{
    let next = AtomicUsize::new(0);
    let stopped = AtomicBool::new(false);
    let slots: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..parallel.clamp(1, items.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(item) = items.get(i) else { break };
                if stopped.load(Ordering::SeqCst) {
                    break;
                }
                let r = f(item);
                if stop(&r) {
                    stopped.store(true, Ordering::SeqCst);
                }
                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            });
        }
    });
    slots
        .into_iter()
        .map(|s| s.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_the_items_order_and_a_stop_starts_nothing_more() {
        let items: Vec<u64> = (0..20).collect();
        let slow_first = |x: &u64| {
            // The first item finishes last.
            std::thread::sleep(std::time::Duration::from_millis(if *x == 0 { 30 } else { 1 }));
            x * 10
        };
        let all = map_in_order(&items, 4, |_| false, slow_first);
        assert_eq!(all, items.iter().map(|x| Some(x * 10)).collect::<Vec<_>>());
        let one = map_in_order(&items, 1, |r: &u64| *r == 50, |x| x * 10);
        assert_eq!(one[..6], [Some(0), Some(10), Some(20), Some(30), Some(40), Some(50)]);
        assert!(one[6..].iter().all(Option::is_none), "{one:?}");
        assert!(map_in_order(&[] as &[u64], 3, |_| false, |x| *x).is_empty());
    }
}
