//! Which arm of a split label a caller's key lands in: a stable hash, the
//! same on every machine, in every process and in every release, so that
//! one user sees one arm for as long as the weights stay.

/// The bucket of `key` for prompt `prompt`, in `0..total`: arm `k` (arms in
/// version order) takes the buckets from the sum of the weights before it,
/// up to that sum plus its own weight.
///
/// FNV-1a over the prompt id, a separator and the key, then the SplitMix64
/// finalizer (FNV alone leaves the low bits of similar keys close, and the
/// bucket is taken modulo the total). The prompt id is part of the hash so
/// that the splits of two prompts are independent: the users in the 10% of
/// one are not the users in the 10% of the other. `total` is at most
/// 1,000,000 (the catalog's bound), so the modulo's bias is below 10⁻¹².
///
/// `total` 0 is treated as 1.
pub fn arm_bucket(prompt: &str, key: &str, total: u32) -> u32 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    // 0xff never occurs in UTF-8, so ("ab", "c") and ("a", "bc") differ.
    for byte in prompt.bytes().chain([0xff]).chain(key.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(PRIME);
    }
    hash ^= hash >> 30;
    hash = hash.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    hash ^= hash >> 27;
    hash = hash.wrapping_mul(0x94d0_49bb_1331_11eb);
    hash ^= hash >> 31;
    let total = u64::from(total.max(1));
    // Below `total`, which is a u32.
    u32::try_from(hash % total).unwrap_or(0)
}

/// The arm (an index into `weights`) that `bucket` falls in.
pub(super) fn arm_of(weights: impl IntoIterator<Item = u32>, bucket: u32) -> usize {
    let mut end = 0u64;
    let mut last = 0;
    for (i, weight) in weights.into_iter().enumerate() {
        end += u64::from(weight);
        last = i;
        if u64::from(bucket) < end {
            return i;
        }
    }
    last
}

/// Each weight's share and their total, which fits a `u32`: the weights
/// themselves when they add up to one (the catalog bounds a split at a
/// million), else each divided by the same factor (at least 1 each), so
/// that the arms keep their proportions however large the weights a store
/// holds.
pub(super) fn shares(weights: impl IntoIterator<Item = u32>) -> (Vec<u32>, u32) {
    let weights: Vec<u32> = weights.into_iter().collect();
    let sum: u64 = weights.iter().map(|&weight| u64::from(weight)).sum();
    if let Ok(total) = u32::try_from(sum) {
        return (weights, total);
    }
    // Room for the 1 each share may gain by rounding up from 0.
    let room = u64::from(u32::MAX) - weights.len() as u64;
    let divisor = sum.div_ceil(room.max(1));
    let shares: Vec<u32> = weights
        .iter()
        .map(|&weight| {
            u32::try_from(u64::from(weight) / divisor)
                .unwrap_or(u32::MAX)
                .max(1)
        })
        .collect();
    let total = shares.iter().map(|&share| u64::from(share)).sum::<u64>();
    (shares, u32::try_from(total).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_fixed_forever() {
        // Changing these moves users between arms on upgrade: never. The
        // values were computed by a second implementation (Python).
        assert_eq!(arm_bucket("agent-system", "user-1", 100), 89);
        assert_eq!(arm_bucket("agent-system", "user-2", 100), 63);
        assert_eq!(arm_bucket("code-review", "user-1", 1_000_000), 30_507);
        assert_eq!(arm_bucket("x", "", 0), 0);
    }

    #[test]
    fn buckets_fall_in_arms_by_cumulative_weight() {
        assert_eq!(arm_of([90, 10], 0), 0);
        assert_eq!(arm_of([90, 10], 89), 0);
        assert_eq!(arm_of([90, 10], 90), 1);
        assert_eq!(arm_of([90, 10], 99), 1);
        assert_eq!(arm_of([1, 1, 1], 2), 2);
    }

    #[test]
    fn weights_past_u32_keep_their_proportions() {
        let half = 1u32 << 31;
        for (weights, expected) in [
            (vec![90, 10], (vec![90, 10], 100)),
            (vec![half, half], (vec![half / 2, half / 2], half)),
            (vec![u32::MAX, 1], (vec![u32::MAX / 2, 1], u32::MAX / 2 + 1)),
            // Divided by 17: 16 would leave no room for rounding up.
            (
                vec![u32::MAX; 16],
                (vec![u32::MAX / 17; 16], u32::MAX / 17 * 16),
            ),
        ] {
            assert_eq!(shares(weights.clone()), expected, "{weights:?}");
        }
    }

    proptest::proptest! {
        /// Every key lands in an arm, the same one each time.
        #[test]
        fn every_key_lands_in_one_arm(
            prompt in "[a-z-]{1,20}",
            key in ".{0,40}",
            weights in proptest::collection::vec(1u32..10_000, 2..16),
        ) {
            let total = weights.iter().sum();
            let bucket = arm_bucket(&prompt, &key, total);
            proptest::prop_assert!(bucket < total);
            let arm = arm_of(weights.iter().copied(), bucket);
            proptest::prop_assert!(arm < weights.len());
            proptest::prop_assert_eq!(arm, arm_of(weights.iter().copied(), arm_bucket(&prompt, &key, total)));
        }

        /// Moving weight from the first arm to the last (a rollout going
        /// on) keeps every key of the last arm there: nobody flips back.
        #[test]
        fn a_growing_last_arm_keeps_its_keys(
            key in ".{0,40}",
            first in 2u32..1_000,
            last in 1u32..1_000,
            moved in 1u32..1_000,
        ) {
            let moved = moved.min(first - 1);
            let total = first + last;
            let bucket = arm_bucket("agent-system", &key, total);
            if arm_of([first, last], bucket) == 1 {
                proptest::prop_assert_eq!(arm_of([first - moved, last + moved], bucket), 1);
            }
        }
    }

    #[test]
    fn a_90_10_split_lands_within_two_percent_over_10_000_keys() {
        let mut second = 0;
        for user in 0..10_000 {
            let bucket = arm_bucket("agent-system", &format!("user-{user}"), 100);
            second += arm_of([90, 10], bucket);
        }
        let share = second as f64 / 10_000.0;
        assert!((0.08..=0.12).contains(&share), "v4 took {share}");
    }
}
